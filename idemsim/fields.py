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
  `MAX_NESTING` deep.
"""

from __future__ import annotations

import datetime
import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError

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

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def max_time(info: ValidationInfo | None) -> float:
    """The bound on simulated time that this validation checks against."""
    context = info.context if info is not None else None
    return (context or {}).get("max_time", MAX_SIMULATED_SECONDS)


def _within_bound(value: float, info: ValidationInfo) -> float:
    bound = max_time(info)
    if value > bound:
        raise PydanticCustomError("time_bound", "Input should be at most {bound} s, the bound on a run's "
                                                "simulated time (--max-time raises it)", {"bound": f"{bound:g}"})
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
def first_problem(value: Any, *, as_json: bool = False, max_depth: int = MAX_NESTING) -> tuple[tuple, str] | None:
    """The first problem in ``value`` in document order, as (path, what is wrong), or None.

    Always: nesting deeper than ``max_depth``, text or a name that is not valid Unicode (a lone surrogate, from
    bytes that were not UTF-8). With ``as_json``, also what JSON cannot carry: NaN, infinities, integers
    outside 64 bits, TOML dates and times. Walked without recursion."""
    pending: list[tuple[Any, tuple, int]] = [(value, (), 0)]
    while pending:
        item, path, depth = pending.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth >= max_depth:
                return path, f"nested more than {max_depth} levels deep; at most {max_depth} are allowed"
            pairs = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
            for name, child in reversed(pairs):
                pending.append((child, path + (name,), depth + 1))
            for name, _ in pairs:
                if isinstance(name, str) and not _unicode(name):
                    return path, "a name that is not valid Unicode (bytes that are not UTF-8?)"
        elif isinstance(item, str):
            if not _unicode(item):
                return path, "text that is not valid Unicode (bytes that are not UTF-8?)"
        elif not as_json or item is None or isinstance(item, bool):
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path, f"{item!r} is not a finite number, and JSON has no NaN or infinity"
        elif isinstance(item, int):
            if not INT64[0] <= item <= INT64[1]:
                return path, "an integer outside the 64-bit range"
        elif isinstance(item, (datetime.date, datetime.time)):
            return path, f"a TOML {type(item).__name__}, which JSON cannot carry; write it as a string"
        else:
            return path, f"a {type(item).__name__}, which JSON cannot carry"
    return None


def _unicode(text: str) -> bool:
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
        where = f"at {shown(dotted(path))}: " if path else ""
        raise PydanticCustomError("json_value", "{where}{what}", {"where": where, "what": what})
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
"""A JSON object (a request body, the items): only what JSON carries exactly, nested at most `MAX_NESTING`."""
