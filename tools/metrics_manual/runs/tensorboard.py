"""TensorBoard event files (--use-tensorboard), read through the `tensorboard` package's event protobuf (an extra).

Miles calls `SummaryWriter.add_scalar(key, value, step)`; one run may span several folders
(each process stamps its start time into the folder name). The file's TFRecord framing is read
here, in chunks, with both checksums of every record checked by a C CRC32C (google-crc32c, in the
extra): the package's own reader without TensorFlow computes CRC32C in pure Python, two thirds of
the time. Every scalar is read: nothing is sampled, as EventAccumulator's default size guidance
(10,000 per tag) would, and nothing but the values is kept. The package's loaders end quietly at
a bad record; this one says so: a record cut at the end of the file is a warning (still being
written), any other bad record (a checksum that does not match, an event that does not parse) an
error, and the rest of that file is skipped. A scalar is a `simple_value` (torch's SummaryWriter) or
a one-number tensor of a tag whose first value names the `scalars` plugin (TensorFlow's writer
keeps that metadata on each tag's first value only): every value of such a tag is read.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import MissingExtra
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.values import MAX_STEP

INSTALL = "reading TensorBoard event files needs the tensorboard extra: pip install 'metrics-manual[tensorboard]'"
CHUNK = 4 * 1024 * 1024  # bytes read at a time; a longer record is read whole
_HEAD = struct.Struct("<QI")  # a record: its length, the length's masked CRC32C, the bytes, their masked CRC32C
_CRC = struct.Struct("<I")


class Cut(Exception):
    """The file ends inside a record (`args[0]` names the part)."""


class Corrupt(Exception):
    """A record whose bytes are not what its writer wrote."""


def _crc32c() -> Callable[[bytes], int]:
    """CRC32C in C (google-crc32c); without it, the tensorboard package's pure-Python one (slow, same sums)."""
    import warnings

    try:
        with warnings.catch_warnings():  # it warns when it falls back to its own pure-Python code
            warnings.simplefilter("ignore", RuntimeWarning)
            import google_crc32c
    except ImportError:
        from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c

        slow: Callable[[bytes], int] = crc32c
        return slow
    fast: Callable[[bytes], int] = google_crc32c.value
    return fast


