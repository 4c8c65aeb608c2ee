"""Waiting for the first of two events, as SimPy's ``a | b`` does, with less work per wait.

A client waits for its answer or its timeout, a handler for the processor's answer or its timeout: once per
attempt and per call, so in a load these waits are among the commonest things a run does. SimPy's
``a | b`` builds a `simpy.events.Condition` (a count, the events' values gathered into a
`simpy.events.ConditionValue`, callbacks removed afterwards). `FirstOf` triggers at exactly the same moment, and
so is scheduled, processed and resumes its process in exactly the same order as the condition would: it is
triggered (scheduled once, at the current time) when the first of the two is processed; whether an event "fired"
is whether it has been processed by the time the waiter resumes (`fired`), which is what ``event in a | b``'s
value tells. Neither event may fail.

Beside it, the other events the model makes most often, each made and scheduled in one call where SimPy takes
several, at exactly the place in the schedule SimPy would give it: `timeout` (``env.timeout``), `soon` and `later`
(what a process started now would do first, or after a wait), `Task` (a process nothing waits for) and
`Deferred` (events kept out of the schedule until they are the next of their kind).

Relies on (SimPy 4.1, checked against 4.1.2; see `idemsim.kernel`): the schedule ``env._queue`` (a heap of
``(time, priority, sequence number, event)``, pushed to directly), ``env._now``, ``env._eid``,
``env._active_proc``; events made with ``__new__`` and their ``env``, ``callbacks``, ``_ok``, ``_value`` (``PENDING``
while untriggered), ``_defused`` and a `Timeout`'s ``_delay`` set as their ``__init__`` sets them; `Initialize`,
the ``NORMAL``/``URGENT`` priorities and ``_describe_frame`` of ``simpy.events``; and `Task._resume`, SimPy 4.1's
``Process._resume`` copied but for what a process does when its generator returns.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush

from simpy.events import NORMAL, PENDING, URGENT, Event, Initialize, Process, Timeout, _describe_frame


class FirstOf(Event):
    """Triggered when the first of ``a`` and ``b`` has been processed."""

    def __init__(self, env, a: Event, b: Event) -> None:
        self.env = env
        self.callbacks = []
        self._value = PENDING
        a.callbacks.append(self._check)
        b.callbacks.append(self._check)

    def _check(self, event: Event) -> None:
        if self._value is PENDING:
            self._ok = True
            self._value = None
            env = self.env
            heappush(env._queue, (env._now, NORMAL, next(env._eid), self))  # env.schedule(self)


def timeout(env, delay: float) -> Timeout:
    """``env.timeout(delay)`` for a ``delay`` known to be a number >= 0, made and scheduled in one call instead
    of three (the same event, at the same place in the schedule)."""
    event = Timeout.__new__(Timeout)
    event.env = env
    event.callbacks = []
    event._delay = delay
    event._ok = True
    event._value = None
    heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), event))
    return event


def later(env, delay: float, action, argument) -> None:
    """Call ``action(argument)`` ``delay`` seconds from now, at exactly the place in the schedule where a process
    started now that waits ``delay`` seconds and then calls it would (``env.process(...)`` of a generator that
    yields ``env.timeout(delay)``): an urgent event now, which schedules the timeout when it is processed. What
    the process would add after, its own ending (an event nothing waits for), is left out; so is the process.
    A message on the network is carried so, once per message."""

    def start(_event: Event) -> None:
        timeout(env, delay).callbacks.append(lambda _timeout: action(argument))

    soon(env, start)


def soon(env, callback) -> None:
    """Call ``callback(event)`` from an urgent event scheduled now: where a process started now would take its
    first step (``env.process(...)`` schedules its `simpy.events.Initialize` so)."""
    begun = Event.__new__(Event)
    begun.env = env
    begun.callbacks = [callback]
    begun._ok = True
    begun._value = None
    heappush(env._queue, (env._now, URGENT, next(env._eid), begun))


def fired(event: Event) -> bool:
    """Whether ``event`` has been processed (a `FirstOf` waiter asks this of each of its two events)."""
    return event.callbacks is None


class Task(Process):
    """A process nothing waits for (a request being served, a capture at the processor): SimPy's `Process`,
    started and resumed exactly as it is, except that when its generator returns, the process is not scheduled
    as an event of its own, an event that would be processed with nothing to do. A task that fails is, so the
    run raises its exception just where the process's would have been raised. Nothing may wait for a task."""

    def __init__(self, env, generator) -> None:
        self.env = env
        self.callbacks = []
        self._generator = generator
        start = Initialize.__new__(Initialize)  # Initialize(env, self), scheduled as SimPy schedules it
        start.env = env
        start.callbacks = [self._resume]
        start._value = None
        start._ok = True
        heappush(env._queue, (env._now, URGENT, next(env._eid), start))
        self._target = start

    def _resume(self, event: Event) -> None:
        env = self.env
        env._active_proc = self
        generator = self._generator
        while True:
            try:
                if event._ok:
                    event = generator.send(event._value)
                else:
                    event._defused = True
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    event = generator.throw(exc)
            except StopIteration:
                self._ok = True
                self._value = None
                self.callbacks = None
                break
            except BaseException as e:
                e.__traceback__ = e.__traceback__.tb_next
                self._ok = False
                self._value = e
                env.schedule(self)
                break
            try:
                if event.callbacks is not None:
                    event.callbacks.append(self._resume)
                    self._target = event
                    break
            except AttributeError:
                if hasattr(event, "callbacks"):
                    raise
                descr = _describe_frame(generator.gi_frame)
                raise RuntimeError(f'\n{descr}Invalid yield value "{event}"') from None
        env._active_proc = None


