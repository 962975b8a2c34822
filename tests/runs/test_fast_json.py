"""The one JSON-lines path (runs/jsonl.py) reads what json.loads reads: line by line (orjson where it
reads a line the same way, else json.loads), and whole runs read through it against the same runs read
with json.loads on every line (`jsonl.by_orjson` set aside); the event log's substring test never
skips a metric event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs import events, jsonl
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

# Lines with no backslash and no `~`: each is read spelled (NaN as "~") by orjson, unless
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
    # orjson reads this integer as a float one unit in the last place off float()'s (json.loads: an int)
    b'{"step_key": "train/step", "step": 37, "metrics": {"train/step": 37, "train/loss": 11314107004561711755}}',
    b'{"step_key": "train/step", "step": 37, "metrics": {"train/step": 37, "train/loss": NaN, "other/big": 11314107004561711755}}',
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


def _plain(step: int, extra: bytes = b"", own: bytes = b"train/step") -> bytes:
    return (
        b'{"ts": 1.5, "step_key": "%s", "step": %d, "metrics": {"train/step": %d, "train/loss": 0.5, '
        b'"train/grad_norm": NaN, "rollout/step": %d, "rollout/raw_reward": 1, "other/key": NaN%s}}'
        % (own, step, step, step, extra)
    )


# Dashboard lines that a parser may read otherwise than json.loads, or reject: each must be read as
# json.loads reads it.
ODD = [
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
    _plain(79).replace(b'"step_key": "train/step", ', b""),  # no step_key
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


def _metric_line(step: int, extra: bytes = b"", attempt: bytes = b"null") -> bytes:
    return (
        b'{"timestamp": "t", "source": {"c": 1}, "type": "metric", "rollout_id": null, "attempt": %s, '
        b'"metrics": {"train/step": %d, "train/loss": 0.5, "train/grad_norm": null, "rollout/step": %d, '
        b'"rollout/raw_reward": 1, "other/key": 2%s}}' % (attempt, step, step, extra)
    )


# Metric lines that a parser may read otherwise than json.loads: each must be read as json.loads reads it.
ODD_EVENTS = [
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


def _event(line: bytes) -> bytes:
    """The same record as a metric line of the event log."""
    return line.replace(b'"step_key"', b'"type": "metric", "attempt": 0, "sk"', 1) if line.startswith(b"{") else line


def _typed(value: Any) -> Any:
    """A JSON value with each number's type, NaN equal to NaN and key order kept: what "the same" means."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _loads_alike(line: bytes) -> bool:
    """`jsonl.loads` returns what json.loads returns, or raises the same kind of error; returns whether
    orjson read the line (else json.loads did)."""
    try:
        want: Any = _typed(json.loads(line))
    except (ValueError, RecursionError) as exc:
        want = type(exc)
    fast = jsonl.by_orjson(line)
    if fast is not jsonl.NOT_EXACT:
        assert _typed(fast) == want, line
    try:
        got: Any = _typed(jsonl.loads(line))
    except (ValueError, RecursionError) as exc:
        got = type(exc)
    assert got == want, line
    return fast is not jsonl.NOT_EXACT


ALL = [*TRICKY, *CLEAN, *PLAIN, *ODD, *ODD_EVENTS, *(_event(line) for line in [*TRICKY, *CLEAN, *ODD])]


@pytest.mark.parametrize("line", ALL, ids=range(len(ALL)))
def test_each_line_reads_as_json_loads_reads_it(line: bytes) -> None:
    _loads_alike(line)
    _loads_alike(line + b"\n")


def test_orjson_reads_the_plain_lines_of_both_logs() -> None:
    """The lines Miles writes are read by orjson (else the tests here compare json.loads with itself),
    bare NaN and -Infinity included."""
    plain = [*PLAIN, _plain(5), _plain(88).replace(b'"train/loss": 0.5', b'"train/loss": -Infinity')]
    assert all(_loads_alike(line) for line in [*plain, *(_event(line) for line in plain), _metric_line(3)])
    assert _loads_alike(b'{"metric": "train/loss", "series": [[0, 1.5], [1, NaN], [2, -Infinity]]}')


def _run(path: Path, form: str, monkeypatch: pytest.MonkeyPatch, reference: bool) -> tuple:
    """What a run read from `path` gives; `reference`: json.loads reads every line."""
    with pytest.MonkeyPatch.context() as mp:
        if reference:
            mp.setattr(jsonl, "by_orjson", lambda line, exact=None: jsonl.NOT_EXACT)
        run = read_run([path], STEP_KEYS, form, keys=KEYS)
    series = {k: [(s, repr(v)) for s, v in v.items()] for k, v in run.series.items()}
    return series, [str(p) for p in run.problems], sorted(run.unread), run.invalid, run.relogged, run.unfinished


