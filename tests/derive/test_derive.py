"""`metrics-manual derive`: ranges from three runs the tests write, written back in place."""

from __future__ import annotations

import difflib
import json
import math
import random
import re
import statistics
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, snapshot
from derive_helpers import STEPS, seed_run, seeds_project, write_runs
from metrics_manual.derive.stats import Method, percentile, round_down, round_near, round_up
from metrics_manual.model.schema import Band, Median
from metrics_manual.runs.read import read_run
from metrics_manual.runs.run import Run
from metrics_manual.source.load import load_manual

PROFILE = "ranges/profiles/seeds.yaml"


def _outward(value: float, digits: int, up: bool) -> float:
    """Independent of derive's Decimal code: exact fractions, floor or ceiling at the last kept digit."""
    if value == 0:
        return 0.0
    exact = Fraction(repr(value))  # the decimal the float reads as
    exponent = math.floor(math.log10(abs(value)))
    if Fraction(10) ** exponent > abs(exact):  # log10 rounded up across a power of ten
        exponent -= 1
    quantum = Fraction(10) ** (exponent - digits + 1)
    steps = exact / quantum
    return float((math.ceil(steps) if up else math.floor(steps)) * quantum)


def _median_error(values: list[float]) -> float:
    """A median's standard error from its order statistics, independently of derive: the values one
    binomial standard deviation of ranks (sqrt(n)/2) either side of the middle, interpolated."""
    ordered = sorted(values)
    n = len(ordered)

    def at(rank: float) -> float:  # rank 0 to n - 1, between two values linearly
        below = min(max(math.floor(rank), 0), n - 1)
        above = min(below + 1, n - 1)
        return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)

    middle, off = (n - 1) / 2, (n - 1) / 2 / math.sqrt(n)
    return (at(middle + off) - at(middle - off)) / 2


finite = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=30), st.integers(min_value=1, max_value=8))
def test_outward_rounding_keeps_every_value_inside(values: list[float], digits: int) -> None:
    lo, hi = round_down(min(values), digits), round_up(max(values), digits)
    assert all(lo <= v <= hi for v in values)
    assert lo == _outward(min(values), digits, up=False)
    assert hi == _outward(max(values), digits, up=True)
    for bound in (lo, hi):  # no more significant digits than asked for
        assert len(Decimal(repr(float(bound))).normalize().as_tuple().digits) <= digits


def test_rounding_examples() -> None:
    assert (round_down(0.52806, 3), round_up(0.83187, 3)) == (0.528, 0.832)
    assert (round_down(-0.52806, 2), round_up(-0.52806, 2)) == (-0.53, -0.52)
    assert (round_up(999.2, 3), round_down(389.02, 3), round_near(156.84, 3)) == (1000, 389, 157)
    assert isinstance(round_up(999.2, 3), int)


def test_methods_match_the_statistics_module() -> None:
    values = [seed_run(s).series["rollout/raw_reward"][i] for s in (1, 2, 3) for i in range(STEPS)]
    cuts = statistics.quantiles(values, n=20, method="inclusive")  # 5%, 10%, ..., 95%
    assert Method.parse("percentile:5,95").envelope(values) == pytest.approx((cuts[0], cuts[-1]))
    assert percentile(values, 0) == min(values) and percentile(values, 100) == max(values)
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    assert Method.parse("sigma:2").envelope(values) == pytest.approx((mean - 2 * sd, mean + 2 * sd))
    assert Method.parse("minmax").envelope(values) == (min(values), max(values))


@pytest.fixture
def seeds(tmp_path: Path) -> tuple[Path, dict[str, Run], list[str]]:
    root = seeds_project(tmp_path / "manual")
    runs = {f"seed-{i}": seed_run(i) for i in (1, 2, 3)}
    paths = write_runs(tmp_path / "runs", runs)
    # min and max: these tests compute the numbers on their own (the default method has its own test).
    return root, runs, [f"--run={name}={path}" for name, path in paths.items()] + ["--method=minmax"]


def _pooled(runs: dict[str, Run], key: str, first: int | None = None) -> list[float]:
    return [v for run in runs.values() for s, v in sorted(run.series[key].items())[:first]]


