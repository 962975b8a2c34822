"""TensorBoard event files (--use-tensorboard), read with the `tensorboard` package (an extra).

Miles calls `SummaryWriter.add_scalar(key, value, step)`; one run may span several folders
(each process stamps its start time into the folder name). The event records are streamed
one by one, so every scalar is read: nothing is sampled, as EventAccumulator's default
size guidance (10,000 per tag) would, and nothing but the values is kept.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ManualError
from .collect import Collector

INSTALL = "reading TensorBoard event files needs the tensorboard extra: pip install 'metrics-manual[tensorboard]'"


class MissingExtra(ManualError):
    """The tensorboard package is not installed."""


def _loader() -> Any:
    try:
        from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    except ImportError:
        raise MissingExtra(INSTALL) from None
    return LegacyEventFileLoader


def read(path: Path, rel: str, out: Collector) -> None:
    loader = _loader()
    size = path.stat().st_size
    n = 0
    try:
        for n, event in enumerate(loader(str(path)).Load(), 1):
            if not event.HasField("summary"):
                continue
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
    except Exception as exc:  # the reader raises its own (TensorFlow-stub) error types on corrupt records
        out.problem(rel, n + 1, f"corrupt event record: {type(exc).__name__}: {exc}")
    if out.progress:
        out.progress(size)


def _tensor_scalar(tensor: Any) -> float:
    from tensorboard.util import tensor_util

    return float(tensor_util.make_ndarray(tensor).item())
