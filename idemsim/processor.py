"""The payment processor: a party of its own, which captures money and keeps the ledger of what it captured.

The API calls the processor to capture an amount (``Processor.call``); the call travels ``latency`` seconds
each way, the capture takes ``api.charge_seconds`` (the time the handler waits, as before), and the answer comes
back. What the processor captured is in its **ledger** (`Capture` records, in capture order), and nothing
undoes a capture: not a crash of the API, not a rollback of the API's transaction, not a lost answer. The
ledger is the money the customer paid; the API's ``charges`` table is only what the API *recorded*.

Downstream idempotency: a call that carries a key is captured once per key. A later call with the same key,
within ``key_ttl`` seconds of the first, is answered at once with the first call's answer (a replay, no new
capture); a call that arrives while the first with its key is still being processed is refused as *in use*
(the way Stripe answers 409 ``idempotency_key_in_use``), and the API cannot tell from that whether money moved.

Faults, through the run's `FaultPlan`: ``processor_error`` makes the processor decline one attempt's call
(nothing is captured); ``lose`` with ``message = "processor_response"`` loses the answer to one attempt's
call (the capture has happened; the API waits ``api.processor_timeout`` and then knows nothing). Processor
messages draw nothing from the run's random numbers, so adding the processor shifts no other random draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import simpy
from pydantic import Field

from .faults import FaultPlan
from .fields import InputModel, PositiveSeconds, Seconds

Outcome = Literal["captured", "declined", "timeout", "in_use", "not_found"]


class ProcessorConfig(InputModel):
    """The ``[processor]`` table of a scenario."""

    latency: Seconds = Field(0.0, description="seconds a call or an answer travels, each way")
    key_ttl: PositiveSeconds = Field(86400.0, description="seconds the processor remembers a key's first answer")


@dataclass(frozen=True, slots=True)
class Capture:
    """One capture: money the processor took. Never undone."""

    id: str
    """``cap_N``, numbered in capture order."""
    amount: Any
    key: str | None
    """The idempotency key the API gave the processor, or None."""
    t: float
    request: str | None
    """The request whose handler called (``"1.2"``), or None for a background process such as the completer."""
    caller: str
    """The handler or process that called (``api#2``, ``completer``)."""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "amount": self.amount, "key": self.key, "t": round(self.t, 6),
                "request": self.request, "caller": self.caller}


@dataclass(frozen=True, slots=True)
class ProcessorAnswer:
    """What the API learns from one call: ``captured`` (with the capture's id), ``declined`` (definitely
    nothing captured), ``timeout`` (no answer in time: unknown), ``in_use`` (another call with the same key
    is being processed: unknown) or, for a lookup, ``not_found`` (no call with this key ever reached it)."""

    outcome: Outcome
    capture: str | None = None
    amount: Any = None
    replayed: bool = False
    """True when the processor answered from its key record instead of capturing."""

    @property
    def known(self) -> bool:
        """Whether the API knows what happened to the money (``captured`` or ``declined``)."""
        return self.outcome in ("captured", "declined", "not_found")