def _read_alike(path: Path, form: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    slow = _run(path, form, monkeypatch, reference=True)
    assert _run(path, form, monkeypatch, reference=False) == slow
    return slow


@pytest.mark.parametrize("form", ["dashboard", "events"])
def test_tricky_lines_read_the_same_as_json_loads_reads_them(tmp_path: Path, monkeypatch, form: str) -> None:
    path = tmp_path / ("metrics.jsonl" if form == "dashboard" else "events.jsonl")
    lines = TRICKY if form == "dashboard" else [_event(line) for line in TRICKY]
    path.write_bytes(b"\n".join(lines))  # the last line is cut: no newline after it
    _read_alike(path, form, monkeypatch)


@pytest.mark.parametrize("form", ["dashboard", "events"])
@pytest.mark.parametrize("line", [*CLEAN, *ODD], ids=range(len(CLEAN) + len(ODD)))
def test_odd_lines_among_plain_ones_read_the_same(tmp_path: Path, monkeypatch, form: str, line: bytes) -> None:
    path = tmp_path / "run.jsonl"
    lines = [*PLAIN[:2], line, *PLAIN[2:]]
    path.write_bytes(b"\n".join(lines if form == "dashboard" else map(_event, lines)) + b"\n")
    _read_alike(path, form, monkeypatch)


@pytest.mark.parametrize("line", ODD_EVENTS, ids=range(len(ODD_EVENTS)))
def test_odd_metric_lines_among_other_events_read_the_same(tmp_path: Path, monkeypatch, line: bytes) -> None:
    path = tmp_path / "events.jsonl"
    other = b'{"type": "weight_checksum", "checksums": {"a": "00ff"}}'
    lines = [_metric_line(s) for s in range(1, 6)] + [other, line, other] + [_metric_line(s) for s in range(100, 103)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    _read_alike(path, "events", monkeypatch)


@settings(max_examples=150, deadline=None)
@given(st.one_of(records, st.sampled_from(OTHER_EVENTS)), st.booleans())
def test_any_record_reads_as_json_loads_reads_it(record: Any, ascii_only: bool) -> None:
    """json.dumps writes NaN / Infinity bare, as the dashboard does; with ensure_ascii=False no backslash
    is written for a non-ASCII string, so such lines are spelled too."""
    text = (
        record if isinstance(record, str) else json.dumps({"step_key": "train/step", **record}, ensure_ascii=ascii_only)
    )
    _loads_alike(text.encode("utf-8"))


@settings(max_examples=60, deadline=None)
@given(st.lists(records, min_size=1, max_size=8), st.booleans())
def test_any_dashboard_log_reads_as_json_loads_reads_it(
    tmp_path_factory, records: list[dict], ascii_only: bool
) -> None:
    path = tmp_path_factory.mktemp("fast") / "metrics.jsonl"
    text = "".join(json.dumps({"step_key": "train/step", **r}, ensure_ascii=ascii_only) + "\n" for r in records)
    path.write_text(text, "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        _read_alike(path, "dashboard", mp)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(records, st.sampled_from(OTHER_EVENTS)), max_size=8))
def test_any_event_log_reads_as_json_loads_reads_it(tmp_path_factory, lines: list) -> None:
    """Metric events among other events whose text holds `metri` or a backslash (a metric event can
    spell its type with an escape): the lines skipped unparsed hold no metric event."""
    path = tmp_path_factory.mktemp("fast") / "events.jsonl"
    text = [
        json.dumps({"type": "metric", "source": {}, "attempt": None, **r}) if isinstance(r, dict) else r for r in lines
    ]
    path.write_text("\n".join(text) + "\n", "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        _read_alike(path, "events", mp)


@settings(max_examples=200, deadline=None)
@given(st.one_of(records, st.sampled_from(OTHER_EVENTS)), st.booleans())
def test_a_line_skipped_unparsed_is_no_metric_event(record: Any, escape: bool) -> None:
    """The event log parses only the lines that hold `metri` or a backslash: any line json.loads reads
    as a metric event is one of them, however it is spelled."""
    if isinstance(record, str):
        line = record
    else:
        line = json.dumps({"type": "metric", "source": {}, **record}, ensure_ascii=escape)
        if escape:
            line = line.replace('"metric"', '"\\u006detric"')
    try:
        event = json.loads(line)
    except ValueError:
        return
    if isinstance(event, dict) and event.get("type") == "metric":
        assert events.may_be_metric(line.encode("utf-8"))


def test_an_escaped_metric_event_is_read(tmp_path: Path) -> None:
    """A metric line that never spells `metri` (an escape in its type) is found by its backslash."""
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([OTHER_EVENTS[4], OTHER_EVENTS[2], OTHER_EVENTS[4]]) + "\n", "utf-8")
    run = read_run([path], STEP_KEYS, "events", keys=KEYS)
    assert dict(run.series["train/loss"].items()) == {7: 2.5}
