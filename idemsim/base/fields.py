"""The validation layer's vocabulary: one strict base model, the value types of the input's fields, and the
bounds every run keeps.

Every model a scenario file (or ``--set``) is validated into derives from `InputModel`, and its fields use
the types below; so a file either loads completely or is refused with one line, before anything runs.

Guarantees:

- types are strict: a string is never read as a number (``max_attempts = "3"``), a number never as a
  boolean (``unique = 0``) nor a boolean as a number (``timeout = true``); an integer is accepted where a
  number is meant (``timeout = 2``) and becomes a float;
- every number is finite (no NaN, no infinity: TOML's ``inf``, ``nan`` and ``1e400`` are refused);
- every time (`Seconds`, `PositiveSeconds`, `Period`) is at most the bound on a run's simulated time,
  `MAX_SIMULATED_SECONDS` or the ``max_time`` given in the validation context (``--max-time``); a period of
  background work is at least `MIN_PERIOD`;
- an amount of money (`Amount`) is an integer within PostgreSQL's ``int`` column, every other integer within
  TOML's 64-bit range, an attempt count at most `MAX_ATTEMPTS`;
- a value sent as JSON (`JsonObject`: a body, the items) holds only what JSON carries exactly, nested at most
  `MAX_NESTING` deep;
- every problem is said in the reader's language: the problems idemsim raises itself (`invalid`) take their
  words from the catalogue (``pyd.<kind>``), and every problem pydantic reports is said as a `Problem`.
"""

from __future__ import annotations

import datetime
import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError

from .errors import Message, choices
from .i18n import MESSAGES, text
from .printable import shown

MAX_SIMULATED_SECONDS = 10_000_000.0
"""The default bound on a run's simulated time (about 116 days); ``--max-time`` raises it."""
MAX_EVENTS = 250_000
"""The bound on the simulation events of one run, before `EVENTS_PER_ATTEMPT`: the longest built-in story takes
156, and 10,000 attempts of one operation all lost about 50,000. An event costs about 12 µs (a reaper's sweep),
so a story that reaches the bound stops after about 3 s instead of hanging (10 million would be two minutes)."""
EVENTS_PER_ATTEMPT = 100
"""What the bound grows by for each attempt a run's clients may make: a load of 1,000 purchases of up to 8
attempts (the herd sweep) takes about 55,000 events, 7 an attempt; its bound is 1,050,000. Work in proportion
to what was asked for is allowed; work that ticks on with nothing asked for is not."""
MIN_PERIOD = 0.001
"""The shortest period of background work (the reaper, the completer, a lease): the timeline's resolution. A
shorter one would fill a run with ticks and nothing else."""
MAX_ATTEMPTS = 10_000
"""The most attempts one operation may make."""
MAX_NESTING = 100
"""How deep a document may nest tables and lists (a body included)."""
PG_INT = (-2_147_483_648, 2_147_483_647)
"""PostgreSQL's ``int`` range: the charges table's ``amount`` column."""
INT64 = (-2**63, 2**63 - 1)
"""TOML's integer range."""


class InputModel(BaseModel):
    """A section of the input: strict types, finite numbers, no unknown field, immutable once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False, defer_build=True)


def max_time(info: ValidationInfo | None) -> float:
    """The bound on simulated time that this validation checks against."""
    context = info.context if info is not None else None
    return (context or {}).get("max_time", MAX_SIMULATED_SECONDS)


def invalid(kind: str, **ctx: Any) -> PydanticCustomError:
    """The validation problem ``kind`` that idemsim raises itself: its words are the catalogue's ``pyd.<kind>``
    (pydantic fills them in English; `idemsim.scenario.schema.describe_error` says them in the reader's language), its
    fields ``ctx`` (text, or `Message` objects)."""

    return PydanticCustomError(kind, MESSAGES[f"pyd.{kind}"]["en"], ctx)


class Problem:
    """One problem pydantic found, said in the reader's language: in English as pydantic says it (its numbers
    as it shows them), in Japanese from the catalogue's ``pyd.<type>``, its ``ctx`` filling the fields. A type
    the catalogue lacks is said in pydantic's English."""

    def __init__(self, err: dict) -> None:
        self.type = err["type"]
        self.english = err["msg"].removeprefix("Value error, ")
        self.ctx = err.get("ctx") or {}

    def said(self, lang: str = "en") -> str:

        if lang == "en" or f"pyd.{self.type}" not in MESSAGES:
            return self.english
        ctx = {name: _number(value) for name, value in self.ctx.items()}
        if self.type == "literal_error" and isinstance(ctx.get("expected"), str):
            ctx["expected"] = choices(ctx["expected"])
        try:
            return Message(f"pyd.{self.type}", **ctx).said(lang)
        except (KeyError, IndexError, ValueError):
            return self.english


