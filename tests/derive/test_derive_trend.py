"""Ranges that catch the next fault: how far a band reaches (the trend test), floors that stay above 0."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO, run_cli
from derive_helpers import BARE_SEEDS_PROFILE, SEEDS_CATALOG, write_project, write_runs
from metrics_manual.derive.stats import Method, band_bounds
from metrics_manual.derive.trend import FEWEST_STEPS, TREND_RHO, ranks, spearman, trend
from metrics_manual.runs.run import Run
from metrics_manual.runs.series import Series
from metrics_manual.source.load import load_manual

sys.path.insert(0, str(REPO / "tools"))
from derive_methods import clean_run  # noqa: E402

# The gradient norm cannot be negative, as in the real catalog.
CATALOG = SEEDS_CATALOG.replace(
    "meaning: the gradient norm\n", "meaning: the gradient norm\n        domain: non-negative\n"
)


def test_ranks_share_their_mean_on_ties() -> None:
    assert ranks([3.0, 1.0, 2.0]) == [3, 1, 2]
    assert ranks([5.0, 1.0, 5.0, 0.0]) == [3.5, 2, 3.5, 1]
    assert ranks([7.0] * 4) == [2.5] * 4


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=40, unique=True))
def test_spearman_is_the_textbook_formula_without_ties(values: list[float]) -> None:
    n = len(values)
    order = sorted(values)
    d2 = sum((i + 1 - (order.index(v) + 1)) ** 2 for i, v in enumerate(values))
    assert spearman(list(enumerate(values))) == pytest.approx(1 - 6 * d2 / (n * (n * n - 1)), abs=1e-9)


def test_nothing_moves_with_the_step_of_a_constant_metric() -> None:
    assert spearman([(s, 0.0) for s in range(50)]) == 0
    assert trend([[(s, 1.0) for s in range(50)]] * 3).rho == 0


def _points(run: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(run.items())


def test_the_generated_runs_trend_where_training_moves_them() -> None:
    """tools/derive_methods.py's runs: the reward climbs and the answers grow; the gradient norm and
    the KL hover around one level (the gradient norm's warm-up spike does not make a trend)."""
    runs = [clean_run(seed, 200) for seed in (1, 2, 3)]
    rho = {k: trend([_points(r[k]) for r in runs]) for k in ("rollout/raw_reward", "rollout/response_lengths")}
    assert all(t.trending and t.rho is not None and t.rho > TREND_RHO for t in rho.values()), rho
    for key in ("train/grad_norm", "train/ppo_kl", "perf/step_time"):
        t = trend([_points(r[key]) for r in runs])
        assert not t.trending and t.rho is not None and abs(t.rho) < 0.15, (key, t)


def test_runs_of_few_steps_keep_their_steps() -> None:
    rng = random.Random(0)
    short = [[(s, rng.random()) for s in range(FEWEST_STEPS - 1)] for _ in range(3)]
    t = trend(short)
    assert t.trending and t.rho is None and "too few steps" in str(t)


def _run(series: dict[str, dict[int, float]]) -> Run:
    return Run(series={k: Series(v.items()) for k, v in series.items()})


@pytest.fixture
def derived(tmp_path: Path) -> Path:
    """Three clean 200-step runs derived into the seeds profile with the default method."""
    root = write_project(tmp_path / "manual", CATALOG, {"seeds": BARE_SEEDS_PROFILE})
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": _run(clean_run(i, 200)) for i in (1, 2, 3)})
    result = run_cli("derive", "--profile", "seeds", *(f"--run={n}={p}" for n, p in paths.items()), "--write", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def _judge(root: Path, run: dict[str, dict[int, float]], tmp: Path) -> tuple[int, dict[str, str]]:
    path = write_runs(tmp, {"next": _run(run)})["next"]
    out = run_cli("judge", "--profile", "seeds", str(path), "--format", "json", cwd=root)
    verdicts: dict[str, str] = {}
    for r in json.loads(out.stdout)["results"]:
        if verdicts.get(r["metric"]) in (None, "pass"):
            verdicts[r["metric"]] = r["verdict"]
    return out.returncode, verdicts


def test_a_longer_run_is_judged_past_the_steps_measured_where_the_metric_has_no_trend(
    derived: Path, tmp_path: Path
) -> None:
    """The issue's case: ranges from 200-step runs, a 300-step run whose gradient norm is 9 at step 250."""
    e = load_manual(derived).profile("seeds").expectations
    assert e["train/grad_norm"][0].steps is None and e["train/ppo_kl"][0].steps is None  # type: ignore[union-attr]
    assert e["rollout/raw_reward"][0].steps == 200 and e["rollout/response_lengths"][0].steps == 200  # type: ignore[union-attr]
    assert e["train/pg_clipfrac"][0].kind == "exact"  # 0 at every step of every run
    clean = clean_run(7, 300)
    code, verdicts = _judge(derived, clean, tmp_path / "clean")
    assert code == 0 and set(verdicts.values()) == {"pass"}, verdicts
    faulty = clean_run(7, 300)
    faulty["train/grad_norm"][250] = 9.0
    code, verdicts = _judge(derived, faulty, tmp_path / "faulty")
    assert code == 1 and {k for k, v in verdicts.items() if v != "pass"} == {"train/grad_norm"}, verdicts


def test_a_floor_above_zero_catches_a_collapse(derived: Path, tmp_path: Path) -> None:
    band = load_manual(derived).profile("seeds").expectations["train/grad_norm"][0]
    lowest = min(v for i in (1, 2, 3) for v in clean_run(i, 200)["train/grad_norm"].values())
    assert 0 < band.min < lowest  # type: ignore[union-attr, operator]
    collapsed = clean_run(8, 200)
    for s in range(120, 130):
        collapsed["train/grad_norm"][s] = lowest / 10
    code, verdicts = _judge(derived, collapsed, tmp_path / "collapsed")
    assert code == 1 and verdicts["train/grad_norm"] == "fail", verdicts


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(min_value=1e-300, max_value=1e300), min_size=1, max_size=20),
    st.sampled_from([0.1, 0.25, 0.5, 2.0]),
    st.sampled_from(["non-negative", "fraction"]),
)
def test_a_margin_widens_by_a_factor_when_every_value_is_above_zero(values: list[float], k: float, domain) -> None:  # type: ignore[no-untyped-def]
    if domain == "fraction":
        values = [min(v, 1.0) for v in values]
    lo, hi = Method.parse(f"margin:{k}").envelope(values, domain)
    low, high = min(values), max(values)
    factor = (high / low) ** k if high / low < 1e100 else None
    assert 0 <= lo <= low and hi >= high
    if (
        factor is not None and high * factor < 1e300 and low / factor > 1e-300
    ):  # the plain formula, where floats hold it
        assert (lo, hi) == (pytest.approx(low / factor, rel=1e-9), pytest.approx(high * factor, rel=1e-9))
    wrote = band_bounds(values, Method.parse(f"margin:{k}"), 3, domain)
    assert all(wrote[0] <= v <= wrote[1] for v in values)
    assert wrote[0] > 0 or low / (factor or math.inf) < 1e-300  # a floor above 0 unless it underflows


