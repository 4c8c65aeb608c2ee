"""One run: a scenario under a design and a seed, from the first request to the last answer.

`simulate` builds the world (one SimPy environment, one `random.Random(seed)`, the fault plan, the network,
the database model, the API and one client process per operation), runs it to its end, and returns a `Run`:
the trace, the final tables, what was left open, and the summary that `idemsim.judge.summary` derives from them.
Nothing here reads the wall clock or the global RNG: the same inputs give the same trace.

A run ends when (1) every client has ended; (2) nothing a party waits for is in flight: no handler works, no
message travels between a client and the API, no call of a handler's to the processor or its answer, no restart
is pending (`settle`); and (3) background recovery has had its chance: while a key record is left
``in_progress`` and a lease recovery or a completer could act on it, the run goes on for a recovery window
(`idemsim.model.api.Api.recovery_horizon`: the lease has run out and a whole round of recovery has run), settles,
and ends when a window changed nothing (`idemsim.model.api.Api.open_keys` is as it was) or nothing is left for
recovery. A completer's lookups of the processor never hold a run: those still in flight at the end are
abandoned. Retention never holds a run either: the reaper deletes what expires while the run goes on, and a
record whose retention runs past the end stays. What is still open at the end (a key record left
``in_progress``, an unanswered lookup) is `Run.stuck`. A run that ends this way is not an error; a handler that
never answers is (`SETTLE_SECONDS`), and so is a run past its bounds.

Every run is bounded: its simulated clock never passes ``max_time`` (`MAX_SIMULATED_SECONDS` unless the
scenario was validated against another bound, ``--max-time``) and it processes at most `MAX_EVENTS` events plus
`EVENTS_PER_ATTEMPT` for each attempt its clients may make (a load of a thousand purchases needs more than one);
a run that would go further stops with an `InputError` naming the bound (`idemsim.kernel.loop.BoundedEnvironment`).
The scenario's validation has already refused any single time longer than the bound, so what stops here is a
combination (many long attempts, a long exponential tail) or a background process ticking through a long run.

The engine's tricks that keep a run fast (the bounded loop, the clients started when due, the schedule let go
at the end, the collector kept out of the way) are the kernel's (`idemsim.kernel`); this module uses SimPy as
SimPy is documented.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

import simpy

from ..base.errors import InputError, Message
from ..base.fields import EVENTS_PER_ATTEMPT, MAX_EVENTS, MAX_SIMULATED_SECONDS
from ..base.i18n import language
from ..judge.run_summary import Summary
from ..judge.summary import is_load, summarize
from ..judge.tally import Tally
from ..kernel import collector
from ..kernel.loop import BoundedEnvironment, let_go
from ..kernel.starts import Starts
from ..model.api import Api
from ..model.client import Client, OperationResult, TokenBucket, make_key
from ..model.db.engine import Database, DbEvent
from ..model.db.sql import sql_for
from ..model.designs import DESIGNS
from ..model.faults import FaultPlan
from ..model.network import Network
from ..model.processor import Processor
from ..model.trace import Trace, Untraced
from ..scenario.schema import Arrived, Scenario, shapes

FORMAT_VERSION = 1
__all__ = ["MAX_EVENTS", "MAX_SIMULATED_SECONDS", "BoundedEnvironment", "Run", "simulate"]
SETTLE_SECONDS = 86400.0
"""How long handlers, messages and restarts may go on after the last client has ended: a day of simulated time
(past it, the design never answers: an `InputError`)."""


@dataclass
class Run:
    """The result of one simulation."""

    scenario: Scenario
    design: str
    seed: int
    trace: Trace | None
    """Every event, in order; None for a run simulated without a trace (``simulate(..., trace=False)``)."""
    tables: dict[str, list[dict[str, Any]]]
    operations: list[OperationResult]
    state: dict[str, Any]
    """The API's in-memory state at the end: balance, items, log lines."""
    fired: list[int]
    ledger: list = field(default_factory=list)
    """The payment processor's captures (`idemsim.model.processor.Capture`), in capture order."""
    tally: Tally = field(default_factory=Tally)
    """What the checks read, gathered from the trace as it was recorded."""
    summary: Summary | None = None
    """What the run showed (`idemsim.judge.run_summary.Summary`); None only while `simulate` makes the run."""
    sim_events: int = 0
    """SimPy events the run processed (a measure of its work, for `idemsim.bench`)."""
    facts: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Facts the properties derive once per run and share (`idemsim.judge.properties`)."""
    ended: float = 0.0
    """The simulated time at which the run ended (see the module's docstring)."""
    stuck: list[Message] = field(default_factory=list)
    """What was still open when the run ended (`idemsim.model.api.Api.left_open`): messages of the catalogue, each
    said in English in the summary's ``stuck``; empty when nothing was left open."""

    @property
    def name(self) -> str:
        return self.scenario.name if not self.scenario.variant else f"{self.scenario.name}/{self.scenario.variant}"

    def figure(self, lang: str | None = None):
        """The run's matplotlib Figure: a time-space diagram (a load: its attempts per second)."""

        if is_load(self):
            from ..views.sweep_plot import attempts_figure  # (lazy: a view: loads matplotlib when drawn)

            return attempts_figure(self, language(lang))
        from ..views.figure import run_figure  # (lazy: a view: loads matplotlib when drawn)

        return run_figure(self, language(lang))

    def mermaid(self, lang: str | None = None, kind: str = "sequence") -> str:
        """The run as a Mermaid diagram: ``sequence`` (a sequence diagram) or ``state`` (the key record's)."""
        from ..views import mermaid  # (lazy: a view, loaded when drawn)

        draw = {"sequence": mermaid.sequence, "state": mermaid.state}[kind]
        return draw(self, language(lang))

    def _repr_html_(self) -> str:
        from ..views.html import run_html  # (lazy: a view: loads rich and matplotlib when drawn)

        return run_html(self, language())

    def trace_json(self) -> list[dict[str, Any]]:
        """The trace as JSON-ready data, each DB event with the SQL it stands for (`idemsim.model.db.sql.sql_for`)."""
        return [event_json(event) for event in self.trace]

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-ready data: its trace and its summary."""
        return {"scenario": self.scenario.name, "variant": self.scenario.variant, "design": self.design,
                "seed": self.seed, "trace": self.trace_json(), "summary": self.summary.to_dict()}


def event_json(event) -> dict[str, Any]:
    """One event as JSON-ready data; a DB event with the SQL it stands for, rendered now (the model never
    renders it)."""
    out = event.to_dict()
    if out["kind"] in ("db.wait", "db.result"):

        out["data"] = {**out["data"], "sql": sql_for(out["data"]["op"], out["data"]["fields"])}
    return out


def unique_constraint(scenario: Scenario, design: str) -> bool:
    """Whether the key table has a unique constraint: the scenario's ``api.unique``, else the design's own."""
    if scenario.api.unique is not None:
        return scenario.api.unique
    return DESIGNS[design].unique_key


def simulate(scenario: Scenario, design: str | None = None, seed: int | None = None, trace: bool = True, *,
             stream=None, max_time: float | None = None, max_events: int | None = None,
             quiet_collector: bool | None = None) -> Run:
    """Run ``scenario`` under ``design`` (default: the scenario's) with ``seed`` (default: the scenario's).

    With ``trace`` (the default) the run keeps every event in ``Run.trace``; without, it keeps only what the
    summary and the properties need (its `idemsim.judge.tally.Tally`), gathered as the run goes, and ``Run.trace`` is
    None: the summary, the properties and `idemsim.judge.measures.of_run` are the same either way. ``stream``, a
    callable, is given each `idemsim.model.trace.Event` as it is recorded, and the run then keeps none of them (a view
    that writes the trace as it is produced).

    ``max_time`` bounds the simulated time (default: the bound the scenario was validated against, else
    `MAX_SIMULATED_SECONDS`), ``max_events`` the events (default `MAX_EVENTS`, plus `EVENTS_PER_ATTEMPT` for
    each attempt the clients may make); a run that would pass either raises `InputError`.

    ``quiet_collector`` decides whether Python's cyclic collector is kept out of the run's way
    (`idemsim.kernel.collector`: it changes the whole process's collector while the run goes): by default only
    in a process idemsim owns (its command, its benchmark, a sweep's workers), never in a notebook or a program
    that imports idemsim, unless True."""
    spec = DESIGNS.get(design or scenario.design)
    model_only = stream is None and spec is not None and not spec.custom
    with collector.quiet(model_only=model_only, wanted=quiet_collector):
        return _simulate(scenario, design, seed, trace, stream, max_time, max_events)


def _simulate(scenario: Scenario, design: str | None, seed: int | None, trace: bool, stream,
              max_time: float | None, max_events: int | None) -> Run:
    design = design or scenario.design
    seed = scenario.seed if seed is None else seed
    if max_time is None:
        max_time = scenario._max_time if scenario._max_time is not None else MAX_SIMULATED_SECONDS
    source = scenario._source or Message("err.where.scenario", name=repr(scenario.name))
    env = BoundedEnvironment(max_time, MAX_EVENTS if max_events is None else max_events,
                             Message("err.where.design", source=source, design=design))
    tally = Tally()
    if stream is not None:
        recorder = Trace(observers=(tally.observe, stream), keep=False)
    elif trace:
        recorder = Trace(observers=(tally.observe,))
    else:
        recorder = Untraced(tally)
    trace = recorder
    rng = random.Random(seed)
    plan = FaultPlan(scenario.faults, rng, {"request": scenario.network.request,
                                           "response": scenario.network.response})
    network = Network(env, plan, trace)
    if isinstance(trace, Trace):
        db = Database(env, unique_key=unique_constraint(scenario, design), on_event=_db_recorder(trace))
    else:
        db = Database(env, unique_key=unique_constraint(scenario, design), on_event=_db_tally(tally),
                      on_result=tally.result)
    processor = Processor(env, scenario.processor, scenario.api.charge_seconds, plan, trace, scenario.api.charge)
    api = Api(env, db, processor, design, scenario.api, plan, trace)
    in_turn = range(0)
    """The indices into the clients of the operations that run one after another (sequential arrivals)."""
    if scenario.arrivals is not None:
        if scenario.arrivals.process == "sequential":
            in_turn = range(len(scenario.operations), len(scenario.operations) + scenario.arrivals.count)
        scenario = with_arrivals(scenario, rng)
    operations = scenario.operations
    per_operation = scenario.client.key_strategy == "per-operation"
    keys = [operation.key or make_key(rng) if per_operation else None for operation in shapes(operations)]
    budgets: dict[str, TokenBucket] = {}

    def budget(operation, policy) -> TokenBucket:
        return budgets.setdefault(operation.client, TokenBucket(policy))

    copies = [(dup.op, dup.at) for _, dup in plan.duplicates()]  # each names an operation: `Scenario` checked it
    attempts = 0
    for i, operation in enumerate(shapes(operations), start=1):  # random double clicks, from the run's RNG
        config = _config(scenario, operation)
        attempts += config.max_attempts
        if config.duplicate_rate and rng.random() < config.duplicate_rate:
            copies.append((i, operations[i - 1].at + config.duplicate_delay))
    written = len(keys)
    results: list = [None] * (written + len(copies))
    """Each client's `OperationResult`, in client order, put in when the client is made."""

    generated = len(operations.written) if isinstance(operations, Arrived) else written
    """The index of the first generated operation (`Arrived`): each is its template but for its ``at``."""

    def client(i: int) -> Client:
        """The client of index ``i``, made when it starts (a load's clients are not all held at once)."""
        if i < written:
            operation = operations[i] if i < generated else operations.template  # (not a copy per client)
            key, logical = keys[i], None
        else:
            logical, starts_at = copies[i - written]
            original = operations[logical - 1]
            operation = original.model_copy(update={"at": starts_at, "client": f"{original.client}-dup"})
            key = keys[logical - 1]
        config = _config(scenario, operation)
        made = Client(env, i + 1, operation, config, rng, network, api, trace, key=key, logical=logical,
                      budget=None if config.retry_budget is None else budget(operation, config.retry_budget),
                      at=at(i))
        results[i] = made.result
        return made

    if max_events is None:
        attempts += sum(_config(scenario, operations[op - 1]).max_attempts for op, _ in copies)
        env.max_events = MAX_EVENTS + EVENTS_PER_ATTEMPT * attempts

    def at(i: int) -> float:
        if i >= written:
            return copies[i - written][1]
        return operations.times[i - len(operations.written)] if isinstance(operations, Arrived) and \
            i >= len(operations.written) else operations[i].at

    ended, one_ended = _countdown(env, len(results) - len(in_turn) + (1 if in_turn else 0))
    starts = Starts(env, at, lambda i: client(i).run(), one_ended)
    starts.schedule([i for i in range(len(results)) if i not in in_turn])
    if in_turn:
        env.process(_one_after_another(env, client, in_turn)).callbacks.append(one_ended)
    env.run(until=ended)

    def settle() -> None:
        """Go on until nothing a party waits for is in flight (a background lookup is not waited for)."""
        deadline = env.now + SETTLE_SECONDS
        while api.in_flight or network.in_flight or processor.in_flight > len(processor.background):
            if env.peek() > deadline:
                working = [Message("err.run_handler", name=name, request=h.request.id)
                           for name, h in api.handlers.items()]
                raise InputError("err.run_settle", design=repr(design), working=working or Message("err.run_work"),
                                 seconds=SETTLE_SECONDS)
            env.step()

    settle()
    horizon = api.recovery_horizon()
    while horizon is not None:  # each window lets recovery act; one that changes nothing is the last
        before = api.open_keys()
        env.run(until=env.now + horizon + 1e-9)
        settle()
        horizon = api.recovery_horizon()
        if horizon is not None and api.open_keys() == before:
            break
    state = {"balance": api.balance, "items": dict(api.items), "log_lines": api.log_lines}
    end, stuck = env.now, api.left_open()
    fired, ledger, events = list(plan.fired), list(processor.ledger), env.events
    kept = trace if isinstance(trace, Trace) else None
    # The run is over: its pending timers, and with them the model (handlers, the API), are let go
    # before the tables and the summary are made, and the database once the tables are, so that the peak of
    # memory is not the model's and the summary's together.
    let_go(env, processor.timeouts, starts.waiting)
    env = api = processor = network = plan = recorder = trace = None  # (the closures above share these cells)
    tables = db.take_tables()
    del db
    run = Run(scenario, design, seed, kept, tables, results, state, fired, ledger, tally, sim_events=events,
              ended=end, stuck=stuck)
    run.summary = summarize(run)
    return run


def _countdown(env: simpy.Environment, count: int) -> tuple[simpy.Event, Callable[[Any], None]]:
    """An event, and the callback that triggers it at its ``count``-th call: given to each of ``count``
    processes as they start, it triggers when the last has ended, exactly when ``simpy.AllOf`` of them would,
    without holding the processes (each is let go when it ends)."""
    ended = env.event()
    left = count

    def one_ended(_event) -> None:
        nonlocal left
        left -= 1
        if left == 0:
            ended.succeed()

    return ended, one_ended


def _one_after_another(env: simpy.Environment, client: Callable[[int], Client], in_turn: range):
    """Sequential arrivals: each operation starts when the one before it has ended."""
    for i in in_turn:
        yield env.process(client(i).run())


def with_arrivals(scenario: Scenario, rng: random.Random) -> Scenario:
    """The scenario with its ``[arrivals]`` written out as operations (`idemsim.scenario.schema.Arrived`), numbered
    after the written ones; a poisson process draws its gaps from ``rng`` before anything else does."""
    arrivals = scenario.arrivals
    operations = Arrived(list(scenario.operations), arrivals.operation, arrivals.times(rng))
    return scenario.model_copy(update={"operations": operations, "arrivals": None})


def _config(scenario: Scenario, operation):
    return operation.retry or scenario.client


def _db_recorder(trace: Trace):
    """Turns the DB model's events into trace events; the reaper's empty sweeps are left out."""

    def record(event: DbEvent) -> None:
        if event.kind == "wait":
            trace.record(event.t, event.conn, "db.wait", "db", op=event.op, fields=event.fields,
                         blocked_by=event.blocked_by)
            return
        r = event.result
        if event.conn in ("reaper", "recovery") and not r.rows and not r.error:
            return
        trace.record(event.t, event.conn, "db.result", "db", op=event.op, fields=event.fields, rows=r.rows,
                     row=r.row, error=r.error, id=r.id, waited=round(r.waited, 6), blocked_by=list(r.blocked_by))

    return record


def _db_tally(tally: Tally):
    """Without a trace: the DB model's waits go to the tally directly."""
    take_wait = tally.takes()["db.wait"]

    def record(event: DbEvent) -> None:
        if event.kind == "wait":
            take_wait(event.t, event.conn, None)

    return record
