"""Editing a profile file keeps everything the edit does not change, byte for byte."""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO, TINY_PROFILE
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
    assert ProfileFile(FIXTURES[name], name).base == FIXTURES[name]


def _files_under_ranges() -> list[Path]:
    return sorted((REPO / "ranges").rglob("*.yaml"))


@pytest.mark.parametrize("path", _files_under_ranges(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_file_under_ranges_reads_back_byte_for_byte(path: Path) -> None:
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
    "path", sorted((REPO / "ranges" / "profiles").glob("*.yaml")) + [None], ids=lambda p: p.name if p else "seeds"
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
    with pytest.raises(SourceError, match=r"p:1:1: error: cannot read for editing"):
        ProfileFile("a: [1, 2\n", "p")


@settings(deadline=None)  # a shared machine: time is not what this tests
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_read_back_the_same_in_yaml_1_1(value: float) -> None:
    text = Number(value).yaml_text()
    assert yaml.safe_load(f"x: {text}")["x"] == value  # PyYAML, the reader of ranges/, is YAML 1.1
    assert math.copysign(1, float(text)) == math.copysign(1, value)
