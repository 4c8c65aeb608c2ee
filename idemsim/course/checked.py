"""What a check says of one answer: right, or not yet, with one line of why, in the reader's language.

A `Checked` is made from a message of the catalogue (``course.*``), said at once in the language asked for, so
that ``.hint`` is a plain string and printing a check prints the one line a notebook shows: ``right: …`` or
``not yet: …`` (``正解: …`` / ``まだ: …`` in Japanese). `NotYet` is how a check stops early, from wherever it
is, with the hint the student gets: reading an answer of the wrong kind, for instance.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.errors import Message
from ..base.i18n import text


@dataclass(frozen=True)
class Checked:
    """The verdict on one answer to one exercise."""

    exercise: str
    """The exercise's id, as `idemsim.course.EXERCISES` numbers it (``"6.3"``)."""
    right: bool
    """Whether the answer is right."""
    hint: str
    """Why it is right, or what to look at when it is not yet: one line, in ``lang``."""
    lang: str = "en"
    """The language ``hint`` is in, and the verdict is printed in."""

    def __str__(self) -> str:
        return text("course.right" if self.right else "course.not_yet", self.lang, why=self.hint)


class NotYet(Exception):
    """Raised inside a check to end it with "not yet" and this hint (a `Message` of the catalogue)."""

    def __init__(self, message: Message) -> None:
        super().__init__(message)
        self.message = message


def not_yet(message: str, /, **fields) -> NotYet:
    """The `NotYet` of catalogue message ``message`` with ``fields``: ``raise not_yet("course.…", n=2)``."""
    return NotYet(Message(message, **fields))


@dataclass(frozen=True)
class Said:
    """What a check function returns: right or not, and the message that says why (not yet said)."""

    right: bool
    message: Message


def right(message: str, /, **fields) -> Said:
    """A right answer, said by catalogue message ``message`` with ``fields``."""
    return Said(True, Message(message, **fields))


def wrong(message: str, /, **fields) -> Said:
    """An answer that is not yet right, with the hint of catalogue message ``message`` and ``fields``."""
    return Said(False, Message(message, **fields))


def pair_said(given: tuple, truth: tuple, exercise: str, first: str, second: str) -> Said:
    """An answer that is a pair of numbers held against the run's ``truth``: ``{exercise}.right``; the pair the
    wrong way round, ``{exercise}.swapped``; else the hint about the first number that is wrong,
    ``{exercise}.{first}`` or ``{exercise}.{second}``."""
    if given == truth:
        return right(f"{exercise}.right")
    if given[::-1] == truth:
        return wrong(f"{exercise}.swapped")
    return wrong(f"{exercise}.{first}" if given[0] != truth[0] else f"{exercise}.{second}")


class Phrase:
    """A field of a message that idemsim words itself in each language (a fault's ``describe(lang)``, a
    violation's `idemsim.judge.properties.describe_violation`): said in the language of the message holding it."""

    __slots__ = ("say",)

    def __init__(self, say) -> None:
        self.say = say
        """``say(lang)``: the phrase in ``lang``."""

    def said(self, lang: str = "en") -> str:
        return self.say(lang)
