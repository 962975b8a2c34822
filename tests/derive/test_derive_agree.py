"""derive, build and check agree by construction, and the default ranges hold for the next run.

Runs the tests write (tools/derive_methods.py's generator with realistic noise, and the seeds of
derive_helpers), in the forms Miles writes (run_forms).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_cli, snapshot
from derive_helpers import SEEDS_CATALOG, seed_run, seeds_project, write_runs
from metrics_manual.derive.methods import DEFAULT_METHOD
from metrics_manual.derive.stats import Method, band_bounds
from metrics_manual.source.load import load_manual
from run_forms import write as write_form

sys.path.insert(0, str(REPO / "tools"))
from derive_methods import FAULTS, clean_run, faulty_run  # noqa: E402

PROFILE = "ranges/profiles/seeds.yaml"
LOOP_STEPS = 240

# Only invariants typed by hand: every other metric gets a proposal from the runs.
LOOP_PROFILE = f"""\
id: seeds
title: Seed runs
summary: Made up for tests.
advice: Build your own.
setup:
  framework: Miles
  model: M-1
  dataset: D
  hardware: {{count: 2, name: GPU}}
  prompts_per_step: 4
  answers_per_prompt: 2
  token_limit: 1024
  steps: {LOOP_STEPS}
sources:
  code: {{kind: code, repository: Miles, branch: main, commit: abcdef12, parts: [loss]}}
expectations:
  train/pg_clipfrac:
    - {{kind: exact, value: 0, at: every_step}}
  train/ppo_kl:
    - {{kind: exact, value: 0, at: {{step: 0}}}}
"""


def _judge(root: Path, run: Path) -> tuple[int, dict[str, str]]:
    out = run_cli("judge", "--profile", "seeds", str(run), "--format", "json", cwd=root)
    verdicts: dict[str, str] = {}
    for r in json.loads(out.stdout)["results"]:
        worst = {"pass": 0, "fail": 1, "error": 2}
        if worst[r["verdict"]] >= worst.get(verdicts.get(r["metric"], "pass"), 0):
            verdicts[r["metric"]] = r["verdict"]
    return out.returncode, verdicts


@pytest.mark.slow
def test_derive_loop_the_default_ranges_pass_the_next_clean_run_and_fail_exactly_the_faults(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual", LOOP_PROFILE)
    runs = {f"seed-{i}": clean_run(i, LOOP_STEPS) for i in (1, 2, 3)}
    args = []
    for name, run in runs.items():
        write_form("events", run, tmp_path / name)
        args.append(f"--run={name}={tmp_path / name}")
    derived = run_cli("derive", "--profile", "seeds", *args, "--capture-to", "captures/seeds", "--write", cwd=root)
    assert derived.returncode == 0, derived.stdout + derived.stderr
    assert f"{Method.parse(DEFAULT_METHOD)}" in derived.stdout
    # The leave-one-out check: each seed against the ranges of the other two.
    assert derived.stdout.count(", judged on the ranges of ") == 3
    # The promise: derive --write, then build, then check is green.
    assert run_cli("build", cwd=root).returncode == 0
    checked = run_cli("check", cwd=root)
    assert checked.returncode == 0, checked.stdout
    write_form("events", clean_run(4, LOOP_STEPS), tmp_path / "fourth")
    code, verdicts = _judge(root, tmp_path / "fourth")
    assert code == 0 and set(verdicts.values()) == {"pass"}, verdicts
    write_form("dashboard", faulty_run(5, LOOP_STEPS), tmp_path / "faulty")
    code, verdicts = _judge(root, tmp_path / "faulty")
    assert code == 1
    assert {k for k, v in verdicts.items() if v != "pass"} == set(FAULTS), verdicts


def test_minmax_would_not_hold_and_leave_one_out_says_which_metric(tmp_path: Path) -> None:
    """The issue's case: min and max of three runs; the run left out falls outside and derive names the metric."""
    root = seeds_project(tmp_path / "manual", LOOP_PROFILE)
    runs = {f"seed-{i}": clean_run(i, LOOP_STEPS) for i in (1, 2, 3)}
    runs["seed-2"]["rollout/response_lengths"][77] = 100.0  # lower than the other two ever go
    paths = write_runs(tmp_path / "runs", {n: _as_run(r) for n, r in runs.items()})
    out = run_cli(
        "derive", "--profile", "seeds", "--method=minmax", *(f"--run={n}={p}" for n, p in paths.items()), cwd=root
    )
    lines = out.stdout.split("leave-one-out:", 1)[1].splitlines()
    seed2 = next(
        i for i, line in enumerate(lines) if line.startswith("  seed-2, judged on the ranges of seed-1, seed-3:")
    )
    assert "would fail" in lines[seed2]
    assert any("rollout/response_lengths [0]" in line and "step 77: 100" in line for line in lines[seed2 + 1 :]), (
        out.stdout
    )


