"""The event loop of a run: SimPy's, with bounds, and emptied when the run is over.

`BoundedEnvironment` is a `simpy.Environment` whose ``step`` and ``run`` refuse to go past ``max_time`` simulated
seconds or ``max_events`` events, with an `InputError` naming the bound, raised before the event that would break
it is processed (the trace so far is untouched). Its ``step`` and ``run`` are SimPy 4.1's (``simpy.core``), copied
with the bounds checked inside, and ``run`` with ``step``'s body in its loop: they run once per event, so every
call saved counts. They process the same events in the same order as SimPy's own.

`let_go` empties the schedule of a finished run; `events_processed` counts what a plain environment processed.

Relies on (SimPy 4.1, checked against 4.1.2; see `idemsim.kernel`): the schedule ``env._queue`` (a heap of
``(time, priority, sequence number, event)``), the clock ``env._now``, the sequence counter ``env._eid``, an
event's ``callbacks`` (None once processed), ``_ok``, ``_value`` and ``_defused``, and `StopSimulation`,
`EmptySchedule` and `EventPriority` of ``simpy.core``/``simpy.events``.
"""

from __future__ import annotations

from heapq import heappop

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import URGENT, EventPriority

from ..base.errors import InputError, Message

__all__ = ["BoundedEnvironment", "events_processed", "let_go"]


class BoundedEnvironment(simpy.Environment):
    """A SimPy environment that refuses to go past ``max_time`` simulated seconds or ``max_events`` events.

    SimPy's ``run`` advances by calling ``step``; checking there bounds every way a run advances. What is
    reported is the first event that would break a bound, before it is processed: the trace so far is
    untouched. An empty schedule is left to SimPy (it is a bug in idemsim, not input). ``events`` counts the
    events processed."""

    def __init__(self, max_time: float, max_events: int, describe: str | Message) -> None:
        super().__init__()
        self.max_time = max_time
        self.max_events = max_events
        self.events = 0
        self.describe = describe
        """What runs, for the error message: the scenario's source and the design."""

    def step(self) -> None:
        """SimPy's ``Environment.step`` (simpy 4.1) with the bounds checked first, in one function: it runs once
        per event, so every call saved counts."""
        queue = self._queue
        if not queue:
            raise EmptySchedule
        if queue[0][0] > self.max_time:
            self._past_time()
        self.events += 1
        if self.events > self.max_events:
            self._past_events()
        self._now, _, _, event = heappop(queue)
        callbacks, event.callbacks = event.callbacks, None
        try:
            for callback in callbacks:
                callback(event)
        except StopSimulation:
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.schedule(event, EventPriority(-1))
            raise
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc

    def run(self, until=None):
        """SimPy's ``Environment.run`` (simpy 4.1) with `step`'s body in its loop (one call less per event)."""
        if until is not None:
            if not isinstance(until, simpy.Event):
                at = until if isinstance(until, int) else float(until)
                if at <= self.now:
                    raise ValueError(f"until ({at}) must be greater than the current simulation time")
                until = simpy.Event(self)
                until._ok = True
                until._value = None
                self.schedule(until, URGENT, at - self.now)
            elif until.callbacks is None:
                return until.value
            until.callbacks.append(StopSimulation.callback)
        queue = self._queue
        max_time = self.max_time
        left = self.max_events - self.events  # events this run may still process (`events` is set at the end)
        try:
            while True:
                if not queue:
                    raise EmptySchedule
                if queue[0][0] > max_time:
                    self._past_time()
                left -= 1
                if left < 0:
                    self.events = self.max_events + 1
                    self._past_events()
                self._now, _, _, event = heappop(queue)
                callbacks, event.callbacks = event.callbacks, None
                try:
                    for callback in callbacks:
                        callback(event)
                except StopSimulation:
                    event.callbacks = callbacks[callbacks.index(callback) + 1:]
                    self.schedule(event, EventPriority(-1))
                    raise
                if not event._ok and not hasattr(event, "_defused"):
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
        except StopSimulation as stop:
            return stop.args[0]
        except EmptySchedule:
            if until is not None:
                assert not until.triggered
                raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}') from None
        finally:
            if left >= 0:
                self.events = self.max_events - left
        return None

    def _past_time(self) -> None:
        raise InputError("err.run_time", where=self.describe, seconds=self.max_time)

    def _past_events(self) -> None:
        raise InputError("err.run_events", where=self.describe, events=self.max_events, now=self.now)


def let_go(env: simpy.Environment, *deferred) -> None:
    """Empty the schedule of a finished run and the queues kept beside it (``deferred``: each a
    `idemsim.kernel.waits.Deferred`), and free what their pending events held at once.

    A background process (the reaper, the completer, recovery) waits on a timeout to the end: the process holds
    the timeout (its target) and the timeout the process (its callback), a cycle through which the process's
    generator kept the API, and with it the database, until the collector ran (rarely, after a run: see
    `idemsim.kernel.collector`); an event waiting in a `Deferred` holds it through its first callback. With the
    callbacks of the pending events dropped, reference counting frees them here. The environment must not run
    again."""
    for entry in env._queue:
        entry[3].callbacks = None
    env._queue.clear()
    for waiting in deferred:
        waiting.clear()


def events_processed(env: simpy.Environment) -> int:
    """How many events a plain `simpy.Environment` has processed: those it scheduled, less those still in its
    schedule (a `BoundedEnvironment` counts its own: ``env.events``). Takes one sequence number."""
    return next(env._eid) - len(env._queue)
