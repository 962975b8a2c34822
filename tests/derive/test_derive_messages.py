"""What derive tells its user: a run it cannot read, a band kept to the metric's domain, a band with no width."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from conftest import run_cli, snapshot
from derive_helpers import SEEDS_CATALOG, SEEDS_PROFILE, seed_run, write_project, write_runs
from metrics_manual.runs.forms import RUN_FORMATS
from metrics_manual.runs.run import Run
from metrics_manual.source.load import load_manual

# Two metrics no profile ranges, so derive proposes a band for each: one that cannot be negative and
# is often 0 (the default margin reaches below 0), one that is nearly the same at every step.
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
RARE_STEP = 6  # where seed-2 gives the one value that differs, in `_runs(..., rare=True)`


def _runs(tmp: Path, constant: float = 8.0, grad_norm: float | None = None, rare: bool = False) -> list[str]:
    """Three seeds, with perf/world_size `constant` at every step (with `rare`: but at RARE_STEP of seed-2,
    where it and grad_norm are twice as large, so a percentile envelope gives a band of no width)."""
    runs = {}
    for i in (1, 2, 3):
        run: Run = seed_run(i)
        rng = random.Random(100 + i)
        run.series["perf/retries"] = {s: float(rng.choice((0, 0, 1, 2))) for s in run.series["perf/step_time"]}
        run.series["perf/world_size"] = {s: constant for s in run.series["perf/step_time"]}
        if grad_norm is not None:  # one value at every step
            run.series["train/grad_norm"] = {s: grad_norm for s in run.series["train/grad_norm"]}
        if rare and i == 2:
            run.series["perf/world_size"][RARE_STEP] *= 2
            if grad_norm is not None:
                run.series["train/grad_norm"][RARE_STEP] *= 2
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
    assert f"--input-format [auto|{'|'.join(RUN_FORMATS)}]" in run_cli("derive", "--help").stdout.replace(
        "\n", " "
    ).replace("  ", " ")


def test_the_domain_is_named_only_where_it_moved_a_bound(project: tuple[Path, list[str]]) -> None:
    root, runs = project
    result = run_cli("derive", "--profile", "seeds", *runs, "--write", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    retries = _line(result.stdout, "perf/retries [0] proposed band")
    written = load_manual(root).profile("seeds").expectations["perf/retries"][0]
    assert written.min == 0 and written.max is not None and written.max > 2
    # Its runs reached 0: the margin, an amount then, reached below 0, and the domain moved the minimum
    # there; the maximum was not moved.
    clipped = re.search(r"\(kept to the metric's domain, non-negative: min (-[0-9.]+) -> 0\)$", retries)
    assert clipped and float(clipped.group(1)) < 0, retries
    # Response lengths (tokens: non-negative) stayed above 0: the margin is a factor, the floor stays above
    # 0 and nothing was kept to the domain.
    lengths = _line(result.stdout, "rollout/response_lengths [0] proposed band")
    assert "in log space" in lengths and "kept to the metric's domain" not in lengths, lengths
    assert load_manual(root).profile("seeds").expectations["rollout/response_lengths"][0].min > 0  # type: ignore[union-attr, operator]


def test_a_metric_of_one_value_in_every_run_is_an_exact_value(project: tuple[Path, list[str]]) -> None:
    root, runs = project
    result = run_cli("derive", "--profile", "seeds", *runs, "--write", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    exact = load_manual(root).profile("seeds").expectations["perf/world_size"][0]
    assert (exact.kind, exact.value, exact.at) == ("exact", 8, "every_step")  # type: ignore[union-attr]
    assert _line(result.stdout, "perf/world_size [0] proposed exact: all 36 values were 8, in every run")
    assert "MM520" not in result.stderr  # no band of no width, so no warning
    # An existing band of every step whose runs are one value becomes that exact value, its condition kept.
    band = run_cli("derive", "--profile", "seeds", *_runs(root.parent / "flat", grad_norm=1.0), "--write", cwd=root)
    assert band.returncode == 0, band.stdout + band.stderr
    grad, window = load_manual(root).profile("seeds").expectations["train/grad_norm"]
    assert (grad.kind, grad.value, grad.at) == ("exact", 1, "every_step")  # type: ignore[union-attr]
    assert _line(band.stdout, "train/grad_norm [0] exact: all 36 values were 1, in every run").endswith(
        "(it was a band)"
    )
    assert (window.kind, window.min, window.max, window.condition) == ("band", 1, 1, "in the first steps")  # type: ignore[union-attr]
    text = (root / "ranges/profiles/seeds.yaml").read_text("utf-8")
    # Written anew in its kind's order (in the block style it had): kind and value first, its sources last.
    assert "  train/grad_norm:\n    - kind: exact\n      value: 1\n      at: every_step\n      sources: [seed-1" in text


def test_a_band_with_no_width_is_written_with_a_warning(project: tuple[Path, list[str]]) -> None:
    root, _ = project
    runs = _runs(root.parent / "rare", rare=True)
    result = run_cli("derive", "--profile", "seeds", *runs, "--method", "percentile:5,95", "--write", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr  # the rare value lies outside: derive says so
    band = load_manual(root).profile("seeds").expectations["perf/world_size"][0]
    assert (band.min, band.max) == (8, 8)  # written as the method gave it: never widened unasked
    text = (root / "ranges/profiles/seeds.yaml").read_text("utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("  perf/world_size:")) + 1
    warnings = [w for w in result.stderr.splitlines() if "[MM520]" in w]
    assert len(warnings) == 1, result.stderr
    assert re.match(rf"ranges/profiles/seeds\.yaml:{line}:\d+: warning: perf/world_size \[0\]: ", warnings[0])
    for words in ("no width", "the method gave no width", "(kind: exact, value: 8, at: every_step)", "more runs"):
        assert words in warnings[0]
    assert "(a proposed expectation" not in warnings[0]
    # Bands that vary are not warned about.
    assert not any("[MM520]" in w and "perf/world_size" not in w for w in result.stderr.splitlines())


def test_no_warning_when_the_runs_vary(tmp_path: Path) -> None:
    root = write_project(tmp_path / "manual", CATALOG, {"seeds": SEEDS_PROFILE})
    runs = _runs(tmp_path)
    result = run_cli("derive", "--profile", "seeds", *runs, "--metric", "perf/retries", cwd=root)
    assert result.returncode == 0 and "MM520" not in result.stderr


def _warned(stderr: str) -> dict[str, str]:
    """The MM520 warnings by the expectation they name ("train/grad_norm [1]")."""
    out = {}
    for line in stderr.splitlines():
        found = re.search(r": warning: (\S+ \[\d+\]): .*\[MM520\]$", line)
        if found:
            out[found.group(1)] = line
    return out


def _at(text: str, key: str, item: int) -> int:
    """The line of the metric's expectation `item` (its `- ` line) in a profile's text."""
    lines = text.splitlines()
    at = next(i for i, t in enumerate(lines) if t.startswith(f"  {key}:"))
    items = [i + 1 for i, t in enumerate(lines[at + 1 :], at + 1) if t.startswith("    - ")]
    return items[item]


def test_no_width_warnings_of_a_dry_run_point_into_the_file_on_disk(tmp_path: Path) -> None:
    root = write_project(tmp_path / "manual", CATALOG, {"seeds": SEEDS_PROFILE})
    runs = [*_runs(tmp_path, grad_norm=1.0, rare=True), "--method", "percentile:5,95"]
    profile = root / "ranges/profiles/seeds.yaml"
    on_disk = profile.read_text("utf-8")
    dry = run_cli("derive", "--profile", "seeds", *runs, cwd=root)
    assert profile.read_text("utf-8") == on_disk  # nothing written
    warned = _warned(dry.stderr)
    assert set(warned) == {"train/grad_norm [0]", "train/grad_norm [1]", "perf/world_size [0]"}, dry.stderr
    # The band in block style starts a line under its key, the window three lines further (min, max between).
    assert warned["train/grad_norm [0]"].startswith(
        f"ranges/profiles/seeds.yaml:{_at(on_disk, 'train/grad_norm', 0)}:7:"
    )
    assert warned["train/grad_norm [1]"].startswith(
        f"ranges/profiles/seeds.yaml:{_at(on_disk, 'train/grad_norm', 1)}:7:"
    )

    wrote = run_cli("derive", "--profile", "seeds", *runs, "--write", cwd=root)
    edited = profile.read_text("utf-8")
    # The edit adds the runs as sources above the expectations: every line moved, and the warnings
    # of the run that wrote the file point into it.
    assert _at(edited, "train/grad_norm", 0) > _at(on_disk, "train/grad_norm", 0)
    written = _warned(wrote.stderr)
    assert written["train/grad_norm [0]"].startswith(
        f"ranges/profiles/seeds.yaml:{_at(edited, 'train/grad_norm', 0)}:7:"
    )
    assert written["train/grad_norm [1]"].startswith(
        f"ranges/profiles/seeds.yaml:{_at(edited, 'train/grad_norm', 1)}:7:"
    )
    # A proposal is not in the file on disk in a dry run: the warning points at `expectations:` there
    # and names its line in the edit; once written, it points at it.
    expectations = next(i for i, t in enumerate(on_disk.splitlines(), 1) if t.startswith("expectations:"))
    proposal = _at(edited, "perf/world_size", 0)
    assert warned["perf/world_size [0]"].startswith(f"ranges/profiles/seeds.yaml:{expectations}:1:")
    assert (
        f"(a proposed expectation: line {proposal} of the edited file, which a dry run does not write)"
        in (warned["perf/world_size [0]"])
    )
    assert written["perf/world_size [0]"].startswith(f"ranges/profiles/seeds.yaml:{proposal}:")
    assert "a proposed expectation" not in written["perf/world_size [0]"]


def test_a_band_of_the_first_steps_is_never_advised_to_be_exact_at_every_step(tmp_path: Path) -> None:
    root = write_project(tmp_path / "manual", CATALOG, {"seeds": SEEDS_PROFILE})
    runs = [*_runs(tmp_path, grad_norm=1.0, rare=True), "--method", "percentile:5,95"]
    result = run_cli("derive", "--profile", "seeds", *runs, cwd=root)
    warned = _warned(result.stderr)
    # The window holds in the first 2 steps only: exact at every step would fail every later step.
    window = warned["train/grad_norm [1]"]
    assert "all 6 values were 1" in window and "first 2 steps" in window, window
    assert "more runs" in window and "by hand" in window
    assert "every_step" not in window and "kind: exact" not in window
    # The band of every step may be exact at every step, when the metric is constant by design.
    assert "(kind: exact, value: 1, at: every_step)" in warned["train/grad_norm [0]"]
