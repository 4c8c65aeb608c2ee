"""Starting many processes, each made only when it is due.

`Starts` starts processes as ``env.process(generator(i))`` made for each ``i`` up front would, with the same
events in the same order, where each generator's first step is ``yield env.timeout(at(i) - env.now)`` when
``at(i)`` is later than now; but it makes each generator (and what it runs: a client) only when it is due: a
load does not hold a client, a process and a generator per operation from the start.

Each process's start (`_Start`) is scheduled where SimPy schedules a new process's `simpy.events.Initialize`
(urgent, now); when it fires, it waits until ``at(i)`` as that first ``yield env.timeout(…)`` would (the same
event, at the same moment, kept in a `idemsim.kernel.waits.Deferred` until it is the next of them); then the
generator is made and its process resumed as a process resumed by that timeout is: the generator runs at once,
and finds nothing left to wait for (its ``if at > env.now`` is false).

Relies on (SimPy 4.1, checked against 4.1.2; see `idemsim.kernel`): a `simpy.Process` made without its
``__init__`` (so without its `Initialize`), with ``env``, ``callbacks``, ``_generator`` and ``_target`` set as
``__init__`` sets them, and resumed by calling its ``_resume(event)`` with an object that has an event's
``callbacks``, ``_ok`` and ``_value``; ``env._now`` (through `Deferred` and `soon`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy

from .waits import Deferred, soon

__all__ = ["Starts"]


class _Start:
    """One process before it starts: an event in the schedule, nothing more (see `Starts`)."""

    __slots__ = ("callbacks", "index")
    _ok = True
    _value = None

    def __init__(self, index: int, callbacks: tuple) -> None:
        self.callbacks = callbacks
        self.index = index


class Starts:
    """Starts the processes of ``generator(i)`` for the indices it is given, each at ``at(i)`` (see the module's
    docstring), and calls ``ended(process)`` when each has ended, as ``env.process(...).callbacks.append(ended)``
    would. `waiting` holds the starts still to come: `idemsim.kernel.loop.let_go` them when the run is over."""

    def __init__(self, env: simpy.Environment, at: Callable[[int], float],
                 generator: Callable[[int], Generator[Any, Any, Any]], ended: Callable[[Any], None]) -> None:
        self.env = env
        self.at = at
        self.generator = generator
        self.ended = ended
        self.first = (self._initialize,)
        self.then = (self._due,)
        self.waiting = Deferred(env)
        """The starts waiting for their time, only the next of them in the schedule."""

    def schedule(self, indices: list[int]) -> None:
        """Start these processes, in this order, where processes made now would start. Their ``Initialize``
        events, urgent, due now and scheduled one after the other, would be processed one after the other with
        nothing in between (what they schedule comes after them): one urgent event starting them all in turn
        does the same."""
        soon(self.env, lambda _event: self._initialize_all(indices))

    def _initialize_all(self, indices: list[int]) -> None:
        first = self.first
        for index in indices:
            self._initialize(_Start(index, first))

    def _initialize(self, start: _Start) -> None:
        env = self.env
        at = self.at(start.index)
        if at > env._now:
            start.callbacks = self.then
            self.waiting.schedule(start, at - env._now)
        else:
            self._run(start)

    def _due(self, start: _Start) -> None:
        self.waiting.processed()
        self._run(start)

    def _run(self, start: _Start) -> None:
        process = simpy.Process.__new__(simpy.Process)  # ``simpy.Process`` (simpy 4.1) without its Initialize
        process.env = self.env
        process.callbacks = [self.ended]
        process._generator = self.generator(start.index)
        process._target = start
        process._resume(start)
