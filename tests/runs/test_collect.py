"""The Collector's caps on keys it does not read: named up to KEYS_KEPT, then counted exactly, up to KEYS_COUNTED."""

from __future__ import annotations

import pytest

from metrics_manual.runs import collect
from metrics_manual.runs.collect import Collector


def test_unread_keys_are_named_then_counted_then_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collect, "KEYS_KEPT", 5)
    monkeypatch.setattr(collect, "KEYS_COUNTED", 10)
    out = Collector({"train": "train/step"}, keys=["train/loss"])
    for i in range(12):
        out.kept({f"other/k{i}": 1.0, "train/loss": 1.0})
        out.note_unread([f"other/k{i}"])  # noting a key again changes nothing
    assert len(out.unread) == 5 and len(out.unread_past) == 7
    out.note_unread([f"more/k{i}" for i in range(20)])
    assert len(out.unread) == 5 and len(out.unread_past) == 10