class Alternatives:
    """The problems of a union's members, said together: "… or …" (English drops the "Input should be " that
    begins every one after the first)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems

    def said(self, lang: str = "en") -> str:

        first, *others = self.problems
        if lang == "en":
            return text("err.pyd.or", lang).join(
                [first.english] + [p.english.removeprefix("Input should be ") for p in others])
        return text("err.pyd.or", lang).join(p.said(lang) for p in self.problems)


def _number(value: Any) -> Any:
    """A ``ctx`` value as pydantic shows it: a whole float without its ``.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return value


def _within_bound(value: float, info: ValidationInfo) -> float:
    bound = max_time(info)
    if value > bound:
        raise invalid("time_bound", bound=f"{bound:g}")
    return value


Seconds = Annotated[float, Field(ge=0), AfterValidator(_within_bound)]
"""A time: finite, 0 or more, at most the run's bound."""
PositiveSeconds = Annotated[float, Field(gt=0), AfterValidator(_within_bound)]
"""A time: finite, more than 0, at most the run's bound."""
Period = Annotated[float, Field(ge=MIN_PERIOD), AfterValidator(_within_bound)]
"""How often background work runs: at least `MIN_PERIOD`, at most the run's bound."""
Probability = Annotated[float, Field(ge=0, le=1)]
Integer = Annotated[int, Field(ge=INT64[0], le=INT64[1])]
"""An integer in TOML's 64-bit range."""
Count = Annotated[Integer, Field(ge=0)]
Amount = Annotated[int, Field(ge=PG_INT[0], le=PG_INT[1])]
"""An amount of money: an integer that PostgreSQL's ``int`` column holds."""
Attempts = Annotated[int, Field(ge=1, le=MAX_ATTEMPTS)]


# -- values sent as JSON, and whole documents -----------------------------------------------------------------
def first_problem(value: Any, *, as_json: bool = False, max_depth: int = MAX_NESTING) -> tuple[tuple, Message] | None:
    """The first problem in ``value`` in document order, as (path, what is wrong), or None.

    Always: nesting deeper than ``max_depth``, text or a name that is not valid Unicode (a lone surrogate, from
    bytes that were not UTF-8). With ``as_json``, also what JSON cannot carry: NaN, infinities, integers
    outside 64 bits, TOML dates and times. Walked without recursion."""
    pending: list[tuple[Any, tuple, int]] = [(value, (), 0)]
    while pending:
        item, path, depth = pending.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth >= max_depth:
                return path, Message("err.nested", n=max_depth)
            pairs = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
            for name, child in reversed(pairs):
                pending.append((child, path + (name,), depth + 1))
            for name, _ in pairs:
                if isinstance(name, str) and not is_unicode(name):
                    return path, Message("err.name_not_unicode")
        elif isinstance(item, str):
            if not is_unicode(item):
                return path, Message("err.text_not_unicode")
        elif not as_json or item is None or isinstance(item, bool):
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path, Message("err.json_not_finite", value=repr(item))
        elif isinstance(item, int):
            if not INT64[0] <= item <= INT64[1]:
                return path, Message("err.json_int64")
        elif isinstance(item, (datetime.date, datetime.time)):
            return path, Message("err.json_toml_time", type=type(item).__name__)
        else:
            return path, Message("err.json_type", type=type(item).__name__)
    return None


def is_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogates, as JSON's \\ud800 escapes can make)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def dotted(path: tuple) -> str:
    """A path inside a document as the user writes it: ``a.b.0``."""
    return ".".join(str(p) for p in path)


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    problem = first_problem(value, as_json=True)
    if problem is not None:
        path, what = problem
        raise invalid("json_value", where=Message("pyd.json_at", path=shown(dotted(path))) if path else "", what=what)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
"""A JSON object (a request body, the items): only what JSON carries exactly, nested at most `MAX_NESTING`."""
