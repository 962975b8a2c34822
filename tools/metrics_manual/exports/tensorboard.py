"""A profile's ranges as a TensorBoard log folder, to open beside a run's (`--logdir_spec run:RUN,manual:DIR`).

Miles' TensorBoard backend calls `add_scalar(key, value, step)` with the step of the key's step
key, so the bounds are written under the metric's own key as tag, one run (a subfolder) per kind
of bound: `min`, `max`, `median` (and `median-low`, `median-high` with a tolerance), `exact`; a
metric's second range of one kind goes to `min-2`, .... TensorBoard then draws a bound in the
same chart as the run's value, and the custom-scalars layout (the `layout` run) has one chart per
metric whose tag regex is the key (and its former names), escaped: a key is matched as written.

A bound is drawn over the steps its range covers (`covered_steps`) in a run of the profile's
length (`setup.steps`): a band for the first 48 steps over steps 0-47, one for every step over
every step of the run, an exact value at step 0 at step 0 alone. Presence has no number to draw.
A corridor draws three lines over its reference's steps, a value at each: `reference`,
`corridor-low` and `corridor-high`.

The values are written as Miles' run writes its own (`simple_value`, float32: TensorBoard's data
server reads no other scalar), each bound rounded to the float32 on the inside of its range, so a
band's lines lie in the band (`judge` reads them as in range); with the package's record writer;
every event has wall time 0, so the same profile gives the same bytes. Keys reach the files as tags
and chart titles only, protobuf strings that nothing runs: never as paths.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, assert_never

from metrics_manual.diagnostics.finding import MissingExtra
from metrics_manual.exports.grafana import median_limits
from metrics_manual.model.keys import pattern_regex
from metrics_manual.model.kinds import covered_steps
from metrics_manual.model.schema import Band, Corridor, Exact, Expectation, Median, Presence, ProfileExport

INSTALL = "writing a TensorBoard log folder needs the tensorboard extra: pip install 'metrics-manual[tensorboard]'"
LAYOUT_RUN = "layout"
EVENT_FILE = "events.out.tfevents.0.metrics-manual"  # TensorBoard reads a file whose name holds "tfevents"
LAYOUT_TAG = "custom_scalars__config__"  # the custom-scalars plugin's (tensorboard/plugins/custom_scalar/metadata.py)


@dataclass(frozen=True)
class Bound:
    """One line a range draws, in the run `run`, under the tag `key`: its value at each step it holds at."""

    run: str
    key: str
    points: Sequence[tuple[int, float]]


Line = float | list[tuple[int, float]]  # one value over the steps a range covers, or a value at each of its steps


def bound_lines(e: Expectation) -> Sequence[tuple[str, Line]]:
    """The lines `e` draws, each the name of its kind of bound and its value as float32 holds it."""
    match e:
        case Band():
            low = [("min", float32(e.min, up=True))] if e.min is not None else []
            return low + ([("max", float32(e.max, up=False))] if e.max is not None else [])
        case Median():
            limits = median_limits(e)
            median: list[tuple[str, Line]] = [("median", float32(e.value))]
            if limits is None:
                return median
            return [*median, ("median-low", float32(limits[0], up=True)), ("median-high", float32(limits[1], up=False))]
        case Exact():
            return [("exact", float32(e.value))]
        case Presence():
            return []
        case Corridor():  # each bound rounded to the inside of the corridor, as a band's
            rows = [(s, *e.bounds(v), v) for s, v in e.reference.points]
            return [
                ("reference", [(s, float32(v)) for s, _, _, v in rows]),
                ("corridor-low", [(s, float32(lo, up=True)) for s, lo, _, _ in rows]),
                ("corridor-high", [(s, float32(hi, up=False)) for s, _, hi, _ in rows]),
            ]
        case _:
            assert_never(e)


_F32 = struct.Struct("<f")
_BITS = struct.Struct("<I")
F32_MAX: float = _F32.unpack(_BITS.pack(0x7F7FFFFF))[0]


def float32(v: float, up: bool | None = None) -> float:
    """`v` as float32 holds it: the nearest, or with `up` the nearest at or above it (False: at or
    below it); past float32's largest finite value, that value."""
    near: float = _F32.unpack(_F32.pack(max(-F32_MAX, min(F32_MAX, v))))[0]
    if up is None or near == v or (near > v) == up or abs(v) > F32_MAX:
        return near
    if near == 0:  # the smallest float32 of the wanted sign
        tiny: float = _F32.unpack(_BITS.pack(1 if up else 0x80000001))[0]
        return tiny
    bits = _BITS.unpack(_F32.pack(near))[0]  # they grow with a float32's magnitude
    out: float = _F32.unpack(_BITS.pack(bits + 1 if (near > 0) == up else bits - 1))[0]
    return out


