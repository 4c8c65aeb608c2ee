"""Faults: what goes wrong in a run, chosen through one interface.

A run's faults come from two sources that compose: a *fault schedule*, a list of `Fault` records naming the
exact message to lose or delay, or the exact point of the exact attempt where the API process dies; and the
*random* faults of the network configuration (a loss probability, a latency distribution), drawn from the
run's one `random.Random`. Named scenarios write the schedule by hand, sweeps use the random part, and
Hypothesis chooses the schedule; all three go through `FaultPlan`. The empty schedule is "no fault", so
shrinking a schedule shrinks towards the fewest-fault story.

Guarantees: the random stream is consumed the same way whatever the schedule says (every message draws its
loss and latency, scripted or not), so adding or removing a scripted fault never shifts the other random
draws; every scripted fault that fires is recorded in `FaultPlan.fired`, so a run can prove that its fault
really happened.
"""

from __future__ import annotations

import random
from typing import Annotated, Literal, NamedTuple, Union

from pydantic import ConfigDict, Field, field_validator, model_validator

from ..base.errors import Message
from ..base.fields import InputModel, Integer, PositiveSeconds, Seconds, invalid
from ..base.i18n import text
from .designs import known_points

Ordinal = Annotated[Integer, Field(ge=1)]
"""An operation's or an attempt's number, counted from 1."""

NetworkMessage = Literal["request", "response"]
"""The two messages of an attempt the network carries: the client's request and the API's response."""
LosableMessage = Literal["request", "response", "processor_response"]
CrashPoint = Literal["after_key", "after_processor", "after_charge", "before_response_stored", "before_commit"]
CRASH_POINTS: tuple[str, ...] = CrashPoint.__args__  # type: ignore[attr-defined]


def _say(message: str, lang: str, **fields) -> str:

    return text(message, lang, **fields)


class _Fault(InputModel):
    op: Ordinal = Field(1, description="which logical operation (1 = the first in the scenario)")
    attempt: Ordinal = Field(1, description="which attempt of that operation")


class LoseMessage(_Fault):
    """The network drops the request or the response of one attempt, or the payment processor's answer to
    that attempt's handler (``processor_response``: the capture happened, the API never hears of it)."""

    kind: Literal["lose"] = "lose"
    message: LosableMessage

    def describe(self, lang: str = "en") -> str:
        return _say(f"fault.lose.{self.message}", lang, op=self.op, attempt=self.attempt)


class DelayMessage(_Fault):
    """The network holds the request or the response of one attempt for ``seconds`` more."""

    kind: Literal["delay"] = "delay"
    message: NetworkMessage
    seconds: PositiveSeconds

    def describe(self, lang: str = "en") -> str:
        return _say(f"fault.delay.{self.message}", lang, op=self.op, attempt=self.attempt, seconds=self.seconds)


class Crash(_Fault):
    """The API process dies when the handler of one attempt reaches ``point``; it restarts later. ``point`` is
    one of the shipped designs' points (`CRASH_POINTS`) or one a registered design declares."""

    kind: Literal["crash"] = "crash"
    point: str
    restart_after: Seconds = 1.0

    @field_validator("point")
    @classmethod
    def _a_known_point(cls, point: str) -> str:

        known = set(CRASH_POINTS) | known_points()
        if point not in known:
            registered = sorted(known - set(CRASH_POINTS))
            raise invalid("crash_point", points=", ".join(CRASH_POINTS),
                          registered=Message("pyd.crash_point_registered", points=", ".join(registered))
                          if registered else "")
        return point

    def describe(self, lang: str = "en") -> str:
        return _say("fault.crash", lang, point=self.point, op=self.op, attempt=self.attempt,
                    seconds=self.restart_after)


class ProcessorError(_Fault):
    """The payment processor declines one attempt's call: it captures nothing; the API answers 500."""

    kind: Literal["processor_error"] = "processor_error"

    def describe(self, lang: str = "en") -> str:
        return _say("fault.processor_error", lang, op=self.op, attempt=self.attempt)


class Duplicate(InputModel):
    """A second copy of operation ``op`` (same key, same body) starts at ``at``: a double click, a second
    tab, a proxy that resends. It runs as its own client process with the same retry policy. Its ``op`` must
    name an operation of the scenario (`idemsim.scenario.schema.Scenario` checks it)."""

    kind: Literal["duplicate"] = "duplicate"
    op: Ordinal = 1
    at: Seconds = 0.0

    def describe(self, lang: str = "en") -> str:
        return _say("fault.duplicate", lang, op=self.op, at=self.at)


class Outage(InputModel):
    """The API is unreachable from ``from`` to ``until``: every request in flight or sent meanwhile is lost
    (``mode = "lost"``) or answered 503 by a gateway in front of it (``"503"``), and every answer the API
    sends meanwhile is lost. At ``until`` it is reachable again. It fires when it touches a message."""

    model_config = ConfigDict(populate_by_name=True)

    kind: Literal["outage"] = "outage"
    start: Seconds = Field(alias="from", description="when the API becomes unreachable")
    until: PositiveSeconds = Field(description="when it is reachable again")
    mode: Literal["lost", "503"] = Field("lost", description="lost: messages vanish; 503: a gateway answers")

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> "Outage":
        if self.until <= self.start:
            raise invalid("outage_order", until=f"{self.until:g}", start=f"{self.start:g}")
        return self

    def covers(self, sent: float, arrives: float) -> bool:
        """Whether a message sent at ``sent`` and arriving at ``arrives`` meets the outage."""
        return sent < self.until and arrives >= self.start

    def describe(self, lang: str = "en") -> str:
        return _say(f"fault.outage.{self.mode}", lang, start=self.start, until=self.until)


