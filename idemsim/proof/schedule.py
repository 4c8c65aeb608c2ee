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

from ..base.errors import InputError, Message, choices, os_reason
from ..base.fields import is_unicode
from ..base.paths import scenarios_dir
from ..base.readers import json_reason, kind_said
from ..model.db.engine import OPS, Connection, Database, DbEvent, Result, arrival_order

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
                    raise _ScheduleRule(name, index + 2, Message("err.db.after_disconnect"))
        return self

    @model_validator(mode="after")
    def _recovery_ops_need_the_constraint(self) -> Schedule:
        if not self.unique_key:
            for name, steps in self.sessions.items():
                for index, step in enumerate(steps):
                    if step.op in RECOVERY_OPS:
                        raise _ScheduleRule(name, index + 1, Message("err.db.needs_unique", op=step.op,
                                                                     ops=", ".join(RECOVERY_OPS)))
        return self


class _ScheduleRule(ValueError):
    """A rule about a whole schedule that one step breaks."""

    def __init__(self, session: str, step: int, problem: Message):
        self.place = Message("err.db.place.step", session=repr(session), step=step)
        self.problem = problem
        super().__init__(f"{self.place}{problem}")


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
        raise InputError("err.is_not", file=name_or_path, kind=kind_said(kind), what=SCHEDULE_FILE)
    raise InputError("err.db.no_schedule", name=name_or_path)


SCHEDULE_FILE = Message("err.what.schedule")
"""What a schedule file is called in messages ("a schedule file")."""


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
        raise InputError("err.cannot_read", file=str(path), reason=os_reason(error)) from None
    text = _decode(path, raw)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError("err.db.not_json", file=str(path), reason=json_reason(error)) from None
    except RecursionError:
        raise InputError("err.db.too_deep", file=str(path), n=MAX_NESTING) from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise InputError("err.db.too_many_digits", file=str(path)) from None
    return parse(data, source=str(path))


