"""A corridor written by hand validates, its reference read from its pinned capture; a bad corridor or a
hostile reference capture is a finding at its file, line and column (exit 2), never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import TINY_CATALOG, run_cli, write_project
from corridor_fixture import KEY, REFERENCE, corridor_profile, corridor_project, curve, pin
from metrics_manual.diagnostics.finding import SourceError
from metrics_manual.model.schema import Corridor
from metrics_manual.runs.capture import reference_text
from metrics_manual.source import reader
from metrics_manual.source.load import load_manual

P = "ranges/profiles/p.yaml"
GOOD = reference_text({KEY: curve(range(10))})


def findings_of(root: Path) -> list[str]:
    with pytest.raises(SourceError) as exc:
        load_manual(root)
    return [str(f) for f in exc.value.findings]


def test_a_hand_written_corridor_validates_with_its_reference_read_from_the_capture(tmp_path: Path) -> None:
    project = corridor_project(tmp_path / "p", GOOD)
    [e] = load_manual(project).profile("p").expectations[KEY]
    assert isinstance(e, Corridor)
    assert e.reference.points == [(s, v) for s, v in curve(range(10))]
    assert e.span.steps == tuple(range(10))  # type: ignore[union-attr]
    result = run_cli("validate", "--root", str(project))
    assert result.returncode == 0, result.stderr


# (case, change to the profile's corridor line (old, new), the one finding)
CORRIDOR_CASES = [
    (
        "no tolerance below",
        ("abs_floor_down: 0.1}", "rel_up: 0.1}"),
        f"{P}:11:7: error: a corridor states rel_down, abs_floor_down or both: a side with neither has no width "
        "and fails any value off the reference (Miles' gate asks the same) [MM105]",
    ),
    (
        "negative tolerance",
        ("abs_floor_up: 0.1", "abs_floor_up: -0.1"),
        f"{P}:11:64: error: abs_floor_up: Input should be greater than or equal to 0 [MM105]",
    ),
    (
        "points written by hand",
        ("{source: ref}", "{source: ref, points: [[0, 1]]}"),
        f"{P}:11:49: error: points: a reference's points are read from its capture; remove them and name the "
        "capture in source [MM120]",
    ),
    (
        "unknown source",
        ("{source: ref}", "{source: rfe}"),
        f"{P}:11:44: error: unknown source 'rfe': a reference names a capture source of the profile [MM108]",
    ),
    (
        "no reference",
        ("reference: {source: ref}, ", ""),
        f"{P}:11:7: error: missing field 'reference' [MM102]",
    ),
]


@pytest.mark.parametrize(("case", "change", "expected"), CORRIDOR_CASES, ids=[c[0] for c in CORRIDOR_CASES])
def test_a_bad_corridor_is_a_finding_at_its_place(
    tmp_path: Path, case: str, change: tuple[str, str], expected: str
) -> None:
    root = tmp_path / "p"
    sha = pin(root, REFERENCE, GOOD)
    text = corridor_profile(sha)
    assert change[0] in text
    write_project(root, TINY_CATALOG, {"p": text.replace(*change)})
    assert findings_of(root) == [expected]


NAN = GOOD.replace("[3,0.", '[3,"NaN"],[33,0.', 1)


# (case, the capture's text, the one finding): hostile captures in a pull request.
CAPTURE_CASES = [
    (
        "not a finite number",
        GOOD.replace(",[3,", ',[3,"NaN"],[33,', 1),
        f"{REFERENCE}:1:1: error: the reference of {KEY} ({P}:11:44): not a finite number at step 3 (NaN): a "
        "reference is finite at each of its steps [MM120]",
    ),
    (
        "a step twice",
        GOOD.replace(",[3,", ",[2,0.5],[3,", 1),
        f"{REFERENCE}:1:1: error: the reference of {KEY} ({P}:11:44): step 2 again: a reference has each step "
        "once, in order [MM120]",
    ),
    (
        "steps out of order",
        GOOD.replace("[[0,", "[[5,0.1],[0,", 1),
        f"{REFERENCE}:1:1: error: the reference of {KEY} ({P}:11:44): step 0 after step 5: a reference has each "
        "step once, in order [MM120]",
    ),
    (
        "an overflowing number",
        GOOD.replace(",[3,", ",[3,1e999],[33,", 1),
        f"{REFERENCE}:1:1: error: the reference of {KEY} ({P}:11:44): not a finite number at step 3: a reference "
        "is finite at each of its steps [MM120]",
    ),
    (
        "a bare NaN token",
        GOOD.replace(",[3,", ",[3,NaN],[33,", 1),
        f'{REFERENCE}:1:1: error: not a CI-history line: expected {{"metric": ..., "series": [[step, value], ...]}} [MM120]',
    ),
    (
        "not the metric's line",
        GOOD.replace(KEY, "rollout/other"),
        f"{P}:11:44: error: capture {REFERENCE} has no line of {KEY}: the reference of a metric is the capture's "
        "line of its key [MM120]",
    ),
    (
        "a second line of the metric",
        GOOD + GOOD,
        f"{REFERENCE}:2:1: error: a second line of '{KEY}' (the first is line 1): a capture has one line per "
        "metric [MM120]",
    ),
    (
        "no point",
        json.dumps({"metric": KEY, "series": []}) + "\n",
        f"{REFERENCE}:1:1: error: the reference of {KEY} ({P}:11:44): its series has no point [MM120]",
    ),
    (
        "a negative step",
        GOOD.replace("[[0,", "[[-1,", 1),
        f"{REFERENCE}:1:1: error: the reference of {KEY} ({P}:11:44): point 1: the step -1 is not a whole "
        "number from 0 [MM120]",
    ),
    (
        "deeply nested",
        "[" * 100_000 + "\n",
        f'{REFERENCE}:1:1: error: not a CI-history line: expected {{"metric": ..., "series": [[step, value], ...]}} [MM120]',
    ),
    (
        "not UTF-8",
        "\udcff",  # written as the byte 0xff below
        f"{REFERENCE}:1:1: error: not UTF-8 text: a capture is CI-history lines [MM120]",
    ),
]


@pytest.mark.parametrize(("case", "capture", "expected"), CAPTURE_CASES, ids=[c[0] for c in CAPTURE_CASES])
def test_a_hostile_reference_capture_is_a_finding_never_a_traceback(
    tmp_path: Path, case: str, capture: str, expected: str
) -> None:
    root = tmp_path / "p"
    data = capture.encode("utf-8", "surrogateescape")
    (root / REFERENCE).parent.mkdir(parents=True)
    (root / REFERENCE).write_bytes(data)
    import hashlib

    write_project(root, TINY_CATALOG, {"p": corridor_profile(hashlib.sha256(data).hexdigest())})
    assert findings_of(root) == [expected]
    result = run_cli("validate", "--root", str(root))
    assert result.returncode == 2 and expected in result.stderr


def test_the_reference_capture_is_held_to_its_digest(tmp_path: Path) -> None:
    project = corridor_project(tmp_path / "p", GOOD)
    (project / REFERENCE).write_text(GOOD.replace("[0,0.3]", "[0,0.31]", 1), "utf-8")  # one value moved
    expected = (
        f"{P}:8:80: error: capture {REFERENCE} changed: its SHA-256 no longer matches; restore it or derive "
        "the ranges again [MM413]"
    )
    assert findings_of(project) == [expected]
    for command in ("validate", "check", "build"):
        result = run_cli(command, "--root", str(project))
        assert result.returncode == 2 and expected in result.stderr, command


def _place(root: Path, how: str) -> tuple[str, str]:
    """A reference capture put where a pull request could put it; (the source's path, the finding's words)."""
    outside = root.parent / "elsewhere.jsonl"
    outside.write_text(GOOD, "utf-8")
    if how == "escaping":
        return (
            "../elsewhere.jsonl",
            "capture '../elsewhere.jsonl' is not inside the project: a reference is a relative path under it",
        )
    if how == "absolute":  # a long path is clipped in the finding: its words are what follows it
        return str(outside), "is not inside the project: a reference is a relative path under it"
    if how == "symlink":
        (root / "captures").mkdir()
        os.symlink(outside, root / "captures" / "ref.jsonl")
        return "captures/ref.jsonl", "captures/ref.jsonl is a symlink; a reference is read from a real file"
    if how == "symlinked folder":
        os.symlink(root.parent, root / "captures")
        return "captures/elsewhere.jsonl", "captures is a symlink; a reference is read from a real file"
    if how == "missing":
        return "captures/none.jsonl", "capture captures/none.jsonl is missing"
    assert how == "a folder"
    (root / "captures" / "dir.jsonl").mkdir(parents=True)
    return (
        "captures/dir.jsonl",
        "capture captures/dir.jsonl: not a regular file but a folder; a capture is a file of CI-history lines",
    )


@pytest.mark.parametrize("how", ["escaping", "absolute", "symlink", "symlinked folder", "missing", "a folder"])
def test_a_reference_outside_the_project_or_through_a_link_is_not_read(tmp_path: Path, how: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    path, words = _place(root, how)
    import hashlib

    sha = hashlib.sha256(GOOD.encode()).hexdigest()
    write_project(root, TINY_CATALOG, {"p": corridor_profile(sha, path=json.dumps(path))})
    [finding] = findings_of(root)
    assert finding.startswith(f"{P}:8:") and words in finding, finding


def test_a_huge_reference_capture_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    huge = reference_text({KEY: curve(range(2000))})
    project = corridor_project(tmp_path / "p", huge)
    monkeypatch.setattr(
        reader, "MAX_BYTES", len(huge) - 1
    )  # the source's cap (read at each call): the YAML is far under
    [finding] = findings_of(project)
    assert f"the file has {len(huge):,} bytes; a source file may have at most {len(huge) - 1:,}" in finding
    assert finding.startswith(f"{P}:8:") and finding.endswith("[MM120]")


def test_a_family_has_no_corridor(tmp_path: Path) -> None:
    root = tmp_path / "p"
    sha = pin(root, REFERENCE, GOOD)
    text = corridor_profile(sha).replace(f"  {KEY}:\n", "  train/weight/*:\n")
    write_project(root, TINY_CATALOG, {"p": text})
    assert findings_of(root) == [
        f"{P}:11:14: error: a corridor follows the curve of one key, and train/weight/* stands for several: range "
        "it with a band [MM120]"
    ]


def test_a_reference_source_must_be_a_pinned_capture(tmp_path: Path) -> None:
    root = tmp_path / "p"
    sha = pin(root, REFERENCE, GOOD)
    unpinned = corridor_profile(sha).replace(f", sha256: {sha}", "")
    write_project(root, TINY_CATALOG, {"p": unpinned})
    assert findings_of(root) == [
        f"{P}:8:30: error: capture ref has no sha256: a reference is pinned, so that a changed curve cannot pass "
        "unseen [MM120]"
    ]
    log = (
        corridor_profile(sha)
        .replace("{kind: capture, path:", "{kind: log, path:")
        .replace(", keys: [mean], sha256: " + sha, "")
    )
    write_project(root, TINY_CATALOG, {"p": log})
    assert findings_of(root) == [f"{P}:11:44: error: source ref is no capture: a reference is a capture's line [MM120]"]
