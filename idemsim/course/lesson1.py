"""The checks of Lesson 1, *Why a retry is dangerous*: counts and a balance without a key, giving up, the methods.

Each check reads the answer (`idemsim.course.answers`), runs the story it is about, and compares: the right
count comes from the run, never from a constant, so a check stays true to the simulator.
"""

from __future__ import annotations

from typing import Any

from . import answers
from .checked import Said, right, wrong
from .stories import seen, story

TWO_LOST_ANSWERS = ("faults=[{kind='lose', message='response', attempt=1},"
                    " {kind='lose', message='response', attempt=2}]")
THREE_LOST_ANSWERS = ("faults=[{kind='lose', message='response', attempt=1}, "
                      "{kind='lose', message='response', attempt=2}, "
                      "{kind='lose', message='response', attempt=3}]")
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
"""RFC 9110, section 9.2.2: the safe methods, PUT and DELETE."""
NOT_IDEMPOTENT = ("POST", "PATCH")


def by_count(given: int, truth: int, exercise: str, **fields: Any) -> Said:
    """Right when ``given`` is ``truth``; else the exercise's hint for an answer too small or too large
    (``course.EXERCISE.too_few`` / ``.too_many``)."""
    if given == truth:
        return right(f"course.{exercise}.right", **fields)
    return wrong(f"course.{exercise}.{'too_few' if given < truth else 'too_many'}", answer=given, **fields)


def charges_after_two_lost_answers(answer: Any) -> Said:
    """1.1: under naive, the first two answers lost: every attempt is charged."""
    given = answers.count(answer)
    run = story("naive-double-charge", sets=[TWO_LOST_ANSWERS])
    return by_count(given, run.summary["charges"], "1.1", seen=seen(run))


def give_up_setting(answer: Any) -> Said:
    """1.2: a client that gives up after the lost answer: one attempt, one charge, and it ends info."""
    sets = answers.settings(answer, "client")
    summary = story("naive-double-charge", sets=sets).summary
    attempts = summary["operations"][0]["attempts"]
    if summary["charges"] == 1 and summary["outcome"] == "info" and attempts == 1:
        return right("course.1.2.right")
    return wrong("course.1.2.wrong", charges=summary["charges"], outcome=summary["outcome"], attempts=attempts)


def balance_at_the_end(answer: Any) -> Said:
    """1.3: "decrease by 100" from 500, three answers lost, four attempts: every copy takes 100."""
    given = answers.number(answer)
    balance = story("delta-vs-absolute", sets=["client.max_attempts=4", THREE_LOST_ANSWERS]).summary["balance"]
    if given == balance:
        return right("course.1.3.right", balance=balance)
    if given == 400:
        return wrong("course.1.3.once")
    return wrong("course.1.3.too_high" if given > balance else "course.1.3.too_low")


def idempotent_methods(answer: Any) -> Said:
    """1.4: the methods RFC 9110 calls idempotent."""
    given = answers.methods(answer)
    if given == IDEMPOTENT:
        return right("course.1.4.right")
    if given & set(NOT_IDEMPOTENT):
        return wrong("course.1.4.post", methods=", ".join(sorted(given & set(NOT_IDEMPOTENT))))
    extra, missing = sorted(given - IDEMPOTENT), sorted(IDEMPOTENT - given)
    if extra and missing:
        return wrong("course.1.4.extra_and_missing", extra=", ".join(extra), missing=", ".join(missing))
    if extra:
        return wrong("course.1.4.extra", extra=", ".join(extra))
    return wrong("course.1.4.missing", missing=", ".join(missing))
