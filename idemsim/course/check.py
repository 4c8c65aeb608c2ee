"""`check`: one answer to one exercise judged, right or not yet, in the reader's language, and never an error.

Whatever the answer is (not written yet, of the wrong kind, a setting idemsim refuses, a function or a design
that raises), `check` returns a `Checked`: an answer that cannot be judged is "not yet", with the reason as its
hint (idemsim's own one line for a refused input, the error's type and text for anything else).
"""

from __future__ import annotations

from typing import Any

from ..base.errors import InputError, Message
from ..base.i18n import language
from .checked import Checked, NotYet
from .exercises import EXERCISES


def check(exercise: str, answer: Any, lang: str | None = None) -> Checked:
    """Judge ``answer`` to ``exercise`` (an id of `EXERCISES`, ``"6.3"``): a `Checked` whose ``right`` says
    whether it is right and ``hint`` why, or what to look at, in ``lang`` (None: ``IDEMSIM_LANG``, else English).
    ``print(check(…))`` prints ``right: …`` or ``not yet: …``. Never raises."""
    lang = language(lang)
    said = _judged(str(exercise), answer)
    if isinstance(said, Message):
        return Checked(str(exercise), False, said.said(lang), lang)
    return Checked(str(exercise), said.right, said.message.said(lang), lang)


def _judged(exercise: str, answer: Any):
    """The check's `Said`, or the `Message` of "not yet" when the answer could not be judged."""
    if exercise not in EXERCISES:
        return Message("course.unknown", exercise=repr(exercise), exercises=", ".join(EXERCISES))
    try:
        return EXERCISES[exercise].judge(answer)
    except NotYet as stopped:
        return stopped.message
    except InputError as error:
        return Message("course.refused", error=error)
    except Exception as error:  # a student's answer may fail in any way: said, never raised
        return Message("course.failed", error=f"{type(error).__name__}: {error}")
