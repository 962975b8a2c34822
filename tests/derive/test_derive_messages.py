"""What derive tells its user: a run it cannot read, a band kept to the metric's domain, a band with no width."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from conftest import run_cli, snapshot
from derive_helpers import SEEDS_CATALOG, SEEDS_PROFILE, seed_run, write_project, write_runs
from metrics_manual.runs.series import Run
from metrics_manual.source.load import load_manual

# Two metrics no profile ranges, so derive proposes a band for each: one that cannot be negative and
# whose values lie near 0 (the default margin reaches below 0), one that is the same at every step.
CATALOG = (
    SEEDS_CATALOG
    + """\
      - key: perf/retries
        meaning: retries of the step
        domain: non-negative
      - key: perf/world_size
        meaning: the GPUs of the run
"""
)


def _runs(tmp: Path, constant: float = 8.0) -> list[str]:
    runs = {}
    for i in (1, 2, 3):
        run: Run = seed_run(i)
        rng = random.Random(100 + i)
        run.series["perf/retries"] = {s: rng.uniform(0.1, 2.0) for s in run.series["perf/step_time"]}
        run.series["perf/world_size"] = {s: constant for s in run.series["perf/step_time"]}
        runs[f"seed-{i}"] = run
    return [f"--run={name}={path}" for name, path in write_runs(tmp / "runs", runs).items()]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, list[str]]:
    return write_project(tmp_path / "manual", CATALOG, {"seeds": SEEDS_PROFILE}), _runs(tmp_path)


def _line(stdout: str, head: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(head))


def test_a_run_derive_cannot_read_is_one_error_line_with_advice_derive_takes(
    project: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, _ = project
    odd = tmp_path / "odd.log"
    odd.write_text("step 1 reward 0.5\n", "utf-8")
    before = snapshot(root)
    result = run_cli("derive", "--profile", "seeds", f"--run=odd={odd}", cwd=root)
    assert result.returncode == 2
    first, *rest = result.stderr.splitlines()
    assert re.fullmatch(
        rf"{re.escape(str(odd))}:1:1: error: not a metrics file of a known form \(.*\) \[MM503\]", first
    )
    assert first.count("error:") == 1
    assert rest == ["1 error(s); nothing was written."]
    assert snapshot(root) == before
    # The advice names --input-format: derive takes it, and reads the file in the form it names.
    assert "--input-format" in first
    forced = run_cli("derive", "--profile", "seeds", f"--run=odd={odd}", "--input-format", "events", cwd=root)
    # Read as an event log, whose lines without a metric are skipped: no metric in the whole file is bad input.
    assert forced.returncode == 2 and "no metric was read from 1 file read as events" in forced.stderr
    assert snapshot(root) == before


def test_input_format_is_the_form_the_runs_are_read_in(project: tuple[Path, list[str]]) -> None:
    root, runs = project
    detected = run_cli("derive", "--profile", "seeds", *runs, cwd=root)
    named = run_cli("derive", "--profile", "seeds", *runs, "--input-format", "ci-history", cwd=root)
    assert detected.returncode == named.returncode == 0, detected.stdout + detected.stderr
    assert named.stdout == detected.stdout and "0.452 to 0.908" in named.stdout
    # The runs are CI-history files: read as dashboard logs they hold no metric derive can use.
    wrong = run_cli("derive", "--profile", "seeds", *runs, "--input-format", "dashboard", cwd=root)
    assert wrong.returncode != 0 and "0.452 to 0.908" not in wrong.stdout
    assert "--input-format [auto|events|dashboard|ci-history|tensorboard|wandb-csv]" in run_cli(
        "derive", "--help"
    ).stdout.replace("\n", " ").replace("  ", " ")


def test_the_domain_is_named_only_where_it_moved_a_bound(project: tuple[Path, list[str]]) -> None:
    root, runs = project
    result = run_cli("derive", "--profile", "seeds", *runs, "--write", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    retries = _line(result.stdout, "perf/retries [0] proposed band")
    written = load_manual(root).profile("seeds").expectations["perf/retries"][0]
    assert written.min == 0 and written.max is not None and written.max > 2
    # The margin reached below 0, and the domain moved the minimum there; the maximum was not moved.
    clipped = re.search(r"\(kept to the metric's domain, non-negative: min (-[0-9.]+) -> 0\)$", retries)
    assert clipped and float(clipped.group(1)) < 0, retries
    # Response lengths (tokens: non-negative) lie far from 0: nothing was kept to the domain.
    lengths = _line(result.stdout, "rollout/response_lengths [0] proposed band")
    assert (
        "domain" not in lengths
        and load_manual(root).profile("seeds").expectations["rollout/response_lengths"][0].min > 0
    )  # type: ignore[union-attr, operator]


def test_a_band_with_no_width_is_written_with_a_warning(project: tuple[Path, list[str]]) -> None:
    root, runs = project
    result = run_cli("derive", "--profile", "seeds", *runs, "--write", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    band = load_manual(root).profile("seeds").expectations["perf/world_size"][0]
    assert (band.min, band.max) == (8, 8)  # written as the runs gave it: never widened unasked
    text = (root / "ranges/profiles/seeds.yaml").read_text("utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("  perf/world_size:")) + 1
    warnings = [w for w in result.stderr.splitlines() if "[MM520]" in w]
    assert len(warnings) == 1, result.stderr
    assert re.match(rf"ranges/profiles/seeds\.yaml:{line}:\d+: warning: perf/world_size \[0\]: ", warnings[0])
    for words in ("no width", "all 36 values were 8", "kind: exact, value: 8, at: every_step", "more runs"):
        assert words in warnings[0]
    # Bands that vary are not warned about.
    assert not any("[MM520]" in w and "perf/world_size" not in w for w in result.stderr.splitlines())


def test_no_warning_when_the_runs_vary(tmp_path: Path) -> None:
    root = write_project(tmp_path / "manual", CATALOG, {"seeds": SEEDS_PROFILE})
    runs = _runs(tmp_path)
    result = run_cli("derive", "--profile", "seeds", *runs, "--metric", "perf/retries", cwd=root)
    assert result.returncode == 0 and "MM520" not in result.stderr