def test_a_metric_that_reached_zero_or_of_any_sign_widens_by_an_amount() -> None:
    method = Method.parse("margin:0.25")
    assert method.envelope([0.0, 2.0], "non-negative") == (-0.5, 2.5)  # then kept to the domain: 0
    assert band_bounds([0.0, 2.0], method, 3, "non-negative") == (0, 2.5)
    assert method.envelope([0.5, 4.5], "any") == (-0.5, 5.5)
    assert method.envelope([0.5, 4.5], "non-negative") == pytest.approx((0.5 / 9**0.25, 4.5 * 9**0.25))
    assert method.envelope([1.0, 1.0], "non-negative") == (1.0, 1.0)
    # The other methods are as they were: the margin alone is a factor.
    assert Method.parse("minmax").envelope([0.5, 4.5], "non-negative") == (0.5, 4.5)


def test_a_trending_metric_is_ranged_only_as_far_as_measured(tmp_path: Path) -> None:
    root = write_project(tmp_path / "manual", CATALOG, {"seeds": BARE_SEEDS_PROFILE})
    runs = {f"seed-{i}": clean_run(i, 240) for i in (1, 2, 3)}
    paths = write_runs(tmp_path / "runs", {n: _run(r) for n, r in runs.items()})
    result = run_cli(
        "derive",
        "--profile",
        "seeds",
        *(f"--run={n}={p}" for n, p in paths.items()),
        "--metric",
        "rollout/raw_reward",
        "--write",
        cwd=root,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    band = load_manual(root).profile("seeds").expectations["rollout/raw_reward"][0]
    # The setup says 200 steps: a climbing reward is ranged on the first 200 of the 240, from their values.
    first = [v for r in runs.values() for s, v in r["rollout/raw_reward"].items() if s < 200]
    assert band.steps == 200  # type: ignore[union-attr]
    assert (band.min, band.max) == band_bounds(first, Method.parse("margin:0.25"), 3, "any")  # type: ignore[union-attr]
