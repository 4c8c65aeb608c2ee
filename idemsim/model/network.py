"""The network: one link each way between the client and the API.

A link carries a message after a latency drawn from its distribution, or loses it. It never duplicates or
corrupts a message (Byzantine faults are out of the article's scope); it may reorder messages, since two
messages draw independent latencies. A lost message never arrives: nothing downstream ever sees it. Whether a
given message is lost or delayed is decided by the run's `FaultPlan`, so scripted, random and
Hypothesis-chosen faults all pass through here the same way.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Literal

import simpy
from pydantic import Field, model_validator

from ..base.fields import InputModel, PositiveSeconds, Probability, Seconds, invalid
from ..kernel.waits import later
from .faults import Fate, FaultPlan
from .trace import Trace


class Latency(InputModel):
    """A latency distribution: ``constant`` (``seconds``), ``uniform`` (``low``..``high``, ``low`` not above
    ``high``) or ``exponential`` (``mean``), moved by ``shift`` seconds; with ``stall`` > 0, that share of the
    draws takes ``stall_seconds`` longer (a spike, a pause of the collector, a lock held elsewhere)."""

    dist: Literal["constant", "uniform", "exponential"] = "constant"
    seconds: Seconds = 0.05
    low: Seconds = 0.0
    high: Seconds = 0.1
    mean: PositiveSeconds = 0.05
    shift: Seconds = Field(0.0, description="seconds added to every draw (the fixed part of a latency)")
    stall: Probability = Field(0.0, description="the probability that a draw stalls")
    stall_seconds: Seconds = Field(0.0, description="how much longer a stalled draw takes")

    @model_validator(mode="after")
    def _a_range(self) -> "Latency":
        if self.dist == "uniform" and self.low > self.high:
            raise invalid("uniform_range", low=f"{self.low:g}", high=f"{self.high:g}")
        return self

    def draw(self, rng: random.Random) -> float:
        """One latency. Consumes exactly one draw from ``rng``, whatever the distribution, and a second one
        (whether it stalls) when ``stall`` is set."""
        return self.sampler()(rng)

    def sampler(self) -> Callable[[random.Random], float]:
        """`draw`, as a function made once, for a caller that draws many latencies from one distribution (a load
        draws three a payment) without reading the model's fields at each draw."""
        dist, seconds, low, span, mean = self.dist, self.seconds, self.low, self.high - self.low, self.mean
        shift, stall, stall_seconds, log = self.shift, self.stall, self.stall_seconds, math.log
        if dist == "uniform":
            def value(rng: random.Random) -> float:
                return low + span * rng.random()
        elif dist == "exponential":
            def value(rng: random.Random) -> float:
                return -mean * log(1.0 - rng.random())
        else:
            def value(rng: random.Random) -> float:
                rng.random()  # (drawn and not used: every distribution takes one number)
                return seconds
        if not shift and not stall:
            return value

        def draw(rng: random.Random) -> float:
            drawn = value(rng)
            if shift:
                drawn += shift
            if stall and rng.random() < stall:
                drawn += stall_seconds
            return drawn

        return draw


class Link(InputModel):
    """One direction of the network: its latency and the probability that it loses a message."""

    latency: Latency = Latency()
    loss: Probability = Field(0.0, description="probability that a message is lost")


class Network:
    """Carries requests to the API and responses back, recording every message's fate in the trace."""

    def __init__(self, env: simpy.Environment, plan: FaultPlan, trace: Trace) -> None:
        self.env = env
        self.plan = plan
        self.trace = trace
        self.in_flight = 0
        """Messages sent and not yet arrived or lost."""

    def carry(self, message: str, op: int, attempt: int, request_id: str, src: str, dst: str,
              deliver: Callable[[], None], unavailable: Callable[[], None] | None = None) -> None:
        """Send one message now; call ``deliver`` when it arrives, or never if it is lost. During an outage a
        request meets a gateway that answers for the API (``unavailable``) or is lost; an answer is lost."""
        fate = self.plan.message(message, op, attempt)
        self.in_flight += 1
        if not fate.lost and self.plan.outages and src != "gateway":
            outage = self.plan.outage(self.env.now, self.env.now + fate.latency)
            if outage is not None:
                index, fault = outage
                if message == "request" and fault.mode == "503" and unavailable is not None:
                    later(self.env, fate.latency, self._arrived, unavailable)
                    return
                fate = Fate(True, fate.latency, index)
        if fate.lost:
            # The loss is recorded halfway: the message left and never arrived.
            later(self.env, fate.latency / 2, self._lost, (message, request_id, src, dst, fate))
        else:
            later(self.env, fate.latency, self._arrived, deliver)

    def _lost(self, message_lost: tuple) -> None:
        message, request_id, src, dst, fate = message_lost
        self.in_flight -= 1
        if self.trace.complete:  # (the tally takes no loss: without a trace, it is not recorded)
            self.trace.record(self.env.now, "net", f"{message}.lost", None, request=request_id,
                              fault=fate.fault, src=src, dst=dst)

    def _arrived(self, deliver: Callable[[], None]) -> None:
        self.in_flight -= 1
        deliver()
