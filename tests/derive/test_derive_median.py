"""A derived median's tolerance: wide enough for the next clean run, narrow enough for a slower one."""

from __future__ import annotations

import json
import random
import statistics
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO, run_cli
from derive_helpers import BARE_SEEDS_PROFILE, SEEDS_CATALOG, write_project, write_runs
from metrics_manual.derive.stats import (
    MEDIAN_ERRORS,
    MEDIAN_FLOOR,
    MEDIAN_SPREAD,
    median_error,
    median_range,
)
from metrics_manual.model.schema import Median
from metrics_manual.runs.run import Run
from metrics_manual.runs.series import Series
from metrics_manual.source.load import load_manual

sys.path.insert(0, str(REPO / "tools"))
from derive_methods import MEDIANS, clean_run  # noqa: E402

SEEDS = (1, 2, 3)


def test_median_error_is_the_spread_of_a_median_over_repeated_draws() -> None:
    """The order-statistic estimate against the standard deviation of many medians of n draws,
    for a symmetric and a skewed shape (a wait time)."""
    rng = random.Random(0)
    for draw in (lambda: rng.gauss(0, 1), lambda: rng.gammavariate(2, 1)):
        n = 400
        medians = [statistics.median(draw() for _ in range(n)) for _ in range(400)]
        estimates = [median_error([draw() for _ in range(n)]) for _ in range(40)]
        assert statistics.fmean(estimates) == pytest.approx(statistics.stdev(medians), rel=0.15)
    assert median_error([3.0] * 50) == 0 and median_error([7.0]) == 0


runs_of_values = st.lists(
    st.lists(st.floats(min_value=1e-3, max_value=1e6), min_size=1, max_size=40), min_size=1, max_size=5
)


@settings(max_examples=200, deadline=None)
@given(runs_of_values)
def test_the_tolerance_covers_every_part_it_is_made_of(runs: list[list[float]]) -> None:
    r = median_range(runs, 3)
    assert r.tolerance is not None
    limit = r.tolerance * abs(r.value)
    for values in runs:  # the runs' medians, MEDIAN_SPREAD times as far, and each run's noise
        assert MEDIAN_SPREAD * abs(statistics.median(values) - r.value) <= limit * (1 + 1e-12)
        assert MEDIAN_ERRORS * median_error(values) <= limit * (1 + 1e-12)
    assert r.tolerance >= MEDIAN_FLOOR


def test_runs_whose_medians_agree_by_chance_still_get_their_steps_noise() -> None:
    """Three seeds with the same median (here: the same steps in another order) tell nothing of how far
    a fourth's median moves; the noise of a median of 200 skewed steps does."""
    rng = random.Random(5)
    steps = [rng.gammavariate(2, 1) for _ in range(200)]
    runs = [rng.sample(steps, len(steps)) for _ in SEEDS]
    r = median_range(runs, 3)
    assert r.spread == pytest.approx(MEDIAN_SPREAD * abs(statistics.median(steps) - r.value))  # the rounding alone
    assert r.tolerance == pytest.approx(MEDIAN_ERRORS * median_error(steps) / r.value, rel=1e-2)
    assert r.tolerance is not None and r.tolerance > MEDIAN_FLOOR  # the floor would not have held
    # A fourth run of the same noise: its median lies within the tolerance.
    fourth = statistics.median(rng.gammavariate(2, 1) for _ in range(200))
    assert abs(fourth - r.value) <= r.tolerance * r.value


def test_a_median_of_zero_has_no_relative_tolerance() -> None:
    assert median_range([[0.0, 0.0, 1.0]] * 3, 3).tolerance is None


def _run(series: dict[str, dict[int, float]]) -> Run:
    return Run(series={k: Series(v.items()) for k, v in series.items()})


