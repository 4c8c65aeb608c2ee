"""The API process: receives requests, runs one handler per request, answers, and sometimes dies.

Each request gets its own handler, with its own database connection named ``api#N`` (N counts requests),
as a connection pool would give it. ``POST /charges`` runs under the configured *design*
(`idemsim.model.designs`); the other paths serve the article's examples of idempotent and non-idempotent methods
on a small in-memory state (a balance, a set of items) and never touch the key table.

Faults: at each named crash point a handler asks the `FaultPlan`; a crash takes the whole process down at that
instant: no handler answers, every idle connection drops at once (PostgreSQL rolls each open transaction back
and wakes whoever waited on it) and one blocked in a statement drops when the statement ends, as a PostgreSQL
backend notices a closed socket only then; requests that arrive while the process is down get no answer, and
the process restarts after the crash's ``restart_after``. With a ``gateway_timeout`` set,
a gateway in front of the API answers ``504`` when the handler has not answered in time, and drops the
handler's late answer.

Background work, on connections of its own: with a ``ttl`` (a design that ``stores_keys``: every one but naive)
a reaper deletes every expired key record, ``in_progress`` ones included, every ``reap_every`` seconds; with a
``lease`` (a design with ``lease_recovery``: committed-first) a recovery step deletes, every ``lease / 2``
seconds, ``in_progress`` records older than the lease, whether or not a handler is still working on them.
None of them keeps a run going by itself: `idemsim.runners.simulation` decides when a run ends, from
`Api.recovery_horizon` and `Api.open_keys`, and reports what `Api.left_open` lists.
"""

from __future__ import annotations

import inspect
import re
from typing import Annotated, Any, Callable, Literal

import simpy
from pydantic import Field, field_validator, model_validator

from ..base.errors import InputError, Message
from ..base.fields import Amount, InputModel, Integer, JsonObject, Period, PositiveSeconds, Seconds, invalid
from ..base.http import Request, Response, fingerprint
from ..kernel.waits import Task
from . import calls
from .calls import Call, Calls, DesignCode, Overran
from .designs import DESIGNS, completer_period, missing_key, recovery_lease
from .faults import FaultPlan
from .network import Latency
from .trace import Trace

Isolation = Literal["read committed", "repeatable read", "serializable"]


class ApiConfig(InputModel):
    """How the API is built and how long its work takes."""

    charge_seconds: Seconds = Field(0.2, description="time the payment processor takes to capture; the "
                                                     "handler holds its open transaction meanwhile")
    charge: Latency | None = Field(None, description="instead of charge_seconds: the capture's time, drawn "
                                                     "for each capture from the run's random numbers")
    processor_key: Literal["none", "request-key"] = Field(
        "none", description="what the API gives the processor as its idempotency key: none (every call "
                            "captures) or the request's own key (the processor captures once per key)")
    processor_timeout: PositiveSeconds = Field(5.0, description="seconds a handler waits for the processor's "
                                                                "answer before it answers 503")
    completer_every: Period | Literal["off"] | None = Field(
        None, description="recovery-points: how often the completer resumes abandoned keys (default 1 s; "
                          "off: no completer)")
    isolation: Isolation = Field("read committed", description="isolation level of the API's transactions")
    fingerprint_check: bool = Field(True, description="same key, different body -> 422")
    ttl: PositiveSeconds | None = Field(86400.0, description='retention of key records, seconds, or "forever"')
    reap_every: Period = Field(60.0, description="how often the retention reaper runs")
    missing_key: Literal["reject", "process"] = Field("reject", description="no key: 400, or process "
                                                                               "without protection")
    replay_errors: bool = Field(True, description="store and replay error answers (a 500), or store only 2xx")
    lease: Period | None = Field(None, description="committed-first: an in_progress record older than this is "
                                                   "returned to absent (none = no recovery); recovery-points: "
                                                   "how long a claim on a key holds (default 10 s)")
    order: Literal["key-first", "charge-first"] = Field("key-first", description="split-tx: which commits first")
    unique: bool | None = Field(None, description="unique constraint on the key (default: every design but "
                                                   "check-then-insert)")
    gateway_timeout: PositiveSeconds | None = Field(None, description="a gateway answers 504 after this long")
    pool_size: Annotated[Integer, Field(ge=1)] | None = Field(
        None, description="database connections the handlers share; a request waits for a free one (none: "
                          "unlimited)")
    balance: Amount = Field(500, description="starting balance for /balance")
    items: JsonObject = Field(default_factory=dict, description="starting items for /items/{id}")

    @model_validator(mode="after")
    def _one_charge_time(self) -> "ApiConfig":
        if self.charge is not None and "charge_seconds" in self.model_fields_set:
            raise ValueError("give charge or charge_seconds, not both")
        return self

    @field_validator("ttl", mode="before")
    @classmethod
    def _forever(cls, value: Any) -> Any:
        """``"forever"`` is no retention limit; any other text is refused with what is allowed."""
        if isinstance(value, str):
            if value == "forever":
                return None
            raise invalid("ttl")
        return value