FAULT_TYPES = (LoseMessage, DelayMessage, Crash, ProcessorError, Duplicate, Outage)
"""Every kind of fault a scenario may name, in the order the docs list them: a new kind is added here once."""
Fault = Annotated[Union[FAULT_TYPES], Field(discriminator="kind")]
"""One fault of a scenario's ``[[faults]]``, told apart by its ``kind``."""


class Fate(NamedTuple):
    """What the network does with one message."""

    lost: bool
    latency: float
    fault: int | None = None
    """Index of the scripted fault that decided this fate, or None (random or no fault)."""


_new = tuple.__new__


class FaultPlan:
    """Answers, at each decision point of a run, whether a fault happens there."""

    def __init__(self, faults: list, rng: random.Random, links: dict) -> None:
        self.faults = list(faults)
        """The fault schedule, in the order the scenario gives it."""
        self.rng = rng
        self.links = links
        """``{"request": Link, "response": Link}``: the random part (loss and latency) of each direction."""
        self._draws = {name: (link.loss, link.latency.sampler()) for name, link in links.items()}
        """Each direction's loss, and its latency's `idemsim.model.network.Latency.sampler`."""
        self.fired: list[int] = []
        """Indices of the scripted faults that happened, in the order they happened."""
        self.outages = any(f.kind == "outage" for f in self.faults)
        """Whether any outage is scheduled (messages need not be checked otherwise)."""
        self.crashes = any(f.kind == "crash" for f in self.faults)
        """Whether any crash is scheduled (crash points need not ask otherwise)."""
        self._at: dict[tuple, list[int]] = {}
        """(kind, op, attempt) -> the indices of the faults of that kind aimed at that attempt, in order."""
        for i, f in enumerate(self.faults):
            self._at.setdefault((f.kind, getattr(f, "op", None), getattr(f, "attempt", None)), []).append(i)

    def duplicates(self) -> list[tuple[int, "Duplicate"]]:
        """The duplicate operations to start, with their fault indices; they fire by being started."""
        found = [(i, f) for i, f in enumerate(self.faults) if f.kind == "duplicate"]
        self.fired.extend(i for i, _ in found)
        return found

    def _find(self, kind: str, op: int, attempt: int, field: str | None = None, value=None) -> int | None:
        """The first fault of ``kind`` aimed at this attempt (whose ``field`` is ``value``, if given)."""
        for i in self._at.get((kind, op, attempt), ()):
            if field is None or getattr(self.faults[i], field) == value:
                return i
        return None

    def message(self, message: str, op: int, attempt: int) -> Fate:
        """The fate of the request or response of attempt ``attempt`` of operation ``op``."""
        loss, draw = self._draws[message]
        randomly_lost = self.rng.random() < loss
        latency = draw(self.rng)
        if not self._at:
            return _new(Fate, (randomly_lost, latency, None))  # Fate(randomly_lost, latency), made the quick way
        lose = self._find("lose", op, attempt, "message", message)
        if lose is not None:
            self.fired.append(lose)
            return Fate(True, latency, lose)
        delay = self._find("delay", op, attempt, "message", message)
        if delay is not None:
            self.fired.append(delay)
            return Fate(randomly_lost, latency + self.faults[delay].seconds, delay)
        return Fate(randomly_lost, latency)

    def crash(self, point: str, op: int, attempt: int) -> Crash | None:
        """The crash scheduled at ``point`` of this attempt's handler, if any (each fires once)."""
        i = self._find("crash", op, attempt, "point", point)
        if i is None or i in self.fired:
            return None
        self.fired.append(i)
        return self.faults[i]

    def processor_response(self, op: int, attempt: int) -> int | None:
        """The index of the fault that loses the processor's answer to this attempt's call, if any."""
        i = self._find("lose", op, attempt, "message", "processor_response")
        if i is None or i in self.fired:
            return None
        self.fired.append(i)
        return i

    def processor_error(self, op: int, attempt: int) -> bool:
        """Whether the payment processor declines this attempt's call."""
        i = self._find("processor_error", op, attempt)
        if i is None or i in self.fired:
            return False
        self.fired.append(i)
        return True

    def outage(self, sent: float, arrives: float) -> tuple[int, "Outage"] | None:
        """The outage a message sent at ``sent`` and arriving at ``arrives`` meets, with its index, if any."""
        for i, f in enumerate(self.faults):
            if f.kind == "outage" and f.covers(sent, arrives):
                if i not in self.fired:
                    self.fired.append(i)
                return i, f
        return None

    def unfired(self) -> list[int]:
        """Scripted faults that never happened: a run that claims a result from them proves nothing."""
        return [i for i in range(len(self.faults)) if i not in self.fired]