class Deferred:
    """Events due later that are kept out of the schedule until they are the next of their kind: a load's many
    arrivals, each known from the start, would otherwise fill the schedule, and every step of the run would
    pay for its size.

    Each event gets its place (time, priority, sequence number) when it is scheduled, as ``env.schedule``
    gives it; but only those that may be due before the others wait in the schedule, the rest in a queue of
    their own. The event that comes first is always in the schedule, so every event is processed at exactly
    the moment and in exactly the order it would have been. Each event's first callback must be `processed`.

    Events that come in the order they are due (arrivals drawn one after another, timeouts of one length) are
    kept in a plain queue, the others in a heap: adding and taking the next cost the same however many wait."""

    __slots__ = ("env", "scheduled", "in_order", "pending")

    def __init__(self, env) -> None:
        self.env = env
        self.scheduled: list = []
        """The entries in the schedule that are not yet processed (a heap)."""
        self.in_order: deque = deque()
        """Entries kept out of it, each due after the one before it (a queue)."""
        self.pending: list = []
        """The other entries kept out of it (a heap)."""

    def schedule(self, event: Event, delay: float) -> None:
        """``env.schedule(event, NORMAL, delay)``."""
        env = self.env
        entry = (env._now + delay, NORMAL, next(env._eid), event)
        if not self.scheduled or entry < self.scheduled[0]:
            heappush(self.scheduled, entry)
            heappush(env._queue, entry)
        elif not self.in_order or entry > self.in_order[-1]:
            self.in_order.append(entry)
        else:
            heappush(self.pending, entry)

    def clear(self) -> None:
        """Forget every event (the run is over), and drop their callbacks: each holds this through its first."""
        for entries in (self.scheduled, self.in_order, self.pending):
            for entry in entries:
                entry[3].callbacks = None
            entries.clear()

    def timeout(self, delay: float) -> Timeout:
        """`timeout` (``env.timeout(delay)``) kept here until it is the next: for waits that mostly end before
        their timeout, whose timeouts, long and many, would otherwise fill the schedule."""
        event = Timeout.__new__(Timeout)
        event.env = self.env
        event.callbacks = [self.processed]
        event._delay = delay
        event._ok = True
        event._value = None
        self.schedule(event, delay)
        return event

    def processed(self, _event: Event = None) -> None:
        """The first of the scheduled entries is being processed: the next one to come joins the schedule if it
        comes before those still there."""
        scheduled, in_order, pending = self.scheduled, self.in_order, self.pending
        heappop(scheduled)
        if in_order and (not pending or in_order[0] < pending[0]):
            entry = in_order[0]
            if not scheduled or entry < scheduled[0]:
                in_order.popleft()
                heappush(scheduled, entry)
                heappush(self.env._queue, entry)
        elif pending:
            entry = pending[0]
            if not scheduled or entry < scheduled[0]:
                heappop(pending)
                heappush(scheduled, entry)
                heappush(self.env._queue, entry)
