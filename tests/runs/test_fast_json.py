"""orjson and msgspec read run logs only where they read them as json.loads does: the same run, the
same verdicts. (msgspec decodes the dashboard log's records into Structs of the keys seen so far:
runs/dashboard_struct.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs import collect, dashboard, events, known_keys
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
    b'{"step_key": "train/step", "step": 19, "metrics": {"train\\u002fstep": 19, "train\\/loss": NaN, "x": 1}}',
    # A backslash before a spelled token would keep the added quote inside the string: corrupt either way.
    b'{"step_key": "train/step", "step": 18, "metrics": {"train/step": 18, "note": "\\NaN, "train/loss": 2}}',
    b'{"step_key": "train/step", "step": 17, "metrics": {"train/step": 17, "train/loss": 2}',
]

# Lines with no backslash and no `~`: a chunk of them is read spelled (NaN as "~") by orjson, unless
# a token is not followed by `,` or `}`. Each is read inside plain lines, so both paths meet it.
CLEAN = [
    b'{"step_key": "train/step", "step": 20, "metrics": {"train/step": 20, "train/loss": NaN, "x": "a:NaN,b"}}',
    b'{"step_key": "train/step", "step": 21, "metrics": {"train/step": 21, "train/loss": "NaN", "x": 1}}',
    b'{"step_key": "train/step", "step": 22, "metrics": {"train/step": 22, "train/loss": 1, "NaN": 2}}',
    b'{"step_key": "train/step", "step": 23, "metrics": {"train/step": 23, "train/loss": 1, NaN: 2}}',
    b'{"step_key": "train/step", "step": 24, "metrics": {"train/step": 24, "x": {NaN: 1}, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 25, "metrics": {"train/step": 25, "x": {"a": NaN}, "train/loss": 2}}',
    b'{"step_key": "train/step", "step": 26, "metrics": {"train/step": 26, "train/loss": NaN , "x": 1}}',
    b'{"step_key": "train/step", "step": 27, "metrics": {"train/step": 27, "train/loss": -Infinity, "x": Infinity}}',
    b'{"step_key": "train/step", "step": 28, "metrics": {"train/step": 28, "train/loss": 1, "train/loss": NaN}}',
    b'{"step_key": "train/step", "step": 29, "metrics": {"train/step": 29, "train/loss": NaN, "train/loss": 3}}',
    b'{"step_key": "train/step", "step": 30, "metrics": {"train/step": 30, "train/loss": 123456789012345678901234}}',
    b'{"step_key": "train/step", "step": 31, "metrics": {"train/step": 31, "train/grad_norm": 18446744073709551617}}',
    b'{"step_key": "train/step", "step": NaN, "metrics": {"train/step": 32, "train/loss": 1}}',
    b'{"step_key": NaN, "step": 33, "metrics": {"train/step": 33, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 34, "metrics": {"train/step": NaN, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 35, "metrics": {"train/step": 35, "train/loss": false, "a": [NaN, 1]}}',
    b'{"step_key": "train/step", "step": 36, "metrics": {"train/step": 36, "train/loss": [NaN]}}',
    b'{"step_key": "train/step", "step": 36, "metrics": {"train/step": 36, "train/loss": [1, 2], "x": NaN}}',
    b'{"step_key": "train/step", "step": 36, "metrics": {"train/step": 36, "train/loss": {"a": 1}, "x": NaN}}',
    b'{"step_key": ["train/step"], "step": 36, "metrics": {"train/step": 36, "train/loss": 1, "x": NaN}}',
    b'{"step_key": "train/step", "step": [36], "metrics": {"train/step": 36, "train/loss": 1, "x": NaN}}',
    b'{"step_key": "train/step", "step": 36, "metrics": {"train/step": true, "train/loss": 1, "x": NaN}}',
    b'{"step_key": "train/step", "step": 36, "metrics": {"train/step": 36, "train/loss": true, "x": NaN}}',
    b'{"step_key": "train/step", "step": 36, "metrics": {"train/step": 36, "train/loss": "x", "y": NaN}}',
    b'{"step_key": "train/step", "step": 37, "metrics": {"train/step": 37, "train/loss": 1}} {"metrics": {}}',
    b'{"step_key": "train/step", "step": 38, "metrics": {"train/step": 38, "train/loss": NaNx}}',
    b'{"step_key": "train/step", "step": 39, "metrics": {"train/step": 39, "train/loss": NaNNaN}}',
    b'{"step_key": "train/step", "step": 40, "metrics": {"train/step": 40, "train/loss": -NaN}}',
    b'{"step_key": "train/step", "step": 41,\t"metrics" :{ "train/step" :41 ,"train/loss":\tNaN}\r',
    b'{"step_key": "train/step", "step": 42, "metrics": {"train/step": 42, "rollout/raw_reward": NaN}}',
    b'{"step_key": "train/step", "step": 43, "metrics": {"train/step": 43, "train/loss": 1, "y": "\xc3\xa9NaN"}}',
    b'{"step_key": "train/step", "step": 5, "metrics": {"train/step": 5, "train/loss": 7}}',
    b'{"step_key": "train/step", "step": 44, "metrics": {"train/step": 44.0, "train/loss": 1}}',
    b'{"step_key": "train/step", "step": 45, "metrics": {"train/loss": 1}}',
    b'{"step_key": "rollout/step", "step": 46, "metrics": {"train/loss": 1, "train/step": 46}}',
    b'{"step_key": "train/step", "step": -1, "metrics": {"train/step": -1, "train/loss": 1}}',
    b'{"step_key": "train/step", "metrics": {"train/step": 47, "train/loss": 1e308, "train/grad_norm": -0}}',
    b"",
    b"   ",
    b'{"step_key": "train/step", "step": 48, "metrics": {"train/step": 48, "train/loss": 1}',
    b'{"step_key": "train/step", "step": 49, "metrics": NaN}',
    b"NaN",
]
PLAIN = [
    b'{"step_key": "train/step", "step": %d, "metrics": {"train/step": %d, "train/loss": 0.5, "train/grad_norm": NaN, '
    b'"rollout/step": %d, "rollout/raw_reward": 1, "other/key": NaN}}' % (s, s, s)
    for s in range(100, 104)
]


def _event(line: bytes) -> bytes:
    """The same record as a metric line of the event log."""
    return line.replace(b'"step_key"', b'"type": "metric", "attempt": 0, "sk"', 1) if line.startswith(b"{") else line


def _run(path: Path, form: str, monkeypatch, fast: bool, chunk: int | None = None, structs: bool = True) -> tuple:
    """What a run read from `path` gives. `fast`: orjson, msgspec and the SIMD search where they apply
    (else json.loads reads every line, and bytes.find searches the event log); `structs`: msgspec too.
    (The parsers are set aside for this read only: `monkeypatch` keeps what the test patched.)"""
    with pytest.MonkeyPatch.context() as mp:
        if not fast:
            mp.setattr(collect, "_orjson", None)
            mp.setattr(collect, "_Str", None)
        if not fast or not structs:
            mp.setattr(collect, "_msgspec", None)
        if chunk:
            mp.setattr(dashboard, "CHUNK", chunk)
            mp.setattr(events, "CHUNK", chunk)
        run = read_run([path], STEP_KEYS, form, keys=KEYS)
    series = {k: [(s, repr(v)) for s, v in v.items()] for k, v in run.series.items()}
    return series, [str(p) for p in run.problems], sorted(run.unread), run.invalid, run.relogged, run.unfinished


def _read_alike(path: Path, form: str, monkeypatch) -> tuple:
    """What json.loads reads from `path`, after asserting that msgspec's Structs, orjson alone, the
    Structs in chunks of a few lines (a chunk whose lines all decode is decoded at once) and the
    Structs put a line at a time (slices of one byte) read the same."""
    slow = _run(path, form, monkeypatch, fast=False)
    assert _run(path, form, monkeypatch, fast=True) == slow
    assert _run(path, form, monkeypatch, fast=True, structs=False) == slow
    assert _run(path, form, monkeypatch, fast=True, chunk=700) == slow
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dashboard, "SLICE_BYTES", 1)
        mp.setattr(events, "SLICE_BYTES", 1)
        assert _run(path, form, mp, fast=True) == slow
    return slow


@pytest.mark.parametrize("form", ["dashboard", "events"])
def test_tricky_lines_read_the_same_through_both_parsers(tmp_path: Path, monkeypatch, form: str) -> None:
    path = tmp_path / ("metrics.jsonl" if form == "dashboard" else "events.jsonl")
    lines = TRICKY if form == "dashboard" else [_event(line) for line in TRICKY]
    path.write_bytes(b"\n".join(lines))  # the last line is cut: no newline after it
    assert collect._orjson is not None and collect._msgspec is not None  # pinned: the fast paths are compared
    slow = _run(path, form, monkeypatch, fast=False)
    assert _run(path, form, monkeypatch, fast=True) == slow
    assert _run(path, form, monkeypatch, fast=True, structs=False) == slow


@pytest.mark.parametrize("form", ["dashboard", "events"])
@pytest.mark.parametrize("line", CLEAN, ids=range(len(CLEAN)))
def test_clean_lines_read_the_same_spelled_or_not(tmp_path: Path, monkeypatch, form: str, line: bytes) -> None:
    path = tmp_path / "run.jsonl"
    lines = [*PLAIN[:2], line, *PLAIN[2:]]
    path.write_bytes(b"\n".join(lines if form == "dashboard" else map(_event, lines)) + b"\n")
    slow = _run(path, form, monkeypatch, fast=False)
    assert _run(path, form, monkeypatch, fast=True) == slow
    assert _run(path, form, monkeypatch, fast=True, structs=False) == slow
    # Lines cut at every chunk boundary: carried lines, and a chunk that ends inside a token.
    for chunk in (7, 61, 250):
        assert _run(path, form, monkeypatch, fast=True, chunk=chunk) == slow


def test_plain_dashboard_lines_are_read_spelled(tmp_path: Path, monkeypatch) -> None:
    """The spelled reading is what reads them (else the tests above compare json.loads with itself)."""
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b"\n".join(PLAIN) + b"\n")
    read = []
    monkeypatch.setattr(dashboard, "_record", lambda *a, **k: read.append(a[0]) or True)
    monkeypatch.setattr(collect, "json_record", lambda *a, **k: pytest.fail("a line read alone"))
    run = read_run([path], STEP_KEYS, "dashboard", keys=KEYS)
    assert read == [] and run.series["train/loss"] == {100: 0.5, 101: 0.5, 102: 0.5, 103: 0.5}
    assert run.series["train/grad_norm"].finite() is False and sorted(run.unread) == ["other/key"]


def _plain(step: int, extra: bytes = b"", own: bytes = b"train/step") -> bytes:
    return (
        b'{"ts": 1.5, "step_key": "%s", "step": %d, "metrics": {"train/step": %d, "train/loss": 0.5, '
        b'"train/grad_norm": NaN, "rollout/step": %d, "rollout/raw_reward": 1, "other/key": NaN%s}}'
        % (own, step, step, step, extra)
    )


# Lines that msgspec reads otherwise than json.loads or rejects, among records whose keys it knows (so
# that they reach the decoder): each must be read as json.loads reads it.
STRUCT = [
    _plain(60, b', "other/huge": 1' + b"0" * 5000),  # beyond json.loads' 4,300 digits: a corrupt line
    _plain(61).replace(b'"ts": 1.5', b'"ts": "\xff"'),  # not UTF-8 where a value is skipped
    _plain(62).replace(b'"ts": 1.5', b'"extra": "\xed\xa0\x80"'),  # a lone surrogate, CESU-8
    _plain(63).replace(b'"ts": 1.5', b'"ts": 1e400'),
    _plain(64, b', "other/big": 1e400'),
    _plain(65).replace(b'"train/loss": 0.5', b'"train/loss": 9223372036854775807'),
    _plain(66).replace(b'"train/loss": 0.5', b'"train/loss": -9223372036854775296'),
    _plain(67).replace(b'"train/loss": 0.5', b'"train/loss": 1e19'),
    _plain(68).replace(b'"train/loss": 0.5', b'"train/loss": -0'),
    _plain(69).replace(b'"train/loss": 0.5', b'"train/loss": true'),
    _plain(70).replace(b'"train/loss": 0.5', b'"train/loss": null'),
    _plain(71).replace(b'"train/loss": 0.5', b'"train/loss": "0.5"'),
    _plain(72).replace(b'"train/loss": 0.5', b'"train/loss": [0.5]'),
    _plain(73).replace(b'"train/step": 73', b'"train/step": 73.0'),
    _plain(74).replace(b'"train/step": 74', b'"train/step": null'),
    _plain(75).replace(b'"train/step": 75, ', b""),  # its own step key places it
    _plain(76, own=b"rollout/step").replace(b'"train/step": 76, ', b""),  # logged without its step key
    _plain(77) + b' {"metrics": {}}',
    _plain(78).replace(b'"step_key": "train/step"', b'"step_key": "train/step", "step_key": "rollout/step"'),
    _plain(79).replace(b'"step_key": "train/step", ', b""),  # no step_key: not the Struct of one
    _plain(80).replace(b'"step_key": "train/step"', b'"step_key": NaN'),
    _plain(81).replace(b'"step_key": "train/step"', b'"step_key": 5'),
    _plain(82).replace(b'"metrics": {', b'"metrics": {"train/loss": 7, '),  # duplicate key: the last wins
    _plain(83).replace(b'"ts": 1.5', b'"metrics": {"train/loss": 9}'),  # duplicate metrics: the last wins
    _plain(84).replace(b'"step": 84', b'"step": -1'),
    _plain(85).replace(b'"step": 85', b'"step": 18446744073709551616'),
    _plain(86).replace(b'"train/loss": 0.5', b'"train/loss": 0.5\t'),
    _plain(87).replace(b'"train/loss": 0.5', b'"train/loss": "a\tb"'),
    _plain(88).replace(b'"train/loss": 0.5', b'"train/loss": Infinity'),
    _plain(89).replace(b'"train/loss": 0.5', b'"train/loss": -Infinity'),
    _plain(5),  # a step logged again: the later value wins, and the step is named
    _plain(90, own=b"rollout/step"),  # the same keys under another step key (one column would reorder)
    _plain(91),
    _plain(92).replace(b'"step": 92', b'"step": 93'),  # its own step is not its step key's: both reached
]


@pytest.mark.parametrize("line", STRUCT, ids=range(len(STRUCT)))
def test_lines_the_structs_read_otherwise_are_read_as_json_loads_reads_them(
    tmp_path: Path, monkeypatch, line: bytes
) -> None:
    path = tmp_path / "metrics.jsonl"
    lines = [_plain(s) for s in range(1, 6)] + [line] + [_plain(s) for s in range(100, 103)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    _read_alike(path, "dashboard", monkeypatch)


def test_a_key_logged_with_two_step_keys_keeps_the_line_order(tmp_path: Path, monkeypatch) -> None:
    """train/loss at the same steps from log() calls of two step keys: the later line wins, whichever
    Struct decoded it."""
    path = tmp_path / "metrics.jsonl"
    lines = []
    for s in range(1, 41):
        a, b = _plain(s), _plain(s, own=b"rollout/step").replace(b'"train/loss": 0.5', b'"train/loss": 2')
        lines += [a, b] if s % 2 else [b, a]
    path.write_bytes(b"\n".join(lines) + b"\n")
    slow = _run(path, "dashboard", monkeypatch, fast=False)
    assert {v for _, v in slow[0]["train/loss"]} == {"0.5", "2.0"}
    assert _run(path, "dashboard", monkeypatch, fast=True) == slow
    assert _run(path, "dashboard", monkeypatch, fast=True, chunk=1000) == slow


def test_chunks_that_end_at_a_line_end_are_read_in_line_order(tmp_path: Path, monkeypatch) -> None:
    """Lines of one width, in chunks of three: the first chunk is read line by line (a line of new
    keys, then records held), the next ones decoded at once, one with a line of new keys that re-logs
    a step again read line by line."""
    lines = [_plain(s) for s in range(10, 16)]
    lines += [_plain(50, b', "other/new": 1').replace(b'"train/loss": 0.5', b'"train/loss": 9'), _plain(50), _plain(51)]
    lines += [_plain(s) for s in range(52, 58)]
    width = max(map(len, lines)) + 1
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b"".join(line.ljust(width) + b"\n" for line in lines))  # trailing spaces: still JSON
    slow = _run(path, "dashboard", monkeypatch, fast=False)
    decoded = _decoded(monkeypatch)
    taken: list[tuple[int, int]] = []  # (first line, lines taken) of each chunk decoded a slice at a time
    take = dashboard._Known.take

    def spy(self: Any, n: int, lines: list[Any], before: Any) -> int:
        if count := take(self, n, lines, before):
            taken.append((n, count))
        return count

    monkeypatch.setattr(dashboard._Known, "take", spy)
    assert _run(path, "dashboard", monkeypatch, fast=True, chunk=3 * (width + 1)) == slow
    assert decoded == [2, 3, 8, 9] and taken == [(4, 3), (10, 3), (13, 3)]


def test_a_chunk_is_taken_a_slice_at_a_time_up_to_the_slice_that_fails(tmp_path: Path, monkeypatch) -> None:
    """Chunks of six lines, slices of two lines' bytes: the slice before the one with a line of new
    keys is put at once, that slice and the rest of its chunk are read line by line, in line order
    (the new line's step is re-logged after it), and the next chunk is taken whole again."""
    new = _plain(23, b', "other/new": 1').replace(b'"train/loss": 0.5', b'"train/loss": 9')
    lines = [_plain(s) for s in range(10, 22)] + [_plain(21), _plain(22), new, _plain(23), _plain(24), _plain(25)]
    lines += [_plain(s) for s in range(26, 32)]
    width = max(map(len, lines)) + 1
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b"".join(line.ljust(width) + b"\n" for line in lines))  # trailing spaces: still JSON
    slow = _run(path, "dashboard", monkeypatch, fast=False)
    taken: list[tuple[int, int, int]] = []  # (first line, lines in the chunk, lines taken)
    take = dashboard._Known.take

    def spy(self: Any, n: int, chunk_lines: list[Any], before: Any) -> int:
        count = take(self, n, chunk_lines, before)
        taken.append((n, len(chunk_lines), count))
        return count

    monkeypatch.setattr(dashboard._Known, "take", spy)
    monkeypatch.setattr(dashboard, "SLICE_BYTES", 2 * width)  # two lines a slice
    assert _run(path, "dashboard", monkeypatch, fast=True, chunk=6 * (width + 1)) == slow
    assert taken == [(1, 6, 0), (7, 6, 6), (13, 6, 2), (19, 6, 6)]
    assert slow[4]  # the re-logged step: the order of the lines was kept


