"""orjson reads run logs only where it reads them as json.loads does: the same run, the same verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs import collect
from metrics_manual.runs.read import read_run

STEP_KEYS = {"train": "train/step", "rollout": "rollout/step"}
KEYS = ["train/loss", "train/grad_norm", "rollout/raw_reward"]

# Lines that json.loads and orjson may read differently, or that only one of them reads.
TRICKY = [
    b'{"step_key": "train/step", "step": 1, "metrics": {"train/step": 1, "train/loss": NaN, "train/grad_norm": 2.5}}',
    b'{"step_key": "train/step", "step": 2, "metrics": {"train/step": 2, "train/loss": Infinity, "x": -Infinity}}',
    b'{"step_key": "train/step", "step": NaN, "metrics": {"train/step": 3, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 4, "metrics": {"train/step": NaN, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 5, "metrics": {"train/step": 5, "train/loss": 123456789012345678901234567890}}',
    b'{"step_key": "train/step", "step": 6, "metrics": {"train/step": 18446744073709551616, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 7, "metrics": {"train/step": 7, "train/loss": 1e400}}',
    b'{"step_key": "train/step", "step": 8, "metrics": {"train/step": 8, "train/loss": "NaN", "note": "a:NaN,b"}}',
    b'{"step_key": "train/step", "step": 9, "metrics": {"train/step": 9, "train/lo\\ud800ss": 1, "train/loss": 2}}',
    b'\xef\xbb\xbf{"step_key": "train/step", "step": 10, "metrics": {"train/step": 10, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 11, "metrics": {"train/step": 11, "train/loss": 1, "train/loss": 3}}',
    b'{"step_key": "train/step", "step": 12, "metrics": {"train/step": 12, "train/loss": -9223372036854775809}}',
    b'{"step_key": "train/step", "step": 13, "metrics": {"train/step": 13, "train/loss": [NaN, 1]}}',
    b'{"step_key": "train/step", "step": 14, "metrics": {"train/step": 14, "train/loss": 0.1}, "ts": NaN}',
    b'{"step_key": "train/step", "step": 15, "metrics": {"train/step": 15, "train/loss": 1 }}  ',
    b"[1, 2, 3]",
    b"not json at all",
    b"",
    b"  ",
    b'{"step_key": "train/step", "step": 16, "metrics": {"train/step": 16, "train/loss": "x\xff"}}',
    b'{"step_key": "train/step", "step": 17, "metrics": {"train/step": 17, "train/loss": 2}',
]


def _event(line: bytes) -> bytes:
    """The same record as a metric line of the event log."""
    return line.replace(b'"step_key"', b'"type": "metric", "attempt": 0, "sk"', 1) if line.startswith(b"{") else line


def _run(path: Path, form: str, monkeypatch, fast: bool) -> tuple:
    if not fast:
        monkeypatch.setattr(collect, "_orjson", None)
    else:
        monkeypatch.undo()
    run = read_run([path], STEP_KEYS, form, keys=KEYS)
    series = {k: [(s, repr(v)) for s, v in v.items()] for k, v in run.series.items()}
    return series, [str(p) for p in run.problems], sorted(run.unread), run.invalid, run.relogged, run.unfinished


@pytest.mark.parametrize("form", ["dashboard", "events"])
def test_tricky_lines_read_the_same_through_both_parsers(tmp_path: Path, monkeypatch, form: str) -> None:
    path = tmp_path / ("metrics.jsonl" if form == "dashboard" else "events.jsonl")
    lines = TRICKY if form == "dashboard" else [_event(line) for line in TRICKY]
    path.write_bytes(b"\n".join(lines))  # the last line is cut: no newline after it
    assert collect._orjson is not None  # pinned: the fast path is what this compares
    assert _run(path, form, monkeypatch, fast=True) == _run(path, form, monkeypatch, fast=False)


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(["NaN", "Infinity", "a:NaN,b", "x"]),
    st.none(),
    st.booleans(),
)
records = st.fixed_dictionaries(
    {
        "step": st.one_of(st.integers(min_value=-2, max_value=2**65), values),
        "metrics": st.dictionaries(st.sampled_from([*KEYS, "train/step", "other/key"]), values, max_size=6),
    }
)


@settings(max_examples=60, deadline=None)
@given(st.lists(records, min_size=1, max_size=8))
def test_any_dashboard_log_reads_the_same_through_both_parsers(tmp_path_factory, records: list[dict]) -> None:
    path = tmp_path_factory.mktemp("fast") / "metrics.jsonl"
    # json.dumps writes NaN / Infinity bare, as the dashboard does.
    path.write_text("".join(json.dumps({"step_key": "train/step", **r}) + "\n" for r in records), "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        fast = _run(path, "dashboard", mp, fast=True)
        mp.setattr(collect, "_orjson", None)
        run = read_run([path], STEP_KEYS, "dashboard", keys=KEYS)
    slow = (
        {k: [(s, repr(v)) for s, v in v.items()] for k, v in run.series.items()},
        [str(p) for p in run.problems],
        sorted(run.unread),
        run.invalid,
        run.relogged,
        run.unfinished,
    )
    assert fast == slow
