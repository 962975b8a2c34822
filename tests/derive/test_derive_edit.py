"""Editing a profile file keeps everything the edit does not change, byte for byte."""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import PROJECT, REAL_TREE, TINY_PROFILE
from derive_helpers import SEEDS_CATALOG, SEEDS_PROFILE
from metrics_manual.derive.profile_edit import Number, ProfileFile, yaml_number
from metrics_manual.diagnostics.finding import SourceError

# Block lists at the key's own column, four-space indentation, folded and literal text,
# quoted strings, comments everywhere, trailing blank lines.
OFFSET_ZERO = """\
id: flat   # no indentation before the dash
sources:
    notes:
        kind: log
        path: 'logs/run 1.log'
expectations:
    train/grad_norm:
    - kind: band
      min: 0.25   # low
      max: 4.5
    - {kind: median, value: 1.0e-05, steps: 4}
notes:
- id: n
  paragraphs:
  - >-
    folded
    text
  - |
    literal
    text


"""
# Spacing inside flow collections that ruamel writes differently ({ a: 1 } -> {a: 1}).
RESPACED = """\
id: spaced
setup: { framework: Miles,  steps: 4 }
expectations:
  rollout/raw_reward:
    - { kind: band, min: 0.5, max: 0.9 }
    - {kind: exact, value: 0, at: [every_step]}
"""
FIXTURES = {
    "seeds": SEEDS_PROFILE,
    "tiny": TINY_PROFILE,
    "catalog": SEEDS_CATALOG,
    "offset-zero": OFFSET_ZERO,
    "respaced": RESPACED,
    "crlf": SEEDS_PROFILE.replace("\n", "\r\n"),
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_unchanged_load_and_dump_is_byte_for_byte(name: str) -> None:
    assert ProfileFile(FIXTURES[name], name).text() == FIXTURES[name]


@pytest.mark.parametrize("name", ["seeds", "tiny", "catalog", "offset-zero"])
def test_ruamel_itself_reproduces_the_usual_layouts(name: str) -> None:
    # Not only through the line merge: ruamel's own dump keeps comments, styles and quotes.
    # (The comments and blank lines that end the file are kept aside, to stay last.)
    edit = ProfileFile(FIXTURES[name], name)
    assert edit.base + edit.tail == FIXTURES[name]


def _profiles_under_ranges() -> list[Path]:
    """The files derive edits: the profiles (the catalog and coverage are never written by a tool)."""
    return sorted((PROJECT / "ranges" / "profiles").glob("*.yaml"))


@REAL_TREE
@pytest.mark.parametrize("path", _profiles_under_ranges(), ids=lambda p: p.relative_to(PROJECT).as_posix())
def test_every_profile_under_ranges_reads_back_byte_for_byte(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert ProfileFile(text, path.name).text() == text


def _first_number(data: object, loc: tuple = ()) -> tuple | None:
    """Location of the first number of an expectation in a profile's data."""
    if isinstance(data, dict):
        for k, v in data.items():
            if (found := _first_number(v, (*loc, k))) is not None:
                return found
    elif isinstance(data, list):
        for i, v in enumerate(data):
            if (found := _first_number(v, (*loc, i))) is not None:
                return found
    elif (
        isinstance(data, (int, float))
        and not isinstance(data, bool)
        and loc
        and loc[0] == "expectations"
        and loc[-1] in ("min", "max", "value")
    ):
        return loc
    return None


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=REAL_TREE) for p in _profiles_under_ranges()] + [None],
    ids=lambda p: p.name if p else "seeds",
)
def test_changing_one_number_changes_one_line(path: Path | None) -> None:
    text = path.read_text("utf-8") if path else SEEDS_PROFILE
    loc = _first_number(yaml.safe_load(text))
    if loc is None:
        pytest.skip("this profile ranges nothing")
    edit = ProfileFile(text, "p")
    node = edit.data
    for part in loc[:-1]:
        node = node[part]
    node[loc[-1]] = yaml_number(node[loc[-1]] * 2 + 0.125)
    after = edit.text()
    changed = [d for d in difflib.ndiff(text.splitlines(), after.splitlines()) if d[:2] in ("- ", "+ ")]
    assert len(changed) == 2, changed
    data = yaml.safe_load(after)
    for part in loc:
        data = data[part]
    assert data == node[loc[-1]]


