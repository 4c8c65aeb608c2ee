"""Reading a student's answer as the kind of answer its exercise takes, or saying why it cannot be read.

Each reader returns the answer as the check uses it (an ``int``, a ``float``, a list of ``--set`` texts, a pair,
a function) or raises `idemsim.course.checked.NotYet` with a hint that names what was written and what is
wanted. A placeholder (``...``, ``None``, or a list holding one) is "not written yet". Nothing is coerced that a
student could mean otherwise: ``"3"`` is a text, not the number 3; ``True`` is a truth value, not the count 1;
a text is not a set of texts.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

from ..base.errors import Message
from .checked import not_yet

KINDS = ("count", "seconds", "number", "choice", "setting", "settings", "methods", "pair", "function", "design")
"""The kinds of answer an exercise takes; each has its words in the catalogue (``course.kind.KIND``)."""


def wanted(kind: str, **fields: Any) -> Message:
    """What an answer of ``kind`` is, in words (``course.kind.KIND``): "a whole number", "a pair such as (1, 1)"."""
    return Message(f"course.kind.{kind}", **fields)


def is_placeholder(answer: Any) -> bool:
    """Whether ``answer`` is not written yet: ``...``, ``None``, an empty list, or a collection holding ``...``."""
    if answer is ... or answer is None or (isinstance(answer, (list, tuple)) and not answer):
        return True
    return isinstance(answer, (list, tuple, set, frozenset)) and any(item is ... or item is None for item in answer)


def written(answer: Any, kind: str, **fields: Any) -> Any:
    """``answer``, unless it is a placeholder: then "replace the ... with (what ``kind`` is)"."""
    if is_placeholder(answer):
        raise not_yet("course.answer.missing", what=wanted(kind, **fields))
    return answer


def _not_a_number(answer: Any, kind: str) -> None:
    """Raise the hint for a text, a truth value or anything else that is not a number."""
    if isinstance(answer, bool):
        raise not_yet("course.answer.boolean", answer=repr(answer), what=wanted(kind))
    if isinstance(answer, str):
        raise not_yet("course.answer.text", answer=repr(answer), what=wanted(kind))
    if not isinstance(answer, Real):
        raise not_yet("course.answer.type", answer=repr(answer), type=type(answer).__name__, what=wanted(kind))


def count(answer: Any) -> int:
    """A whole number, 0 or more: an ``int`` (or a float with nothing after the point, ``3.0``)."""
    written(answer, "count")
    _not_a_number(answer, "count")
    if not isinstance(answer, Integral) and not (math.isfinite(answer) and float(answer).is_integer()):
        raise not_yet("course.answer.not_whole", answer=repr(answer))
    if answer < 0:
        raise not_yet("course.answer.negative", answer=repr(answer))
    return int(answer)


def number(answer: Any, kind: str = "number") -> float:
    """A finite number (``kind`` ``seconds`` says it is a time)."""
    written(answer, kind)
    _not_a_number(answer, kind)
    if not math.isfinite(answer):
        raise not_yet("course.answer.not_finite", answer=repr(answer), what=wanted(kind))
    return float(answer)


def choice(answer: Any, choices: tuple) -> Any:
    """One of ``choices``, of the same type (``2``, not ``"2"``; ``"none"``, not ``None``)."""
    shown = ", ".join(repr(c) for c in choices)
    written(answer, "choice", choices=shown)
    if isinstance(answer, str) and any(not isinstance(c, str) and str(c) == answer.strip() for c in choices):
        raise not_yet("course.answer.text", answer=repr(answer), what=wanted("choice", choices=shown))
    if not any(type(answer) is type(c) and answer == c for c in choices):
        raise not_yet("course.answer.not_a_choice", answer=repr(answer), choices=shown)
    return answer


def settings(answer: Any, section: str, *, many: bool = False) -> list[str]:
    """``--set`` texts: one text, or a list of texts; each must name a field of ``[section]``
    (``section.FIELD=VALUE``) when ``section`` is a section, any field when it is ``""``."""
    kind = "settings" if many else "setting"
    example = f"{section or 'api'}.FIELD=VALUE"
    written(answer, kind, example=example)
    texts = [answer] if isinstance(answer, str) else answer
    if not isinstance(texts, (list, tuple)) or not all(isinstance(item, str) for item in texts):
        raise not_yet("course.answer.not_setting", answer=repr(answer), what=wanted(kind, example=example))
    if section and any(not item.startswith(f"{section}.") for item in texts):
        wrong = next(item for item in texts if not item.startswith(f"{section}."))
        raise not_yet("course.answer.section", answer=repr(wrong), section=section)
    return list(texts)


def pair(answer: Any) -> tuple[int, int]:
    """Two whole numbers, as a tuple or a list: ``(1, 1)``."""
    written(answer, "pair")
    if isinstance(answer, str) or not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise not_yet("course.answer.not_pair", answer=repr(answer))
    return count(answer[0]), count(answer[1])


def methods(answer: Any) -> set[str]:
    """Method names: a set (or list, or tuple) of texts, compared in capitals."""
    written(answer, "methods")
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)) \
            or not all(isinstance(item, str) for item in answer):
        raise not_yet("course.answer.not_methods", answer=repr(answer))
    return {item.strip().upper() for item in answer}


def function(answer: Any, kind: str = "function") -> Any:
    """A function (anything callable)."""
    written(answer, kind)
    if not callable(answer):
        raise not_yet("course.answer.not_function", answer=repr(answer), type=type(answer).__name__)
    return answer