def test_derive_writes_independently_computed_numbers(seeds) -> None:
    root, runs, args = seeds
    result = run_cli("derive", "--profile", "seeds", *args, "--write", "--code-commit", "abc1234", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    profile = load_manual(root).profile("seeds")
    e = profile.expectations

    reward = _pooled(runs, "rollout/raw_reward")
    assert e["rollout/raw_reward"][0] == Band(
        kind="band",
        min=_outward(min(reward), 3, False),
        max=_outward(max(reward), 3, True),
        steps=STEPS,
        sources=list(runs),
    )
    grad, grad_first = _pooled(runs, "train/grad_norm"), _pooled(runs, "train/grad_norm", 2)
    band, window = e["train/grad_norm"]
    assert (band.min, band.max) == (_outward(min(grad), 3, False), _outward(max(grad), 3, True))
    assert (window.min, window.max, window.window.first) == (
        _outward(min(grad_first), 3, False),
        _outward(max(grad_first), 3, True),
        2,
    )
    assert window.condition == "in the first steps"  # a condition the maintainer wrote stays
    for b, vs in ((band, grad), (window, grad_first), (e["rollout/raw_reward"][0], reward)):
        assert all(b.contains(v) for v in vs)

    times = [list(run.series["perf/step_time"].values()) for run in runs.values()]
    medians = [statistics.median(vs) for vs in times]
    value = float(f"{statistics.median(medians):.3g}")
    assert e["perf/step_time"][0] == Median(
        kind="median", value=value, steps=STEPS, sources=list(runs), tolerance=e["perf/step_time"][0].tolerance
    )
    # Its tolerance: the largest of the runs' medians' reach (3x), 3 standard errors of a run's median, 10%.
    reach = max(3 * max(abs(m - value) for m in medians), 3 * max(_median_error(vs) for vs in times), 0.1 * value)
    assert e["perf/step_time"][0].tolerance == _outward(reach / value, 3, up=True)
    # Metrics without a range get a proposal: a band per step, a median for seconds.
    lengths = _pooled(runs, "rollout/response_lengths")
    assert (e["rollout/response_lengths"][0].min, e["rollout/response_lengths"][0].max) == (
        _outward(min(lengths), 3, False),
        _outward(max(lengths), 3, True),
    )
    assert e["perf/rollout_time"][0].kind == "median"
    # Provenance: one capture source per run, the run name as its key, its file's SHA-256, the commit.
    for name in runs:
        source = profile.sources[name]
        assert (source.kind, source.keys, source.code_commit) == ("capture", [name], "abc1234")
        assert source.sha256 == __import__("hashlib").sha256(Path(source.path).read_bytes()).hexdigest()
    assert "seed-2 " in result.stdout and "spread" in result.stdout  # each run's median is shown


def test_diff_touches_only_changed_numbers_and_sources(seeds) -> None:
    root, runs, args = seeds
    before = (root / PROFILE).read_text("utf-8")
    assert run_cli("derive", "--profile", "seeds", *args, "--write", cwd=root).returncode == 0
    after = (root / PROFILE).read_text("utf-8")
    removed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line.startswith("- ")]
    # Only lines holding numbers that changed were rewritten: the invariants, setup, code source,
    # comments and blank lines are as the maintainer wrote them.
    assert removed and all(re.search(r"\b(min|max|value): ", line) for line in removed), removed
    kept = [line for line in before.splitlines() if not re.search(r"\b(min|max|value): ", line) or "exact" in line]
    assert [line for line in after.splitlines() if line in kept] == kept
    assert re.search(r"\n    - \{kind: band, min: .*\} +# typed by hand once\n", after)
    assert "'in the first steps'" in after and '"in a healthy run"' in after
    assert (
        re.search(r"      - metric\n  seed-1:\n", after) and "\n\nexpectations:" in after
    )  # the blank line stays last
    # Derived again from the same runs: nothing left to change.
    again = run_cli("derive", "--profile", "seeds", *args, cwd=root)
    assert f"{PROFILE}: no change" in again.stdout, again.stdout


