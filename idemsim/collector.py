"""The garbage collector during a run: off, since a run makes no cyclic garbage while it goes.

A run allocates hundreds of container objects per payment (events, generators, dicts) and keeps a growing
share of them (row versions, the tally, the clients' results). Python's cyclic collector, at its default
thresholds, examines the youngest objects every 700 allocations and, as the heap grows, the older generations
again and again; whatever the thresholds, it visits every object the run keeps at least once, and in a load that
is a tenth to a fifth of the run's time. It finds nothing: the model's objects form no cycles that die while it
runs (reference counting frees everything as it goes; `tests/test_untraced.py` checks that the cyclic garbage of
a run does not grow with its length). `quiet` turns automatic collection off for the duration of a run and back
on afterwards (where it was on), so that what a run leaves is collected as usual after it. It nests and is safe
to use from several threads at once: collection stops when the first run starts and resumes when the last one
ends.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def quiet() -> Iterator[None]:
    """No automatic collection inside the block (see the module's docstring)."""
    global _depth, _was_enabled
    with _lock:
        _depth += 1
        if _depth == 1:
            _was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
