"""The YAML reader: one reader decides, numbers mean what they say, no depth or file can crash or
hang it, and no message echoes more than a bit of one value."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TINY_PROFILE, write_project
from metrics_manual.diagnostics.finding import SourceError
from metrics_manual.source import reader as source
from metrics_manual.source.load import load_manual

P = "ranges/profiles/tiny.yaml"
SECRET = "root:$6$S3cr3tS4lt$Zm9vYmFyYmF6cXV4:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


def findings_of(root: Path) -> list[str]:
    with pytest.raises(SourceError) as exc:
        load_manual(root)
    return [str(f) for f in exc.value.findings]


def errors(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if ": error: " in line]


def cli(root: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metrics_manual", "validate", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


# (case, text replaced in the tiny profile, replacement, the one finding expected)
CASES = [
    (
        "text the old fast path took for a string",
        "advice: Build your own.",
        "advice: ]",
        f"{P}:4:9: error: invalid YAML: while parsing a block node did not find expected node content [MM201]",
    ),
    (
        "octal",
        "min: 0.5,",
        "min: 017,",
        f"{P}:26:25: error: min: '017' reads as an octal number (15) in YAML 1.1; write it without the leading zero, or quote it if it is text [MM210]",
    ),
    (
        "hexadecimal",
        "min: 0.5,",
        "min: 0x10,",
        f"{P}:26:25: error: min: '0x10' is a hexadecimal number; write it in decimal (16) [MM210]",
    ),
    (
        "binary",
        "min: 0.5,",
        "min: 0b101,",
        f"{P}:26:25: error: min: '0b101' is a binary number; write it in decimal (5) [MM210]",
    ),
    (
        "base 60",
        "min: 0.5,",
        "min: 1:30,",
        f"{P}:26:25: error: min: '1:30' reads as a base-60 number (90) in YAML 1.1; quote it if it is text [MM210]",
    ),
    (
        "underscores",
        "max: 0.9",
        "max: 1_000",
        f"{P}:26:35: error: max: '1_000' has underscores, which YAML 1.1 drops; write 1000 [MM210]",
    ),
    (
        "decimal comma in block",
        "  prompts_per_step: 4",
        "  prompts_per_step: 4,5",
        f"{P}:10:21: error: prompts_per_step: '4,5' looks like a number with a decimal comma; write 4.5, or quote it if it is text [MM211]",
    ),
    (
        "decimal comma in flow",
        "min: 0.5,",
        "min: 0,35,",
        f"{P}:26:25: error: min: '0,35' looks like a number with a decimal comma; write 0.35, or quote it if it is text [MM211]",
    ),
    (
        "yes/no boolean",
        "  dataset: D",
        "  dataset: no",
        f"{P}:8:12: error: dataset: 'no' reads as a boolean (false) in YAML 1.1; write false, or quote it if it is text [MM213]",
    ),
    (
        "depth 500, flow",
        TINY_PROFILE,
        TINY_PROFILE + "deep: " + "[" * 500 + "\n",
        f"{P}:34:70: error: the data nests deeper than 64 levels; a source needs only a few [MM216]",
    ),
    (
        "depth 500, block",
        TINY_PROFILE,
        TINY_PROFILE + "deep:\n  " + "- " * 500 + "x\n",
        f"{P}:35:129: error: the data nests deeper than 64 levels; a source needs only a few [MM216]",
    ),
]


@pytest.mark.parametrize(("case", "old", "new", "expected"), CASES, ids=[c[0] for c in CASES])
def test_reader_finding(tmp_path: Path, case: str, old: str, new: str, expected: str) -> None:
    assert old in TINY_PROFILE
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE.replace(old, new, 1)})
    assert findings_of(root) == [expected]


@pytest.mark.parametrize(
    ("written", "read"),
    [("1e-3", 0.001), ("1.0e3", 1000.0), ("2E+2", 200.0), ("-.5", -0.5), ("1.5e0", 1.5), (".25", 0.25)],
)
def test_exponent_and_dot_forms_are_numbers(tmp_path: Path, written: str, read: float) -> None:
    root = write_project(
        tmp_path, profiles={"tiny": TINY_PROFILE.replace("min: 0.5, max: 0.9", f"min: {written}, max: 1.0e+4")}
    )
    band = load_manual(root).profiles[0].expectations["rollout/raw_reward"][0]
    assert band.min == read  # type: ignore[union-attr]
    assert type(source.read_yaml(f"v: {written}\n", "x.yaml")[0].data["v"]) is float


@pytest.mark.parametrize("deep", ["[" * 25_000, "\n  " + "- " * 25_000 + "x"], ids=["flow", "block"])
def test_depth_25000_is_a_finding_not_a_crash(tmp_path: Path, deep: str) -> None:
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE + "deep: " + deep + "\n"})
    result = cli(root)
    assert result.returncode == 2, result.stderr[-500:]
    assert errors(result) == [
        f"{P}:{'34:70' if deep[0] == '[' else '35:129'}: error: the data nests deeper than 64 levels; a source needs only a few [MM216]"
    ]
    assert "Traceback" not in result.stderr


def test_the_reader_does_not_recurse_on_depth() -> None:
    # 40 frames to spare, for 60 levels of nesting: no Python frame may be spent per level.
    limit, depth = sys.getrecursionlimit(), len(inspect.stack(0))
    sys.setrecursionlimit(depth + 40)
    try:
        doc, findings = source.read_yaml("a: " + "[" * 60 + "]" * 60 + "\n", "x.yaml")
    finally:
        sys.setrecursionlimit(limit)
    assert findings == [] and isinstance(doc.data["a"], list)


@pytest.mark.parametrize(
    "text",
    [
        "a: {b: [1, {c: 2}], d: []}\n",
        "a: !!map {b: 1}\nc: 2\n",
        "a: [!!seq [1], 2]\n",
        "a: &x {b: 1}\nc: *x\n",
        "a: [&y [1], *y]\n",
        "a: {[1, 2]: 3, {b: 1}: 4, e: 5}\n",
        "a: " + "[" * 70 + "]" * 70 + "\n",
        "a: {b: {c: 1}, b: [2]}\n",
    ],
    ids=["nested", "tagged-map", "tagged-list", "anchored-map", "anchored-list", "collection-keys", "deep", "dup"],
)
def test_a_collection_means_the_same_without_positions(text: str) -> None:
    # Without positions the loop opens a plain collection itself; anything else goes the general way.
    with_positions, found = source.read_yaml(text, "x.yaml")
    without, found_fast = source.read_yaml(text, "x.yaml", positions=False)
    assert without.data == with_positions.data
    assert [(f.line, f.col, f.code) for f in found_fast] == [(f.line, f.col, f.code) for f in found]
    assert without.values == {} and without.keys == {}


def test_symlink_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text(SECRET, "utf-8")
    root = write_project(tmp_path / "p")
    (root / P).unlink()
    (root / P).symlink_to(outside / "shadow")
    (root / "ranges/profiles/zero.yaml").symlink_to("/dev/zero")
    result = cli(root)
    assert result.returncode == 2
    assert errors(result) == [
        f"{P}:1:1: error: the file is a link to a place outside the project; only files inside it are read [MM202]",
        "ranges/profiles/zero.yaml:1:1: error: the file is a link to a place outside the project; only files inside it are read [MM202]",
    ]
    for line in SECRET.splitlines():
        assert line.split(":")[1] not in result.stdout + result.stderr


def test_symlink_inside_the_project_is_read(tmp_path: Path) -> None:
    root = write_project(tmp_path, profiles={})
    (root / "elsewhere").mkdir()
    (root / "elsewhere/tiny.yaml").write_text(TINY_PROFILE, "utf-8")
    (root / P).symlink_to(root / "elsewhere/tiny.yaml")
    assert [p.id for p in load_manual(root).profiles] == ["tiny"]


def test_named_pipe_and_directory_are_findings_not_hangs(tmp_path: Path) -> None:
    root = write_project(tmp_path)
    os.mkfifo(root / "ranges/profiles/pipe.yaml")
    (root / "ranges/profiles/folder.yaml").mkdir()
    result = cli(root, timeout=60)  # before: waits forever on the pipe
    assert result.returncode == 2
    assert errors(result) == [
        "ranges/profiles/folder.yaml:1:1: error: not a regular file but a folder; ranges/ holds only YAML files [MM202]",
        "ranges/profiles/pipe.yaml:1:1: error: not a regular file but a named pipe; ranges/ holds only YAML files [MM202]",
    ]


def test_a_device_is_never_read() -> None:
    assert source.read_bytes(Path("/dev/zero")) == (
        None,
        "not a regular file but a character device; ranges/ holds only YAML files",
    )


def test_file_size_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    size = len(TINY_PROFILE.encode("utf-8"))
    monkeypatch.setattr(source, "MAX_BYTES", size - 1)  # the catalog is smaller
    root = write_project(tmp_path)
    assert findings_of(root) == [
        f"{P}:1:1: error: the file has {size:,} bytes; a source file may have at most {size - 1:,} [MM202]"
    ]


HUGE = "x" * 1_000_000


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("min: 0.5,", f"min: '{HUGE}',"),  # the validator quotes the value
        ("  model: M-1", f"  model: M-1\n  ? {HUGE}\n  : 1\n  ? {HUGE}\n  : 2"),  # the reader quotes the key
    ],
    ids=["value", "key"],
)
def test_a_message_echoes_at_most_a_bit_of_a_value(tmp_path: Path, old: str, new: str) -> None:
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE.replace(old, new)})
    found = findings_of(root)
    assert len(found) == 1 and len(found[0]) < 700 and "x" * 121 not in found[0], found[0][:300]


def test_a_file_with_more_findings_than_the_cap_stops_being_read() -> None:
    """5 MB of duplicate keys gave a finding each and took GBs: reading stops at the cap, and says so."""
    text = "a: 1\n" + "".join(f"a: {i}\n" for i in range(2 * source.MAX_FINDINGS))
    _, found = source.read_yaml(text, "big.yaml")
    assert len(found) == source.MAX_FINDINGS + 1
    assert {f.code.id for f in found[:-1]} == {"MM208"}
    last = found[-1]
    assert (last.line, last.code.id) == (
        source.MAX_FINDINGS + 1,
        "MM201",
    ) and "the rest of it was not read" in last.message