def _decode(path: Path, raw: bytes) -> str:
    """The text of a UTF-8 file, a byte order mark removed; any other encoding is refused."""
    for bom, encoding in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                          (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if raw.startswith(bom):
            raise InputError("err.bom", file=str(path), encoding=encoding, what=SCHEDULE_FILE)
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        text = raw[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = skip + error.start
        raise InputError("err.not_utf8", file=str(path), byte=raw[offset], offset=offset,
                         what=SCHEDULE_FILE) from None
    if "\x00" in text:
        raise InputError("err.db.nul", file=str(path))
    return text


def parse(data: Any, source: str = "<schedule>") -> Schedule:
    """Validate already-decoded JSON; `source` names it in error messages."""
    _check_values(data, source)
    try:
        schedule = Schedule.model_validate(data)
    except ValidationError as error:
        place, problem = _describe(error)
        raise InputError("err.db.at", file=source, place=place, problem=problem) from None
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
                problem = Message("err.db.nested", n=MAX_NESTING)
            else:
                items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
                for name, item in reversed(items):
                    pending.append((item, path + (name,), depth + 1))
                    if isinstance(name, str) and not is_unicode(name):
                        pending.append((name, path, depth + 1))
        elif isinstance(value, float) and not math.isfinite(value):
            problem = Message("err.db.not_finite", value=_json(value))
        elif isinstance(value, str) and not is_unicode(value):
            problem = Message("err.db.not_unicode", value=repr(value.encode("utf-8", "backslashreplace").decode()))
        if problem is not None:
            raise InputError("err.db.at", file=source, place=_place(path), problem=problem)


def _place(path: tuple) -> Message | str:
    """Where a value sits in a decoded schedule: "session 's1', step 2 (1-based), field 'key': " ('' for the
    whole); a value inside a field (in a response) is named by its path from the field."""
    if len(path) >= 2 and path[0] == "sessions":
        session = repr(path[1])
        if len(path) >= 3 and isinstance(path[2], int):
            step = path[2] + 1
            if len(path) >= 5:
                inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[4:]).lstrip(".")
                return Message("err.db.place.inner", session=session, step=step, field=repr(path[3]),
                               at=inner if len(inner) <= 40 else inner[:39] + "…")
            if len(path) >= 4:
                return Message("err.db.place.field", session=session, step=step, field=repr(path[3]))
            return Message("err.db.place.step", session=session, step=step)
        return Message("err.db.place.session", session=session)
    if path:
        return Message("err.db.place.top", field=repr(path[0]))
    return ""


def _describe(error: ValidationError) -> tuple[Message | str, Message]:
    """Where the first problem pydantic found is, and what it is."""
    err = error.errors()[0]
    loc, kind, ctx, got = err["loc"], err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "value_error" and isinstance(ctx.get("error"), _ScheduleRule):
        return ctx["error"].place, ctx["error"].problem
    op: str | None = None
    name: str | None = None
    place: Message | str = ""
    if loc and loc[0] == "sessions" and len(loc) >= 2:
        if len(loc) >= 4:
            op = str(loc[3])
        if len(loc) >= 5:
            name = str(loc[4])
        if len(loc) < 3:
            place = Message("err.db.place.session", session=repr(loc[1]))
        elif name is None:
            place = Message("err.db.place.step", session=repr(loc[1]), step=int(loc[2]) + 1)
        else:
            place = Message("err.db.place.field", session=repr(loc[1]), step=int(loc[2]) + 1, field=repr(name))
    elif loc:
        name = str(loc[0])
        place = Message("err.db.place.top", field=repr(name))
    return place, _explain(kind, op, name, ctx, got, loc)


def _json(value: Any) -> str | Message:
    """`value` as JSON, cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        try:
            text = repr(value)
        except ValueError:  # an integer longer than Python prints
            return Message("err.db.many_digits")
    return text if len(text) <= 40 else text[:39] + "…"


def _fields_of(op: str) -> list[str | Message]:
    required, optional = OPS.get(op, ((), ()))
    if op == "sleep":
        required = ("seconds",)
    return list(required) + [Message("err.db.optional", name=o) for o in (*optional, "at")]


_EXPECTED = {"string_type": "err.db.a_string", "int_type": "err.db.an_integer", "float_type": "err.db.a_number",
             "bool_type": "err.db.a_boolean", "dict_type": "err.db.an_object"}
"""What a value of the wrong type must be instead, by pydantic's problem."""


def _explain(kind: str, op: str | None, name: str | None, ctx: dict, got: Any, loc: tuple) -> Message:
    ops = ", ".join(STEP_TYPES)
    if kind == "union_tag_invalid":
        return Message("err.db.unknown_op", op=repr(ctx.get("tag")), ops=ops)
    if kind == "union_tag_not_found":
        return Message("err.db.no_op", ops=ops)
    if kind == "missing":
        return Message("err.db.missing_takes", op=op, fields=_fields_of(op)) if op else Message("err.db.missing")
    if kind == "extra_forbidden":
        if op:
            return Message("err.db.not_allowed_takes", op=op, fields=_fields_of(op))
        return Message("err.db.not_allowed_top")
    if kind == "literal_error":
        return Message("err.db.literal", value=_json(got), expected=choices(str(ctx.get("expected"))))
    if kind in ("greater_than_equal", "greater_than"):
        return Message("err.db.not_positive" if kind == "greater_than" else "err.db.negative", value=_json(got))
    if kind == "list_type" and len(loc) == 2:
        return Message("err.db.session_list", type=type(got).__name__)
    if kind == "dict_type" and loc == ("sessions",):
        return Message("err.db.sessions_object", type=type(got).__name__)
    if kind in ("model_type", "model_attributes_type", "dict_type") and len(loc) == 3:
        return Message("err.db.step_object", type=type(got).__name__)
    if kind == "model_type" and not loc:
        return Message("err.db.schedule_object", type=type(got).__name__)
    if kind == "float_type" and isinstance(got, int):
        return Message("err.db.too_large", value=_json(got))
    if kind in _EXPECTED:
        return Message("err.db.must_be", value=_json(got), expected=Message(_EXPECTED[kind]))
    return Message("err.db.other", value=_json(got), kind=kind)

# -- scale ------------------------------------------------------------------------------------------------------

_TIME_FIELDS = ("at", "seconds", "ttl", "created_before", "lease")
"""Every time in a step; `--scale` multiplies them all (deadlock_timeout stays 1 s)."""


def scaled(schedule: Schedule, factor: float) -> Schedule:
    """The schedule with every time multiplied by `factor`; a factor that is not finite and > 0, or a time that
    would exceed `MAX_SECONDS`, raises a one-line `InputError`."""
    if not (math.isfinite(factor) and factor > 0):
        raise InputError("err.db.scale", factor=factor)
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
                given = Message("err.db.seconds", value=value) if factor == 1 else \
                    Message("err.db.seconds_scaled", value=value, factor=factor, product=value * factor)
                raise InputError("err.db.at", file=schedule._source, problem=Message("err.db.too_long", given=given),
                                 place=Message("err.db.place.field", session=repr(name), step=index + 1,
                                               field=repr(time_field)))


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
