"""DB schedules (spec: db-schedule.md, version 1): the format, loading, `--scale`, and running on the model.

Guarantees: a schedule that loads is valid by the spec (every other file raises `InputError` with one line naming
the file, the session, the step — counted from 1 — and the field, and what is allowed): a file is UTF-8 (with or
without a byte order mark) JSON, nested at most `MAX_NESTING` deep, its numbers finite, its strings valid
Unicode, every time at most `MAX_SECONDS` — also once `--scale` has multiplied it; `run_on_model` returns
exactly the spec's result document; the same schedule and scale always give the same document.
"""

from __future__ import annotations

import codecs
import json
import math
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args

import simpy
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

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
    _source: str = PrivateAttr("<schedule>")
    """The file (or other origin) the schedule came from, for messages about it."""

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


MAX_NESTING = 100
"""How deep a schedule file may nest objects and lists (a response included); deeper is refused."""
MAX_SECONDS = 1e7
"""The longest time a schedule may give (about 116 days), before and after `--scale`."""


def resolve(name_or_path: str) -> Path:
    """A schedule file: an existing path, or the name of a shipped schedule (with or without `.json`)."""
    path = Path(name_or_path)
    kind = _file_kind(path)
    if kind == "a file":
        return path
    found = shipped().get(path.name.removesuffix(".json"))
    if found is not None and path.parent == Path("."):
        return found
    if kind is not None:
        raise InputError(f"{name_or_path}: is {kind}, not a schedule file")
    raise InputError(f"{name_or_path}: no such file, and no shipped schedule of that name "
                     "(`idemsim db list` shows them)")


def _file_kind(path: Path) -> str | None:
    """What `path` is ("a file", "a directory", "a FIFO (named pipe)", …), or None if there is nothing there."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    for test, kind in ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "a special file"


def load(name_or_path: str | Path) -> Schedule:
    """Load and validate a schedule file; any problem raises a one-line `InputError`."""
    path = resolve(str(name_or_path))
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from None
    text = _decode(path, raw)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON: {error}") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to read; a schedule nests at most {MAX_NESTING} levels") from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise InputError(f"{path}: a number has too many digits to read") from None
    return parse(data, source=str(path))


def _decode(path: Path, raw: bytes) -> str:
    """The text of a UTF-8 file, a byte order mark removed; any other encoding is refused."""
    for bom, encoding in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                          (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if raw.startswith(bom):
            raise InputError(f"{path}: is {encoding} (it starts with a {encoding} byte order mark); "
                             "a schedule file must be UTF-8")
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        text = raw[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = skip + error.start
        raise InputError(f"{path}: not UTF-8 (byte 0x{raw[offset]:02x} at offset {offset}); "
                         "a schedule file must be UTF-8") from None
    if "\x00" in text:
        raise InputError(f"{path}: contains NUL bytes (UTF-16 or UTF-32 without a byte order mark?); "
                         "a schedule file must be UTF-8")
    return text


def parse(data: Any, source: str = "<schedule>") -> Schedule:
    """Validate already-decoded JSON; `source` names it in error messages."""
    _check_values(data, source)
    try:
        schedule = Schedule.model_validate(data)
    except ValidationError as error:
        raise InputError(f"{source}: {_describe(error)}") from None
    schedule._source = source
    _check_times(schedule, 1.0)
    return schedule


def _check_values(data: Any, source: str) -> None:
    """Refuse what JSON decoding lets through but no statement can carry: nesting deeper than `MAX_NESTING`,
    NaN and infinite numbers, strings that are not valid Unicode (lone surrogates). Walked without recursion,
    in document order, so the first problem is reported."""
    pending: list[tuple[Any, tuple, int]] = [(data, (), 0)]
    while pending:
        value, path, depth = pending.pop()
        problem = None
        if isinstance(value, (dict, list)):
            if depth >= MAX_NESTING:
                problem = f"nested more than {MAX_NESTING} levels deep; a schedule nests at most {MAX_NESTING}"
            else:
                items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
                for name, item in reversed(items):
                    pending.append((item, path + (name,), depth + 1))
                    if isinstance(name, str) and not _unicode(name):
                        pending.append((name, path, depth + 1))
        elif isinstance(value, float) and not math.isfinite(value):
            problem = f"{_json(value)} is not allowed; numbers must be finite"
        elif isinstance(value, str) and not _unicode(value):
            problem = f"{value.encode('utf-8', 'backslashreplace').decode()!r} is not valid Unicode (a lone " \
                      "surrogate); strings must be valid Unicode"
        if problem is not None:
            raise InputError(f"{source}: {_place(path)}{problem}")


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _place(path: tuple) -> str:
    """Where a value sits in a decoded schedule: "session 's1', step 2 (1-based), field 'key': " ('' for the
    whole); a value inside a field (in a response) is named by its path from the field."""
    where: list[str] = []
    if len(path) >= 2 and path[0] == "sessions":
        where.append(f"session {path[1]!r}")
        if len(path) >= 3 and isinstance(path[2], int):
            where.append(f"step {path[2] + 1} (1-based)")
            if len(path) >= 4:
                where.append(f"field {path[3]!r}")
                if len(path) >= 5:
                    inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[4:]).lstrip(".")
                    where.append("at " + (inner if len(inner) <= 40 else inner[:39] + "…"))
    elif path:
        where.append(f"field {path[0]!r}")
    return ", ".join(where) + ": " if where else ""


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
    """`value` as JSON, cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        try:
            text = repr(value)
        except ValueError:  # an integer longer than Python prints
            text = "a number of too many digits"
    return text if len(text) <= 40 else text[:39] + "…"


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
    if kind == "float_type" and isinstance(got, int):
        return f"{_json(got)} is too large; must be a finite number"
    expected = {"string_type": "a string", "int_type": "an integer", "float_type": "a number",
                "bool_type": "true or false", "dict_type": "a JSON object"}.get(kind)
    if expected:
        return f"{_json(got)} is not allowed; must be {expected}"
    return f"{_json(got)}: {kind}"


