"""Random edits to the real source: each edited source loads or yields findings, never a crash."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from metrics_manual.build import generate
from metrics_manual.errors import SourceError

FILES = ["ranges/catalog.yaml", "ranges/profiles/lab-gb10.yaml"]
SNIPPETS = [":", "-", "- ", "[", "]", "{", "}", "!!python/object:os.system", "!x", "&a", "*a", "'", '"', "\t", "  ",
            "\n", "#", "0", "-1", ".nan", "1e999", "1.0e+999", "null", "true", "~", "2026-01-01", "<<: *a", "%YAML 1.1\n",
            "---\n", "key: value\n", "min: 9", "max: -9", "kind: band", "steps: 0", "\u00e9", "\x00", "\ufeff"]


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(FILES))
    lines = (REPO / name).read_text("utf-8").splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "replace", "swap"]))
        if not lines:
            break
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits())
def test_random_edits_load_or_give_findings(edit: tuple[str, bytes]) -> None:
    name, data = edit
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for part in ("ranges", "templates"):
            shutil.copytree(REPO / part, root / part)
        (root / name).write_bytes(data)
        try:
            generate(root)
        except SourceError as err:
            assert err.findings, "a SourceError must carry findings"
            for f in err.findings:
                assert f.path in FILES and f.line >= 1 and f.col >= 1 and f.message