def test_lines_that_fail_for_other_reasons_stop_the_learning(tmp_path: Path, monkeypatch) -> None:
    """Every line fails to decode (a judged key is null) but brings no new key: the learning from
    failed lines stops after a bounded number of tries, and the run reads the same."""
    path = tmp_path / "metrics.jsonl"
    lines = [_plain(s).replace(b'"train/loss": 0.5', b'"train/loss": null') for s in range(1, 400)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    slow = _run(path, "dashboard", monkeypatch, fast=False)
    tries: list[int] = []
    learned = known_keys.KnownKeys._learned
    monkeypatch.setattr(known_keys.KnownKeys, "_learned", lambda self: tries.append(1) or learned(self))
    assert _run(path, "dashboard", monkeypatch, fast=True) == slow
    assert 0 < len(tries) <= 4 * known_keys.REBUILDS


def _metric_line(step: int, extra: bytes = b"", attempt: bytes = b"null") -> bytes:
    return (
        b'{"timestamp": "t", "source": {"c": 1}, "type": "metric", "rollout_id": null, "attempt": %s, '
        b'"metrics": {"train/step": %d, "train/loss": 0.5, "train/grad_norm": null, "rollout/step": %d, '
        b'"rollout/raw_reward": 1, "other/key": 2%s}}' % (attempt, step, step, extra)
    )


# Metric lines among others whose keys the Struct knows (so that they reach the decoder), that must
# be read as json.loads reads them.
EVENT_STRUCT = [
    _metric_line(60, attempt=b"2"),  # a retry: the attempt rule, record by record
    _metric_line(5, attempt=b"1"),
    _metric_line(61, attempt=b"true"),
    _metric_line(62, attempt=b'"3"'),
    _metric_line(63).replace(b'"train/step": 63', b'"train/step": 63.0'),
    _metric_line(64).replace(b'"train/step": 64', b'"train/step": null'),
    _metric_line(65).replace(b'"train/step": 65, ', b""),  # logged without its step key
    _metric_line(66).replace(b'"train/step": 66', b'"train/step": -1'),
    _metric_line(67).replace(b'"train/step": 67', b'"train/step": true'),
    _metric_line(68).replace(b'"train/loss": 0.5', b'"train/loss": "x"'),
    _metric_line(69).replace(b'"train/loss": 0.5', b'"train/loss": false'),
    _metric_line(70).replace(b'"train/loss": 0.5', b'"train/loss": 123456789012345678901234567890'),
    _metric_line(71).replace(b'"train/loss": 0.5', b'"train/loss": -0'),
    _metric_line(72).replace(b'"type": "metric"', b'"type": "witness"'),  # not a metric event: not read
    _metric_line(73).replace(b'"type": "metric"', b'"type": "metric", "type": "x"'),
    _metric_line(74).replace(b'"type": "metric"', b'"type": "x", "type": "metric"'),
    _metric_line(75).replace(b'"timestamp": "t"', b'"timestamp": "\\u0074"'),  # a backslash: read alone
    _metric_line(76).replace(b'"timestamp": "t"', b'"timestamp": "\xff"'),
    _metric_line(77).replace(b'"timestamp": "t"', b'"new": 1'),  # a top-level key not seen before
    _metric_line(78).replace(b'"metrics": {', b'"metrics": {"train/loss": 9, '),
    _metric_line(79, b', "other/huge": 1' + b"0" * 5000),
    _metric_line(80, b', "other/big": 1e400'),
    _metric_line(81, b', "other/new": [1, {"a": null}]'),
    _metric_line(5),  # a step logged again
]


@pytest.mark.parametrize("line", EVENT_STRUCT, ids=range(len(EVENT_STRUCT)))
def test_metric_lines_the_struct_reads_otherwise_are_read_as_json_loads_reads_them(
    tmp_path: Path, monkeypatch, line: bytes
) -> None:
    path = tmp_path / "events.jsonl"
    other = b'{"type": "weight_checksum", "checksums": {"a": "00ff"}}'
    lines = [_metric_line(s) for s in range(1, 6)] + [other, line, other] + [_metric_line(s) for s in range(100, 103)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    _read_alike(path, "events", monkeypatch)


def test_the_struct_reads_the_metric_lines_of_known_keys(tmp_path: Path, monkeypatch) -> None:
    """Only the first metric line of each new key set is read alone; the run reads the same."""
    path = tmp_path / "events.jsonl"
    lines = [_metric_line(s) for s in range(1, 50)] + [_metric_line(s, b', "other/late": 1') for s in range(50, 90)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    slow = _run(path, "events", monkeypatch, fast=False)
    alone: list[int] = []
    line = events._line
    monkeypatch.setattr(events, "_line", lambda text, at, *a: alone.append(at) or line(text, at, *a))
    assert _run(path, "events", monkeypatch, fast=True) == slow and "other/late" in slow[2]
    assert alone == [0, sum(len(x) + 1 for x in lines[:49])]


def _decoded(monkeypatch) -> list[int]:
    """The line numbers whose records the Structs decoded and put a column at a time, as read."""
    held: list[int] = []
    add = dashboard._Known.add

    def spy(self, n: int, line: bytes, before) -> bool:
        ok = add(self, n, line, before)
        if ok:
            held.append(n)
        return ok

    monkeypatch.setattr(dashboard._Known, "add", spy)
    return held


def test_the_structs_read_all_but_the_lines_of_new_keys(tmp_path: Path, monkeypatch) -> None:
    """Only a line with keys not seen before is read by the ordinary path (which notes them); a key
    first logged late in the file is still named unread, and a judged one read."""
    path = tmp_path / "metrics.jsonl"
    late = b', "other/late": 1, "train/grad_norm": 2'
    lines = [_plain(s).replace(b', "train/grad_norm": NaN', b"") for s in range(1, 301)]
    lines += [_plain(s).replace(b', "train/grad_norm": NaN', b"") + b"" for s in range(301, 303)]
    lines += [_plain(s).replace(b', "train/grad_norm": NaN', late) for s in range(303, 400)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    slow = _run(path, "dashboard", monkeypatch, fast=False)
    decoded = _decoded(monkeypatch)
    fast = _run(path, "dashboard", monkeypatch, fast=True)
    assert fast == slow and _run(path, "dashboard", monkeypatch, fast=True, chunk=1000) == slow
    assert "other/late" in fast[2] and dict(fast[0]["train/grad_norm"]) == {s: "2.0" for s in range(303, 400)}
    assert sorted(set(range(1, 400)) - set(decoded)) == [1, 303]


def test_the_structs_are_rebuilt_a_capped_number_of_times(tmp_path: Path, monkeypatch) -> None:
    """A log of ever new keys: after REBUILDS rebuilds (or MAX_FIELDS keys) such lines stay on the
    ordinary path, and the run reads the same."""
    path = tmp_path / "metrics.jsonl"
    lines = [_plain(s, b', "other/k%d": 1, "train/loss": %d' % (s, s)) for s in range(1, 60)]
    path.write_bytes(b"\n".join(lines + [_plain(s) for s in range(60, 70)]) + b"\n")
    slow = _run(path, "dashboard", monkeypatch, fast=False)
    assert len(slow[2]) == 60  # other/key and the 59 new ones
    for rebuilds, fields in ((3, 10_000), (100, 12)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(known_keys, "REBUILDS", rebuilds)
            mp.setattr(known_keys, "MAX_FIELDS", fields)
            built: list[int] = []
            build = known_keys.KnownKeys._build
            mp.setattr(known_keys.KnownKeys, "_build", lambda self, b=built, f=build: b.append(self.size) or f(self))
            decoded = _decoded(mp)
            assert _run(path, "dashboard", mp, fast=True) == slow
            assert len(built) <= rebuilds and max(built) <= fields
            # Each line of a new key is read by the ordinary path; the plain lines after, by the Structs.
            assert not set(decoded) & set(range(1, 60)) and set(range(61, 70)) <= set(decoded)


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "a:NaN,b", "x", "NaN}", "~", "é NaN", "a\\NaN"]),
    st.none(),
    st.booleans(),
    st.lists(st.floats(allow_nan=True), max_size=2),
    st.dictionaries(st.sampled_from(["a", "NaN"]), st.floats(allow_nan=True), max_size=2),
)
records = st.fixed_dictionaries(
    {
        "step": st.one_of(st.integers(min_value=-2, max_value=2**65), values),
        "metrics": st.dictionaries(st.sampled_from([*KEYS, "train/step", "other/key"]), values, max_size=6),
    }
)


def _both(path: Path, form: str, chunk: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        slow = _run(path, form, mp, fast=False)
    with pytest.MonkeyPatch.context() as mp:
        assert _run(path, form, mp, fast=True, chunk=chunk) == slow
    with pytest.MonkeyPatch.context() as mp:
        assert _run(path, form, mp, fast=True) == slow
    with pytest.MonkeyPatch.context() as mp:
        assert _run(path, form, mp, fast=True, structs=False) == slow


@settings(max_examples=80, deadline=None)
@given(st.lists(records, min_size=1, max_size=8), st.sampled_from([5, 64, 300]), st.booleans())
def test_any_dashboard_log_reads_the_same_through_both_parsers(
    tmp_path_factory, records: list[dict], chunk: int, ascii_only: bool
) -> None:
    path = tmp_path_factory.mktemp("fast") / "metrics.jsonl"
    # json.dumps writes NaN / Infinity bare, as the dashboard does; with ensure_ascii=False no backslash
    # is written for a non-ASCII string, so chunks of such lines are read spelled too.
    text = "".join(json.dumps({"step_key": "train/step", **r}, ensure_ascii=ascii_only) + "\n" for r in records)
    path.write_text(text, "utf-8")
    _both(path, "dashboard", chunk)


OTHER_EVENTS = [
    '{"type": "witness", "source": {}, "note": "metrics"}',
    '{"type": "witness", "source": {}, "note": "metri\\u0063"}',
    '{"type": "\\u006detric", "source": {}, "\\u006detrics": {"train/step": 7, "train/loss": 2.5}}',
    '{"type": "metri\\u0063", "source": {}, "metrics": {"train/step": 8, "train/loss": NaN}}',
    '{"type": "weight_checksum", "source": {}, "checksums": {"layer.0": "00ff"}}',
    '{"type": "metric", "source": {}, "metrics": {"train/step": 9, "train/lo\\u0073s": 1.5}}',
    '{"type": "metric", "source": {}, "metrics": {"train/step": 10, "train/loss": 1}, "type": "x"}',
    '{"type": "metric", "metrics": [1]}',
    "{not json, but it says metric}",
    "",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(records, st.sampled_from(OTHER_EVENTS)), max_size=8), st.sampled_from([5, 64, 300]))
def test_any_event_log_reads_the_same_through_both_parsers(tmp_path_factory, lines: list, chunk: int) -> None:
    """Metric events among other events whose text holds `metri` or a backslash (a metric event can
    spell its type with an escape), in chunks of any size."""
    path = tmp_path_factory.mktemp("fast") / "events.jsonl"
    text = [
        json.dumps({"type": "metric", "source": {}, "attempt": None, **r}) if isinstance(r, dict) else r for r in lines
    ]
    path.write_text("\n".join(text) + "\n", "utf-8")
    _both(path, "events", chunk)


def test_an_escaped_metric_event_is_read(tmp_path: Path) -> None:
    """A metric line that never spells `metri` (an escape in its type) is found by its backslash."""
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([OTHER_EVENTS[4], OTHER_EVENTS[2], OTHER_EVENTS[4]]) + "\n", "utf-8")
    run = read_run([path], STEP_KEYS, "events", keys=KEYS)
    assert dict(run.series["train/loss"].items()) == {7: 2.5}


# Bytes of which event logs are made, and the bytes that are searched for, in pieces that can meet
# across each other: a `metri` cut by a newline, a backslash next to it, the end of the range inside one.
PIECES = st.sampled_from([b"metri", b"metric", b"metr", b"etri", b"m", b"\\", b"\n", b"00ff", b'"a":1', b"\xed"])


@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=40))
def test_the_simd_search_finds_the_lines_bytes_find_finds(pieces: list[bytes]) -> None:
    data = b"".join(pieces) + b"\n"
    assert collect._Str is not None  # pinned: the SIMD search is what this compares
    bounds = [0] + [i + 1 for i, byte in enumerate(data) if byte == 10]  # _scan is given whole lines
    for start in bounds:
        for end in (b for b in bounds if b >= start):
            fast = list(events.lines_to_read(data, start, end))
            for buffer in (data, bytearray(data)):
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(collect, "_Str", None)
                    assert list(events.lines_to_read(buffer, start, end)) == fast
            assert all(b"metri" in data[b:e] or b"\\" in data[b:e] for b, e in fast)
            assert all(b"metri" not in line and b"\\" not in line for line in _unread(data, start, end, fast))


