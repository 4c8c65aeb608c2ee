"""The garbage collector during a run: it never examines what the model makes, since the model makes no cyclic
garbage.

A run allocates hundreds of container objects per payment (events, generators, dicts) and keeps a growing
share of them (row versions, the tally, the clients' results). Python's cyclic collector, at its default
thresholds, examines the youngest objects every 700 allocations and, as the heap grows, the older generations
again and again: in a load that is a tenth to a fifth of the run's time, and it finds nothing the model made
(reference counting frees everything the model lets go of as it goes; `tests/test_untraced.py` checks that the
cyclic garbage of a run does not grow with its length). Even examined only once each, by the few collections a
slowed collector still makes, the objects a load keeps cost 3-5 % of its time.

`quiet` raises the first threshold to `THRESHOLD` (and the others to `OLDER`) for the duration of a run, so that
the collector runs a hundred times less often and seldom over the older generations, and restores the
thresholds afterwards. A run of the model's code alone (``quiet(model_only=True)``: no stream, a shipped
design) goes further: each collection of the youngest generation first moves every tracked object to the
permanent generation (`gc.freeze`), so that it examines nothing, and the run's end moves them all on to the
oldest generation (`gc.unfreeze`), where they are examined when that generation next is, as long-lived objects
are. Code a run calls that is not the model's, a view that writes each event as it happens
(``simulate(..., stream=...)``: `json.dumps` makes cycles) or a design of one's own, may make cycles: while
such a run goes, the collector is only slowed, and still collects them within `THRESHOLD` allocations.

It nests and is safe to use from several threads at once: the thresholds change when the first run starts and
come back when the last one ends, and nothing is frozen while any run of code not the model's goes. Nothing is
frozen or unfrozen either if something else froze objects before the first run started (`gc.freeze`, as
``idemsim``'s command does as it exits, `before_exit`): unfreezing would undo that.

Where it acts: only in a process idemsim owns, unless asked. The thresholds are the whole process's, and
`gc.freeze` and `gc.unfreeze` move every object the collector tracks, not only the run's: in a notebook, a test or
a program that imports idemsim they would move its objects too. So `quiet` does nothing there (a load pays for the
collector, a few per cent), and acts in a process that called `own_process`: ``idemsim``'s command (its entry
point), ``python -m idemsim.bench`` and the worker processes a sweep starts
(`idemsim.runners.sweep.executor_for`), which run nothing but idemsim. ``simulate(..., quiet_collector=True)``
asks for it for one run anywhere (and ``False`` refuses it), ``quiet(wanted=...)`` here.

Relies on CPython's ``gc`` (checked against CPython 3.11.7; see `idemsim.kernel`): three generations and their
thresholds, ``gc.callbacks`` called with ``"start"`` before a collection and ``info["generation"]``,
``gc.freeze`` moving every tracked object to the permanent generation and ``gc.unfreeze`` moving them all to
the oldest generation, and ``gc.get_freeze_count``.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Any, Iterator

THRESHOLD = 100_000
"""Allocations (less deallocations) between two collections of the youngest generation during a run: what
cyclic garbage a run of code not the model's may hold before it is collected."""
OLDER = 1000
"""Collections of a generation between two of the next older one, during a run."""

_lock = threading.Lock()
_depth = 0
"""Runs going."""
_others = 0
"""Runs going that call code not the model's."""
_saved: tuple[int, ...] | None = None
_may_freeze = False
"""Whether nothing was frozen when the first run started."""
_owned = False
"""Whether idemsim owns this process (`own_process`)."""


def own_process(owned: bool = True) -> None:
    """Say that idemsim owns this process (``owned``; False: no longer): every run in it quiets the collector
    unless told not to. For entry points that run nothing but idemsim (the command line, the benchmark, a sweep's
    worker processes): see the module's docstring."""
    global _owned
    _owned = owned


def owns_process() -> bool:
    """Whether idemsim owns this process (`own_process`): whether runs quiet the collector when not told."""
    return _owned


@contextmanager
def quiet(model_only: bool = False, wanted: bool | None = None) -> Iterator[None]:
    """Collect rarely inside the block, and examine nothing while only runs of the model's code alone
    (``model_only``) go (see the module's docstring); if ``wanted`` (None: if idemsim owns the process,
    `owns_process`), else do nothing at all."""
    if not (_owned if wanted is None else wanted):
        yield
        return
    global _depth, _others, _saved, _may_freeze
    with _lock:
        _depth += 1
        _others += not model_only
        if _depth == 1:
            _saved = gc.get_threshold()
            if _saved[0]:  # 0: collection is off already
                gc.set_threshold(max(_saved[0], THRESHOLD), max(_saved[1], OLDER), max(_saved[2], OLDER))
            _may_freeze = gc.get_freeze_count() == 0
            if _may_freeze:
                gc.callbacks.append(_freeze_instead)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            _others -= not model_only
            if _depth == 0 and _saved is not None:
                if _may_freeze:
                    gc.callbacks.remove(_freeze_instead)
                    _age()
                gc.set_threshold(*_saved)
                _saved = None


def _freeze_instead(phase: str, info: dict[str, Any]) -> None:
    """A collection of the youngest generation is starting: while only the model's code runs, every tracked
    object is moved out of its sight first, so that it examines nothing."""
    if phase == "start" and info["generation"] == 0 and not _others:
        gc.freeze()


def _age() -> None:
    """Move every object the collector tracks to its oldest generation, without examining any.

    What a run made and still holds (its results, its tally) sits in the younger generations, or in the
    permanent one, when it ends; restoring the thresholds would have the collector examine all of it at once,
    and soon the whole heap, at the next allocation (a few per cent of a load's time, spent finding nothing).
    Moved to the oldest generation, it is examined when that generation next is, as long-lived objects are.
    (`gc.freeze` moves every object to the permanent generation and `gc.unfreeze` moves them on to the oldest
    one.)"""
    gc.freeze()
    gc.unfreeze()


def before_exit() -> None:
    """The process is about to end (its output written): move every object out of the collector's sight
    (`gc.freeze`), so that Python's last collection at exit does not examine them all to find nothing (25-45 ms
    of every ``idemsim`` command). Everything is still released as the interpreter ends, and exit hooks still
    run. Only for an entry point that owns the process."""
    gc.freeze()
