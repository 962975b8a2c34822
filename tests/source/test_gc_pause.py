"""The collector's pause around a load: what the load keeps lands in the oldest generation (no young
collection goes over it again), the collector runs again after it, and a cycle made in it is still freed."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from metrics_manual.source.load import gc_paused, load_manual


def test_what_a_load_keeps_is_in_the_oldest_generation(tiny: Path) -> None:
    assert gc.isenabled()
    manual = load_manual(tiny)
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    kept = [manual.catalog, *manual.profiles, *manual.catalog.sections]
    assert all(id(o) in oldest for o in kept)


def test_a_cycle_made_in_the_pause_is_still_collected() -> None:
    class Node:
        other: object = None

    with gc_paused():
        assert not gc.isenabled()
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
    assert gc.isenabled()
    gc.collect()
    assert gone() is None


def test_the_pause_nests() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