# -- scale ------------------------------------------------------------------------------------------------------

_TIME_FIELDS = ("at", "seconds", "ttl", "created_before", "lease")
"""Every time in a step; `--scale` multiplies them all (deadlock_timeout stays 1 s)."""


def scaled(schedule: Schedule, factor: float) -> Schedule:
    """The schedule with every time multiplied by `factor`; a factor that is not finite and > 0, or a time that
    would exceed `MAX_SECONDS`, raises a one-line `InputError`."""
    if not (math.isfinite(factor) and factor > 0):
        raise InputError(f"--scale {factor:g}: must be > 0 and finite")
    _check_times(schedule, factor)
    if factor == 1:
        return schedule
    sessions = {
        name: [step.model_copy(update={f: round(getattr(step, f) * factor, 9) for f in _TIME_FIELDS
                                       if getattr(step, f, None) is not None}) for step in steps]
        for name, steps in schedule.sessions.items()
    }
    return schedule.model_copy(update={"sessions": sessions})


def _check_times(schedule: Schedule, factor: float) -> None:
    """Refuse a time that, multiplied by `factor`, exceeds `MAX_SECONDS`."""
    for name, steps in schedule.sessions.items():
        for index, step in enumerate(steps):
            for time_field in _TIME_FIELDS:
                value = getattr(step, time_field, None)
                if value is None or value * factor <= MAX_SECONDS:
                    continue
                given = f"{value:g} s" if factor == 1 else f"{value:g} s × --scale {factor:g} = {value * factor:g} s"
                raise InputError(f"{schedule._source}: session {name!r}, step {index + 1} (1-based), field "
                                 f"{time_field!r}: {given} is too long; times must be at most 1e+07 s "
                                 "(about 116 days)")


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
