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
from metrics_manual.runs.collect import Collector

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
            cut = "truncated record" in str(exc)
            out.problem(
                rel,
                n,
                "the last record is cut (the run may still be writing this file); it was skipped"
                if cut
                else f"corrupt event record {n}: {exc}; the rest of the file was skipped",
                code=codes.CUT_LAST_LINE if cut else codes.CORRUPT_LINE,
                severity="warning" if cut else "error",
            )
            break
        if event.HasField("summary"):
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    value = float(v.simple_value)
                elif kind == "tensor" and v.metadata.plugin_data.plugin_name == "scalars":
                    value = _tensor_scalar(v.tensor)
                else:
                    continue
                sk = out.step_key(v.tag)
                if sk is not None:
                    out.put(v.tag, int(event.step), value)
                elif v.tag in out.step_key_set:
                    out.put_step(v.tag, int(event.step))
    if out.progress:
        out.progress(size)


def _tensor_scalar(tensor: Any) -> float:
    from tensorboard.util import tensor_util

    return float(tensor_util.make_ndarray(tensor).item())
