"""The payment processor: a party of its own, which captures money and keeps the ledger of what it captured.

The API calls the processor to capture an amount (``Processor.call``); the call travels ``latency`` seconds
each way, the capture takes ``api.charge_seconds`` (the time the handler waits, as before), and the answer comes
back. What the processor captured is in its **ledger** (`Capture` records, in capture order), and nothing
undoes a capture: not a crash of the API, not a rollback of the API's transaction, not a lost answer. The
ledger is the money the customer paid; the API's ``charges`` table is only what the API *recorded*.

Downstream idempotency: a call that carries a key is captured once per key. The processor keeps, with each key,
the parameters of the first call with it (its amount: the one parameter a capture carries). A later call with
the same key, within ``key_ttl`` seconds of the first, is compared with them: with other parameters it is
*refused* and nothing is captured (the way Stripe answers 400 ``idempotency_error``: "Keys for idempotent
requests can only be used with the same parameters they were first used with"), whether or not the first is
finished; with the same parameters it is answered at once with the first call's answer (a replay, no new
capture) or, while the first with its key is still being processed, refused as *in use* (the way Stripe answers
409 ``idempotency_key_in_use``), and the API cannot tell from that whether money moved. A lookup (no amount)
is never compared.

Faults, through the run's `FaultPlan`: ``processor_error`` makes the processor decline one attempt's call
(nothing is captured); ``lose`` with ``message = "processor_response"`` loses the answer to one attempt's
call (the capture has happened; the API waits ``api.processor_timeout`` and then knows nothing). Processor
messages draw nothing from the run's random numbers, so adding the processor shifts no other random draw; only
a capture time given as a distribution (``api.charge``) is drawn from them, when the capture begins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import simpy
from pydantic import Field
from simpy.events import Event

from ..base.fields import InputModel, PositiveSeconds, Seconds
from ..kernel.waits import Deferred, FirstOf, soon, timeout
from .faults import FaultPlan

Outcome = Literal["captured", "declined", "refused", "timeout", "in_use", "not_found"]


class ProcessorConfig(InputModel):
    """The ``[processor]`` table of a scenario."""

    latency: Seconds = Field(0.0, description="seconds a call or an answer travels, each way")
    key_ttl: PositiveSeconds = Field(86400.0, description="seconds the processor remembers a key's first answer")


@dataclass(slots=True)
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
        """``{"id", "amount", "key", "t" (rounded to the µs), "request", "caller"}``: a shared-key dict (a summary
        holds one per capture; see `_CaptureItem`)."""
        return _CaptureItem(self.id, self.amount, self.key, round(self.t, 6), self.request, self.caller).__dict__


class _CaptureItem:
    """A capture as its summary's item: the attribute dict of an instance, a plain `dict` whose keys CPython keeps
    in one table shared by every instance (a split table), so that an item holds only its values."""

    def __init__(self, id, amount, key, t, request, caller) -> None:
        self.id = id
        self.amount = amount
        self.key = key
        self.t = t
        self.request = request
        self.caller = caller


@dataclass(slots=True)
class ProcessorAnswer:
    """What the API learns from one call: ``captured`` (with the capture's id), ``declined`` (definitely
    nothing captured), ``refused`` (the key was first used with other parameters: definitely nothing captured
    for this call, Stripe's ``idempotency_error``), ``timeout`` (no answer in time: unknown), ``in_use``
    (another call with the same key is being processed: unknown) or, for a lookup, ``not_found`` (no call with
    this key ever reached it)."""

    outcome: Outcome
    capture: str | None = None
    amount: Any = None
    replayed: bool = False
    """True when the processor answered from its key record instead of capturing."""

    @property
    def known(self) -> bool:
        """Whether the API knows what happened to the money (``captured``, ``declined``, ``refused``, or a
        lookup's ``not_found``)."""
        return self.outcome in ("captured", "declined", "refused", "not_found")


class Processor:
    """The payment processor of one run."""

    def __init__(self, env: simpy.Environment, config: ProcessorConfig, capture_seconds: float, plan: FaultPlan,
                 trace, capture_time=None) -> None:
        self.env = env
        self.config = config
        self.capture_seconds = capture_seconds
        """How long a capture takes (the scenario's ``api.charge_seconds``)."""
        self.capture_time = capture_time
        """Or, if set, the distribution (a `idemsim.model.network.Latency`, the scenario's ``api.charge``) each
        capture's time is drawn from, with the run's random numbers, when the capture begins."""
        self._draw_capture = capture_time.sampler() if capture_time is not None else None
        self.plan = plan
        self.trace = trace
        self.ledger: list[Capture] = []
        """Every capture, in the order it happened."""
        self.in_flight = 0
        """Calls and answers not yet delivered or lost: the run waits for them, but for the background's."""
        self.background: dict[_Call, float] = {}
        """The calls of a background process (the completer's lookups) among them, each with when it was sent: a
        run that has ended abandons them (`idemsim.runners.simulation`)."""
        self.timeouts = Deferred(env)
        """The callers' timeouts: one per call, seconds long (``api.processor_timeout``), and nearly all outlived
        by their call's answer; kept out of the schedule but for the next (a load has hundreds at once)."""
        self._keys: dict[str, tuple[float, Any, ProcessorAnswer | None]] = {}
        """Per key: when its first call arrived, its parameters (the amount), and its answer (None while it is
        being processed)."""

    def call(self, caller: str, request, amount: Any, key: str | None, wait: float):
        """Capture ``amount``; a SimPy generator returning the `ProcessorAnswer` the caller sees.

        ``request`` is the `idemsim.base.http.Request` being served (its op and attempt select faults), or None for
        a background process. The caller waits at most ``wait`` seconds; an answer that arrives at the same
        instant as the timeout still counts. ``amount`` None is a *lookup*: the answer a call with ``key``
        got, or ``not_found``; a lookup never captures.
        """
        env = self.env
        request_id = request.id if request is not None else None
        if self.trace.complete:  # (events the tally does not take are not recorded without a trace)
            kind = "processor.lookup" if amount is None else "processor.call"
            self.trace.record(env.now, caller, kind, "processor", request=request_id, amount=amount,
                              key=key, latency=self.config.latency)
        call = _Call(caller, request, request_id, amount, key, Event(env))
        self.in_flight += 1
        if request is None:
            self.background[call] = env.now
        self._start(call)
        yield FirstOf(env, call.reply, self.timeouts.timeout(wait))
        call.waiting = False
        if call.reply.triggered:
            return call.reply.value
        self.trace.record(env.now, caller, "processor.timeout", None, request=request_id, after=wait)
        return ProcessorAnswer("timeout")

    # The processor's side of a call, step by step: each step runs when the event before it is processed and
    # schedules the next, at the moments, and so in the order, that a SimPy process serving the call would.
    def _start(self, call: "_Call") -> None:
        """The call is sent: it is served from the next urgent event on (where a process would start)."""
        soon(self.env, lambda _event: self._reached(call))

    def _reached(self, call: "_Call") -> None:
        if self.config.latency:
            timeout(self.env, self.config.latency).callbacks.append(lambda _event: self._serve(call))
        else:
            self._serve(call)

    def _serve(self, call: "_Call") -> None:
        """The call has reached the processor: answer from its key record, or capture."""
        env, key = self.env, call.key
        answer = self._known(key, call.amount)
        if answer is None and call.amount is None:
            answer = ProcessorAnswer("not_found")
        elif answer is not None and answer.outcome == "refused":
            self.trace.record(env.now, "processor", "processor.refuse", None, request=call.request_id, key=key,
                              amount=call.amount, first=self._keys[key][1])
        elif answer is not None:
            kind = "processor.in_use" if answer.outcome == "in_use" else "processor.replay"
            self.trace.record(env.now, "processor", kind, None, request=call.request_id, key=key,
                              capture=answer.capture)
        else:
            if key is not None:
                self._keys[key] = (env.now, call.amount, None)
            seconds = self.capture_seconds if self._draw_capture is None else self._draw_capture(self.plan.rng)
            if seconds:
                timeout(env, seconds).callbacks.append(lambda _event: self._captured(call))
            else:
                self._captured(call)
            return
        self._answer(call, answer)

    def _captured(self, call: "_Call") -> None:
        answer = self._capture(call.caller, call.request, call.amount, call.key)
        if call.key is not None:
            since, amount, _ = self._keys[call.key]
            self._keys[call.key] = (since, amount, answer)
        self._answer(call, answer)

    def _known(self, key: str | None, amount: Any) -> ProcessorAnswer | None:
        """The answer a call with ``key`` and ``amount`` gets without processing: ``refused`` (the key's first call
        had other parameters; a lookup, ``amount`` None, is not compared), a replay, ``in_use``, or None (process
        it)."""
        if key is None or key not in self._keys:
            return None
        since, first, answer = self._keys[key]
        if self.env.now >= since + self.config.key_ttl:
            del self._keys[key]
            return None
        if amount is not None and amount != first:
            return ProcessorAnswer("refused")
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
        if self.trace.complete:  # (the tally does not take it: without a trace, it is not recorded)
            self.trace.record(env.now, "processor", "processor.capture", None, capture=capture.id, amount=amount,
                              key=key, request=request_id, caller=caller)
        return ProcessorAnswer("captured", capture.id, amount)

    def _answer(self, call: "_Call", answer: ProcessorAnswer) -> None:
        """The answer leaves the processor: it arrives after the latency, or is lost halfway."""
        env, latency, request = self.env, self.config.latency, call.request
        lost = self.plan.processor_response(request.op, request.attempt) if request is not None else None
        if self.trace.complete:
            self.trace.record(env.now, "processor", "processor.answer", call.caller, request=call.request_id,
                              outcome=answer.outcome, capture=answer.capture, replayed=answer.replayed,
                              latency=latency)
        if lost is not None:
            if latency:
                timeout(env, latency / 2).callbacks.append(lambda _event: self._lost(call, lost))
            else:
                self._lost(call, lost)
        elif latency:
            timeout(env, latency).callbacks.append(lambda _event: self._arrived(call, answer))
        else:
            self._arrived(call, answer)

    def _lost(self, call: "_Call", fault: int) -> None:
        self.in_flight -= 1
        if call.request is None:
            del self.background[call]
        self.trace.record(self.env.now, "net", "processor.lost", None, request=call.request_id, fault=fault,
                          src="processor", dst=call.caller)

    def _arrived(self, call: "_Call", answer: ProcessorAnswer) -> None:
        self.in_flight -= 1
        if call.request is None:
            del self.background[call]
        if not call.waiting:  # the caller gave up (its timeout came first)
            self.trace.record(self.env.now, "processor", "processor.ignored", call.caller,
                              request=call.request_id)
            return
        call.reply.succeed(answer)


class _Call:
    """One call in flight: who called, for what, the event its answer succeeds, and whether the caller still
    waits."""

    __slots__ = ("caller", "request", "request_id", "amount", "key", "reply", "waiting")

    def __init__(self, caller: str, request, request_id: str | None, amount: Any, key: str | None,
                 reply: simpy.Event) -> None:
        self.caller, self.request, self.request_id, self.amount, self.key = caller, request, request_id, amount, key
        self.reply = reply
        self.waiting = True