def test_new_entries_follow_the_file_indentation_and_keep_its_end() -> None:
    edit = ProfileFile(OFFSET_ZERO, "flat")
    edit.set_expectation("train/grad_norm", 2, {"kind": "band", "min": 1, "max": 2})
    edit.set_source("seed-1", {"kind": "capture", "path": "c.jsonl", "keys": ["seed-1"], "sha256": None})
    after = edit.text()
    assert "    - {kind: median, value: 1.0e-05, steps: 4}\n    - {kind: band, min: 1, max: 2}\n" in after
    assert "        path: 'logs/run 1.log'\n    seed-1:\n        kind: capture\n" in after and "sha256" not in after
    assert after.endswith("    text\n\n\n")


def test_an_unreadable_file_is_a_finding() -> None:
    with pytest.raises(SourceError, match=r"p:2:1: error: cannot read for editing"):  # where ruamel stopped
        ProfileFile("a: [1, 2\n", "p")


@settings(max_examples=100, deadline=None)  # a shared machine: time is not what this tests
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_read_back_the_same_in_yaml_1_1(value: float) -> None:
    text = Number(value).yaml_text()
    assert yaml.safe_load(f"x: {text}")["x"] == value  # PyYAML, the reader of ranges/, is YAML 1.1
    assert math.copysign(1, float(text)) == math.copysign(1, value)


# What a maintainer's editor leaves: each edit changes its own lines and keeps every other byte.
EDGE_CASES = {
    "flow mapping over two lines": (
        "id: x\nsetup: {framework: Miles,\n  steps: 4}\nexpectations:\n  a/b:\n    - {kind: band, min: 0.5, max: 0.9}\n"
        "  c/d:\n    - kind: band\n      min: 1\n      max: 2\n"
    ),
    "CR-only line ends": (
        "id: x\rexpectations:\r  a/b:\r    - {kind: band, min: 0.5, max: 0.9}\r  c/d:\r    - kind: band\r"
        "      min: 1\r      max: 2\r"
    ),
    "CRLF line ends": (
        "id: x\r\nexpectations:\r\n  a/b:\r\n    - {kind: band, min: 0.5, max: 0.9}\r\n  c/d:\r\n"
        "    - kind: band\r\n      min: 1\r\n      max: 2\r\n"
    ),
    "final comment without a newline": (
        "id: x\nexpectations:\n  a/b:\n    - {kind: band, min: 0.5, max: 0.9}\n  c/d:\n    - kind: band\n"
        "      min: 1\n      max: 2\n# the end"
    ),
    "tab before a comment": (
        "id: x\nexpectations:\n  a/b:\n    - {kind: band, min: 0.5, max: 0.9}\t# tabbed\n  c/d:\n"
        "    - kind: band\t\t# two tabs\n      min: 1\n      max: 2\n  e/f: [{kind: exact, value: 0, at: every_step, "
        'condition: "a\t# not a comment"}]\n'
    ),
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edits_keep_every_untouched_byte(name: str) -> None:
    text = EDGE_CASES[name]
    eol = "\r\n" if "\r\n" in text else "\r" if "\r" in text else "\n"
    assert ProfileFile(text, name).text() == text
    edit = ProfileFile(text, name)
    edit.set_expectation("c/d", 0, {"min": 1.5})  # one number in a block mapping
    edit.set_expectation("a/b", 1, {"kind": "band", "min": 3, "max": 4})  # a new entry in a list
    edit.set_expectation("g/h", 0, {"kind": "band", "min": 5, "max": 6})  # a new key at the end
    after = edit.text()
    old_lines, new_lines = text.split(eol), after.split(eol)
    removed = [line for line in old_lines if line not in new_lines]
    assert removed == ["      min: 1"], removed  # the one changed line; every other line is kept as it was
    added = [line for line in new_lines if line not in old_lines]
    assert added == [
        "    - {kind: band, min: 3, max: 4}",
        "      min: 1.5",
        "  g/h:",
        "    - {kind: band, min: 5, max: 6}",
    ], added
    assert [line for line in new_lines if line in old_lines] == [line for line in old_lines if line in new_lines]
    if eol != "\n":
        assert after.replace(eol, "").count("\n") == 0 and after.count(eol) == text.count(eol) + 3
    if name.startswith("final comment"):
        assert after.endswith("\n# the end")
    # libyaml, the reader of ranges/ (the pure-Python scanner refuses a tab before a comment)
    data = yaml.load(after.replace("\r\n", "\n").replace("\r", "\n"), Loader=yaml.CSafeLoader)
    assert data["expectations"]["c/d"][0]["min"] == 1.5 and data["expectations"]["g/h"][0]["max"] == 6
    if "e/f" in data["expectations"]:
        assert data["expectations"]["e/f"][0]["condition"] == "a\t# not a comment"
