"""TensorBoard event files (--use-tensorboard), read with the `tensorboard` package (an extra).

Miles calls `SummaryWriter.add_scalar(key, value, step)`; one run may span several folders
(each process stamps its start time into the folder name). The records are streamed one by
one through the package's record reader (CRC-checked), so every scalar is read: nothing is
sampled, as EventAccumulator's default size guidance (10,000 per tag) would, and nothing but
the values is kept. Its loaders end quietly at a bad record; this one says so: a record cut
at the end of the file is a warning (still being written), any other bad record an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import ManualError
from metrics_manual.runs.collect import MAX_STEP, Collector

INSTALL = "reading TensorBoard event files needs the tensorboard extra: pip install 'metrics-manual[tensorboard]'"


class MissingExtra(ManualError):
    """The tensorboard package is not installed."""

    code = codes.MISSING_EXTRA


def _records(path: Path) -> Any:
    try:
        from tensorboard.backend.event_processing import event_file_loader
        from tensorboard.compat.proto import event_pb2
    except ImportError:
        raise MissingExtra(INSTALL) from None
    # The iterator EventFileLoader uses, without its loop that swallows a bad record.
    return event_file_loader._make_tf_record_iterator(str(path)), event_pb2.Event.FromString


def read(path: Path, rel: str, out: Collector) -> None:
    records, parse = _records(path)
    size = path.stat().st_size
    n = 0
    while True:
        n += 1
        try:
            event = parse(next(records))
        except StopIteration:
            break
        except Exception as exc:  # DataLossError of the TensorFlow stub, or a protobuf DecodeError
            if "truncated record" in str(exc):
                out.cut(rel, n, "record")
            else:
                why = f"corrupt event record {n}: {str(exc)[:200]}; the rest of the file was skipped"
                out.problem(rel, n, why, code=codes.CORRUPT_LINE)
            break
        if event.HasField("summary"):
            step = int(event.step)
            if not 0 <= step <= MAX_STEP:
                why = f"event record {n}: step {step} is not from 0 to 2^63-1; it was skipped"
                out.problem(rel, n, why, code=codes.NOT_A_STEP)
                continue
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                sk = out.step_key(v.tag)
                if sk is None:
                    if v.tag in out.step_key_set:
                        out.put_step(v.tag, step)
                    continue
                if kind == "simple_value":
                    out.put(v.tag, step, float(v.simple_value))
                elif kind == "tensor" and v.metadata.plugin_data.plugin_name == "scalars":
                    value, why = _tensor_scalar(v.tensor)
                    if value is None:
                        out.put_invalid(v.tag, step, None, line=n, text=why)
                    else:
                        out.put(v.tag, step, value)
    if out.progress:
        out.progress(size)


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
