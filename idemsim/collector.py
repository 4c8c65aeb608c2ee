"""The garbage collector during a run: asked to collect rarely, since the model makes no cyclic garbage.

A run allocates hundreds of container objects per payment (events, generators, dicts) and keeps a growing
share of them (row versions, the tally, the clients' results). Python's cyclic collector, at its default
thresholds, examines the youngest objects every 700 allocations and, as the heap grows, the older generations
again and again: in a load that is a tenth to a fifth of the run's time, and it finds nothing the model made
(reference counting frees everything the model lets go of as it goes; `tests/test_untraced.py` checks that the
cyclic garbage of a run does not grow with its length). Code a run calls that is not the model's, a view that
writes each event as it happens (``simulate(..., stream=...)``, `json.dumps` makes cycles) or a design of one's
own, may make cycles: so the collector is not turned off but only slowed. `quiet` raises the first threshold to
`THRESHOLD` (and the others to `OLDER`) for the duration of a run, so that the collector runs a hundred times
less often and seldom over the older generations, and restores the thresholds afterwards. It nests and is safe to
use from several threads at once: the thresholds change when the first run starts and come back when the last
one ends.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

THRESHOLD = 100_000
"""Allocations (less deallocations) between two collections of the youngest generation during a run: what
cyclic garbage a run may hold before it is collected."""
OLDER = 1000
"""Collections of a generation between two of the next older one, during a run."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def quiet() -> Iterator[None]:
    """Collect rarely inside the block (see the module's docstring)."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1:
            _saved = gc.get_threshold()
            if _saved[0]:  # 0: collection is off already
                gc.set_threshold(max(_saved[0], THRESHOLD), max(_saved[1], OLDER), max(_saved[2], OLDER))
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                _age()
                gc.set_threshold(*_saved)
                _saved = None


def _age() -> None:
    """Move every object the collector tracks to its oldest generation, without examining any.

    What a run made and still holds (its results, its tally) sits in the younger generations when it ends;
    restoring the thresholds would have the collector examine all of it at once, and soon the whole heap, at the
    next allocation (a few per cent of a load's time, spent finding nothing). Moved to the oldest generation, it
    is examined when that generation next is, as long-lived objects are. (`gc.freeze` moves every object to the
    permanent generation and `gc.unfreeze` moves them on to the oldest one; not done if something else froze
    objects, since unfreezing would undo that.)"""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