def _unread(data: bytes, start: int, end: int, read: list[tuple[int, int]]) -> list[bytes]:
    """The lines of data[start:end] that no (begin, stop) of `read` covers."""
    covered = {b for b, _ in read}
    out, at = [], start
    for line in data[start:end].split(b"\n")[:-1]:
        if at not in covered:
            out.append(line)
        at += len(line) + 1
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=40))
def test_the_simd_split_gives_the_lines_bytes_split_gives(pieces: list[bytes]) -> None:
    """The dashboard's lines are views into its buffer (stringzilla's split): the same bytes as bytes.split."""
    data = bytearray(b"".join(pieces))
    assert collect._Str is not None  # pinned: the SIMD split is what this compares
    views = collect.lines_of(data)
    assert [bytes(v) for v in views] == bytes(data).split(b"\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(collect, "_Str", None)
        assert collect.lines_of(data) == bytes(data).split(b"\n")


# Lines that leave the Structs' path, put at every place of chunks and slices of plain lines (fuzz18's
# sweep): a new key (the Structs are rebuilt), a judged key's value that needs words, a step re-logged.
ODD = [b', "other/new": 1', b', "train/new": 3', b', "rollout/raw_reward": null']


@pytest.mark.slow
@pytest.mark.parametrize("form", ["dashboard", "events"])
@pytest.mark.parametrize("odd", ODD, ids=range(len(ODD)))
@pytest.mark.parametrize("again", [False, True])
def test_a_line_off_the_structs_path_anywhere_in_a_chunk_or_slice_reads_the_same(
    tmp_path: Path, monkeypatch, form: str, odd: bytes, again: bool
) -> None:
    line = _plain if form == "dashboard" else _metric_line
    path = tmp_path / "run.jsonl"
    for at in range(12):
        lines = [line(s) for s in range(1, 13)]
        # It logs the step of the line before it again with another value (the later line wins); with
        # `again`, the last line logs that step once more. A line put out of order changes the value.
        lines[at] = line(max(1, at), odd).replace(b'"train/loss": 0.5', b'"train/loss": 9')
        if again:
            lines.append(line(max(1, at)).replace(b'"train/loss": 0.5', b'"train/loss": 7'))
        path.write_bytes(b"\n".join(lines) + b"\n")
        slow = _run(path, form, monkeypatch, fast=False)
        width = max(map(len, lines)) + 1
        for chunk in (width * 3, width * 5 + 17, None):
            for slice_bytes in (1, width * 2 + 1, None):
                with pytest.MonkeyPatch.context() as mp:
                    if slice_bytes:
                        mp.setattr(dashboard, "SLICE_BYTES", slice_bytes)
                        mp.setattr(events, "SLICE_BYTES", slice_bytes)
                    assert _run(path, form, mp, fast=True, chunk=chunk) == slow, (at, chunk, slice_bytes)