def bounds(doc: ProfileExport) -> Iterator[Bound]:
    """Every line the profile's ranges draw, in catalog order."""
    run = range(doc.profile.setup.steps)
    taken: dict[tuple[str, str], int] = {}  # (kind of bound, key) -> lines drawn so far
    for m in doc.metrics:
        for e in m.expectations:
            covered = covered_steps(e.span, run)[0]  # the first N, one step or all: consecutive steps
            steps = range(covered[0], covered[-1] + 1) if covered else range(0)
            for name, line in bound_lines(e):
                points = line if isinstance(line, list) else _Constant(line, steps)
                for key in m.members or [m.key]:
                    n = taken[name, key] = taken.get((name, key), 0) + 1
                    yield Bound(name if n == 1 else f"{name}-{n}", key, points)


def _numbered(points: Sequence[tuple[int, float]], i: int) -> Iterator[tuple[tuple[int, int], float]]:
    """((step, i), value) of each point: merged by step, then by line."""
    return (((s, i), v) for s, v in points)


@dataclass(frozen=True)
class _Constant(Sequence[tuple[int, float]]):
    """One value at each of a range of steps, as (step, value) points, never listed whole (a run of 10^9 steps)."""

    value: float
    steps: range

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, i: int) -> tuple[int, float]:  # type: ignore[override]
        return self.steps[i], self.value

    def __iter__(self) -> Iterator[tuple[int, float]]:
        return zip(self.steps, itertools.repeat(self.value))


def chart_regex(key: str, former: list[str]) -> str:
    """The tag regex of a metric's chart: the key as written (a hole of a pattern: any text in its
    segment), or one of its former names; TensorBoard matches it from the tag's start (re.match)."""
    return "^(?:" + "|".join(pattern_regex(k).pattern for k in [key, *former]) + ")$"


def tensorboard_files(doc: ProfileExport) -> dict[str, Callable[[BinaryIO], None]]:
    """The folder's files, `<run>/events...`, each with what writes it; MissingExtra without the package."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
        from tensorboard.plugins.custom_scalar import layout_pb2
        from tensorboard.summary.writer.record_writer import RecordWriter
    except ImportError:
        raise MissingExtra(INSTALL) from None

    def events(fh: BinaryIO, body: Iterator[Any]) -> None:
        writer = RecordWriter(fh)
        # file_version 2: TensorBoard purges nothing when the steps of a file restart (they never do here).
        writer.write(event_pb2.Event(wall_time=0, file_version="brain.Event:2").SerializeToString())
        for event in body:
            writer.write(event.SerializeToString())

    def steps_of(lines: list[Bound]) -> Iterator[Any]:
        """An event per step with the value of every line at it: one step in memory at a time."""
        merged = heapq.merge(*(_numbered(b.points, i) for i, b in enumerate(lines)))
        for step, values in itertools.groupby(merged, key=lambda p: p[0][0]):
            points = [summary_pb2.Summary.Value(tag=lines[i].key, simple_value=v) for (_, i), v in values]
            yield event_pb2.Event(wall_time=0, step=step, summary=summary_pb2.Summary(value=points))

    by_run: dict[str, list[Bound]] = {}
    for b in bounds(doc):
        if b.points:
            by_run.setdefault(b.run, []).append(b)
    drawn = {b.key for lines in by_run.values() for b in lines}
    layout = layout_pb2.Layout()
    former: dict[str, list[str]] = {}
    for old, new in doc.renames().items():
        former.setdefault(new, []).append(old)
    by_section: dict[str, Any] = {}
    for m in doc.metrics:
        for key in m.members or [m.key]:
            if key in drawn:
                if m.section not in by_section:
                    by_section[m.section] = layout.category.add(title=m.section_title)
                chart = by_section[m.section].chart.add(title=key)
                chart.multiline.tag.append(chart_regex(key, former.get(key, [])))
    config = summary_pb2.Summary.Value(
        tag=LAYOUT_TAG,
        metadata=summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="custom_scalars")
        ),
        tensor=tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[layout.SerializeToString()]),
    )
    layout_event = event_pb2.Event(wall_time=0, step=0, summary=summary_pb2.Summary(value=[config]))

    def write(lines: list[Bound] | None, fh: BinaryIO) -> None:
        events(fh, steps_of(lines) if lines is not None else iter([layout_event]))

    files: dict[str, Callable[[BinaryIO], None]] = {
        f"{run}/{EVENT_FILE}": functools.partial(write, lines) for run, lines in by_run.items()
    }
    files[f"{LAYOUT_RUN}/{EVENT_FILE}"] = functools.partial(write, None)
    return files
