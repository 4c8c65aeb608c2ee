"""The fault syntax: a scenario's ``[[faults]]`` written on one line, as ``--faults`` and the page's URL take them.

One token a fault, tokens separated by commas (whitespace around a token is ignored; an empty text is no fault):

    lose:request@OP.ATTEMPT        lose:response@1.1          lose:processor_response@1.2
    delay:request@1.1+2.5          delay:response@1.2+0.5     (seconds held)
    crash:after_processor@1.1      crash:after_key@1.2+3      (+R: restart_after; 1 when left out)
    processor_error@1.1
    duplicate@1+0.5                duplicate@1                (op 1's copy starts at 0.5 s; at 0)
    outage:lost@2-5                outage:503@2-5             (from 2 s until 5 s)

``@OP.ATTEMPT`` may be written ``@ATTEMPT`` (operation 1). Each token is validated by the fault's own model
(`idemsim.model.faults`), so a token says what a ``[[faults]]`` table says and is checked the same way.

Guarantees: `faults_text` writes the canonical form (``@OP.ATTEMPT`` always, every number as ``:g`` writes it
unless that would lose a digit, defaults left out, tokens joined by ``,``), and ``parse_faults(faults_text(x)) ==
x`` for every list of faults; a bad token is one `InputError` naming the token and the allowed forms.
`with_faults` gives a story with its faults replaced, validated as its file would be.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..base.errors import InputError, Message
from ..base.fields import Problem
from ..base.printable import shown
from ..model.faults import Fault
from .schema import Scenario, validate

FORMS = ("lose:request|response|processor_response@OP.ATTEMPT, delay:request|response@OP.ATTEMPT+SECONDS, "
         "crash:POINT@OP.ATTEMPT[+RESTART], processor_error@OP.ATTEMPT, duplicate@OP[+AT], "
         "outage:lost|503@FROM-UNTIL")
"""The allowed forms, as an error line shows them."""

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_WORD = r"[A-Za-z0-9_][A-Za-z0-9_.-]*?"
_AT = r"@(\d+)(?:\.(\d+))?"
_TOKENS = {
    "lose": re.compile(rf"lose:({_WORD}){_AT}"),
    "delay": re.compile(rf"delay:({_WORD}){_AT}\+({_NUMBER})"),
    "crash": re.compile(rf"crash:({_WORD}){_AT}(?:\+({_NUMBER}))?"),
    "processor_error": re.compile(rf"processor_error{_AT}"),
    "duplicate": re.compile(rf"duplicate@(\d+)(?:\+({_NUMBER}))?"),
    "outage": re.compile(rf"outage:({_WORD})@({_NUMBER})-({_NUMBER})"),
}
_MAX_DIGITS = 30
"""A number with more digits than this is refused before Python reads it (an op or attempt is at most 19)."""

_FAULT = TypeAdapter(Fault)


def _attempt(op: str, attempt: str | None) -> dict[str, int]:
    """``@OP.ATTEMPT``, or ``@ATTEMPT`` (operation 1)."""
    if attempt is None:
        return {"op": 1, "attempt": int(op)}
    return {"op": int(op), "attempt": int(attempt)}


def _fields(kind: str, groups: tuple) -> dict[str, Any]:
    """A matched token's fault as the table ``[[faults]]`` would hold it."""
    if kind == "lose":
        return {"kind": kind, "message": groups[0], **_attempt(groups[1], groups[2])}
    if kind == "delay":
        return {"kind": kind, "message": groups[0], **_attempt(groups[1], groups[2]), "seconds": float(groups[3])}
    if kind == "crash":
        restart = {} if groups[3] is None else {"restart_after": float(groups[3])}
        return {"kind": kind, "point": groups[0], **_attempt(groups[1], groups[2]), **restart}
    if kind == "processor_error":
        return {"kind": kind, **_attempt(groups[0], groups[1])}
    if kind == "duplicate":
        return {"kind": kind, "op": int(groups[0]), **({} if groups[1] is None else {"at": float(groups[1])})}
    return {"kind": kind, "mode": groups[0], "from": float(groups[1]), "until": float(groups[2])}


def _bad(token: str, problem: Any = None) -> InputError:
    if problem is None:
        return InputError("err.fault_token", token=shown(token), forms=FORMS)
    return InputError("err.fault_token_problem", token=shown(token), problem=problem, forms=FORMS)


def parse_fault(token: str) -> Any:
    """One token as its `idemsim.model.faults` fault, or an `InputError` naming it and the allowed forms."""
    token = token.strip()
    kind = token.partition("@")[0].partition(":")[0]
    pattern = _TOKENS.get(kind)
    found = pattern.fullmatch(token) if pattern is not None else None
    if found is None or any(len(g) > _MAX_DIGITS for g in found.groups() if g and g[0].isdigit()):
        raise _bad(token)
    try:
        return _FAULT.validate_python(_fields(kind, found.groups()))
    except ValidationError as e:
        raise _bad(token, Problem(e.errors()[0])) from None


def parse_faults(text: str) -> list:
    """``text``'s faults, in order: comma-separated tokens (an empty or blank text: none)."""
    if not text.strip():
        return []
    return [parse_fault(token) for token in text.split(",")]


def _number(x: float) -> str:
    """``x`` as ``:g`` writes it, or in full when ``:g`` would lose a digit."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def _at(fault: Any) -> str:
    return f"@{fault.op}.{fault.attempt}"


def fault_token(fault: Any) -> str:
    """One fault in the canonical form of its token."""
    kind = fault.kind
    if kind == "lose":
        return f"lose:{fault.message}{_at(fault)}"
    if kind == "delay":
        return f"delay:{fault.message}{_at(fault)}+{_number(fault.seconds)}"
    if kind == "crash":
        restart = "" if fault.restart_after == 1.0 else f"+{_number(fault.restart_after)}"
        return f"crash:{fault.point}{_at(fault)}{restart}"
    if kind == "processor_error":
        return f"processor_error{_at(fault)}"
    if kind == "duplicate":
        return f"duplicate@{fault.op}" + ("" if fault.at == 0 else f"+{_number(fault.at)}")
    if kind == "outage":
        return f"outage:{fault.mode}@{_number(fault.start)}-{_number(fault.until)}"
    raise ValueError(f"a fault of unknown kind {kind!r}")  # (a new kind of fault needs its token here)


def faults_text(faults: list) -> str:
    """``faults`` in the canonical form: their tokens joined by ``,`` (none: the empty text)."""
    return ",".join(fault_token(fault) for fault in faults)


def with_faults(story: Scenario, faults: list) -> Scenario:
    """``story`` (a loaded scenario or one of its variants) with ``faults`` instead of its own, validated as its
    file would be (a duplicate must copy one of its operations; every time within its bound)."""
    raw = {**story._raw, "faults": [fault.model_dump(by_alias=True) for fault in faults]}
    source = Message("err.where.faults", source=story._source or story.name, faults=shown(faults_text(faults)))
    return validate(raw, source, max_time=story._max_time, variant=story.variant)