def test_dry_run_writes_nothing_and_prints_the_diff(seeds, tmp_path: Path) -> None:
    root, _, args = seeds
    files = snapshot(root)
    result = run_cli("derive", "--profile", "seeds", *args, "--capture-to", "captures", cwd=root)
    assert result.returncode == 0, result.stderr
    assert snapshot(root) == files
    assert f"--- a/{PROFILE}" in result.stdout and "+    - {kind: band, min: " in result.stdout
    assert "path: captures/seed-1.jsonl" in result.stdout
    assert "nothing written" in result.stdout


def test_write_build_check_then_a_changed_capture_and_a_tightened_range_are_findings(seeds) -> None:
    root, runs, args = seeds
    assert (
        run_cli("derive", "--profile", "seeds", *args, "--capture-to", "captures/seeds", "--write", cwd=root).returncode
        == 0
    )
    assert sorted(p.name for p in (root / "captures/seeds").iterdir()) == [
        "seed-1.jsonl",
        "seed-2.jsonl",
        "seed-3.jsonl",
    ]
    assert run_cli("build", cwd=root).returncode == 0
    ok = run_cli("check", cwd=root)
    assert ok.returncode == 0, ok.stdout

    text = (root / PROFILE).read_text("utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "rollout/raw_reward:" in t) + 1
    low = load_manual(root).profile("seeds").expectations["rollout/raw_reward"][0].min
    tight = re.sub(
        r"(rollout/raw_reward:\n    - \{kind: band, min: )[^,]+", lambda m: m.group(1) + repr(low + 0.05), text
    )
    (root / PROFILE).write_text(tight, "utf-8")
    assert run_cli("build", cwd=root).returncode == 0
    found = run_cli("check", cwd=root)
    assert found.returncode == 1
    assert re.search(
        rf"^{PROFILE}:{line}:\d+: error: rollout/raw_reward .* its own capture 'seed-\d' gives fail: ",
        found.stdout,
        re.M,
    ), found.stdout

    (root / PROFILE).write_text(text, "utf-8")
    assert run_cli("build", cwd=root).returncode == 0
    capture = root / "captures/seeds/seed-2.jsonl"
    capture.write_text(capture.read_text("utf-8").replace("]]", "],[99,0.7]]", 1), "utf-8")
    changed = run_cli("check", cwd=root)
    assert changed.returncode == 1
    assert re.search(
        rf"^{PROFILE}:\d+:\d+: error: capture captures/seeds/seed-2.jsonl changed: its SHA-256 no longer matches",
        changed.stdout,
        re.M,
    ), changed.stdout


def test_a_broken_invariant_is_reported_and_not_written(seeds, tmp_path: Path) -> None:
    root, runs, _ = seeds
    runs["seed-2"].series["train/ppo_kl"][0] = 0.003
    paths = write_runs(tmp_path / "broken", runs)
    before = (root / PROFILE).read_text("utf-8")
    result = run_cli("derive", "--profile", "seeds", *(f"--run={n}={p}" for n, p in paths.items()), "--write", cwd=root)
    assert result.returncode == 1
    assert re.search(
        r"train/ppo_kl \[0\] exact: broken.*\n  violation: run 'seed-2' breaks it \(fail\): .*step 0: 0.003\n",
        result.stdout,
    ), result.stdout
    after = (root / PROFILE).read_text("utf-8")
    ppo = [t for t in before.splitlines() if "healthy run" in t]
    assert ppo and all(t in after.splitlines() for t in ppo)
    assert after != before  # the other ranges were still derived


def test_skip_first_drops_warm_up_steps_and_says_so(seeds) -> None:
    root, runs, args = seeds
    capture = ("--capture-to", "captures")  # in the project, so check re-judges with the warm-up left out
    assert (
        run_cli(
            "derive",
            "--profile",
            "seeds",
            *args,
            "--skip-first",
            "2",
            "--metric",
            "train/grad_norm",
            *capture,
            "--write",
            cwd=root,
        ).returncode
        == 0
    )
    band, window = load_manual(root).profile("seeds").expectations["train/grad_norm"]
    later = [v for run in runs.values() for s, v in sorted(run.series["train/grad_norm"].items())[2:]]
    assert (band.min, band.max) == (_outward(min(later), 3, False), _outward(max(later), 3, True))
    assert (
        band.condition == "after the first two steps"
        and window.window.first == 2
        and "two steps" not in (window.condition or "")
    )
    assert load_manual(root).profile("seeds").sources["seed-1"].skip_first == 2
    assert (
        run_cli(
            "derive",
            "--profile",
            "seeds",
            *args,
            "--skip-first",
            "2",
            "--metric",
            "rollout/raw_reward",
            *capture,
            "--write",
            cwd=root,
        ).returncode
        == 0
    )
    reward = load_manual(root).profile("seeds").expectations["rollout/raw_reward"][0]
    later = [v for run in runs.values() for s, v in sorted(run.series["rollout/raw_reward"].items())[2:STEPS]]
    assert (reward.min, reward.max, reward.steps) == (
        _outward(min(later), 3, False),
        _outward(max(later), 3, True),
        STEPS,
    )
    assert run_cli("build", cwd=root).returncode == 0
    checked = run_cli("check", cwd=root)
    assert checked.returncode == 0, checked.stdout  # check leaves the warm-up out too
    # Derived again without a warm-up: the phrase and the record of it go. The warm-up is the run's
    # (its source's skip_first), so the reward band derived without its first steps now breaks on
    # them: derive says so, as check will (exit 1), and does not leave it silent.
    again_run = run_cli(
        "derive", "--profile", "seeds", *args, "--metric", "train/grad_norm", *capture, "--write", cwd=root
    )
    assert again_run.returncode == 1
    broken = again_run.stdout.split("(check reports these):\n", 1)[1].split("\n---", 1)[0]
    assert re.match(r"  rollout/raw_reward \[0\] .*: run 'seed-\d' gives fail: ", broken), again_run.stdout
    assert "train/grad_norm" not in broken
    assert run_cli("build", cwd=root).returncode == 0
    assert "rollout/raw_reward" in run_cli("check", cwd=root).stdout
    again = load_manual(root).profile("seeds")
    assert again.expectations["train/grad_norm"][0].condition is None and again.sources["seed-1"].skip_first is None
    assert again.expectations["train/grad_norm"][1].condition == "in the first steps"


@pytest.mark.parametrize("method", ["percentile:5,95", "sigma:2", "margin:0.5"])
def test_methods_write_their_envelope_rounded_outward(seeds, method: str) -> None:
    root, runs, args = seeds
    result = run_cli(
        "derive",
        "--profile",
        "seeds",
        *args,
        "--method",
        method,
        "--metric",
        "rollout/raw_reward",
        "--digits",
        "4",
        "--write",
        cwd=root,
    )
    values = _pooled(runs, "rollout/raw_reward")
    lo, hi = Method.parse(method).envelope(values)
    band = load_manual(root).profile("seeds").expectations["rollout/raw_reward"][0]
    assert (band.min, band.max) == (_outward(lo, 4, False), _outward(hi, 4, True))
    # An envelope that leaves values out is broken by its own runs: derive says so and exits 1.
    outside = [v for v in values if not band.contains(v)]
    assert result.returncode == (1 if outside else 0), result.stdout
    assert ("rollout/raw_reward [0]" in result.stdout.partition("(check reports these)")[2]) == bool(outside)


@pytest.mark.parametrize(
    "bad, message",
    [
        (["--run", "seed-1"], "expected NAME=PATH"),
        (["--run", "Seed_1=x.jsonl"], "lower-case letters"),
        (["--run", "seed-1=nowhere.jsonl"], "no such file"),
        (["--method", "median"], "--method 'median'"),
        (["--metric", "train/nothing"], "not in the catalog"),
        (["--code-commit", "XYZ"], "hex digits"),
    ],
)
def test_bad_input_is_a_finding_and_writes_nothing(seeds, bad: list[str], message: str) -> None:
    root, _, args = seeds
    files = snapshot(root)
    result = run_cli("derive", "--profile", "seeds", *(args if bad[0] != "--run" else []), *bad, "--write", cwd=root)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert snapshot(root) == files


def test_unknown_profile_and_a_corrupt_run(seeds, tmp_path: Path) -> None:
    root, _, args = seeds
    assert "unknown profile 'seed'" in run_cli("derive", "--profile", "seed", *args, cwd=root).stderr
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text('{"metric": "train/grad_norm", "series": [[0, 1.0]]}\n{not json\n', "utf-8")
    result = run_cli("derive", "--profile", "seeds", f"--run=bad={corrupt}", cwd=root)
    assert result.returncode == 2 and re.search(r"corrupt.jsonl:2:\d+: error: ", result.stderr), result.stderr


def test_a_run_missing_a_metric_or_holding_nan_is_not_derived(seeds, tmp_path: Path) -> None:
    root, runs, _ = seeds
    del runs["seed-1"].series["rollout/raw_reward"]
    runs["seed-3"].series["train/grad_norm"][5] = math.nan
    paths = write_runs(tmp_path / "holes", runs)
    result = run_cli(
        "derive",
        "--profile",
        "seeds",
        *(f"--run={n}={p}" for n, p in paths.items()),
        "--metric",
        "rollout/raw_reward",
        "--metric",
        "train/grad_norm",
        "--write",
        cwd=root,
    )
    assert result.returncode == 1
    assert "not derived: run 'seed-1' does not log rollout/raw_reward" in result.stdout
    assert "not derived: run 'seed-3' has a non-finite value (nan)" in result.stdout
    # Nothing was derived for these metrics: their numbers stay as they were.
    after = (root / PROFILE).read_text("utf-8")
    assert "min: 0.5, max: 0.9" in after and "min: 0.25\n" in after


def test_capture_is_compact_holds_only_catalog_keys_and_reads_back(seeds, tmp_path: Path) -> None:
    root, runs, _ = seeds
    run = runs["seed-1"]
    run.series["train/grad_norm"][3] = math.nan
    run.series["train/ppo_kl"][4] = -math.inf
    run.series["custom/not_in_catalog"] = {0: 1.0}
    paths = write_runs(tmp_path / "odd", {"seed-1": run})
    result = run_cli(
        "derive",
        "--profile",
        "seeds",
        f"--run=seed-1={paths['seed-1']}",
        "--capture-to",
        "captures",
        "--write",
        cwd=root,
    )
    assert result.returncode == 1  # the NaN keeps grad_norm from being derived
    text = (root / "captures/seed-1.jsonl").read_text("utf-8")
    assert '"NaN"' in text and '"-Infinity"' in text and "custom/" not in text
    assert all(line.startswith('{"metric":"') for line in text.splitlines())
    back = read_run([root / "captures/seed-1.jsonl"], load_manual(root).catalog)
    assert back.formats == ["ci-history"] and back.problems == []
    assert set(back.series) == set(run.series) - {"custom/not_in_catalog"}
    for key, series in back.series.items():
        assert series.keys() == run.series[key].keys()
        assert all(
            v == run.series[key][s] or (math.isnan(v) and math.isnan(run.series[key][s])) for s, v in series.items()
        )
    # Small enough to review: a 12-step run of 8 keys at full float precision.
    assert len(text.encode()) < 12 * 8 * 32


@pytest.mark.parametrize("rising", [False, True], ids=["level", "rising"])
def test_a_band_reaches_every_step_unless_its_runs_trend(seeds, tmp_path: Path, rising: bool) -> None:
    """Runs of 20 steps, a setup of 12: a metric with no trend is ranged at every step (from every
    value), a trending one only over the steps it was measured on (a proposal: the setup's)."""
    root, _, _ = seeds
    runs = {f"long-{i}": seed_run(i, steps=STEPS + 8) for i in (1, 2)}
    if rising:  # answers that grow by 40 tokens a step over noise of 20: a trend
        for i, run in enumerate(runs.values()):
            rng = random.Random(i)
            run.series["rollout/response_lengths"] = {s: 400 + 40 * s + rng.uniform(-20, 20) for s in range(STEPS + 8)}
    paths = write_runs(tmp_path / "long", runs)
    result = run_cli(
        "derive",
        "--profile",
        "seeds",
        "--method=minmax",
        *(f"--run={n}={p}" for n, p in paths.items()),
        "--metric",
        "rollout/response_lengths",
        "--metric",
        "rollout/raw_reward",
        "--metric",
        "perf/rollout_time",
        "--write",
        cwd=root,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    e = load_manual(root).profile("seeds").expectations
    lengths = e["rollout/response_lengths"][0]
    measured = _pooled(runs, "rollout/response_lengths", STEPS if rising else None)
    assert (lengths.min, lengths.max, lengths.steps) == (
        _outward(min(measured), 3, False),
        _outward(max(measured), 3, True),
        STEPS if rising else None,
    )
    line = next(t for t in result.stdout.splitlines() if t.startswith("rollout/response_lengths [0] proposed band"))
    assert ("a trend (0.3 or more)" in line) == rising and ("no trend (under 0.3)" in line) != rising, line
    # The reward climbs: its band keeps the 12 steps it had, from their values.
    reward = e["rollout/raw_reward"][0]
    first = _pooled(runs, "rollout/raw_reward", STEPS)
    assert (reward.min, reward.max, reward.steps) == (
        _outward(min(first), 3, False),
        _outward(max(first), 3, True),
        STEPS,
    )
    assert e["perf/rollout_time"][0].steps == STEPS  # a median is of the steps it names


def test_check_judges_only_captures_inside_the_project(seeds, tmp_path: Path) -> None:
    root, _, args = seeds
    # Runs outside the project: recorded with their SHA-256, but check cannot hold the ranges against them.
    assert run_cli("derive", "--profile", "seeds", *args, "--write", cwd=root).returncode == 0
    assert run_cli("build", cwd=root).returncode == 0
    for path in (tmp_path / "runs").iterdir():
        path.write_text("", "utf-8")
    assert run_cli("check", cwd=root).returncode == 0
    # A capture inside the project that is gone is a finding.
    paths = write_runs(tmp_path / "again", {f"seed-{i}": seed_run(i) for i in (1, 2, 3)})
    assert (
        run_cli(
            "derive",
            "--profile",
            "seeds",
            *(f"--run={n}={p}" for n, p in paths.items()),
            "--capture-to",
            "captures",
            "--write",
            cwd=root,
        ).returncode
        == 0
    )
    assert run_cli("build", cwd=root).returncode == 0
    (root / "captures/seed-3.jsonl").unlink()
    missing = run_cli("check", cwd=root)
    assert missing.returncode == 1
    assert re.search(rf"^{PROFILE}:\d+:\d+: error: capture captures/seed-3.jsonl is missing", missing.stdout, re.M), (
        missing.stdout
    )


def test_runs_in_other_forms_give_the_same_ranges(seeds, tmp_path: Path) -> None:
    """A run is read by the judge's readers: a dashboard log gives what its CI history gives."""
    root, runs, args = seeds
    assert run_cli("derive", "--profile", "seeds", *args, "--write", cwd=root).returncode == 0
    from_history = load_manual(root).profile("seeds").expectations
    dashboard = tmp_path / "dash" / "metrics.jsonl"
    dashboard.parent.mkdir()
    lines = []
    for s in range(STEPS):
        for ns, step_key in (("rollout", "rollout/step"), ("train", "train/step"), ("perf", "rollout/step")):
            metrics = {k: series[s] for k, series in runs["seed-2"].series.items() if k.startswith(ns + "/")}
            lines.append(
                json.dumps({"ts": 1.0 + s, "step_key": step_key, "step": s, "metrics": {step_key: s, **metrics}})
            )
    dashboard.write_text("\n".join(lines) + "\n", "utf-8")
    mixed = [a if "seed-2=" not in a else f"--run=seed-2={dashboard}" for a in args]
    root2 = seeds_project(tmp_path / "again")
    result = run_cli("derive", "--profile", "seeds", *mixed, "--write", cwd=root2)
    assert result.returncode == 0, result.stdout + result.stderr
    again = load_manual(root2).profile("seeds").expectations
    assert {k: [e.model_dump(exclude={"sources"}) for e in v] for k, v in again.items()} == {
        k: [e.model_dump(exclude={"sources"}) for e in v] for k, v in from_history.items()
    }
