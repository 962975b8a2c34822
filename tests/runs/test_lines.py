"""The one line reader: whole lines at any chunk size, the cut last line carried, resumed where it stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs import lines
from metrics_manual.runs.lines import LineCursor

PIECES = st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"x" * 9, b"{}", b"\n\n"])


def _expected(data: bytes) -> tuple[list[tuple[int, bytes]], tuple[int, bytes] | None]:
    parts = data.split(b"\n")
    whole = list(enumerate(parts[:-1], 1))
    return whole, (len(parts), parts[-1]) if parts[-1] else None


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, max_size=30), st.integers(min_value=1, max_value=40))
def test_the_lines_are_the_files_lines_at_any_chunk_size(tmp_path_factory, pieces: list[bytes], chunk: int) -> None:
    path = tmp_path_factory.mktemp("lines") / "log"
    data = b"".join(pieces)
    path.write_bytes(data)
    counted: list[int] = []
    cursor = LineCursor(path)
    got = list(cursor.lines(counted.append, chunk=chunk))
    assert (got, cursor.last()) == _expected(data)
    assert sum(counted) == len(data) == cursor.offset


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, max_size=30), st.integers(min_value=0, max_value=200), st.integers(min_value=1, max_value=40))
def test_reading_resumes_where_it_stopped_as_the_file_grows(
    tmp_path_factory, pieces: list[bytes], at: int, chunk: int
) -> None:
    """Read up to the end, the file grows (a run writing, maybe inside a line), read on: the same lines
    as reading it once."""
    path = tmp_path_factory.mktemp("lines") / "log"
    data = b"".join(pieces)
    at = min(at, len(data))
    path.write_bytes(data[:at])
    cursor = LineCursor(path)
    got = list(cursor.lines(chunk=chunk))
    with path.open("ab") as fh:
        fh.write(data[at:])
    got += cursor.lines(chunk=chunk)
    assert (got, cursor.last()) == _expected(data)


@pytest.mark.parametrize("chunk", [3, 8, 64])
def test_a_line_longer_than_the_cap_is_none_and_skipped_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(lines, "MAX_LINE", 10)
    path = tmp_path / "log"
    path.write_bytes(b"short\n" + b"y" * 11 + b"\n" + b"x" * 10 + b"\nend\n" + b"z" * 30)
    cursor = LineCursor(path)
    assert list(cursor.lines(chunk=chunk)) == [(1, b"short"), (2, None), (3, b"x" * 10), (4, b"end")]
    assert cursor.last() == (5, None) and len(cursor.carry) <= 10
