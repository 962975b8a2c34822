"""Random edits to the real source: each edited source loads or yields findings, never a crash,
and the fast reader never accepts what the authoritative one refuses."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from metrics_manual.build import generate
from metrics_manual.errors import SourceError
from metrics_manual.load import _load
from metrics_manual.source import read_fast

FILES = ["ranges/catalog.yaml", "ranges/profiles/lab-gb10.yaml"]
SNIPPETS = [":", "-", "- ", "[", "]", "{", "}", "!!python/object:os.system", "!x", "&a", "*a", "'", '"', "\t", "  ",
            "\n", "#", "0", "-1", ".nan", "1e999", "1.0e+999", "null", "true", "~", "2026-01-01", "<<: *a", "%YAML 1.1\n",
            "---\n", "key: value\n", "min: 9", "max: -9", "kind: band", "steps: 0", "\u00e9", "\x00", "\ufeff",
            "yes", "No", "on", "Off", "True", "NULL", "0x1F", "017", "1_000", "1:30", "1e5", ".5", "5.", "+5", "0o7",
            "\\x85", "\u2028", "? ", "|\n  a\n", ">-\n  b\n", "'it''s'", '"\\t"', "@", "`", "%"]


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(FILES))
    lines = (REPO / name).read_text("utf-8").splitlines(keepends=True)
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
    return name, data


def outcome(root: Path, fast: bool):
    try:
        return _load(root, fast=fast)
    except SourceError as err:
        return err


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits())
def test_random_edits_load_or_give_findings(edit: tuple[str, bytes]) -> None:
    name, data = edit
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for part in ("ranges", "templates"):
            shutil.copytree(REPO / part, root / part)
        (root / name).write_bytes(data)
        slow, fast = outcome(root, fast=False), outcome(root, fast=True)
        if not isinstance(fast, SourceError):
            assert fast == slow, "the fast reader accepted a source the authoritative one reads otherwise"
        try:
            generate(root)
        except SourceError as err:
            assert isinstance(slow, SourceError)
            assert err.findings == slow.findings, "findings must come from the authoritative reader"
            for f in err.findings:
                assert f.path in FILES and f.line >= 1 and f.col >= 1 and f.message


@pytest.mark.parametrize("value", ["yes", "No", "on", "OFF", "True", "~", "Null", "0x1F", "017", "1_000", "1:30",
                                   "1e5", "1.0e+3", ".inf", "-.nan", "2026-01-01", "!tag x", "&a x", "*a", "@x", "`x`", "%x"])
def test_fast_reader_steps_aside_where_yaml_dialects_differ(value: str) -> None:
    for text in (f"title: {value}\n", f"a: [{value}]\n", f"a: {{b: {value}}}\n", f"- {value}\n", f"{value}: 1\n",
                 f"a:\n  {value}\n", f"? {value}\n: 1\n"):
        assert read_fast(text) is None, text


def test_exponent_after_an_escaped_quote_steps_aside() -> None:
    assert read_fast('a: {b: "x\\"y", c: 1e5}\n') is None
    assert read_fast('a: {b: "x 1e5 y"}\n') == {"a": {"b": "x 1e5 y"}}


def test_fast_reader_reads_the_real_source() -> None:
    for name in FILES:
        assert read_fast((REPO / name).read_text("utf-8")) is not None, f"{name} no longer takes the fast path"


def test_both_readers_agree_on_crlf_files(tmp_path: Path) -> None:
    for part in ("ranges", "templates"):
        shutil.copytree(REPO / part, tmp_path / part)
    for name in FILES:
        file = tmp_path / name
        file.write_bytes(file.read_bytes().replace(b"\n", b"\r\n"))
    assert outcome(tmp_path, fast=True) == outcome(tmp_path, fast=False) == outcome(REPO, fast=False)