def masked(crc: int) -> int:
    """TFRecord's mask of a CRC32C (a checksum of bytes that hold checksums must differ from them)."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frames(fh: IO[bytes], crc: Callable[[bytes], int]) -> Iterator[bytes]:
    """The payload of each TFRecord of `fh`, checksums checked; raises Cut or Corrupt."""
    buf = b""
    pos = 0
    head_crcs: dict[int, int] = {}  # length -> its masked CRC: records of one length repeat (a scalar each)
    while True:
        if len(buf) - pos < 12:
            buf = buf[pos:] + fh.read(max(CHUNK, 12))
            pos = 0
            if not buf:
                return
            if len(buf) < 12:
                raise Cut("header" if len(buf) < 8 else "header checksum")
        length, head_crc = _HEAD.unpack_from(buf, pos)
        if head_crcs.get(length) != head_crc:
            c = crc(buf[pos : pos + 8])
            if (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF != head_crc:  # masked(c), inline: per record
                raise Corrupt("the checksum of its length does not match")
            if len(head_crcs) < 4096:
                head_crcs[length] = head_crc
        end = pos + 12 + length
        if end + 4 > len(buf):
            buf = buf[pos:]
            pos = 0
            need = 16 + length - len(buf)
            # Never ask read() for more than the file holds now (a length can be 2^64-1; a live run's
            # file grows while it is read).
            left = os.fstat(fh.fileno()).st_size - fh.tell()
            if need > left:
                raise Cut("data" if 12 + length > len(buf) + left else "data checksum")
            buf += fh.read(max(need, CHUNK))
            end = 12 + length
            if end + 4 > len(buf):  # the file shrank while being read
                raise Cut("data")
        data = buf[end - length : end]
        c = crc(data)
        if (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF != _CRC.unpack_from(buf, end)[0]:
            raise Corrupt("the checksum of its bytes does not match")
        pos = end + 4
        yield data


def _event_parser() -> Callable[[bytes], Any]:
    try:
        from tensorboard.compat.proto import event_pb2
    except ImportError:
        raise MissingExtra(INSTALL) from None
    parse: Callable[[bytes], Any] = event_pb2.Event.FromString
    return parse


def read(path: Path, rel: str, out: Collector) -> None:
    EventFile(path, rel).read(out)


class EventFile:
    """Reading one event file, and where it stands: the bytes of its whole records read, the records
    counted, whether a bad record stopped it, each tag's plugin, the wall times of its first and last
    summaries (the file's span, the rules of a merge). The file of a live run is read on from there
    as it grows (judge --follow)."""

    def __init__(self, path: Path, rel: str) -> None:
        self.path = path
        self.rel = rel
        self.offset = 0
        self.records = 0
        self.stopped = False  # a bad record: the rest of the file is skipped
        # Tag -> the plugin its first value with metadata names: TensorFlow's writer puts the metadata on each
        # tag's first value only, so a tensor value is a scalar when its tag's first metadata says so.
        self.plugin_of: dict[str, str] = {}
        self.first: float | None = None
        self.last: float | None = None

    def read(self, out: Collector, ended: bool = True) -> None:
        """Put the scalars of the records from where reading stands to the end of the file as it is now.
        `ended`: the file is complete, so a record cut at its end is a warning; else it waits to be read whole."""
        if not self.stopped:
            start, size = self.offset, self.path.stat().st_size
            self._read(out, ended)
            if out.progress:
                out.progress(size - start)
        out.span(self.first, self.last)

    def _read(self, out: Collector, ended: bool) -> None:
        parse = _event_parser()
        crc = _crc32c()
        rel, plugin_of = self.rel, self.plugin_of
        step_key, put, step_key_set = out.step_key, out.put, out.step_key_set
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            try:
                for data in frames(fh, crc):
                    self.records += 1
                    self.offset += 16 + len(data)  # a record: length, its CRC, the bytes, their CRC
                    n = self.records
                    try:
                        event = parse(data)
                    except Exception as exc:  # a protobuf DecodeError: bytes whose checksums match, not an event
                        why = f"corrupt event record {n}: {str(exc)[:200] or type(exc).__name__}; the rest of the file was skipped"
                        out.problem(rel, n, why, code=codes.CORRUPT_LINE)
                        self.stopped = True
                        break
                    if not event.HasField("summary"):
                        continue
                    self.last = event.wall_time
                    if self.first is None:
                        self.first = self.last
                    step = event.step
                    if not 0 <= step <= MAX_STEP:
                        why = f"event record {n}: step {step} is not from 0 to 2^63-1; it was skipped"
                        out.problem(rel, n, why, code=codes.NOT_A_STEP)
                        continue
                    for v in event.summary.value:
                        tag = v.tag
                        sk = step_key(tag)
                        if sk is None:
                            if tag in step_key_set:
                                out.put_step(tag, step)
                            continue
                        kind = v.WhichOneof("value")
                        if kind == "simple_value":
                            put(tag, step, v.simple_value)
                        elif kind == "tensor":
                            if tag not in plugin_of and v.HasField("metadata"):
                                plugin_of[tag] = v.metadata.plugin_data.plugin_name
                            if plugin_of.get(tag) != "scalars":
                                continue
                            value, why = _tensor_scalar(v.tensor)
                            if value is None:
                                out.put_invalid(tag, step, None, line=n, text=why)
                            else:
                                put(tag, step, value)
            except Cut as exc:
                if ended:
                    out.cut(rel, self.records + 1, "record", f"in its {exc.args[0]}")
            except Corrupt as exc:
                why = f"corrupt event record {self.records + 1}: {exc.args[0]}; the rest of the file was skipped"
                out.problem(rel, self.records + 1, why, code=codes.CORRUPT_LINE)
                self.stopped = True


def _tensor_scalar(tensor: Any) -> tuple[float | None, str]:
    """The one number of a scalar tensor, or None and what it holds instead."""
    from tensorboard.util import tensor_util

    try:
        array = tensor_util.make_ndarray(tensor)
    except Exception as exc:  # a malformed tensor proto: the package raises several kinds
        return None, f"a tensor that cannot be read ({type(exc).__name__})"
    if array.size != 1:
        return None, f"a tensor of {array.size} numbers, not a scalar"
    try:
        return float(array.item()), ""
    except (TypeError, ValueError, OverflowError):
        return None, f"a tensor of {array.dtype}, not a number"
