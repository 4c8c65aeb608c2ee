"""Judging a student's design (a handler, as Lesson 6 writes one) by what it does, not by how it is written.

A design is judged on more than one story and more than one purchase: the plain lost answer, two stories in which
several purchases each carry their own key (`PURCHASES`: two real purchases with the same body; four purchases,
one of them retried), and every schedule of up to two faults of the exhaustive mode. A processor key that does
not follow the request's key is caught by the purchases: a constant (``key="charge"``) or the body's
fingerprint (``key=h.fingerprint``) makes the processor answer the second purchase with the first one's
capture (2 charge rows, 1 capture), as Lesson 4 teaches; a key derived from the request's own key passes.

The handler is registered only while it is judged (`registered`), under `STUDENT_DESIGN`, and any design of that
name registered before is put back afterwards, so that a check leaves the notebook's designs as it found them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from ..base.http import Response
from ..judge.properties import describe_violation
from ..model.designs import DESIGNS, register_design
from ..model.designs.registry import FACTS
from ..runners.explore import exhaustive
from .checked import Phrase, Said, right, wrong
from .stories import story

STUDENT_DESIGN = "my-design"
"""The name a student's handler is judged under (the name Lesson 6's text gives it)."""
REFERENCE_DESIGN = "course-fixed-starter"
"""The name the fixed starter (`fixed_starter`) is judged under."""
MONEY = ("at-most-one-charge", "at-most-one-capture")
"""What exercise 6.3 asks of every schedule of up to `MAX_FAULTS` faults: one charge row, one capture."""
PURCHASE_PROPERTIES = ("at-most-one-charge", "at-most-one-capture", "exactly-one-on-success", "ledger-agrees")
"""What a story of several purchases must keep: each purchase charged once, with its capture."""
MAX_FAULTS = 2


class Purchases(NamedTuple):
    """A story in which several purchases each carry their own key: each must be charged once and captured once."""

    name: str
    variant: str | None

    def label(self) -> str:
        return self.name + (f" --variant {self.variant}" if self.variant else "")


PURCHASES = (Purchases("intended-duplicate", None), Purchases("ttl-shorter-than-retry-window", "ttl-longer"))
"""Two real purchases with the same body, two keys; four purchases, the first one's answer lost and replayed."""


@contextmanager
def registered(handler, name: str = STUDENT_DESIGN) -> Iterator[str]:
    """``handler`` registered as the design ``name`` (with the facts its ``idemsim.design`` decorator marked)
    for the time of the block; whatever design had that name before is put back after it."""
    before = DESIGNS.get(name)
    register_design(name, handler, **{fact: getattr(handler, fact) for fact in FACTS if hasattr(handler, fact)})
    try:
        yield name
    finally:
        if before is None:
            DESIGNS.pop(name, None)
        else:
            DESIGNS[name] = before


def judge_design(handler) -> Said:
    """Exercise 6.3: the design keeps one charge row and one capture per purchase, in every story tried."""
    with registered(handler) as name:
        calm = story("lost-response", design=name).summary
        if calm["charges"] != 1 or calm["outcome"] != "ok":
            return wrong("course.6.3.calm", charges=calm["charges"], outcome=calm["outcome"])
        for purchases in PURCHASES:
            summary = story(purchases.name, purchases.variant, design=name).summary
            n = len(summary["operations"])
            broken = [v for v in summary["violations"] if v["property"] in PURCHASE_PROPERTIES]
            if summary["charges"] != n or summary["captures"] != n or broken:
                return wrong("course.6.3.purchases", story=purchases.label(), n=n, charges=summary["charges"],
                             captures=summary["captures"])
        found = exhaustive(name, max_faults=MAX_FAULTS, properties=list(MONEY))
    if found.counterexample is not None:
        return wrong("course.6.3.broken", faults=faults_of(found.counterexample),
                     properties=", ".join(v.property for v in found.counterexample.violations))
    return right("course.6.3.right", n=found.examples, stories=", ".join(p.label() for p in PURCHASES))


def faults_of(counterexample) -> Phrase:
    """A counterexample's faults, described in the language of the message that shows them."""
    return Phrase(lambda lang: "; ".join(f.describe(lang) for f in counterexample.faults))


def violation_of(counterexample) -> Phrase:
    """A counterexample's first violation, in the language of the message that shows it."""
    return Phrase(lambda lang: describe_violation(counterexample.violations[0].to_dict(), lang))


def starter_with(processor_key):
    """Lesson 6's starter, its processor called with ``key=processor_key(h)``: exercise 6.3's answers differ in
    that key alone."""

    def handler(h):
        yield from h.sql("begin")
        registered_key = yield from h.sql("register_key", key=h.key, fingerprint=h.fingerprint)
        if registered_key.rows == 0:  # the key exists: answer from the record
            record = (yield from h.sql("select_key", key=h.key)).row
            yield from h.sql("commit")
            if record["fingerprint"] != h.fingerprint:
                return Response(422, {"error": "Idempotency-Key reused with a different body"})
            return Response.from_stored(record["response"])
        h.point("after_key")
        paid = yield from h.capture(h.amount, key=processor_key(h))
        if paid.outcome != "captured":
            yield from h.sql("rollback")
            return Response(503, {"error": "payment outcome unknown"})
        h.point("after_processor")
        charge = yield from h.sql("insert_charge", amount=h.amount, key=h.key)
        h.point("after_charge")
        answer = Response(201, {"id": f"ch_{charge.id}", "amount": h.amount, "status": "succeeded"})
        h.point("before_response_stored")
        yield from h.sql("complete_key", key=h.key, response=answer.stored())
        h.point("before_commit")
        yield from h.sql("commit")
        return answer

    return handler


fixed_starter = starter_with(lambda h: h.key)
"""The starter of Lesson 6, fixed as exercise 6.3 asks: the processor gets the request's key, so it captures
once per key."""


def least_faults_to_break_the_fix(max_faults: int = 3):
    """Exercise 6.4: the exhaustive mode's counterexample for the fixed starter on every property (the schedule
    with the fewest faults that breaks one), or None when no schedule of up to ``max_faults`` faults does."""
    with registered(fixed_starter, REFERENCE_DESIGN) as name:
        return exhaustive(name, max_faults=max_faults).counterexample
