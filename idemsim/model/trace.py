"""The trace: one ordered record of everything that happened in a run.

Every view (the timeline table, JSON, diagrams, figures) and every check reads the trace and nothing else
but the final database tables. Events are appended in simulation order, so the list is ordered by time and,
within one instant, by the order in which SimPy ran the processes: for a given seed the same trace, event
for event. `to_json` rounds times to microseconds so that the JSON text is byte-identical across runs.

Event kinds (``kind``) and what ``data`` holds:

=====================  ==========================================================================
``op.start``           a logical operation begins: ``op``, ``method``, ``path``, ``body``
``attempt.send``       the client sends an attempt: ``op``, ``attempt``, ``request`` (id), ``key``
``request.lost``       the network drops the request: ``request``, ``fault`` (index or null)
``request.arrive``     the request reaches the API: ``request``, ``handler``
``request.refused``    the request reaches a crashed API and gets no answer
``db.wait``            a statement blocks: ``sql``, ``blocked_by``
``db.result``          a statement ends: ``op``, ``sql``, ``rows``, ``row``, ``error``, ``id``, ``waited``
``api.sleep``          the handler works outside the database, touching no other party: ``seconds``
``processor.call``     a handler calls the payment processor: ``request``, ``amount``, ``key``, ``latency``
``processor.capture``  the processor captures money (its ledger grows): ``capture``, ``amount``, ``key``,
                       ``request``, ``caller``
``processor.replay``   the processor has seen the key: it answers the first call's answer, captures nothing
``processor.in_use``   the processor is still processing a call with the same key: it refuses this one
``processor.decline``  the processor declines the call (a ``processor_error`` fault): nothing captured
``processor.refuse``   the processor has seen the key with other parameters: it refuses this call (Stripe's
                       ``idempotency_error``), captures nothing: ``request``, ``key``, ``amount``, ``first``
``processor.answer``   the processor answers: ``request``, ``outcome``, ``capture``, ``replayed``, ``latency``
``processor.lost``     the network drops the processor's answer (``fault``)
``processor.timeout``  the handler stops waiting for the processor: ``after``
``processor.ignored``  the processor's answer arrives after the handler stopped waiting
``completer.finish``   the completer finishes an abandoned key: ``key``, ``status``, ``body`` (what it stored)
``api.crash``          the API process dies at ``point``; ``restart_after``
``api.restart``        the API process is back
``response.send``      the API answers: ``request``, ``status``, ``body``, ``replay``
``response.lost``      the network drops the response
``gateway.timeout``    a gateway gives up on the API and answers 504 itself
``response.arrive``    the client receives an answer: ``request``, ``status``, ``body``
``attempt.timeout``    the client stops waiting for an attempt
``attempt.end``        an attempt's outcome: ``op``, ``attempt``, ``outcome`` (ok/fail/info), ``status``
``client.backoff``     the client waits before the next attempt: ``seconds``
``op.end``             the operation's final outcome: ``op``, ``outcome``, ``status``, ``attempts``
=====================  ==========================================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened at simulated time ``t``, done by ``actor`` (to ``target``, if any)."""

    t: float
    actor: str
    kind: str
    target: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"t": round(self.t, 6), "actor": self.actor, "target": self.target, "kind": self.kind,
                "data": self.data}


class Trace:
    """The ordered list of events of one run, and whoever observes them as they happen.

    With ``keep=False`` the events are given to the observers and not kept (``events`` stays empty): a view that
    writes each event as it happens (``idemsim run --format json``) then needs no memory for the trace."""

    def __init__(self, observers: tuple = (), keep: bool = True) -> None:
        self.events: list[Event] = []
        """Every event, in the order it happened (none if the trace is not kept)."""
        self.observers = list(observers)
        """Callables given each event as it is recorded (the run's `idemsim.judge.tally.Tally`, a streaming view)."""
        self.keep = keep
        """Whether the events are kept in ``events``."""

    complete = True
    """Every event is recorded (`Untraced` records only those the tally takes; a hot path may skip the others)."""

    def record(self, t: float, actor: str, kind: str, target: str | None = None, **data: Any) -> Event:
        event = Event(t, actor, kind, target, data)
        if self.keep:
            self.events.append(event)
        for observe in self.observers:
            observe(event)
        return event

    # The commonest events of a load, one method each, so that a run without a trace (`Untraced`) hands the tally
    # what it takes of them without making their data. Each records the event named in its docstring.
    def attempt_send(self, t: float, actor: str, op: int, attempt: int, request: str, key: str | None,
                     method: str, path: str, body: Any) -> None:
        """``attempt.send``."""
        self.record(t, actor, "attempt.send", "api", op=op, attempt=attempt, request=request, key=key,
                    method=method, path=path, body=body)

    def attempt_end(self, t: float, actor: str, op: int, attempt: int, outcome: str, status: int | None,
                    sent: float) -> None:
        """``attempt.end`` of an attempt sent at ``sent`` (the event does not say it: it is its ``attempt.send``'s
        time)."""
        self.record(t, actor, "attempt.end", None, op=op, attempt=attempt, outcome=outcome, status=status)

    def request_arrive(self, t: float, client: str, request: str, handler: str, number: int,
                       key: str | None) -> None:
        """``request.arrive`` of a request that carries ``key``, served by handler number ``number``
        (``handler`` is ``api#{number}``)."""
        self.record(t, client, "request.arrive", "api", request=request, handler=handler)

    def response_send(self, t: float, handler: str, client: str, request: str, status: int, body: Any,
                      replay: bool, key: str | None) -> None:
        """``response.send`` of the answer to a request that carried ``key``."""
        self.record(t, handler, "response.send", client, request=request, status=status, body=body,
                    replay=replay)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def of_kind(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    def to_list(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.events]

    def to_json(self) -> str:
        return json.dumps(self.to_list(), ensure_ascii=False, sort_keys=True)


class Untraced:
    """What a run without a trace records instead (``simulate(..., trace=False)``): nothing is kept and no
    `Event` is made; each event a `idemsim.judge.tally.Tally` takes into account is handed to it directly, the others
    are dropped. It has `Trace`'s ``record`` and its methods for the commonest events, so the model records the
    same way with or without a trace; those hand the tally what it takes of them as they are (ints, not the
    texts an event says them in: a handler's number, not ``api#N``)."""

    keep = False
    complete = False

    def __init__(self, tally) -> None:
        self._takes = tally.takes()
        self._tally = tally

    def record(self, t: float, actor: str, kind: str, target: str | None = None, **data: Any) -> None:
        take = self._takes.get(kind)
        if take is not None:
            take(t, actor, data)

    def attempt_send(self, t: float, actor: str, op: int, attempt: int, request: str, key: str | None,
                     method: str, path: str, body: Any) -> None:
        self._tally.attempt_sent(op, request, key)

    def attempt_end(self, t: float, actor: str, op: int, attempt: int, outcome: str, status: int | None,
                    sent: float) -> None:
        self._tally.attempt_ended(sent, outcome)

    def request_arrive(self, t: float, client: str, request: str, handler: str, number: int,
                       key: str | None) -> None:
        self._tally.arrived(request, number - 1, key)

    def response_send(self, t: float, handler: str, client: str, request: str, status: int, body: Any,
                      replay: bool, key: str | None) -> None:
        self._tally.responded(handler, request, key, status, body, replay)
