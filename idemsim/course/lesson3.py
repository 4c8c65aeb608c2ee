"""The checks of Lesson 3, *A retry while the first is in progress*: the wait on the unique index, a patient
client against 409, the rollback branch, a lease."""

from __future__ import annotations

from typing import Any

from . import answers
from .checked import Said, right, wrong
from .stories import events, seen, story

WAIT_TOLERANCE = 0.05
"""Seconds an answered wait may be off by (the model's wait is exact; a student may round)."""
SHORT_LEASE = 1.0
"""Below this, a lease is shorter than a handler's own work in the shipped stories (lease-shorter-than-handler)."""


def wait_when_copy_at_2(answer: Any) -> Said:
    """3.1: the copy arrives at t=2: it waits until the first transaction commits."""
    given = answers.number(answer, "seconds")
    waited = story("same-tx-wait", sets=["faults=[{kind='duplicate', at=2.0}]"]).summary["wait_seconds"]
    if abs(given - waited) < WAIT_TOLERANCE:
        return right("course.3.1.right", seconds=waited)
    return wrong("course.3.1.too_short" if given < waited else "course.3.1.too_long")


def patient_client(answer: Any) -> Said:
    """3.2: under committed-first, a client retry policy with which both clients end ok, one charge."""
    sets = answers.settings(answer, "client", many=True)
    run = story("same-tx-wait", design="committed-first", sets=sets)
    outcomes = [op["outcome"] for op in run.summary["operations"]]
    if outcomes == ["ok", "ok"] and run.summary["charges"] == 1:
        return right("course.3.2.right", seen=seen(run, 1))
    return wrong("course.3.2.wrong", outcomes=str(outcomes), charges=run.summary["charges"])


def charged_by(answer: Any) -> Said:
    """3.3: in the rollback variant, whose handler records the charge: request 1's or the copy's."""
    given = answers.choice(answer, (1, 2))
    who = [int(row["request"].split(".")[0]) for row in events(story("same-tx-wait", "rollback"),
                                                               "processor.capture")]
    if who == [given]:
        return right("course.3.3.right")
    return wrong("course.3.3.wrong")


def lease_seconds(answer: Any) -> Said:
    """3.4: crash-in-progress (under its own design, committed-first): a lease with which a retry takes the key
    over."""
    lease = answers.number(answer, "seconds")
    run = story("crash-in-progress", sets=[f"api.lease={lease!r}"])
    if run.summary["outcome"] == "ok" and run.summary["charges"] == 1:
        return right("course.3.4.short" if lease < SHORT_LEASE else "course.3.4.right", seen=seen(run))
    return wrong("course.3.4.wrong", seen=seen(run), outcome=run.summary["outcome"])
