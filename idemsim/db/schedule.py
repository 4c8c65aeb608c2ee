"""DB schedules (spec: db-schedule.md, version 1): the format, loading, `--scale`, and running on the model.

Guarantees: a schedule that loads is valid by the spec (every other file raises `InputError` with one line naming
the file, the session, the step — counted from 1 — and the field, and what is allowed); `run_on_model` returns
exactly the spec's result document; the same schedule and scale always give the same document.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args

import simpy
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from idemsim.db.engine import OPS, Connection, Database, DbEvent, Result, arrival_order
from idemsim.errors import InputError
from idemsim.paths import scenarios_dir

Seconds = Annotated[float, Field(ge=0)]
"""A time in seconds, 0 or more."""


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    at: Seconds | None = None
    """Earliest start, seconds after the common start."""


class Begin(_Step):
    op: Literal["begin"]
    isolation: Literal["read committed", "repeatable read", "serializable"] = "read committed"


class Commit(_Step):
    op: Literal["commit"]


class Rollback(_Step):
    op: Literal["rollback"]


class RegisterKey(_Step):
    op: Literal["register_key"]
    key: str
    fingerprint: str
    ttl: Annotated[float, Field(gt=0)] | None = None
    """idemsim extension: retention, seconds (default 86400)."""


class InsertKey(_Step):
    op: Literal["insert_key"]
    key: str
    fingerprint: str
    ttl: Annotated[float, Field(gt=0)] | None = None


class SelectKey(_Step):
    op: Literal["select_key"]
    key: str


class CompleteKey(_Step):
    op: Literal["complete_key"]
    key: str
    response: dict[str, Any]
    status: str | None = None
    """idemsim extension: the new status (default "done")."""


class DeleteKey(_Step):
    op: Literal["delete_key"]
    key: str
    status: str | None = None
    """idemsim extension: delete only a row in this status."""
    created_before: Seconds | None = None
    """idemsim extension: delete only a row created strictly before this time."""


class DeleteExpired(_Step):
    op: Literal["delete_expired"]


class InsertCharge(_Step):
    op: Literal["insert_charge"]
    amount: int
    key: str | None = None


class CountCharges(_Step):
    op: Literal["count_charges"]


class LockKey(_Step):
    op: Literal["lock_key"]
    key: str


class ClaimKey(_Step):
    op: Literal["claim_key"]
    key: str
    lease: Seconds
    """Seconds a claim stays fresh; `--scale` multiplies it."""


class SetPoint(_Step):
    op: Literal["set_point"]
    key: str
    point: str
    release: bool = False
    """Also give the lease up (`locked_at = NULL`)."""


class LockTimeout(_Step):
    op: Literal["lock_timeout"]
    seconds: Seconds


class Sleep(_Step):
    op: Literal["sleep"]
    seconds: Seconds


class Disconnect(_Step):
    op: Literal["disconnect"]


Step = Annotated[
    Union[Begin, Commit, Rollback, RegisterKey, InsertKey, SelectKey, CompleteKey, DeleteKey, DeleteExpired,
          InsertCharge, CountCharges, LockKey, ClaimKey, SetPoint, LockTimeout, Sleep, Disconnect],
    Field(discriminator="op"),
]
STEP_TYPES: dict[str, type[_Step]] = {
    get_args(model.model_fields["op"].annotation)[0]: model for model in get_args(get_args(Step)[0])}
"""op name -> step model, in the order of `Step`."""
RECOVERY_OPS = ("lock_key", "claim_key", "set_point")
"""Ops the spec defines for `unique_key: true` only (the recovery-points design)."""


class Schedule(BaseModel):
    """A whole schedule file."""

    model_config = ConfigDict(extra="forbid", strict=True)
    version: Literal[1]
    description: str | None = None
    """One line for `idemsim db list`."""
    unique_key: bool = True
    sessions: dict[str, list[Step]]

    @model_validator(mode="after")
    def _nothing_after_disconnect(self) -> Schedule:
        for name, steps in self.sessions.items():
            for index, step in enumerate(steps[:-1]):
                if step.op == "disconnect":
                    raise _ScheduleRule(name, index + 2, "a step after 'disconnect'; "
                                                         "disconnect must be the session's last step")
        return self

    @model_validator(mode="after")
    def _recovery_ops_need_the_constraint(self) -> Schedule:
        if not self.unique_key:
            for name, steps in self.sessions.items():
                for index, step in enumerate(steps):
                    if step.op in RECOVERY_OPS:
                        raise _ScheduleRule(name, index + 1, f"{step.op} needs unique_key: true "
                                                             f"({', '.join(RECOVERY_OPS)} are defined only with "
                                                             "the UNIQUE constraint)")
        return self


class _ScheduleRule(ValueError):
    """A rule about a whole schedule that one step breaks."""

    def __init__(self, session: str, step: int, problem: str):
        super().__init__(f"session {session!r}, step {step} (1-based): {problem}")


# -- loading ----------------------------------------------------------------------------------------------------


def shipped_dir() -> Path:
    """Where the shipped schedules are: inside the installed package, or `scenarios/db` of a source checkout."""
    return scenarios_dir() / "db"


def shipped() -> dict[str, Path]:
    """Shipped schedules by name (file name without `.json`), sorted."""
    directory = shipped_dir()
    return {p.stem: p for p in sorted(directory.glob("*.json"))} if directory.is_dir() else {}


def resolve(name_or_path: str) -> Path:
    """A schedule file: an existing path, or the name of a shipped schedule (with or without `.json`)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    found = shipped().get(path.name.removesuffix(".json"))
    if found is not None and path.parent == Path("."):
        return found
    raise InputError(f"{name_or_path}: no such file, and no shipped schedule of that name "
                     "(`idemsim db list` shows them)")