@pytest.fixture
def derived(tmp_path: Path) -> Path:
    """Three clean 200-step runs derived into a profile with no ranges yet, with derive's defaults."""
    root = write_project(tmp_path / "manual", SEEDS_CATALOG, {"seeds": BARE_SEEDS_PROFILE})
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": _run(clean_run(i, 200)) for i in SEEDS})
    result = run_cli("derive", "--profile", "seeds", *(f"--run={n}={p}" for n, p in paths.items()), "--write", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def _judge(root: Path, run: dict[str, dict[int, float]], tmp: Path) -> tuple[int, dict[str, dict[str, object]]]:
    """Judge's exit code and each metric's result, with judge's defaults."""
    path = write_runs(tmp, {"next": _run(run)})["next"]
    out = run_cli("judge", "--profile", "seeds", str(path), "--format", "json", cwd=root)
    return out.returncode, {r["metric"]: r for r in json.loads(out.stdout)["results"]}


def test_a_derived_median_carries_a_tolerance_that_covers_the_runs(derived: Path) -> None:
    e = load_manual(derived).profile("seeds").expectations
    for key in MEDIANS:
        median = e[key][0]
        assert isinstance(median, Median) and median.steps == 200 and median.tolerance is not None
        for seed in SEEDS:
            m = statistics.median(clean_run(seed, 200)[key].values())
            assert abs(m - median.value) <= median.tolerance * median.value / MEDIAN_SPREAD * (1 + 1e-9), key


def test_the_next_clean_runs_pass_with_judges_defaults_and_a_slower_one_fails(derived: Path, tmp_path: Path) -> None:
    """Runs of the same noise, longer than the derived ones (the issue: a wait time's median 13.8% off
    in a clean 300-step run failed judge's default 10%), then one whose every step is 30% slower."""
    for seed in range(4, 12):
        code, results = _judge(derived, clean_run(seed, 300), tmp_path / f"clean-{seed}")
        assert code == 0, {k: r["reason"] for k, r in results.items() if r["verdict"] != "pass"}
        assert {results[k]["tolerance_from"] for k in MEDIANS} == {"profile"}
    slow = clean_run(4, 300)
    slow["perf/step_time"] = {s: v * 1.3 for s, v in slow["perf/step_time"].items()}
    code, results = _judge(derived, slow, tmp_path / "slow")
    assert code == 1 and {k for k, r in results.items() if r["verdict"] != "pass"} == {"perf/step_time"}, results


def test_a_time_of_one_value_in_every_run_is_exact(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "manual",
        SEEDS_CATALOG,
        {
            "seeds": BARE_SEEDS_PROFILE
            + "expectations:\n  perf/step_time:\n    - {kind: median, value: 150, steps: 200, tolerance: 0.05}\n"
        },
    )
    runs = {f"seed-{i}": clean_run(i, 200) for i in SEEDS}
    for run in runs.values():
        run["perf/step_time"] = dict.fromkeys(run["perf/step_time"], 2.0)
        run["perf/rollout_time"] = dict.fromkeys(run["perf/rollout_time"], 45.0)
    paths = write_runs(tmp_path / "runs", {n: _run(r) for n, r in runs.items()})
    out = run_cli("derive", "--profile", "seeds", *(f"--run={n}={p}" for n, p in paths.items()), "--write", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    e = load_manual(root).profile("seeds").expectations
    for key, value in (("perf/step_time", 2.0), ("perf/rollout_time", 45.0)):  # a median it was, a proposal
        assert (e[key][0].kind, e[key][0].value, e[key][0].at) == ("exact", value, "every_step"), e[key]  # type: ignore[union-attr]
    assert "(it was a median)" in out.stdout


def _waits(medians: tuple[float, ...], tmp_path: Path) -> tuple[Path, str]:
    """Derive from three runs whose wait time is 0 at most steps, with these medians; the wait time
    only (a median proposal), written when derive can."""
    root = write_project(tmp_path / "manual", SEEDS_CATALOG, {"seeds": BARE_SEEDS_PROFILE})
    runs = {}
    for i, m in zip(SEEDS, medians, strict=True):
        run = clean_run(i, 200)
        run["perf/train_wait_time"] = {s: m if s % 3 else 5.0 + s / 100 for s in range(200)}  # a median of m
        runs[f"seed-{i}"] = _run(run)
    paths = write_runs(tmp_path / "runs", runs)
    args = [f"--run={n}={p}" for n, p in paths.items()]
    out = run_cli("derive", "--profile", "seeds", *args, "--metric=perf/train_wait_time", "--write", cwd=root)
    return root, out.stdout + out.stderr


def test_a_median_of_zero_is_written_without_a_tolerance_when_every_run_gave_zero(tmp_path: Path) -> None:
    root, out = _waits((0.0, 0.0, 0.0), tmp_path)
    median = load_manual(root).profile("seeds").expectations["perf/train_wait_time"][0]
    assert isinstance(median, Median) and (median.value, median.tolerance) == (0, None), out
    assert "no tolerance: every run's median is 0" in out


def test_a_median_of_zero_between_runs_that_differ_is_not_derived(tmp_path: Path) -> None:
    root, out = _waits((0.0, 0.0, 0.4), tmp_path)
    assert "perf/train_wait_time" not in load_manual(root).profile("seeds").expectations
    assert "their median is 0, where a relative tolerance has no width: range it as a band" in out, out


def test_a_median_past_the_float_range_is_not_derived(tmp_path: Path) -> None:
    """Medians of an even number of values near the float limit: (a + b) / 2 overflows, as judge's would."""
    root = write_project(tmp_path / "manual", SEEDS_CATALOG, {"seeds": BARE_SEEDS_PROFILE})
    runs = {}
    for i in SEEDS:
        run = clean_run(i, 200)
        run["perf/step_time"] = {s: 1.7e308 - (s % 2) * 1e300 for s in range(200)}
        runs[f"seed-{i}"] = _run(run)
    paths = write_runs(tmp_path / "runs", runs)
    args = [f"--run={n}={p}" for n, p in paths.items()]
    out = run_cli("derive", "--profile", "seeds", *args, "--metric=perf/step_time", "--write", cwd=root)
    assert out.returncode == 1 and "past the float range" in out.stdout, out.stdout + out.stderr
    assert "perf/step_time" not in load_manual(root).profile("seeds").expectations
