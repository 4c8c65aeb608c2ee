"""The client: logical operations, each tried under a retry policy.

A logical operation (one purchase) is sent as one or more *attempts*. Each attempt ends ``ok``, ``fail`` or
``info`` by `idemsim.base.http.classify`; the client retries only after ``info`` (it does not know), never after
``ok`` or ``fail``. Retries wait an exponential backoff (optionally jittered from the run's RNG) and stop at
``max_attempts`` or when the next attempt would start after the ``retry_window``. The key strategy decides
what links the attempts: ``none`` sends no key, ``per-operation`` sends one key with every attempt (correct),
``per-attempt`` makes a new key each time (a common bug). A response that arrives after the client stopped
waiting is recorded and ignored, as a closed connection would ignore it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Literal

import simpy
from pydantic import Field, ValidationInfo, field_validator
from simpy.events import Event

from ..base.errors import Message
from ..base.fields import PG_INT, Attempts, InputModel, JsonObject, PositiveSeconds, Probability, Seconds, invalid
from ..base.http import Request, Response, classify
from ..base.printable import shown
from ..kernel.waits import FirstOf, fired, timeout
from .network import Network
from .trace import Trace

KeyStrategy = Literal["none", "per-operation", "per-attempt"]


class RetryBudget(InputModel):
    """A token bucket that limits retries, as AWS's SDKs keep one per client: a retry spends tokens (more
    after a timeout), a success puts some back; with too few tokens the client does not retry."""

    capacity: float = Field(500.0, gt=0, description="tokens in a full bucket (the bucket starts full)")
    retry_cost: float = Field(5.0, ge=0, description="tokens a retry after an error answer spends")
    timeout_cost: float = Field(10.0, ge=0, description="tokens a retry after a timeout spends")
    refill: float = Field(1.0, ge=0, description="tokens a success puts back (up to the capacity)")


class TokenBucket:
    """The tokens of one client's retry budget, shared by all its operations in a run."""

    def __init__(self, budget: RetryBudget) -> None:
        self.budget = budget
        self.tokens = budget.capacity

    def take(self, timed_out: bool) -> bool:
        """Spend a retry's tokens if there are enough; False (nothing spent) otherwise."""
        cost = self.budget.timeout_cost if timed_out else self.budget.retry_cost
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True

    def succeeded(self) -> None:
        self.tokens = min(self.budget.capacity, self.tokens + self.budget.refill)


