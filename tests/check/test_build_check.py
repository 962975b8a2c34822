"""build writes only what changed and nothing on bad input; check finds every kind of drift."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from conftest import PROJECT, REAL_TREE, REPO_ITSELF, TINY_PROFILE, run_build, run_cli, snapshot, write_project
from metrics_manual.cli import project
from metrics_manual.diagnostics import codes


def build(root: Path) -> str:
    result = run_build(root)
    return result.stdout + result.stderr


def check(root: Path, *args: str):
    return run_cli("check", "--root", str(root), *args)


def test_build_writes_only_changed_files(tiny: Path) -> None:
    first = build(tiny)
    assert first.endswith("21 written, 0 unchanged, 0 removed\n")
    stamps = {p: p.stat().st_mtime_ns for p in tiny.rglob("*") if p.is_file()}
    assert build(tiny).endswith("0 written, 21 unchanged, 0 removed\n")
    assert stamps == {p: p.stat().st_mtime_ns for p in tiny.rglob("*") if p.is_file()}
    profile = tiny / "ranges/profiles/tiny.yaml"
    profile.write_text(profile.read_text("utf-8").replace("max: 0.9", "max: 0.95"), "utf-8")
    out = build(tiny)
    # The number shows on the section's page, in the map's table of every range, the profile page and every
    # export but the dashboard, which draws no band for the first steps (steps: 10).
    assert sorted(line for line in out.splitlines() if line.startswith("wrote")) == [
        "wrote docs/.generated.json",
        "wrote docs/export/tiny.csv",
        "wrote docs/export/tiny.json",
        "wrote docs/export/tiny.rules.yml",
        "wrote docs/export/tiny.yaml",
        "wrote docs/profiles/tiny.md",
        "wrote docs/reference/metrics/index.md",
        "wrote docs/reference/metrics/rollout.md",
    ]
    assert "0.5 to 0.95 per step over 10 steps" in (tiny / "docs/reference/metrics/rollout.md").read_text("utf-8")


def test_invalid_source_writes_nothing(tiny: Path) -> None:
    build(tiny)
    profile = tiny / "ranges/profiles/tiny.yaml"
    profile.write_text(
        profile.read_text("utf-8").replace("max: 0.9", "max: 0.95").replace("min: 0.25", "min: x"), "utf-8"
    )
    before = snapshot(tiny)
    result = run_cli("build", "--root", str(tiny))
    assert result.returncode == 2
    assert result.stderr.endswith("1 error(s); nothing was written.\n")
    assert snapshot(tiny) == before


def test_first_build_with_invalid_source_creates_nothing(tmp_path: Path) -> None:
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE + "oops: [\n"})
    before = snapshot(root)
    assert run_cli("build", "--root", str(root)).returncode == 2
    assert snapshot(root) == before


def test_check_passes_after_build_and_writes_nothing(tiny: Path) -> None:
    build(tiny)
    before = snapshot(tiny)
    result = check(tiny)
    assert (result.returncode, result.stdout) == (0, "ok: docs, exports and schemas agree with ranges/\n")
    assert snapshot(tiny) == before


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), "utf-8")


def line_of(path: Path, text: str) -> int:
    """The first line of a file holding `text` (a page's layout is the templates' business)."""
    return next(i for i, line in enumerate(path.read_text("utf-8").splitlines(), start=1) if text in line)


def test_drift_number_changed_in_ranges_only(tiny: Path) -> None:
    build(tiny)
    edit(tiny / "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.95")
    result = check(tiny)
    assert result.returncode == 1
    line = line_of(tiny / "docs/reference/metrics/rollout.md", "0.5 to 0.9 per step")
    assert (
        f"docs/reference/metrics/rollout.md:{line}:1: error: generated file is out of date; run `metrics-manual build`"
        in result.stdout
    )
    assert re.search(
        r'^- +<li><span class="mm-range[^>]*>0\.5 to 0\.9 per step over 10 steps</span> <span class="mm-profile">Tiny runs</span>',
        result.stdout,
        re.M,
    )
    assert re.search(
        r'^\+ +<li><span class="mm-range[^>]*>0\.5 to 0\.95 per step over 10 steps</span> <span class="mm-profile">Tiny runs</span>',
        result.stdout,
        re.M,
    )
    assert "docs/export/tiny.json" in result.stdout
    assert result.stdout.rstrip().endswith("run `metrics-manual build` to regenerate files")
    build(tiny)
    assert check(tiny).returncode == 0


def test_drift_page_edited_by_hand(tiny: Path) -> None:
    build(tiny)
    edit(tiny / "docs/profiles/tiny.md", "| Model | M-1 |", "| Model | M-2 |")
    result = check(tiny)
    assert result.returncode == 1
    assert (
        "docs/profiles/tiny.md:14:1: error: generated file was edited by hand; "
        "edit ranges/ or templates/ instead and run `metrics-manual build`"
    ) in result.stdout
    out = build(tiny)
    assert "overwrote hand edits in docs/profiles/tiny.md" in out
    assert check(tiny).returncode == 0


def test_drift_template_changed(tiny: Path) -> None:
    build(tiny)
    edit(tiny / "templates/pages/profiles/[profile].md.j2", "## Sources {#sources}", "## Where from {#sources}")
    result = check(tiny)
    assert result.returncode == 1
    assert "docs/profiles/tiny.md:" in result.stdout and "error: generated file is out of date" in result.stdout
    assert "+## Where from {#sources}" in result.stdout
    build(tiny)
    assert check(tiny).returncode == 0


def test_drift_template_drops_a_value(tiny: Path) -> None:
    """A template bug that loses a number fails even when the committed page matches it."""
    edit(
        tiny / "templates/macros.md.j2",  # a profile's ranges in an entry
        "{% for e in p.expectations.get(metric.key, []) %}\n    <li>",
        "{% for e in p.expectations.get(metric.key, [])[:1] %}\n    <li>",
    )
    build(tiny)
    result = check(tiny)
    assert result.returncode == 1
    line = line_of(tiny / "docs/reference/metrics/training.md", "{#m-train-grad_norm ")
    assert result.stdout.splitlines()[0] == (
        f"docs/reference/metrics/training.md:{line}:1: error: reference page disagrees with ranges/: "
        "train/grad_norm on 'Tiny runs' should read '1 to 3 per step in the first 2 steps', which is missing [MM411]"
    )


def test_drift_export_deleted(tiny: Path) -> None:
    build(tiny)
    (tiny / "docs/export/tiny.csv").unlink()
    result = check(tiny)
    assert result.returncode == 1
    assert "docs/export/tiny.csv:1:1: error: generated file is missing; run `metrics-manual build`" in result.stdout
    build(tiny)
    assert check(tiny).returncode == 0


def test_drift_stray_generated_file(tiny: Path) -> None:
    second = TINY_PROFILE.replace("id: tiny", "id: old").replace("tiny-notes", "old-notes")
    (tiny / "ranges/profiles/old.yaml").write_text(second, "utf-8")
    build(tiny)
    (tiny / "ranges/profiles/old.yaml").unlink()
    (tiny / "docs/export/notes.txt").write_text("left here\n", "utf-8")
    result = check(tiny)
    assert result.returncode == 1
    for rel in ("docs/profiles/old.md", "docs/export/old.json"):
        assert (
            f"{rel}:1:1: error: stray generated file: build no longer makes it; run `metrics-manual build` to remove it"
            in result.stdout
        )
    # A file build never made is the user's: check says so, and build never deletes it.
    assert (
        "docs/export/notes.txt:1:1: error: file in the export folder that build does not make; move it out of "
        "docs/export/ (build never deletes a file it did not write)"
    ) in result.stdout
    out = build(tiny)
    assert "removed stray docs/profiles/old.md" in out
    assert not (tiny / "docs/profiles/old.md").exists()
    assert (tiny / "docs/export/notes.txt").exists()
    (tiny / "docs/export/notes.txt").unlink()
    assert check(tiny).returncode == 0


def test_drift_hand_written_page_names_unknown_metric(tiny: Path) -> None:
    build(tiny)
    (tiny / "docs/guide.md").write_text(
        "# Guide\n\nWatch `train/grad_norm` and\n`train/grad_nrom`, not `ranges/x.yaml`.\n\n"
        "```\ntrain/nothing_in_fences\n```\n",
        "utf-8",
    )
    result = check(tiny)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == (
        "docs/guide.md:4:1: error: unknown metric 'train/grad_nrom': not in ranges/catalog.yaml; "
        "did you mean 'train/grad_norm'? [MM410]"
    )
    # A rebuild would not fix it: no advice to run build, the code's own fix instead.
    assert result.stdout.splitlines()[1:] == [
        "1 problem(s), which `metrics-manual build` does not fix:",
        f"  MM410 unknown-metric-in-page: {codes.UNKNOWN_METRIC_IN_PAGE.hint}",
    ]
    (tiny / "docs/guide.md").write_text(
        "# Guide\n\nWatch `train/grad_norm` and `train/weight/max` and `train/*`.\n", "utf-8"
    )
    assert check(tiny).returncode == 0


def test_check_formats(tiny: Path) -> None:
    build(tiny)
    edit(tiny / "docs/profiles/tiny.md", "| Model | M-1 |", "| Model | M-2 |")
    as_json = json.loads(check(tiny, "--format", "json").stdout)
    assert [(d["path"], d["line"], d["code"], d["name"]) for d in as_json] == [
        ("docs/profiles/tiny.md", 14, "MM403", "hand-edited")
    ]
    assert as_json[0]["diff"].startswith("--- a/docs/profiles/tiny.md\n+++ b/docs/profiles/tiny.md\n")
    github = check(tiny, "--format", "github")
    assert github.returncode == 1
    assert github.stdout == (
        "::error file=docs/profiles/tiny.md,line=14,col=1,title=MM403 hand-edited::generated file was edited by hand; "
        "edit ranges/ or templates/ instead and run `metrics-manual build`\n"
    )


def test_check_on_invalid_source_exits_2(tiny: Path) -> None:
    edit(tiny / "ranges/profiles/tiny.yaml", "max: 0.9", "max: .inf")
    result = check(tiny)
    assert result.returncode == 2
    assert "ranges/profiles/tiny.yaml:26:35: error: max: '.inf' is not a finite number" in result.stderr


@REAL_TREE
@REPO_ITSELF
def test_the_repository_agrees_with_its_source() -> None:
    """CI fails whenever the committed manual drifts from ranges/."""
    result = check(PROJECT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_failed_write_leaves_files_as_they_were(tiny: Path, monkeypatch) -> None:
    from metrics_manual.build import build as build_in_process
    from metrics_manual.disk import switch
    from metrics_manual.disk.files import WriteError

    build(tiny)
    edit(tiny / "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.95")
    before = snapshot(tiny)
    calls = []
    real_write = switch.write_text

    def fail_staging(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(switch, "write_text", fail_staging)
    try:
        build_in_process(tiny)
    except WriteError as err:
        assert "No space left on device; nothing was changed" in str(err)
    else:
        raise AssertionError("the write should have failed")
    assert snapshot(tiny) == before


def test_failed_replace_puts_back_what_was_replaced(tiny: Path) -> None:
    build(tiny)
    edit(tiny / "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.95")
    # A folder where build must write a file: staging works, replacing that one fails.
    (tiny / "docs/export/tiny.csv").unlink()
    (tiny / "docs/export/tiny.csv").mkdir()
    before = snapshot(tiny)
    result = run_cli("build", "--root", str(tiny))
    assert result.returncode == 2
    assert result.stderr.startswith("error: cannot write ")
    assert "Traceback" not in result.stderr
    assert snapshot(tiny) == before


def test_short_diff_shows_its_first_lines_and_counts_the_rest() -> None:
    import difflib

    from metrics_manual.check.drift import DIFF_LINES, short_diff

    old = "".join(f"line {i}\n" for i in range(2000))
    one = old.replace("line 500\n", "line 500 changed\n")
    assert short_diff("f", old, one) == "".join(
        difflib.unified_diff(old.splitlines(True), one.splitlines(True), "a/f", "b/f")
    )
    many = "".join(f"line {i}{' x' if i % 20 == 0 and i < 300 else ''}\n" for i in range(2000))
    full = list(difflib.unified_diff(old.splitlines(True), many.splitlines(True), "a/f", "b/f"))
    diff = short_diff("f", old, many).splitlines(True)
    assert len(full) > 2 * DIFF_LINES and diff[: 2 + DIFF_LINES] == full[: 2 + DIFF_LINES]
    assert diff[2 + DIFF_LINES :] == [f"… {len(full) - 2 - DIFF_LINES} more lines\n"]
    # Every line changed: still a short report, cut at the window, never quadratic.
    everything = "".join(f"other {i}\n" for i in range(200_000))
    big = short_diff("f", old * 100, everything).splitlines()
    assert len(big) == 2 + DIFF_LINES + 1 and big[-1].startswith("… over ")
    assert big[-1].endswith("more lines: the changes span 200000 lines")


def test_drift_of_every_file_is_summarised(tiny: Path) -> None:
    """Each drifted file shows a short diff and a count of the rest; the last lines count the files."""
    from metrics_manual.check.drift import DIFF_LINES

    build(tiny)
    generated = json.loads((tiny / "docs/.generated.json").read_text("utf-8"))
    for rel in generated:
        (tiny / rel).write_text("".join(f"edited {i}\n" for i in range(100)), "utf-8")
    result = check(tiny)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    finding = re.compile(r"^docs/\S+:\d+:\d+: error: .* \[MM\d+\]$")
    starts = [i for i, line in enumerate(lines) if finding.match(line)]
    assert len(starts) == len(generated)
    for start in starts:
        assert lines[start + 1].startswith("--- a/docs/"), lines[start : start + 3]
        diff = list(itertools.takewhile(lambda line: line[:1] in ("-", "+", "@", " ", "~"), lines[start + 1 :]))
        count = lines[start + 1 + len(diff)]
        assert len(diff) == 2 + DIFF_LINES and re.match(r"… (over )?\d+ more lines", count), (diff, count)
    assert lines[-2:] == [f"{len(generated)} files drifted", f"{len(generated)} problem(s): {project.BUILD}"]


def test_github_annotations_escape_every_property() -> None:
    from metrics_manual.diagnostics import codes
    from metrics_manual.diagnostics.finding import Finding
    from metrics_manual.diagnostics.report import report

    finding = Finding("docs/a,b:c%.md", 3, 1, "bad: 100%\nnext line", code=codes.GENERATED_OUT_OF_DATE)
    assert report([finding], "github") == (
        "::error file=docs/a%2Cb%3Ac%25.md,line=3,col=1,title=MM402 generated-out-of-date::bad: 100%25%0Anext line"
    )


def test_changed_drawing_reads_as_one_line() -> None:
    from metrics_manual.check.drift import short_diff

    svg = '<div class="mm-figure"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 480 58">{}</svg></div>\n'
    head = "### [`train/grad_norm`](#m) {#m .mm-key}\n\nmeaning\n"
    old = head + svg.format("<rect x='1'/>" * 300) + "after\n"
    new = old.replace("<rect x='1'/>", "<rect x='2'/>").replace("meaning", "a meaning")
    diff = short_diff("docs/reference/metrics/training.md", old, new)
    assert "<svg" not in diff and "rect" not in diff
    assert "~ drawing of train/grad_norm changed\n" in diff
    assert "-meaning\n+a meaning\n" in diff
    # A drawing added or removed (not changed in place) is still one line, named.
    assert "+drawing of train/grad_norm (inline SVG)\n" in short_diff("f", head + "after\n", old)


def test_drift_of_a_widened_band_is_a_short_report(tiny: Path) -> None:
    build(tiny)
    edit(tiny / "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.95")
    result = check(tiny)
    assert result.returncode == 1
    assert "<svg" not in result.stdout
    drawn = [line for line in result.stdout.splitlines() if line.startswith("~ drawing of ")]
    assert drawn, result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) < 300  # no line of inline SVG
