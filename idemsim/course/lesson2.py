"""The checks of Lesson 2, *Idempotency keys*: replays of a stored answer, the unique constraint, split
transactions."""

from __future__ import annotations

from typing import Any

from ..scenario.schema import load
from . import answers
from .checked import Said, right, wrong
from .lesson1 import TWO_LOST_ANSWERS, by_count
from .stories import story

RACE = "check-then-insert-race"
RACE_KEY = "k-8f3a"


def replays_after_two_lost_answers(answer: Any) -> Said:
    """2.1: under same-tx, the first two answers lost: the later attempts are answered from the record."""
    given = answers.count(answer)
    summary = story("lost-response", sets=[TWO_LOST_ANSWERS]).summary
    return by_count(given, summary["replays"], "2.1", charges=summary["charges"], replays=summary["replays"])


def one_charge_setting(answer: Any) -> Said:
    """2.2: check-then-insert-race with one charge row and one capture: a unique constraint, the story's design."""
    sets = answers.settings(answer, "")
    summary = story(RACE, sets=sets).summary
    if summary["design"] != load(RACE).design:
        return wrong("course.2.2.design", design=summary["design"])
    if summary["charges"] == 1 and summary["captures"] == 1:
        return right("course.2.2.right")
    if summary["charges"] == 1:
        return wrong("course.2.2.captures", captures=summary["captures"])
    return wrong("course.2.2.wrong", charges=summary["charges"])


def key_rows_without_constraint(answer: Any) -> Said:
    """2.3: the rows of the key at the end of check-then-insert-race, without a unique constraint."""
    given = answers.count(answer)
    rows = [row for row in story(RACE).tables["idempotency_keys"] if row["key"] == RACE_KEY]
    return by_count(given, len(rows), "2.3")


def charges_when_key_first(answer: Any) -> Said:
    """2.4: split-transactions, key first: the process died before the charge's transaction."""
    given = answers.count(answer)
    return by_count(given, story("split-transactions").summary["charges"], "2.4")