def load(name_or_path: str | Path) -> Schedule:
    """Load and validate a schedule file; any problem raises a one-line `InputError`."""
    path = resolve(str(name_or_path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON: {error}") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from None
    return parse(data, source=str(path))


def parse(data: Any, source: str = "<schedule>") -> Schedule:
    """Validate already-decoded JSON; `source` names it in error messages."""
    try:
        return Schedule.model_validate(data)
    except ValidationError as error:
        raise InputError(f"{source}: {_describe(error)}") from None


def _describe(error: ValidationError) -> str:
    """One line for the first problem pydantic found."""
    err = error.errors()[0]
    loc, kind, ctx, got = err["loc"], err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "value_error" and isinstance(ctx.get("error"), _ScheduleRule):
        return str(ctx["error"])
    where: list[str] = []
    op: str | None = None
    name: str | None = None
    if loc and loc[0] == "sessions" and len(loc) >= 2:
        where.append(f"session {loc[1]!r}")
        if len(loc) >= 3:
            where.append(f"step {int(loc[2]) + 1} (1-based)")
        if len(loc) >= 4:
            op = str(loc[3])
        if len(loc) >= 5:
            name = str(loc[4])
        elif len(loc) == 2:
            name = None
    elif loc:
        name = str(loc[0])
    prefix = ", ".join(where)
    if name is not None:
        prefix = (prefix + ", " if prefix else "") + f"field {name!r}"
    return f"{prefix}: {_explain(kind, op, name, ctx, got, loc)}" if prefix else _explain(kind, op, name, ctx, got, loc)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return repr(value)


def _fields_of(op: str) -> str:
    required, optional = OPS.get(op, ((), ()))
    if op == "sleep":
        required = ("seconds",)
    allowed = list(required) + [f"{o} (optional)" for o in optional] + ["at (optional)"]
    return ", ".join(allowed)


def _explain(kind: str, op: str | None, name: str | None, ctx: dict, got: Any, loc: tuple) -> str:
    ops = ", ".join(STEP_TYPES)
    if kind == "union_tag_invalid":
        return f"unknown op {ctx.get('tag')!r}; allowed ops: {ops}"
    if kind == "union_tag_not_found":
        return f"a step needs an \"op\"; allowed ops: {ops}"
    if kind == "missing":
        return f"missing; {op} takes {_fields_of(op)}" if op else "missing"
    if kind == "extra_forbidden":
        if op:
            return f"not allowed; {op} takes {_fields_of(op)}"
        return "not allowed; a schedule has version, description, unique_key, sessions"
    if kind == "literal_error":
        return f"{_json(got)} is not allowed; allowed: {ctx.get('expected')}"
    if kind in ("greater_than_equal", "greater_than"):
        bound = ">= 0" if kind == "greater_than_equal" else "> 0"
        return f"{_json(got)} is negative or zero; must be {bound} seconds" if kind == "greater_than" else \
            f"{_json(got)} is negative; must be {bound} seconds"
    if kind == "list_type" and len(loc) == 2:
        return f"a session must be a list of steps, got {type(got).__name__}"
    if kind == "dict_type" and loc == ("sessions",):
        return f"must be an object of sessions (name -> list of steps), got {type(got).__name__}"
    if kind in ("model_type", "model_attributes_type", "dict_type") and len(loc) == 3:
        return f"a step must be an object with an \"op\", got {type(got).__name__}"
    if kind == "model_type" and not loc:
        return f"a schedule must be a JSON object, got {type(got).__name__}"
    expected = {"string_type": "a string", "int_type": "an integer", "float_type": "a number",
                "bool_type": "true or false", "dict_type": "a JSON object"}.get(kind)
    if expected:
        return f"{_json(got)} is not allowed; must be {expected}"
    return f"{_json(got)}: {kind}"


# -- scale ------------------------------------------------------------------------------------------------------

_TIME_FIELDS = ("at", "seconds", "ttl", "created_before", "lease")
"""Every time in a step; `--scale` multiplies them all (deadlock_timeout stays 1 s)."""


def scaled(schedule: Schedule, factor: float) -> Schedule:
    """The schedule with every time multiplied by `factor`."""
    if factor <= 0:
        raise InputError(f"--scale {factor}: must be > 0")
    if factor == 1:
        return schedule
    sessions = {
        name: [step.model_copy(update={f: round(getattr(step, f) * factor, 9) for f in _TIME_FIELDS
                                       if getattr(step, f, None) is not None}) for step in steps]
        for name, steps in schedule.sessions.items()
    }
    return schedule.model_copy(update={"sessions": sessions})


def statement_fields(step: _Step) -> dict[str, Any]:
    """The fields `Connection.execute` takes for a step (no `op`, no `at`, no unset optional fields)."""
    return step.model_dump(exclude={"op", "at"}, exclude_none=True)


# -- running on the model ------------------------------------------------------------------------------------------

DEADLOCK_TIMEOUT = 1.0
"""PostgreSQL's default `deadlock_timeout`, seconds; never scaled."""


@dataclass(frozen=True)
class StepNote:
    """What a run knows about a step beyond the result document (shown in the text view, never compared)."""

    id: int | None = None
    """The sequence value an insert used."""
    blocked_by: tuple[str, ...] = ()
    """The sessions it waited for (the model knows; a PostgreSQL run leaves it empty)."""


@dataclass
class ModelRun:
    """A schedule run on the model: the spec's result document and what the model knows beyond it."""

    document: dict
    """Exactly the spec's result document."""
    results: dict[str, list[Result | None]]
    """Per session, per step: the statement's `Result` (None for `sleep`)."""
    ids: dict[str, list[int]] = field(default_factory=dict)
    """Per table, the `id` of each row of `document["tables"]`, in the same order."""
    events: list[DbEvent] = field(default_factory=list)
    """Every trace event, in time order."""

    def notes(self) -> dict[str, list[StepNote | None]]:
        """Per session, per step: the id it used and whom it waited for."""
        return {name: [StepNote(r.id, r.blocked_by) if r is not None else None for r in results]
                for name, results in self.results.items()}


def entry(op: str, start: float, end: float, rows: int | None, row: dict | None, error: str | None) -> dict:
    """One result entry; a failed step has `rows` and `row` null."""
    if error is not None:
        rows = row = None
    return {"op": op, "start": start, "end": end, "rows": rows, "row": row, "error": error}


def run_on_model(schedule: Schedule, scale: float = 1.0, wake_order=arrival_order) -> ModelRun:
    """Run `schedule` (times multiplied by `scale`) on a fresh model database."""
    schedule = scaled(schedule, scale)
    env = simpy.Environment()
    events: list[DbEvent] = []
    db = Database(env, unique_key=schedule.unique_key, deadlock_timeout=DEADLOCK_TIMEOUT,
                  on_event=events.append, wake_order=wake_order)
    entries: dict[str, list[dict]] = {name: [] for name in schedule.sessions}
    results: dict[str, list[Result | None]] = {name: [] for name in schedule.sessions}

    def session(name: str, conn: Connection, steps: list[_Step]):
        for step in steps:
            # Always yield, if only for 0 s: sessions ready at the same instant take turns step by step, as
            # concurrent PostgreSQL sessions interleave their statements (not one session's whole burst first).
            yield env.timeout(max(0.0, (step.at or 0.0) - env.now))
            start = env.now
            if isinstance(step, Sleep):
                yield env.timeout(step.seconds)
                result = None
                entries[name].append(entry("sleep", _t(start), _t(env.now), None, None, None))
            else:
                result = yield from conn.execute(step.op, **statement_fields(step))
                entries[name].append(entry(step.op, _t(start), _t(env.now), result.rows, result.row, result.error))
            results[name].append(result)
        if not conn.closed:  # a session ends as a disconnect: an open transaction rolls back
            yield from conn.execute("disconnect")

    for name, steps in schedule.sessions.items():
        env.process(session(name, db.connect(name), steps))
    env.run()
    document = {"version": 1, "sessions": entries, "tables": db.tables()}
    ids = {"idempotency_keys": [r["id"] for r in db.committed_keys()],
           "charges": [r["id"] for r in db.committed_charges()]}
    return ModelRun(document, results, ids, events)


def _t(seconds: float) -> float:
    return round(seconds, 6)