class RetryPolicy(InputModel):
    """When the client stops waiting, whether and when it tries again."""

    timeout: PositiveSeconds = Field(2.0, description="seconds to wait for each attempt's answer")
    max_attempts: Attempts = Field(3, description="attempts per operation, the first included")
    backoff: Seconds = Field(0.5, description="seconds before the first retry")
    multiplier: float = Field(2.0, ge=1, description="each further retry waits this many times longer")
    max_backoff: Seconds = Field(30.0, description="cap on one backoff")
    jitter: Literal["none", "full", "equal", "proportional"] = Field(
        "none", description="randomise backoffs: AWS's full and equal, or proportional (the backoff times a "
                            "uniform draw from 0.5 to 1.5, still at most max_backoff)")
    retry_window: PositiveSeconds | None = Field(None, description="no attempt starts later than this after "
                                                                   "the operation began")
    retry_budget: RetryBudget | None = Field(None, description="a token bucket shared by the client's "
                                                               "operations (none: retries are not budgeted)")

    def backoff_before(self, retry: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (1 = the second attempt): the exponential backoff,
        capped at ``max_backoff`` — also where the uncapped one would be too large for a float."""
        base = min(self.max_backoff, _grown(self.backoff, self.multiplier, retry - 1))
        if self.jitter == "full":
            return rng.uniform(0, base)
        if self.jitter == "equal":
            return base / 2 + rng.uniform(0, base / 2)
        if self.jitter == "proportional":
            return min(self.max_backoff, base * rng.uniform(0.5, 1.5))
        return base


def _grown(backoff: float, multiplier: float, times: int) -> float:
    """``backoff * multiplier ** times``, or infinity where that overflows a float (the cap then applies)."""
    if backoff == 0:
        return 0.0
    try:
        return backoff * multiplier ** times
    except OverflowError:
        return math.inf


class ClientConfig(RetryPolicy):
    """The retry policy plus how the client makes idempotency keys."""

    key_strategy: KeyStrategy = Field("per-operation", description="none | per-operation | per-attempt")
    duplicate_rate: Probability = Field(0.0, description="probability that an operation is sent a second time by "
                                                         "a copy (a double click), at random")
    duplicate_delay: Seconds = Field(0.5, description="seconds after the operation that its copy starts")


Method = Literal["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "POST", "PATCH"]
NEEDS = {("POST", "/charges"): "amount", ("PUT", "/balance"): "value", ("POST", "/balance/decrement"): "amount"}
"""The requests the API reads a number from, and the body field it reads: each must be an `Amount`."""


class Operation(InputModel):
    """One logical operation the client wants done once."""

    at: Seconds = Field(0.0, description="when the operation starts")
    method: Method = "POST"
    path: str = "/charges"
    body: JsonObject | None = Field(default_factory=lambda: {"amount": 1000})
    key: str | None = Field(None, min_length=1, description="the key to send (per-operation); made from the "
                                                             "seed if unset")
    client: str = Field("client", description="the name of the client process, for the timeline")
    retry: ClientConfig | None = Field(None, description="this operation's own [client] fields; the rest "
                                                          "come from [client]")

    @field_validator("key")
    @classmethod
    def _header_value(cls, key: str | None) -> str | None:
        """A key travels in an HTTP header, which cannot hold control characters (RFC 9110, 5.5)."""
        if key is not None and any(not ch.isprintable() for ch in key):
            raise invalid("header_value")
        return key

    @field_validator("body")
    @classmethod
    def _what_the_api_reads(cls, body: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        """A charge needs its ``amount``, ``PUT /balance`` its ``value`` and a decrement its ``amount``: each an
        integer within PostgreSQL's ``int`` (the charges table's column), checked here so that the API never
        meets a body it cannot read."""
        name = NEEDS.get((info.data.get("method"), info.data.get("path")))
        if name is None:
            return body
        value = (body or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool) and PG_INT[0] <= value <= PG_INT[1]:
            return body
        request = f"{info.data['method']} {info.data['path']}"
        problem = Message("pyd.body_none") if value is None else Message("pyd.body_got", value=shown(value))
        raise invalid("body_field", name=repr(name), low=str(PG_INT[0]), high=str(PG_INT[1]), request=request,
                      problem=problem)


@dataclass(slots=True)
class OperationResult:
    """What the client knows at the end of one operation."""

    op: int
    logical: int = 0
    """The logical operation: equal to ``op`` except for a duplicate, which names the one it copies."""
    outcome: str = "info"
    status: int | None = None
    attempts: int = 0
    statuses: list[int | None] = field(default_factory=list)
    """The status of each attempt, None where it got no answer: a list that operations which saw the same
    share (read it, never change it)."""
    keys: list[str | None] = field(default_factory=list)
    """The key each attempt carried."""
    started: float | None = None
    """When the operation began (simulated seconds)."""
    ended: float | None = None
    """When the client reached its final answer (or gave up)."""


_SEEN: dict[tuple, list] = {}
"""The statuses lists operations saw, each once (a load's thousands of operations see the same few)."""


def _seen(before: list, status: int | None) -> list:
    """``before + [status]``, the list kept for that sequence in `_SEEN` if any: equal lists of statuses are
    one list, as equal strings may be one string (a load would otherwise keep one per operation). None of them
    is ever changed: the next attempt's status makes a new one."""
    seen = (*before, status)
    shared = _SEEN.get(seen)
    if shared is None:
        shared = list(seen)
        if len(_SEEN) < 4096:  # (bounded: a list not kept is made for each operation, as before)
            _SEEN[seen] = shared
    return shared


def make_key(rng: random.Random) -> str:
    return f"k-{rng.getrandbits(32):08x}"


class Client:
    """Runs one logical operation as a SimPy process; ``result`` fills in as it goes."""

    __slots__ = ("env", "op", "logical", "key", "operation", "at", "config", "rng", "network", "api", "trace",
                 "name", "result", "budget", "_waiting")

    def __init__(self, env: simpy.Environment, op: int, operation: Operation, config: ClientConfig,
                 rng: random.Random, network: Network, api, trace: Trace, *, key: str | None = None,
                 logical: int | None = None, budget: TokenBucket | None = None, at: float | None = None) -> None:
        self.env = env
        self.op = op
        self.logical = logical or op
        """The logical operation this client performs: its own number, or the one it duplicates."""
        self.key = key
        """The key of a per-operation client, chosen before the run starts."""
        self.operation = operation
        self.at = operation.at if at is None else at
        """When the operation starts: its ``at``, unless given (a load's generated operations share one
        `Operation`, their template, and differ only in this)."""
        self.config = config
        self.rng = rng
        self.network = network
        self.api = api
        self.trace = trace
        self.name = operation.client
        self.result = OperationResult(op, logical=self.logical)
        self.budget = budget
        """The retry budget this client process shares with the other operations of its client, if any."""
        self._waiting: dict[str, simpy.Event] = {}
        """The reply event of each attempt the client still waits for, by request id."""

    def run(self):
        env, operation, config, trace = self.env, self.operation, self.config, self.trace
        if self.at > env.now:
            yield env.timeout(self.at - env.now)
        start = env.now
        r = self.result
        r.started = start
        complete = trace.complete  # (events the tally does not take are not recorded without a trace)
        if complete:
            trace.record(start, self.name, "op.start", None, op=self.op, method=operation.method,
                         path=operation.path, body=operation.body)
        key = self.key if config.key_strategy == "per-operation" else None
        for attempt in range(1, config.max_attempts + 1):
            if config.key_strategy == "per-attempt":
                key = make_key(self.rng) if attempt > 1 or operation.key is None else operation.key
            request = Request(f"{self.op}.{attempt}", self.op, attempt, operation.method, operation.path, key,
                              operation.body, self.name)
            # -- one attempt: send, then wait for the answer or the timeout, whichever comes first
            reply = Event(env)
            self._waiting[request.id] = reply
            sent = env.now
            trace.attempt_send(sent, self.name, self.op, attempt, request.id, key, request.method, request.path,
                               request.body)
            respond = self._respond_to(request)
            self.network.carry("request", self.op, attempt, request.id, self.name, "api",
                               lambda: self.api.receive(request, respond),
                               lambda: self.api.unavailable(request, respond))
            yield FirstOf(env, reply, timeout(env, config.timeout))
            del self._waiting[request.id]
            if fired(reply):
                status = reply.value.status
            else:
                status = None
                if complete:
                    trace.record(env.now, self.name, "attempt.timeout", None, op=self.op, attempt=attempt,
                                 request=request.id, after=config.timeout)
            # -- what the attempt tells
            outcome = classify(status, operation.method)
            r.attempts, r.status, r.outcome = attempt, status, outcome
            r.statuses = _seen(r.statuses, status)
            r.keys = r.keys + [key]
            trace.attempt_end(env.now, self.name, self.op, attempt, outcome, status, sent)
            if outcome == "ok" and self.budget is not None:
                self.budget.succeeded()
            if outcome != "info" or attempt == config.max_attempts:
                break
            delay = config.backoff_before(attempt, self.rng)
            if config.retry_window is not None and env.now + delay - start > config.retry_window:
                trace.record(env.now, self.name, "client.give_up", None, op=self.op,
                             reason="retry window closed")
                break
            if self.budget is not None and not self.budget.take(timed_out=status is None):
                trace.record(env.now, self.name, "client.give_up", None, op=self.op,
                             reason="retry budget exhausted")
                break
            if complete:
                trace.record(env.now, self.name, "client.backoff", None, op=self.op, seconds=delay)
            if delay:
                yield timeout(env, delay)
        r.ended = env.now
        if complete:
            trace.record(env.now, self.name, "op.end", None, op=self.op, outcome=r.outcome,
                         status=r.status, attempts=r.attempts)

    def _respond_to(self, request: Request):
        """The callback the API uses to send this attempt's answer back over the network."""

        def send(response: Response, src: str = "api") -> None:
            def arrive() -> None:
                waiting = self._waiting.get(request.id)
                if self.trace.complete:
                    self.trace.record(self.env.now, src, "response.arrive", self.name, request=request.id,
                                      status=response.status, body=response.body, ignored=waiting is None)
                if waiting is not None and not waiting.triggered:
                    waiting.succeed(response)

            self.network.carry("response", self.op, request.attempt, request.id, src, self.name, arrive)

        return send
