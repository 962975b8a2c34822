"""Random edits to a source: each edited source loads or yields findings, never a crash; and the
reader's meaning of every YAML 1.1 and 1.2 scalar form is yaml.safe_load's, or a finding."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PROJECT, REAL_TREE, REPO, TINY_CATALOG, TINY_PROFILE
from metrics_manual.build import generate
from metrics_manual.diagnostics.finding import SourceError
from metrics_manual.source.load import CATALOG, PROFILES, load_manual
from metrics_manual.source.reader import _NUMBER_AS_TEXT, read_yaml

# The fixture project, and whatever source files the real tree holds today (found, not named).
FIXTURE = {CATALOG: TINY_CATALOG, f"{PROFILES}/tiny.yaml": TINY_PROFILE}
REAL = {
    p.relative_to(PROJECT).as_posix(): p.read_text("utf-8")
    for p in [PROJECT / CATALOG, *sorted((PROJECT / PROFILES).glob("*.yaml"))]
    if p.is_file()
}
SNIPPETS = [
    ":",
    "-",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "!!python/object:os.system",
    "!x",
    "&a",
    "*a",
    "'",
    '"',
    "\t",
    "  ",
    "\n",
    "#",
    "0",
    "-1",
    ".nan",
    "1e999",
    "1.0e+999",
    "null",
    "true",
    "~",
    "2026-01-01",
    "<<: *a",
    "%YAML 1.1\n",
    "---\n",
    "key: value\n",
    "min: 9",
    "max: -9",
    "kind: band",
    "steps: 0",
    "\u00e9",
    "\x00",
    "\ufeff",
    "yes",
    "No",
    "on",
    "Off",
    "True",
    "NULL",
    "0x1F",
    "017",
    "1_000",
    "1:30",
    "1e5",
    ".5",
    "5.",
    "+5",
    "0o7",
    "0,35",
    ",35",
    "\\x85",
    "\u2028",
    "? ",
    "|\n  a\n",
    ">-\n  b\n",
    "'it''s'",
    '"\\t"',
    "@",
    "`",
    "%",
    "[[[[[[",
    "- - - -",
    "=",
    "-.5",
]


@st.composite
def edits(draw: st.DrawFn) -> tuple[dict[str, str], str, bytes]:
    tree = draw(st.sampled_from([FIXTURE, REAL]))
    name = draw(st.sampled_from(sorted(tree)))
    lines = tree[name].splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "replace", "swap"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            snippet = draw(st.sampled_from(SNIPPETS) | st.text(max_size=5))
            cut = at + (draw(st.integers(0, 3)) if op == "replace" else 0)
            lines[i] = line[:at] + snippet + line[cut:]
    data = "".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # truncated file, maybe mid-character
    return tree, name, data


def outcome(root: Path, fast: bool):
    try:
        return load_manual(root, fast=fast)
    except SourceError as err:
        return err.findings


@pytest.mark.slow
@REAL_TREE
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits())
def test_random_edits_load_or_give_findings(edit: tuple[dict[str, str], str, bytes]) -> None:
    tree, name, data = edit
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in tree.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, "utf-8")
        shutil.copytree(REPO / "templates", root / "templates")
        (root / name).write_bytes(data)
        with_positions, without = outcome(root, fast=False), outcome(root, fast=True)
        assert with_positions == without, "what a source means must not depend on whether positions are recorded"
        try:
            generate(root)
        except SourceError as err:
            assert isinstance(with_positions, list)
            assert err.findings == with_positions
            for f in err.findings:
                assert f.path in tree and f.line >= 1 and f.col >= 1 and f.message and len(f.message) < 1000


# Every form a plain scalar takes in YAML 1.1 or 1.2: numbers in any base, with underscores,
# base-60 parts, dots and exponents with or without a sign; the special floats; booleans, nulls
# and dates in their spellings; each also quoted.
NUMBERISH = st.from_regex(
    r"[-+]?(0[xXbBoO])?[0-9a-fA-F_]{0,4}(:[0-9]{1,2}){0,2}(\.[0-9_]{0,3})?([eE][-+]?[0-9]{1,3})?", fullmatch=True
)
WORDS = st.sampled_from(
    [
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "y",
        "Y",
        "n",
        "N",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "tRUE",
        "~",
        "null",
        "Null",
        "NULL",
        "",
        ".inf",
        ".Inf",
        "-.inf",
        "+.INF",
        ".nan",
        ".NaN",
        ".NAN",
        "=",
        "<<",
        "0",
        "-0",
        "+0",
        "00",
        "08",
        "0.",
        ".5",
        "-.5",
        "5.",
        "1e5",
        "1E-5",
        "1.0e+5",
        "1.0e5",
        "1_000",
        "1:30",
        "190:20:30.15",
        "0b101",
        "0x10",
        "0o17",
        "017",
        "0,35",
        "1,000,000",
    ]
)
DATES = st.from_regex(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?( ?(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?",
    fullmatch=True,
)
PLAIN = st.one_of(NUMBERISH, WORDS, DATES)
SCALARS = st.one_of(PLAIN, PLAIN.map(lambda s: f"'{s}'"), PLAIN.map(lambda s: f'"{s}"'))


def safe_load(text: str) -> tuple[bool, object]:
    try:
        return True, yaml.safe_load(text)
    except (yaml.YAMLError, ValueError):  # PyYAML itself fails on some, such as `._`
        return False, None


@settings(max_examples=400, deadline=None)
@given(SCALARS, st.sampled_from(["v: {}\n", "v: [{}]\n", "v: {{w: {}}}\n", "- {}\n"]))
def test_every_scalar_means_what_yaml_safe_load_reads_or_is_a_finding(scalar: str, form: str) -> None:
    text = form.format(scalar)
    doc, findings = read_yaml(text, "s.yaml")
    ok, expected = safe_load(text)
    if findings:
        assert all(f.line == 1 and f.path == "s.yaml" for f in findings), findings
        return
    assert ok, f"{text!r}: accepted although PyYAML cannot read it"
    if _NUMBER_AS_TEXT.match(scalar):  # the one deliberate difference: `1e-3` and `-.5` are numbers, not text
        expected = swap(expected, scalar, float(scalar))
    assert same(doc.data, expected), f"{text!r}: the reader gives {doc.data!r}, PyYAML {expected!r}"


def swap(data: object, old: str, new: float) -> object:
    if isinstance(data, dict):
        return {k: swap(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        return [swap(v, old, new) for v in data]
    return new if data == old else data


def same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))  # type: ignore[arg-type]
    return a == b


@settings(max_examples=200, deadline=None)
@given(SCALARS)
def test_every_key_is_the_string_yaml_safe_load_reads_or_a_finding(scalar: str) -> None:
    text = f"{scalar}: 1\n"
    doc, findings = read_yaml(text, "s.yaml")
    if findings:
        return
    ok, expected = safe_load(text)
    assert (
        ok and isinstance(expected, dict) and list(expected) == list(doc.data) and all(type(k) is str for k in doc.data)
    )