def _as_run(series: dict[str, dict[int, float]]):  # type: ignore[no-untyped-def]
    from metrics_manual.runs.run import Run
    from metrics_manual.runs.series import Series

    return Run(series={k: Series(v.items()) for k, v in series.items()})


@pytest.mark.parametrize("form", ["dashboard", "events", "ci-history", "console"])
def test_runs_inside_the_project_are_captured_and_check_is_green(tmp_path: Path, form: str) -> None:
    root = seeds_project(tmp_path / "manual")
    args = []
    for i in (1, 2, 3):
        folder = root / "runs" / f"s{i}"
        write_form(form, {k: dict(v) for k, v in seed_run(i).series.items()}, folder)
        args.append(f"--run=s{i}=runs/s{i}")
    out = run_cli("derive", "--profile", "seeds", *args, "--write", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "its capture goes to captures/seeds/" in out.stderr
    sources = load_manual(root).profile("seeds").sources
    assert [sources[f"s{i}"].path for i in (1, 2, 3)] == [f"captures/seeds/s{i}.jsonl" for i in (1, 2, 3)]
    assert run_cli("build", cwd=root).returncode == 0
    checked = run_cli("check", cwd=root)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize(
    "capture_to, message",
    [
        ("ranges/profiles", "inside ranges/"),
        ("ranges", "inside ranges/"),
        ("ranges/captures", "inside ranges/"),
        ("linked/captures", "linked is a symlink"),
    ],
)
def test_capture_to_is_refused_inside_ranges_and_through_a_symlink(
    tmp_path: Path, capture_to: str, message: str
) -> None:
    root = seeds_project(tmp_path / "manual")
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": seed_run(i) for i in (1, 2)})
    before = snapshot(root)
    out = run_cli(
        "derive",
        "--profile",
        "seeds",
        *(f"--run={n}={p}" for n, p in paths.items()),
        "--capture-to",
        capture_to,
        "--write",
        cwd=root,
    )
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert snapshot(root) == before and not any((tmp_path / "elsewhere").iterdir())


def test_a_capture_file_that_is_a_symlink_is_not_written_through(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual")
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n", "utf-8")
    (root / "captures").mkdir()
    (root / "captures" / "seed-1.jsonl").symlink_to(outside)
    paths = write_runs(tmp_path / "runs", {"seed-1": seed_run(1)})
    out = run_cli(
        "derive",
        "--profile",
        "seeds",
        f"--run=seed-1={paths['seed-1']}",
        "--capture-to",
        "captures",
        "--write",
        cwd=root,
    )
    assert out.returncode == 2 and "is a symlink" in out.stderr, out.stderr
    assert outside.read_text("utf-8") == "keep me\n"


def test_skip_first_is_the_runs_first_steps_not_each_metrics_own(tmp_path: Path) -> None:
    """A metric missing at step 0: its first two logged steps are 1 and 2, but the run's are 0 and 1."""
    root = seeds_project(tmp_path / "manual")
    runs = {f"seed-{i}": seed_run(i) for i in (1, 2, 3)}
    for run in runs.values():
        del run.series["train/grad_norm"][0]
        run.series["train/grad_norm"][2] = 50.0  # after the warm-up: the band must hold it
    paths = write_runs(tmp_path / "runs", runs)
    args = [f"--run={n}={p}" for n, p in paths.items()]
    out = run_cli(
        "derive",
        "--profile",
        "seeds",
        *args,
        "--method=minmax",
        "--skip-first=2",
        "--metric=train/grad_norm",
        "--capture-to=captures",
        "--write",
        cwd=root,
    )
    # Issue 15 (judge): a metric missing at a step the run reached is an error of the expectations
    # covering it. Only the window covers step 0 (the warm-up is excluded from the band), so the
    # runs break exactly that window, each with step 0 missing; derive writes and exits 1.
    assert out.returncode == 1, out.stdout
    breaks = [line for line in out.stdout.splitlines() if "gives" in line and line.startswith("  train/")]
    assert len(breaks) == 3 and all("[1]" in b and "missing at 1 step it covers: step 0" in b for b in breaks)
    assert load_manual(root).profile("seeds").expectations["train/grad_norm"][0].max >= 50
    assert run_cli("build", cwd=root).returncode == 0
    checked = run_cli("check", cwd=root)  # check agrees with derive: the same three breaks, nothing else
    found = [line for line in checked.stdout.splitlines() if ": error: " in line]
    assert checked.returncode == 1 and len(found) == 3, checked.stdout
    assert all("missing at 1 step it covers: step 0" in line for line in found)


@pytest.mark.parametrize("sources", ["[seed-1]", None], ids=["named", "none means all"])
def test_check_re_judges_every_expectation_with_or_without_sources(tmp_path: Path, sources: str | None) -> None:
    root = seeds_project(tmp_path / "manual")
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": seed_run(i) for i in (1, 2)})
    args = [f"--run={n}={p}" for n, p in paths.items()]
    assert run_cli("derive", "--profile", "seeds", *args, "--capture-to=captures", "--write", cwd=root).returncode == 0
    text = (root / PROFILE).read_text("utf-8")
    tight = "{kind: band, min: 0.7, max: 0.71, steps: 12" + (f", sources: {sources}" if sources else "") + "}"
    start = text.index("  rollout/raw_reward:\n") + len("  rollout/raw_reward:\n")
    end = text.index("\n", start)
    (root / PROFILE).write_text(text[:start] + "    - " + tight + text[end:], "utf-8")
    assert run_cli("build", cwd=root).returncode == 0
    found = run_cli("check", cwd=root)
    assert found.returncode == 1
    judged_on = {s for s in ("seed-1", "seed-2") if f"its own capture '{s}' gives fail" in found.stdout}
    assert judged_on == ({"seed-1"} if sources else {"seed-1", "seed-2"}), found.stdout


@pytest.mark.parametrize(
    "values, method, domain, expected",
    [
        ([0.01, 0.02, 0.4], "margin:0.25", "fraction", (0.00397, 1)),  # by a factor of 40^0.25: max 1.006
        ([0, 0.02, 0.4], "margin:0.25", "fraction", (0, 0.5)),  # it reached 0: by an amount, min -0.1
        ([0.6, 0.95, 0.99], "sigma:3", "fraction", (0.203, 1)),  # max would be 1.49
        ([0.4, 1.2, 4.9], "sigma:3", "non-negative", (0, 9.37)),  # a norm never below 0 (min would be -5.04)
        ([-0.3, 0.2], "margin:0.25", "any", (-0.425, 0.325)),
        ([1.5e308, -1.5e308], "sigma:3", "any", (-sys.float_info.max, sys.float_info.max)),  # no overflow
        ([1.5e308, 1.5e308], "margin:0.25", "non-negative", (1.5e308, 1.5e308)),
        ([5e-324, 5e-323], "minmax", "non-negative", (5e-324, 5e-323)),
    ],
)
def test_bounds_stay_in_the_domain_and_the_float_range(
    values: list[float], method: str, domain: str, expected: tuple[float, float]
) -> None:
    lo, hi = band_bounds(values, Method.parse(method), 3, domain)  # type: ignore[arg-type]
    assert (lo, hi) == pytest.approx(expected) and math.isfinite(lo) and math.isfinite(hi)


def test_domain_comes_from_the_catalog_and_sigma_near_the_float_limit_writes_a_valid_file(tmp_path: Path) -> None:
    catalog = SEEDS_CATALOG.replace(
        "        meaning: the gradient norm\n", "        meaning: the gradient norm\n        domain: non-negative\n"
    ).replace("      - key: train/ppo_kl\n", "      - key: train/ppo_kl\n        unit: fraction\n")
    root = seeds_project(tmp_path / "manual")
    (root / "ranges/catalog.yaml").write_text(catalog, "utf-8")
    runs = {f"seed-{i}": seed_run(i) for i in (1, 2, 3)}
    runs["seed-1"].series["train/grad_norm"][5] = 0.0  # near 0: sigma:3 reaches below it
    runs["seed-2"].series["rollout/response_lengths"][3] = 1.5e308
    runs["seed-3"].series["rollout/response_lengths"][3] = -1.5e308
    paths = write_runs(tmp_path / "runs", runs)
    out = run_cli(
        "derive",
        "--profile",
        "seeds",
        *(f"--run={n}={p}" for n, p in paths.items()),
        "--method=sigma:3",
        "--metric=train/grad_norm",
        "--metric=rollout/response_lengths",
        "--metric=train/ppo_kl",
        "--write",
        cwd=root,
    )
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr, out.stderr
    profile = load_manual(root).profile("seeds")  # the file is valid YAML and a valid profile
    e = profile.expectations
    assert e["train/grad_norm"][0].min >= 0
    lengths = e["rollout/response_lengths"][0]
    assert math.isfinite(lengths.min) and math.isfinite(lengths.max) and lengths.min >= 0
    assert run_cli("build", cwd=root).returncode == 0


def test_a_subnormal_band_builds(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual")
    text = (root / PROFILE).read_text("utf-8").replace("min: 0.5, max: 0.9, steps: 12", "min: 5e-324, max: 5e-323")
    (root / PROFILE).write_text(text, "utf-8")
    out = run_cli("build", cwd=root)
    assert out.returncode == 0, out.stderr


HOSTILE = {
    "integer above 1e308": '{"metric":"rollout/raw_reward","series":[[0,' + "9" * 400 + "]]}\n",
    "step of 2^63": '{"metric":"rollout/raw_reward","series":[[9223372036854775808,0.7]]}\n',
    "deep nesting": '{"metric":"rollout/raw_reward","series":' + "[" * 100_000 + "]" * 100_000 + "}\n",
    "lone surrogate": '{"metric":"rollout/raw_\\ud800reward","series":[[0,0.7]]}\n',
    "not UTF-8": b'{"metric":"rollout/raw_reward","series":[[0,0.7]]}\xff\xfe\n',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_committed_capture_is_a_finding_never_a_traceback(tmp_path: Path, name: str) -> None:
    root = seeds_project(tmp_path / "manual")
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": seed_run(i) for i in (1, 2)})
    args = [f"--run={n}={p}" for n, p in paths.items()]
    assert run_cli("derive", "--profile", "seeds", *args, "--capture-to=captures", "--write", cwd=root).returncode == 0
    assert run_cli("build", cwd=root).returncode == 0
    payload = HOSTILE[name]
    data = payload if isinstance(payload, bytes) else payload.encode()
    (root / "captures/seed-2.jsonl").write_bytes(data)
    # Its digest recorded too: what check reports comes from reading it, not from a changed SHA-256.
    profile = root / PROFILE
    old_sha = load_manual(root).profile("seeds").sources["seed-2"].sha256
    profile.write_text(profile.read_text("utf-8").replace(old_sha, hashlib.sha256(data).hexdigest()), "utf-8")
    for command in ("check", "build"):
        out = run_cli(command, cwd=root)
        assert "Traceback" not in out.stdout + out.stderr and out.returncode in (0, 1, 2), (command, out.stderr)
    checked = run_cli("check", cwd=root)
    assert checked.returncode == 1
    assert "SHA-256" not in checked.stdout
    assert "captures/seed-2.jsonl:" in checked.stdout or "capture 'seed-2' gives error" in checked.stdout, (
        checked.stdout
    )


def test_derive_waits_for_the_project_lock(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual")
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": seed_run(i) for i in (1, 2)})
    before = (root / PROFILE).read_text("utf-8")
    fd = os.open(root / "docs", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # what a build in progress holds
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "metrics_manual", "derive", "--profile", "seeds", "--write"]
            + [f"--run={n}={p}" for n, p in paths.items()],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Until derive says it waits (however long its start takes on a busy machine), then a moment more.
        first = proc.stderr.readline() if proc.stderr else ""
        assert "waiting for another metrics-manual command" in first, first
        time.sleep(0.5)
        assert proc.poll() is None and (root / PROFILE).read_text("utf-8") == before  # waiting, nothing written
    finally:
        os.close(fd)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, first + err
    assert (root / PROFILE).read_text("utf-8") != before
