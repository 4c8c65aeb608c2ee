"""Hypothesis strategies that choose a whole run through the fault interface.

A `Schedule` is everything the search may vary about a run: the fault schedule (a list of `idemsim.model.faults`
records: lost and delayed messages, crashes with their restart delays, payment-processor errors, concurrent
duplicates and when they start), the network latencies, the handler's time, and the client's retry timings.
`Schedule.overrides` turns it into the scenario fields it sets, so a chosen run is an ordinary scenario: it
goes through the same `FaultPlan` as a named scenario and can be saved to a file and replayed.

Guarantees:

- **"No fault" is the simplest choice.** The fault list shrinks towards empty, and every other choice towards
  its first, plainest value (the documented default), so a shrunk counterexample is the fewest-fault story on
  the default timings.
- **Without a fault, nothing times out.** Latencies, handler times and client timeouts are drawn from ranges
  in which a fault-free attempt is always answered in time (round trip at most 0.2 + 1.0 + 0.2 s, timeout at
  least 2 s); a slow message is a fault (`DelayMessage`), chosen and shrunk like the others. A counterexample
  therefore always names what went wrong.
- Nothing here draws randomness of its own: Hypothesis makes every choice, and the run's `random.Random(seed)`
  only decides what the scenario leaves to chance (uniform latencies, jitter, generated keys).

This module imports Hypothesis; `idemsim run` never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from ..model.faults import CRASH_POINTS, Crash, DelayMessage, Duplicate, LoseMessage, ProcessorError

DUPLICATE_SLOTS = (0.0, 0.1, 0.3, 1.0, 2.5)
"""Plain start times of a concurrent duplicate, tried before any other (seconds after the first begins)."""
RESTART_DELAYS = (1.0, 0.1, 5.0, 30.0)
"""How long a crashed API stays down; the first is the plainest."""
MESSAGE_DELAYS = (1.0, 2.0, 5.0, 0.5, 30.0)
"""Extra seconds a delayed message is held."""
LATENCIES = (0.05, 0.01, 0.1, 0.2)
"""Constant one-way latencies; every one keeps a fault-free round trip well inside the shortest timeout."""
CHARGE_SECONDS = (0.2, 0.5, 1.0)
"""The payment processor's time, i.e. how long the handler holds its work; the longest is 1 s."""
LONGEST_HANDLER = max(CHARGE_SECONDS)
TIMEOUTS = (2.0, 3.0, 5.0)
BACKOFFS = (0.5, 0.0, 0.1, 2.0)
MAX_ATTEMPTS = (3, 1, 2, 5)
JITTERS = ("none", "full", "equal")


@dataclass(frozen=True)
class Schedule:
    """One run as the search chose it: faults and timings, each a scenario field."""

    faults: tuple = ()
    """The fault schedule, `idemsim.model.faults` records, in order."""
    network: dict[str, Any] = field(default_factory=dict)
    """``[network]`` fields: the latency of each direction."""
    client: dict[str, Any] = field(default_factory=dict)
    """``[client]`` fields: timeout, attempts, backoff and jitter."""
    api: dict[str, Any] = field(default_factory=dict)
    """``[api]`` fields: the handler's time."""

    def overrides(self) -> dict[str, Any]:
        """The scenario fields this schedule sets, as a raw (TOML-shaped) dict."""
        return {"faults": [f.model_dump() for f in self.faults], "network": self.network,
                "client": self.client, "api": self.api}

    def describe(self) -> list[str]:
        return [f.describe() for f in self.faults]


# -- faults -----------------------------------------------------------------------------------------------------
KINDS = ("lose", "duplicate", "crash", "delay", "processor_error")
"""Fault kinds, plainest first: when two kinds break the property equally, shrinking keeps the earlier one."""
MESSAGES = ("response", "request")
LOSABLE = ("response", "request", "processor_response")
"""What a ``lose`` fault may drop: a delay applies to the client's messages only."""
TARGET_ATTEMPTS = (1, 1, 1, 2, 2, 3, 4, 5)
"""Which attempt a fault targets, weighted towards the ones that happen in most runs (repeated values weight
the draw; shrinking still goes to the first). The target process is likewise one of the scenario's operations
four times as often as each of the two duplicates' processes that may follow them."""


