"""The garbage collector during a run: asked to collect rarely, since a run makes almost no cyclic garbage.

A run allocates hundreds of container objects per payment (events, generators, dicts) and keeps a growing
share of them (row versions, the tally, the clients' results). Python's collector, at its default thresholds,
examines the youngest objects every 700 allocations and, as the heap grows, the whole heap again and again; in a
load that is a fifth of the run's time, and every object it looks at is freed by reference counting anyway or
kept to the end: the model's objects form no cycles that die while it runs (the environment's own cycle dies
with the run). `quiet` raises the first threshold to `THRESHOLD` for the duration of a run, so that the
collector still runs, a hundred times less often, and restores the thresholds afterwards. It nests and is safe
to use from several threads at once: the thresholds change when the first run starts and come back when the last
one ends.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

THRESHOLD = 100_000
"""Allocations (less deallocations) between two collections of the youngest generation during a run."""

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
            if _saved[0] and _saved[0] < THRESHOLD:
                gc.set_threshold(THRESHOLD, *_saved[1:])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
