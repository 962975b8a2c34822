"""A corrupt line's finding: what is wrong at the file's own column, never the parser's own position."""

from __future__ import annotations

import json
import re

import pytest

from metrics_manual.runs.jsonl import corrupt_line

CASES = [
    # (line, message after "corrupt line: ", the file's column: characters, as an editor counts them)
    (b'{"a": 1 "b": 2}\n', "expecting ',' delimiter", 9),
    (b'{"\xc3\xa9t\xc3\xa9": 1 2}\n', "expecting ',' delimiter", 11),
    (b'{"a": "\xc3\xa9\xff"}\n', "not UTF-8 (byte 0xff)", 9),
    (b'{"a": 1}{"b": 2}\n', "extra data", 9),
    (b'{"a": "x\\q"}\n', "invalid \\escape", 9),
    (b'{"a": ' + b"1" * 5000 + b"}\n", "an integer of 5000 digits, more than the 4300 Python reads", 1),
]


@pytest.mark.parametrize(("line", "what", "col"), CASES)
def test_the_message_says_what_is_wrong_and_the_column_is_the_files(line: bytes, what: str, col: int) -> None:
    with pytest.raises(ValueError) as caught:
        json.loads(line)
    message, got = corrupt_line(caught.value, line)
    assert (message, got) == (f"corrupt line: {what}; it was skipped", col)
    assert not re.search(r"line \d|column \d|char \d|position \d|sys\.", message)
