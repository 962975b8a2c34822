"""Characters YAML forbids or reads apart from what an editor shows: each is one finding at the
file's own line and column, naming the character as an escape, with its code, and no text of the
YAML library's own (`in "<unicode string>", position 17`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_PROFILE, run_cli, write_project

P = "ranges/profiles/x.yaml"
FORBIDDEN = "is not allowed in YAML, not even inside quotes; remove it, or write the escape {0} inside double quotes"
BREAK = "is a line break in YAML 1.1 but not in YAML 1.2 or most editors"

# (case, the file's bytes, line, column, the message expected after "path:line:col: error: ")
CASES = [
    ("control character in quotes", b'id: x\ntitle: "a\tb\x01"\n', 2, 12, "the character \\x01 (a control character) "),
    ("NUL in a plain value", b"id: x\ntitle: a\x00b\n", 2, 9, "the character \\x00 (a control character) "),
    ("NUL in a key", b"id: x\nti\x00tle: a\n", 2, 3, "the character \\x00 (a control character) "),
    (
        "control character in a block",
        b"id: x\ntitle: |\n  a\x01b\n",
        3,
        4,
        "the character \\x01 (a control character) ",
    ),
    ("DEL", b"id: x\ntitle: '\x7f'\n", 2, 9, "the character \\x7f (a control character) "),
    (
        "C1 control after UTF-8 text",
        "id: x\ntitle: é\x9b\n".encode(),
        2,
        9,
        "the character \\x9b (a control character) ",
    ),
    ("escape character", b"id: x\ntitle: \x1b[31mred\n", 2, 8, "the character \\x1b (a control character) "),
    ("non-character", "id: x\ntitle: \ufffe\n".encode(), 2, 8, "the character \\ufffe (a non-character) "),
    ("on line 1 after a BOM", "\ufeffid: \x02x\n".encode(), 1, 5, "the character \\x02 (a control character) "),
    ("CRLF lines", b"id: x\r\ntitle: a\r\nsummary: b\x01\r\n", 3, 11, "the character \\x01 (a control character) "),
    ("CR lines", b"id: x\rtitle: a\rsummary: b\x01\r", 3, 11, "the character \\x01 (a control character) "),
]
ODD = [
    ("BOM at a line's start", "id: x\n\ufefftitle: a\n".encode(), 2, 1, "a byte order mark (\\ufeff) "),
    ("BOM inside a key", "id: x\nti\ufefftle: a\n".encode(), 2, 3, "a byte order mark (\\ufeff) "),
    ("BOM inside quotes", 'id: x\ntitle: "a\ufeff"\n'.encode(), 2, 10, "a byte order mark (\\ufeff) "),
    ("second BOM at the start", "\ufeff\ufeffid: x\n".encode(), 1, 1, "a byte order mark (\\ufeff) "),
    ("line separator", "id: x\ntitle: a\u2028b\nfoo: 1\n".encode(), 2, 9, "\\u2028 (a line separator) " + BREAK),
    ("paragraph separator", 'id: x\ntitle: "a\u2029b"\n'.encode(), 2, 10, "\\u2029 (a paragraph separator) " + BREAK),
    ("next line", "id: x\ntitle: a\x85b\n".encode(), 2, 9, "\\x85 (a next-line character) " + BREAK),
]


def _run(tmp_path: Path, data: bytes) -> tuple[int, list[str]]:
    root = write_project(tmp_path / "p")
    (root / P).write_bytes(data)
    result = run_cli("validate", "--root", str(root))
    lines = [line for line in result.stderr.splitlines() if line and not line.endswith("error(s).")]
    return result.returncode, lines


@pytest.mark.parametrize(("case", "data", "line", "col", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_forbidden_character_is_one_finding_at_its_place(
    tmp_path: Path, case: str, data: bytes, line: int, col: int, message: str
) -> None:
    code, lines = _run(tmp_path, data)
    escape = message.split()[2]
    assert code == 2
    assert lines == [f"{P}:{line}:{col}: error: {message}{FORBIDDEN.format(escape)} [MM217]"]


@pytest.mark.parametrize(("case", "data", "line", "col", "message"), ODD, ids=[c[0] for c in ODD])
def test_a_character_yaml_reads_apart_is_one_finding_at_its_place(
    tmp_path: Path, case: str, data: bytes, line: int, col: int, message: str
) -> None:
    code, lines = _run(tmp_path, data)
    assert code == 2
    assert len(lines) == 1
    assert lines[0].startswith(f"{P}:{line}:{col}: error: {message}")
    assert lines[0].endswith("[MM217]")


@pytest.mark.parametrize(
    "data",
    [b"id: x\ntitle: ab\xff\n", b"id: x\ntitle: \xed\xa0\x80\n", b"id: x\n\x00\x00\n", b"id: x\ntitle: \x01"],
    ids=["invalid UTF-8", "UTF-8 surrogate", "NUL bytes", "at the end"],
)
def test_no_finding_leaks_the_libraries_own_location(tmp_path: Path, data: bytes) -> None:
    code, lines = _run(tmp_path, data)
    assert code == 2
    assert len(lines) == 1
    assert "<unicode string>" not in lines[0] and "position" not in lines[0]
    assert not lines[0].startswith(f"{P}:1:1:")


def test_the_tiny_profile_with_text_past_ascii_is_accepted(tmp_path: Path) -> None:
    """Text past ASCII (the check's slower path) gives no finding when no odd character is in it."""
    root = write_project(tmp_path / "p", profiles={"tiny": TINY_PROFILE.replace("Tiny runs", "Tiny runs — é 😀")})
    result = run_cli("validate", "--root", str(root))
    assert result.returncode == 0, result.stderr


def test_the_characters_found_are_the_ones_libyaml_refuses() -> None:
    """The reader places the character libyaml refused by searching for it: the two must agree on
    every character (the ranges where the rule changes, and all of Latin and the controls)."""
    import yaml

    from metrics_manual.source.reader import _FORBIDDEN

    points = [
        *range(0, 0x3000),
        *range(0xD7F0, 0xD800),
        *range(0xE000, 0xE010),
        *range(0xFEF0, 0x10010),
        0x10FFFF,
    ]
    differ = []
    for point in points:
        char = chr(point)
        try:
            yaml.load(f'a: "{char}"\n' if char not in '"\\' else "a: b\n", Loader=yaml.CSafeLoader)
            refused = False
        except yaml.reader.ReaderError:
            refused = True
        except yaml.YAMLError:  # a line break or a tab inside quotes: YAML errors of another kind
            refused = False
        if refused != bool(_FORBIDDEN.search(char)):
            differ.append(hex(point))
    assert differ == []


@pytest.mark.parametrize(
    ("written", "char"),
    [
        ("title: Tiny \u202eruns", "U+202E"),  # right-to-left override, as it is
        ('title: "Tiny \\u2067runs"', "U+2067"),  # right-to-left isolate, as a YAML escape
        ("title: Tiny\u200bruns", "U+200B"),  # zero-width space
        ("title: Tiny runs\ufeff", "U+FEFF"),  # a byte order mark past the start: the reader's own finding
        ("title: Tiny \u200fruns", "U+200F"),  # right-to-left mark
    ],
)
def test_text_that_shows_otherwise_than_it_reads_is_refused(tmp_path: Path, written: str, char: str) -> None:
    root = write_project(tmp_path, profiles={"x": TINY_PROFILE.replace("title: Tiny runs", written)})
    result = run_cli("validate", "--root", str(root))
    assert result.returncode == 2
    (line,) = [x for x in (result.stdout + result.stderr).splitlines() if x.startswith(P)]
    if char == "U+FEFF":
        assert line.startswith(f"{P}:2:") and "a byte order mark (\\ufeff)" in line
    else:
        assert line.startswith(
            f"{P}:2:8: error: title: text must not hold {char}, an invisible or direction-changing "
        ), line