def _fault(kind: str, op: int, attempt: int, detail: int, extra: int, ops: int, at: float | None,
           points: tuple[str, ...] = CRASH_POINTS):
    if kind == "lose":
        return LoseMessage(op=op, attempt=attempt, message=LOSABLE[detail % len(LOSABLE)])
    if kind == "delay":
        return DelayMessage(op=op, attempt=attempt, message=MESSAGES[detail % 2],
                            seconds=MESSAGE_DELAYS[extra % len(MESSAGE_DELAYS)])
    if kind == "crash":
        return Crash(op=op, attempt=attempt, point=points[detail % len(points)],
                     restart_after=RESTART_DELAYS[extra % len(RESTART_DELAYS)])
    if kind == "processor_error":
        return ProcessorError(op=op, attempt=attempt)
    return Duplicate(op=(op - 1) % ops + 1, at=DUPLICATE_SLOTS[detail] if at is None else at)


@st.composite
def one_fault(draw, ops: int = 1, attempts: int = 5, points: tuple[str, ...] = CRASH_POINTS):
    """One fault record of any kind.

    Every kind is drawn from the same five choices (kind, op, attempt, detail, extra), so that two faults that
    break a property equally compare by kind alone and shrinking prefers the plainer kind (a lost message over
    a duplicate, a duplicate over a crash). ``op`` counts the duplicates' client processes too: they are
    numbered after the scenario's operations; targets are weighted towards the operations and attempts that
    happen in most runs (`TARGET_ATTEMPTS`). A duplicate's start is a plain slot, or, after every slot, any
    time in the first 10 s (to the millisecond).
    """
    kind = draw(st.sampled_from(KINDS))
    op = draw(st.sampled_from(tuple(range(1, ops + 1)) * 4 + (ops + 1, ops + 2)))
    attempt = draw(st.sampled_from(tuple(a for a in TARGET_ATTEMPTS if a <= attempts)))
    detail = draw(st.integers(0, len(DUPLICATE_SLOTS)))
    extra = draw(st.integers(0, max(len(MESSAGE_DELAYS), len(RESTART_DELAYS)) - 1))
    at = None
    if kind == "duplicate" and detail == len(DUPLICATE_SLOTS):
        at = round(draw(st.floats(0.0, 10.0, allow_nan=False)), 3)
    return _fault(kind, op, attempt, detail, extra, ops, at, points)


def faults(max_faults: int = 5, ops: int = 1, attempts: int = 5,
           points: tuple[str, ...] = CRASH_POINTS) -> st.SearchStrategy[list]:
    """A fault schedule of at most ``max_faults`` faults (crashes at ``points``); shrinks towards no fault."""
    return st.lists(one_fault(ops, attempts, points), max_size=max_faults)


# -- timings ----------------------------------------------------------------------------------------------------
def latencies() -> st.SearchStrategy[dict[str, Any]]:
    """One direction's latency: a constant, or uniform up to 0.2 s (drawn from the run's RNG, so messages
    of concurrent attempts can overtake each other)."""
    choices = [{"dist": "constant", "seconds": s} for s in LATENCIES] + [{"dist": "uniform", "low": 0.0, "high": 0.2}]
    return st.sampled_from(choices).map(lambda latency: {"latency": latency})


def networks() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"request": latencies(), "response": latencies()})


def retry_timings() -> st.SearchStrategy[dict[str, Any]]:
    """The client's timeout, attempts, backoff and jitter (its key strategy and retry window stay fixed)."""
    return st.fixed_dictionaries({"timeout": st.sampled_from(TIMEOUTS), "max_attempts": st.sampled_from(MAX_ATTEMPTS),
                                  "backoff": st.sampled_from(BACKOFFS), "jitter": st.sampled_from(JITTERS)})


def handler_times() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"charge_seconds": st.sampled_from(CHARGE_SECONDS)})


def schedules(max_faults: int = 5, ops: int = 1, points: tuple[str, ...] = CRASH_POINTS) -> st.SearchStrategy[Schedule]:
    """A whole run: faults first (so that fewer faults is always the simpler run), then the timings."""
    attempts = max(MAX_ATTEMPTS)
    return st.builds(lambda f, n, c, a: Schedule(tuple(f), n, c, a),
                     faults(max_faults, ops, attempts, points), networks(), retry_timings(), handler_times())