MAX_STATEMENTS = 10_000
"""Statements one handler may send: far more than any design needs, far fewer than a loop would."""

MAX_OPEN_KEYS = 5
"""Key records left in progress that `Api.left_open` names one by one (a load may leave thousands)."""


class ApiCrashed(Exception):
    """Raised inside a handler whose process has died."""


class DesignError(InputError):
    """A user's design misbehaved (raised, sent an unknown statement, answered with something else): one line
    naming the design, the request, the statement and the simulated time."""


def _shorten(text: str, limit: int = 200) -> str:
    """``text`` said of a design's doing: one line, at most ``limit`` characters, no memory addresses."""
    text = " ".join(calls.without_addresses(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


class Handler:
    """One request being served: its connection, the API's options, and the crash points."""

    def __init__(self, api: "Api", request: Request, name: str) -> None:
        self.api = api
        self.env = api.env
        self.request = request
        self.name = name
        self.config = api.config
        self.conn = api.db.connect(name)
        self.generation = api.generation
        """The process incarnation this handler belongs to; a crash makes it stale."""
        self.last_statement: str | None = None
        """The last statement the handler sent (named in a custom design's error)."""
        self.statements = 0
        """Statements sent so far: a handler that sends more than `MAX_STATEMENTS` is stopped."""

    @property
    def key(self) -> str | None:
        """The request's idempotency key, or None."""
        return self.request.key

    @property
    def fingerprint(self) -> str:
        """The request body's fingerprint (a short hash): the same body always gives the same one."""
        return self.api.fingerprint_of(self.request.body)

    @property
    def amount(self) -> Any:
        """The body's ``amount`` (0 when there is none)."""
        return (self.request.body or {}).get("amount", 0)

    def sql(self, op: str, **fields: Any):
        """Run one statement (see `idemsim.model.db.engine`): ``yield from h.sql(...)`` gives its `Result`. (Not a
        generator of its own: it checks, then hands over the connection's.)"""
        self.last_statement = op
        self.statements += 1
        if self.statements > MAX_STATEMENTS:
            raise DesignError("err.design.statements", design=repr(self.api.design), request=self.request.id,
                              n=MAX_STATEMENTS, t=self.env.now)
        if self.generation != self.api.generation:
            raise ApiCrashed("process died")
        return self.conn.statement(op, fields)

    @property
    def in_statement(self) -> bool:
        """True while a statement runs (or waits for a lock) on the connection."""
        return self.conn.busy

    def _statement_done(self) -> None:
        """The statement that was running when the process died has ended (its result is recorded): the
        connection drops now (`Api.crash` asked the connection to call this)."""
        if self.generation != self.api.generation:
            # The process died while this statement ran; like a PostgreSQL backend blocked on a lock, the
            # session notices the closed socket only now, and its transaction rolls back now.
            self.api.drop(self)
            raise ApiCrashed("process died")

    def work(self, seconds: float, what: str = "work"):
        """Work outside the database that touches no other party (the processor is `capture`)."""
        self._alive()
        if seconds > 0:
            self.api.trace.record(self.env.now, self.name, "api.sleep", None, seconds=seconds, what=what)
            yield self.env.timeout(seconds)
        self._alive()

    def capture(self, amount: Any, key: str | None = None):
        """Call the payment processor to capture ``amount``, with ``key`` as its idempotency key (or none);
        returns the `idemsim.model.processor.ProcessorAnswer`. Whatever happens to this handler afterwards, a
        capture stays captured."""
        self._alive()
        answer = yield from self.api.processor.call(self.name, self.request, amount, key,
                                                    self.config.processor_timeout)
        self._alive()
        return answer

    def processor_key(self, key: str | None) -> str | None:
        """The key to give the processor under ``api.processor_key``: the request's key, or none."""
        return key if self.config.processor_key == "request-key" else None

    def point(self, point: str) -> None:
        """A named crash point: the process dies here if the fault plan says so."""
        api = self.api
        if self.generation != api.generation:
            raise ApiCrashed("process died")
        if not api.plan.crashes:
            return
        crash = self.api.plan.crash(point, self.request.op, self.request.attempt)
        if crash is not None:
            self.api.crash(self.name, point, crash.restart_after)
            raise ApiCrashed(point)

    def _alive(self) -> None:
        if self.generation != self.api.generation:
            raise ApiCrashed("process died")


class WatchedHandler(Handler):
    """The handler of a user's design: each statement, capture and work it hands out is a `Call` that remembers
    the design's line, so that one the design never ran (a forgotten ``yield from``) is reported
    (`Api._custom`)."""

    def __init__(self, api: "Api", request: Request, name: str) -> None:
        super().__init__(api, request, name)
        self.calls = Calls()

    def sql(self, op: str, **fields: Any) -> Call:
        return self.calls.asked(super().sql(op, **fields), "h", "sql", op)

    def capture(self, amount: Any, key: str | None = None) -> Call:
        return self.calls.asked(super().capture(amount, key), "h", "capture", amount)

    def work(self, seconds: float, what: str = "work") -> Call:
        return self.calls.asked(super().work(seconds, what), "h", "work", seconds)


class Worker:
    """A background process beside the API (the completer): a connection of its own, no request, no crash
    point; it survives the API's crashes. It offers the statements and processor calls a design's phases use."""

    def __init__(self, api: "Api", name: str) -> None:
        self.api = api
        self.env = api.env
        self.name = name
        self.config = api.config
        self.conn = api.db.connect(name)

    def sql(self, op: str, **fields: Any):
        return self.conn.statement(op, fields)

    def lookup(self, key: str):
        """Ask the processor what became of ``key`` (never captures)."""
        return (yield from self.api.processor.call(self.name, None, None, key, self.config.processor_timeout))

    def point(self, point: str) -> None:
        """Crash points name a request's attempt; a background process has none."""

    def finished(self, key: str, response: Response) -> None:
        self.api.trace.record(self.env.now, self.name, "completer.finish", None, key=key,
                              status=response.status, body=response.body)

    def released(self, key: str, point: str) -> None:
        self.api.trace.record(self.env.now, self.name, "completer.release", None, key=key,
                              reason=f"abandoned at {point}")


class WatchedWorker(Worker):
    """The worker of a user's design's completer: its statements and lookups are `Call` objects, as a
    `WatchedHandler`'s are."""

    def __init__(self, api: "Api", name: str) -> None:
        super().__init__(api, name)
        self.calls = Calls()

    def sql(self, op: str, **fields: Any) -> Call:
        return self.calls.asked(super().sql(op, **fields), "w", "sql", op)

    def lookup(self, key: str) -> Call:
        return self.calls.asked(super().lookup(key), "w", "lookup", key)


class Api:
    """The API process. ``receive`` is called by the network when a request arrives."""

    def __init__(self, env: simpy.Environment, db, processor, design: str, config: ApiConfig, plan: FaultPlan,
                 trace: Trace) -> None:

        self.env = env
        self.db = db
        self.processor = processor
        """The payment processor (`idemsim.model.processor.Processor`), a party of its own."""
        self.design = design
        self.design_spec = DESIGNS[design]
        """The `idemsim.model.designs.Design` this API is built to."""
        self.handle_charge = self.design_spec.handler
        self.handler_type = WatchedHandler if self.design_spec.custom else Handler
        """A user's design gets handlers that name a statement it never ran."""
        self.config = config
        self.plan = plan
        self.trace = trace
        self.generation = 0
        """Increments at every crash; handlers of an older generation are dead."""
        self.up = True
        self.in_flight = 0
        """Handlers running now, plus a pending restart."""
        self.handlers: dict[str, Handler] = {}
        """The live handlers, by name: a crash drops all their connections at once."""
        self.pool = simpy.Resource(env, config.pool_size) if config.pool_size is not None else None
        """The database connections handlers take, first come first served (None: as many as needed)."""
        self.requests = 0
        self._fingerprints: dict[int, tuple[Any, str]] = {}
        """id(body) -> (body, its fingerprint): the operations of a load share one body; each is hashed once."""
        self.balance = config.balance
        self.items: dict[str, Any] = dict(config.items)
        self.log_lines = 0
        """Requests written to the access log: a side effect that grows even for idempotent requests."""
        self.daemons: list[str] = []
        if config.ttl is not None and self.design_spec.stores_keys:
            env.process(self._reaper())
            self.daemons.append("reaper")
        if config.lease is not None and self.design_spec.lease_recovery:
            env.process(self._recovery())
            self.daemons.append("recovery")
        if self.design_spec.completer is not None and completer_period(config) is not None:
            env.process(self._completer())
            self.daemons.append("completer")

    def fingerprint_of(self, body: Any) -> str:
        """``idemsim.base.http.fingerprint(body)``, computed once per body object of the run (a request's body is
        the operation's, never changed)."""
        known = self._fingerprints.get(id(body))
        if known is not None and known[0] is body:
            return known[1]

        value = fingerprint(body)
        self._fingerprints[id(body)] = (body, value)
        return value

    # -- requests ---------------------------------------------------------------------------------------
    def receive(self, request: Request, respond: Callable[..., None]) -> None:
        client = request.client
        if not self.up:
            self.trace.record(self.env.now, client, "request.refused", "api", request=request.id)
            return
        self.requests += 1
        name = f"api#{self.requests}"
        self.trace.request_arrive(self.env.now, client, request.id, name, self.requests, request.key)
        Task(self.env, self._serve(request, respond, name))

    def _serve(self, request: Request, respond, name: str):
        self.in_flight += 1
        answered = {"by_gateway": False}
        if self.config.gateway_timeout is not None:
            self.env.process(self._gateway(request, respond, answered))
        slot = None
        if self.pool is not None:
            slot = yield from self._connection(request, name)
            if slot is None:
                self.in_flight -= 1
                return
        handler = self.handler_type(self, request, name)
        self.handlers[name] = handler
        try:
            response = yield from self._route(handler)
        except ApiCrashed:
            return  # `crash` has already dropped its connection and recorded its death
        finally:
            self.in_flight -= 1
            self.handlers.pop(name, None)
            if slot is not None:
                self.pool.release(slot)
        self.log_lines += 1
        if answered["by_gateway"]:
            self.trace.record(self.env.now, name, "response.dropped", "gateway", request=request.id,
                              status=response.status, body=response.body, replay=response.replay)
            return
        answered["done"] = True
        self.trace.response_send(self.env.now, name, request.client, request.id, response.status, response.body,
                                 response.replay, request.key)
        respond(response, name)

    def _connection(self, request: Request, name: str):
        """Wait for a free connection of the pool, first come first served; None if the process died
        meanwhile (the request then gets no answer)."""
        generation, since = self.generation, self.env.now
        slot = self.pool.request()
        if not slot.triggered:
            self.trace.record(since, name, "pool.wait", None, request=request.id, queued=len(self.pool.queue))
        yield slot
        if self.env.now > since:
            self.trace.record(self.env.now, name, "pool.acquire", None, request=request.id,
                              waited=round(self.env.now - since, 6))
        if generation != self.generation:
            self.pool.release(slot)
            self.trace.record(self.env.now, name, "api.died", None, request=request.id)
            return None
        return slot

    def unavailable(self, request: Request, respond) -> None:
        """During an outage in ``503`` mode, a gateway in front of the API answers for it."""
        self.trace.record(self.env.now, "gateway", "gateway.unavailable", request.client, request=request.id,
                          status=503)
        respond(Response(503, {"error": "service unavailable"}), "gateway")

    def _custom(self, spec, party: WatchedHandler | WatchedWorker, code: Callable, *args: Any):
        """Run a user's design code, ``code(*args)`` (a handler, a completer) for ``party``, each step of it inside
        `DesignCode` (its prints to standard error; the watchdog, if any). Whatever it raises (any
        `BaseException`: ``sys.exit``, `KeyboardInterrupt` too) or yields that is not an event, a step the
        watchdog stopped, and a statement, capture or work it called and never ran (a forgotten ``yield from``,
        named first: the likelier cause of what it raised after), becomes one clear line naming the design, the
        request (or the completer), the line of the design's file and the simulated time, not a traceback from
        the model."""

        request = getattr(party, "request", None)
        where = Message("err.design.request", request=request.id) if isinstance(party, Handler) else party.name
        running = DesignCode(f"{spec.name} {request.id if isinstance(party, Handler) else party.name}")
        try:
            with running:
                work = code(*args)
            result = (yield from self._stepped(spec, where, work, running, code)) if inspect.isgenerator(work) \
                else work
        except (ApiCrashed, DesignError, GeneratorExit):
            raise
        except Overran as stopped:
            raise DesignError("err.design.overran", design=repr(spec.name), where=where, t=self.env.now,
                              place=calls.place(stopped, calls.file_of(code), calls.defined_at(code)),
                              seconds=stopped.seconds) from None
        except BaseException as error:  # the user's code failed, or ended the process: their input, exit 2
            _never_ran(spec, party)
            last = getattr(party, "last_statement", None)
            said = dict(design=repr(spec.name), where=where, t=self.env.now,
                        place=calls.place(error, calls.file_of(code), calls.defined_at(code)),
                        error=_shorten(calls.described(error)))
            if last:
                raise DesignError("err.design.failed_at", statement=repr(last), **said) from None
            raise DesignError("err.design.failed", **said) from None
        finally:
            running.printed.end()
        _never_ran(spec, party)
        party.calls.clear()
        return result

    def _stepped(self, spec, where, work, running: DesignCode, code: Callable):
        """``yield from work``, each step inside ``running`` and each thing it yields checked: a SimPy event goes
        on to the process; anything else (``yield h.sql(...)`` for ``yield from``, a value) is the design's
        error, at the line of its ``yield``, not SimPy's traceback."""
        sent = thrown = None
        while True:
            try:
                with running:
                    event = work.send(sent) if thrown is None else work.throw(thrown)
            except StopIteration as end:
                return end.value
            if isinstance(event, Call):  # ``yield`` of a call starts nothing: the call never ran
                raise _not_run(spec, event)
            if not isinstance(event, simpy.Event):
                raise DesignError("err.design.yielded", design=repr(spec.name), where=where,
                                  value=_shorten(repr(event)), t=self.env.now,
                                  place=calls.suspended_at(work, calls.file_of(code)) or calls.defined_at(code))
            sent = thrown = None
            try:
                sent = yield event
            except GeneratorExit:
                work.close()
                raise
            except BaseException as error:  # the event failed: the design's code gets the error, as yield from
                thrown = error

    def _gateway(self, request: Request, respond, answered: dict):
        yield self.env.timeout(self.config.gateway_timeout)
        if answered.get("done"):
            return
        answered["by_gateway"] = True
        response = Response(504, {"error": "gateway timeout"})
        self.trace.record(self.env.now, "gateway", "gateway.timeout", request.client,
                          request=request.id,
                          status=504, after=self.config.gateway_timeout)
        respond(response, "gateway")

    def _route(self, h: Handler):
        r = h.request
        if r.path == "/charges" and r.method == "POST":
            spec = self.design_spec
            if not spec.custom:
                return (yield from self.handle_charge(h))
            if spec.keyed and r.key is None:

                return (yield from missing_key(h))
            response = yield from self._custom(spec, h, self.handle_charge, h)
            self._check_answer(spec, r, response)
            return response
        return (yield from self._resource(h))

    def _check_answer(self, spec, r: Request, response: Any) -> None:
        """A user's design's answer is a `Response` with a whole-number status from 100 to 599 and a JSON body;
        anything else is the design's error, at the line where its handler starts (the line of its ``return``
        is gone once it returned)."""
        said = dict(design=repr(spec.name), request=r.id, t=self.env.now, place=calls.defined_at(self.handle_charge))
        if not isinstance(response, Response):
            raise DesignError("err.design.returned", value=_shorten(repr(response)), **said)
        status = response.status
        if type(status) is not int or not 100 <= status <= 599:
            raise DesignError("err.design.status", value=_shorten(repr(status)), **said)
        odd = calls.not_json(response.body)
        if odd is not None:
            raise DesignError("err.design.body", value=_shorten(odd), **said)

    # -- the article's other examples: a balance and items -----------------------------------------------
    def _resource(self, h: Handler):
        r = h.request
        yield from h.work(0.0)
        body = r.body or {}
        if r.path == "/balance":
            before = self.balance
            if r.method == "PUT":
                self.balance = body["value"]  # an integer: `idemsim.model.client.Operation` checked it
            elif r.method not in ("GET", "HEAD"):
                return Response(405, {"error": "method not allowed"})
            self._changed(h, "balance", before, self.balance)
            return Response(200, {"balance": self.balance} if r.method != "HEAD" else None)
        if r.path == "/balance/decrement" and r.method == "POST":
            before = self.balance
            self.balance -= body["amount"]  # an integer: `idemsim.model.client.Operation` checked it
            self._changed(h, "balance", before, self.balance)
            return Response(200, {"balance": self.balance})
        m = re.fullmatch(r"/items/([^/]+)", r.path)
        if m:
            item = m.group(1)
            before = self.items.get(item)
            if r.method == "PUT":
                self.items[item] = body
                self._changed(h, f"items/{item}", before, body)
                return Response(200 if before is not None else 201, body)
            if r.method == "DELETE":
                if before is None:
                    return Response(404, {"error": "not found"})
                del self.items[item]
                self._changed(h, f"items/{item}", before, None)
                return Response(204)
            if r.method in ("GET", "HEAD"):
                if before is None:
                    return Response(404, {"error": "not found"})
                return Response(200, before if r.method == "GET" else None)
            if r.method in ("OPTIONS", "TRACE"):
                return Response(204 if r.method == "OPTIONS" else 200,
                                {"allow": "GET, HEAD, PUT, DELETE, OPTIONS, TRACE"} if r.method == "OPTIONS"
                                else {"echo": r.describe()})
        return Response(404, {"error": f"no route for {r.method} {r.path}"})

    def _changed(self, h: Handler, resource: str, before: Any, after: Any) -> None:
        if before != after:
            self.trace.record(self.env.now, h.name, "state.change", None, resource=resource, before=before,
                              after=after)

    # -- crashes and background work -------------------------------------------------------------------
    def recovery_horizon(self) -> float | None:
        """Seconds a finished run should go on so that background recovery can act on what was abandoned,
        or None when nothing waits for it: with lease recovery, an ``in_progress`` record is older than the
        lease within a lease, and the recovery step finds it within half a lease more; with a completer, a claim
        has run out within a lease, and a whole round of the completer has begun within two periods more."""
        if not ("recovery" in self.daemons or "completer" in self.daemons) or not self.db.any_in_progress():
            return None
        if "recovery" in self.daemons:
            return self.config.lease * 1.5
        if "completer" in self.daemons:
            return recovery_lease(self.config) + 2 * completer_period(self.config)
        return None

    def open_keys(self) -> list[tuple[str, Any]]:
        """The committed key records left ``in_progress``, each as (key, recovery point), by key: what background
        recovery can still change. A round of recovery that leaves it as it was has changed nothing (a claim
        taken and given back is no change)."""
        return [(row["key"], row["recovery_point"]) for row in self.db.committed_keys()
                if row["status"] == "in_progress"]

    def left_open(self) -> list[Message]:
        """What is still open when the run ends, as messages of the catalogue: each key record left
        ``in_progress`` (by key; at its recovery point under a design with a completer; past `MAX_OPEN_KEYS`,
        one message counts the rest), then each processor lookup a background process sent whose answer has not
        come back, in the order sent (the run abandons it). Empty when nothing is open."""
        said: list[Message] = []
        if self.db.any_in_progress():
            keys = self.open_keys()
            with_point = self.design_spec.completer is not None
            for key, point in keys[:MAX_OPEN_KEYS]:
                said.append(Message("stuck.key_at", key=key, point=point) if with_point
                            else Message("stuck.key", key=key))
            if len(keys) > MAX_OPEN_KEYS:
                said.append(Message("stuck.more_keys", n=len(keys) - MAX_OPEN_KEYS))
        for call, sent in self.processor.background.items():
            said.append(Message("stuck.lookup", key=call.key, t=round(sent, 6)))
        return said

    def crash(self, name: str, point: str, restart_after: float) -> None:
        """The process dies now and no handler answers. Idle connections drop at this instant (PostgreSQL
        rolls back each open transaction and wakes whoever waited on it); a connection whose statement is
        blocked on a lock drops when the statement ends, as a blocked backend notices a closed socket only
        then."""
        self.generation += 1
        self.up = False
        self.trace.record(self.env.now, name, "api.crash", None, point=point, restart_after=restart_after)
        for handler in list(self.handlers.values()):
            if not handler.in_statement:
                self.drop(handler)
            else:
                handler.conn.done = handler._statement_done
        self.env.process(self._restart(restart_after))

    def drop(self, handler: Handler) -> None:
        """A dead handler's connection drops: its open transaction rolls back; it never answers."""
        self.handlers.pop(handler.name, None)
        handler.conn.done = None  # it is dead already: its last statement needs no check
        _now(handler.conn.execute("disconnect"))
        self.trace.record(self.env.now, handler.name, "api.died", None, request=handler.request.id)

    def _restart(self, after: float):
        self.in_flight += 1  # a pending restart is work in flight: the run waits for it
        yield self.env.timeout(after)
        self.up = True
        self.in_flight -= 1
        self.trace.record(self.env.now, "api", "api.restart", None)

    def _reaper(self):
        """Deletes expired key records, every ``reap_every`` seconds."""
        conn = self.db.connect("reaper")
        while True:
            yield self.env.timeout(self.config.reap_every)
            yield from conn.execute("delete_expired")

    def _completer(self):
        """Every period, run the design's completer on each key it calls abandoned (recovery-points: in
        progress, its claim older than the lease)."""
        spec = self.design_spec
        worker = (WatchedWorker if spec.custom else Worker)(self, "completer")
        every = completer_period(self.config)
        while True:
            yield self.env.timeout(every)
            for row in self.db.committed_keys():
                if spec.abandoned(row, self.env.now, self.config):
                    yield from self._custom(spec, worker, spec.completer, worker, row["key"]) \
                        if spec.custom else spec.completer(worker, row["key"])

    def _recovery(self):
        """Returns ``in_progress`` records older than the lease to absent."""
        conn = self.db.connect("recovery")
        lease = self.config.lease
        while True:
            yield self.env.timeout(lease / 2)
            for row in self.db.committed_keys():
                if row["status"] == "in_progress" and row["created_at"] < self.env.now - lease:
                    yield from conn.execute("delete_key", key=row["key"], status="in_progress",
                                            created_before=self.env.now - lease)


def _not_run(spec, call: Call) -> DesignError:
    """The error of a design that called ``call`` and never ran it (a forgotten ``yield from``)."""
    return DesignError("err.design.not_run", design=repr(spec.name), call=call.call, place=call.place,
                       what=Message(f"err.design.not_run.{call.kind}"))


def _never_ran(spec, party: WatchedHandler | WatchedWorker) -> None:
    """Raise `_not_run` for the first call ``party``'s design code made and never ran, if any."""
    call = party.calls.first_unrun()
    if call is not None:
        raise _not_run(spec, call) from None


def _now(statement):
    """Run a statement that never waits (``disconnect``) to its end, at this instant."""
    try:
        next(statement)
    except StopIteration as end:
        return end.value
    raise RuntimeError("a statement that was not expected to wait did wait")