class Processor:
    """The payment processor of one run."""

    def __init__(self, env: simpy.Environment, config: ProcessorConfig, capture_seconds: float, plan: FaultPlan,
                 trace) -> None:
        self.env = env
        self.config = config
        self.capture_seconds = capture_seconds
        """How long a capture takes (the scenario's ``api.charge_seconds``)."""
        self.plan = plan
        self.trace = trace
        self.ledger: list[Capture] = []
        """Every capture, in the order it happened."""
        self.in_flight = 0
        """Calls and answers not yet delivered or lost: the run waits for them."""
        self._keys: dict[str, tuple[float, ProcessorAnswer | None]] = {}
        """Per key: when its first call arrived, and its answer (None while it is being processed)."""

    def call(self, caller: str, request, amount: Any, key: str | None, timeout: float):
        """Capture ``amount``; a SimPy generator returning the `ProcessorAnswer` the caller sees.

        ``request`` is the `idemsim.http.Request` being served (its op and attempt select faults), or None for
        a background process. The caller waits at most ``timeout`` seconds; an answer that arrives at the same
        instant as the timeout still counts. ``amount`` None is a *lookup*: the answer a call with ``key``
        got, or ``not_found``; a lookup never captures.
        """
        env = self.env
        request_id = request.id if request is not None else None
        kind = "processor.lookup" if amount is None else "processor.call"
        self.trace.record(env.now, caller, kind, "processor", request=request_id, amount=amount,
                          key=key, latency=self.config.latency)
        waiter = _Waiter(env.event())
        self.in_flight += 1
        env.process(self._serve(caller, request, amount, key, waiter))
        timer = env.timeout(timeout)
        yield waiter.reply | timer
        waiter.waiting = False
        if waiter.reply.triggered:
            return waiter.reply.value
        self.trace.record(env.now, caller, "processor.timeout", None, request=request_id, after=timeout)
        return ProcessorAnswer("timeout")

    def _serve(self, caller: str, request, amount: Any, key: str | None, waiter: "_Waiter"):
        env, latency = self.env, self.config.latency
        request_id = request.id if request is not None else None
        if latency:
            yield env.timeout(latency)
        answer = self._known(key)
        if answer is None and amount is None:
            answer = ProcessorAnswer("not_found")
        elif answer is not None:
            kind = "processor.in_use" if answer.outcome == "in_use" else "processor.replay"
            self.trace.record(env.now, "processor", kind, None, request=request_id, key=key,
                              capture=answer.capture)
        else:
            if key is not None:
                self._keys[key] = (env.now, None)
            if self.capture_seconds:
                yield env.timeout(self.capture_seconds)
            answer = self._capture(caller, request, amount, key)
            if key is not None:
                self._keys[key] = (self._keys[key][0], answer)
        yield from self._answer(caller, request, answer, waiter)

    def _known(self, key: str | None) -> ProcessorAnswer | None:
        """The answer a call with ``key`` gets without processing: a replay, ``in_use``, or None (process it)."""
        if key is None or key not in self._keys:
            return None
        since, answer = self._keys[key]
        if self.env.now >= since + self.config.key_ttl:
            del self._keys[key]
            return None
        if answer is None:
            return ProcessorAnswer("in_use")
        return ProcessorAnswer(answer.outcome, answer.capture, answer.amount, replayed=True)

    def _capture(self, caller: str, request, amount: Any, key: str | None) -> ProcessorAnswer:
        env = self.env
        request_id = request.id if request is not None else None
        if request is not None and self.plan.processor_error(request.op, request.attempt):
            self.trace.record(env.now, "processor", "processor.decline", None, request=request_id, key=key,
                              fault=self.plan.fired[-1])
            return ProcessorAnswer("declined")
        capture = Capture(f"cap_{len(self.ledger) + 1}", amount, key, env.now, request_id, caller)
        self.ledger.append(capture)
        self.trace.record(env.now, "processor", "processor.capture", None, capture=capture.id, amount=amount,
                          key=key, request=request_id, caller=caller)
        return ProcessorAnswer("captured", capture.id, amount)

    def _answer(self, caller: str, request, answer: ProcessorAnswer, waiter: "_Waiter"):
        env, latency = self.env, self.config.latency
        request_id = request.id if request is not None else None
        lost = self.plan.processor_response(request.op, request.attempt) if request is not None else None
        self.trace.record(env.now, "processor", "processor.answer", caller, request=request_id,
                          outcome=answer.outcome, capture=answer.capture, replayed=answer.replayed,
                          latency=latency)
        if lost is not None:
            if latency:
                yield env.timeout(latency / 2)
            self.in_flight -= 1
            self.trace.record(env.now, "net", "processor.lost", None, request=request_id, fault=lost,
                              src="processor", dst=caller)
            return
        if latency:
            yield env.timeout(latency)
        self.in_flight -= 1
        if not waiter.waiting:  # the caller gave up (its timeout came first)
            self.trace.record(env.now, "processor", "processor.ignored", caller, request=request_id)
            return
        waiter.reply.succeed(answer)


@dataclass(slots=True)
class _Waiter:
    """A caller waiting for its answer: the event to succeed, and whether it still waits."""

    reply: simpy.Event
    waiting: bool = True
