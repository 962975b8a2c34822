"""The one line reader of run logs: a file read in chunks into a reused buffer, yielding whole lines.

    cursor = LineCursor(path)
    for n, line in cursor.lines(progress):   # line: bytes without its newline, None when too long
        ...
    last = cursor.last()                     # the line no newline ends yet (a run still writing)

Where reading stands is all in the cursor (the path, the bytes read, the unfinished line carried
over, the lines counted), so reading can stop at the end of a file and resume when it has grown.
Memory stays at one chunk and one line, whatever the file's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINE = 64 * 1024 * 1024  # longest line read (docs/judging.md, "Limits"); a longer one is a finding and skipped
CHUNK = 4 * 1024 * 1024  # bytes read at a time (a new buffer a chunk would cost a page fault per 4 KB)


@dataclass
class LineCursor:
    """Where reading `path` stands: `offset` bytes read, the unfinished last line in `carry`."""

    path: Path
    offset: int = 0  # bytes of the file read so far
    carry: bytearray = field(default_factory=bytearray)  # what follows the last newline read
    line: int = 0  # lines that a newline ended so far (the carried line is number line + 1)
    skipping: bool = False  # the carried line is longer than MAX_LINE: read to its end, not kept

    def lines(
        self, progress: Callable[[int], None] | None = None, chunk: int = CHUNK
    ) -> Iterator[tuple[int, bytes | None]]:
        """(1-based number, line without its newline) of each line that a newline ends, from `offset`
        to the end of the file as it is now; None for a line longer than MAX_LINE (skipped to its
        end). `progress` is given the count of each chunk's bytes."""
        for buf, data, size, start, ended in self._chunks(progress, chunk):
            if ended is not None:
                yield ended
            # One line copied at a time: a split of the chunk would make its lines in new memory at once.
            while (nl := buf.find(b"\n", start, size)) >= 0:
                self.line += 1
                yield self.line, bytes(data[start:nl])
                start = nl + 1
            self._carry(data[start:])

    def lines_holding(
        self,
        needle: bytes,
        led_by: bytes = b"",
        progress: Callable[[int], None] | None = None,
        chunk: int = CHUNK,
    ) -> Iterator[tuple[int, bytes | None]]:
        """`lines`, of the lines that hold `needle` (with no newline in it) only, right after one of the
        bytes `led_by` if given; every line is counted. A log of millions of lines of which a few
        matter is searched by bytes.find over each chunk, at the speed of memchr, never line by line
        in Python. A line longer than MAX_LINE is given as None whatever it holds (what was past its
        first MAX_LINE bytes is not kept)."""

        def holds(data: bytes | bytearray, at: int, end: int) -> int:
            """Where `needle` is in data[at:end], led by a byte of `led_by`; -1 if nowhere."""
            while (at := data.find(needle, at, end)) >= 0 and led_by and (at == 0 or data[at - 1] not in led_by):
                at += 1
            return at

        for buf, data, size, start, ended in self._chunks(progress, chunk):
            if ended is not None and (ended[1] is None or holds(ended[1], 0, len(ended[1])) >= 0):
                yield ended
            end = buf.rfind(b"\n", start, size)  # the last newline: what follows it is carried
            if end < 0:
                self._carry(data[start:])
                continue
            while (at := holds(buf, start, end)) >= 0:
                first = buf.rfind(b"\n", start, at) + 1 or start
                last = buf.find(b"\n", at, end + 1)
                self.line += buf.count(b"\n", start, first) + 1
                yield self.line, bytes(data[first:last])
                start = last + 1
            self.line += buf.count(b"\n", start, end + 1)
            self._carry(data[end + 1 :])

    def _chunks(
        self, progress: Callable[[int], None] | None, chunk: int
    ) -> Iterator[tuple[bytearray, memoryview, int, int, tuple[int, bytes | None] | None]]:
        """Each chunk read from `offset` into one reused buffer: the buffer, the chunk's data and size,
        where its own lines start, and the carried line its first newline ended (number and bytes, None
        when too long), if it ended one. What follows the chunk's last newline is the caller's to carry."""
        buf = bytearray(min(chunk, MAX_LINE))
        view = memoryview(buf)
        with self.path.open("rb", buffering=0) as fh:
            fh.seek(self.offset)
            while size := fh.readinto(buf):
                self.offset += size
                if progress is not None:
                    progress(size)
                data = view[:size]
                if not (self.carry or self.skipping):
                    yield buf, data, size, 0, None
                    continue
                nl = buf.find(b"\n", 0, size)
                if nl < 0:
                    self._carry(data)
                    continue
                self._carry(data[:nl])
                self.line += 1
                ended = (self.line, None if self.skipping else bytes(self.carry))
                self.carry.clear()
                self.skipping = False
                yield buf, data, size, nl + 1, ended

    def _carry(self, data: memoryview) -> None:
        if not self.skipping:
            if len(self.carry) + len(data) > MAX_LINE:
                self.carry.clear()
                self.skipping = True
            else:
                self.carry += data

    def last(self) -> tuple[int, bytes | None] | None:
        """The line no newline ends, once the file is complete: (its number, its bytes, or None when it is
        longer than MAX_LINE); None when the file ends with a newline. It stays in `carry`."""
        if not self.carry and not self.skipping:
            return None
        return self.line + 1, None if self.skipping else bytes(self.carry)


def too_long_message() -> str:
    """The words of the finding for a line longer than MAX_LINE (every reader says it the same)."""
    return f"a line longer than {MAX_LINE // (1024 * 1024)} MB; it was skipped (see Limits)"
