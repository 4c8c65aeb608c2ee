"""The exercises of the course, by id, in the order of the lessons: what each takes, where it is asked, and the
check that judges it.

The ids are the notebooks' numbering (``"1.1"`` … ``"6.4"``: lesson, then exercise). Each `Exercise` names its
notebook (``notebooks/NN-*.ipynb``, and its Japanese twin), the markdown cell that asks it (``prompt``, the
cell's id), the variable the answer cell sets (``name``) and the kind of answer it takes (``kind``, one of
`idemsim.course.answers.KINDS`): a count, seconds, a choice, one ``--set`` text or a list of them, a set of
method names, a pair of counts, a function of a run, or a design. tests/test_course.py holds the notebooks to
this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import lesson1, lesson2, lesson3, lesson4, lesson5, lesson6
from .checked import Said


@dataclass(frozen=True)
class Exercise:
    """One exercise of the course."""

    id: str
    """``"6.3"``: lesson 6, exercise 3."""
    kind: str
    """What kind of answer it takes (`idemsim.course.answers.KINDS`)."""
    notebook: str
    """The lesson's notebook, without ``.ipynb``: ``"06-find-the-bug-yourself"``."""
    prompt: str
    """The id of the markdown cell that asks it (``"l6-21"``), in the English notebook and the Japanese one."""
    name: str
    """The variable (or function) the answer cell sets: ``"my_design"``."""
    judge: Callable[[Any], Said]
    """The check: the answer in, right or not yet (and why) out; it may raise `idemsim.course.checked.NotYet`."""


L1, L2, L3 = "01-why-a-retry-is-dangerous", "02-idempotency-keys", "03-a-retry-while-the-first-is-in-progress"
L4, L5, L6 = "04-keys-expire-and-get-reused", "05-money-outside-the-database", "06-find-the-bug-yourself"

EXERCISES: dict[str, Exercise] = {e.id: e for e in (
    Exercise("1.1", "count", L1, "l1-16", "charges_after_two_lost_answers", lesson1.charges_after_two_lost_answers),
    Exercise("1.2", "setting", L1, "l1-19", "give_up_setting", lesson1.give_up_setting),
    Exercise("1.3", "number", L1, "l1-22", "balance_at_the_end", lesson1.balance_at_the_end),
    Exercise("1.4", "methods", L1, "l1-25", "idempotent_methods", lesson1.idempotent_methods),
    Exercise("2.1", "count", L2, "l2-17", "replays_after_two_lost_answers", lesson2.replays_after_two_lost_answers),
    Exercise("2.2", "setting", L2, "l2-20", "one_charge_setting", lesson2.one_charge_setting),
    Exercise("2.3", "count", L2, "l2-23", "key_rows_without_constraint", lesson2.key_rows_without_constraint),
    Exercise("2.4", "count", L2, "l2-26", "charges_when_key_first", lesson2.charges_when_key_first),
    Exercise("3.1", "seconds", L3, "l3-19", "wait_when_copy_at_2", lesson3.wait_when_copy_at_2),
    Exercise("3.2", "settings", L3, "l3-22", "patient_client", lesson3.patient_client),
    Exercise("3.3", "choice", L3, "l3-25", "charged_by", lesson3.charged_by),
    Exercise("3.4", "seconds", L3, "l3-28", "lease_seconds", lesson3.lease_seconds),
    Exercise("4.1", "seconds", L4, "l4-14", "shortest_safe_ttl", lesson4.shortest_safe_ttl),
    Exercise("4.2", "settings", L4, "l4-17", "client_fix", lesson4.client_fix),
    Exercise("4.3", "pair", L4, "l4-20", "believed_and_charged", lesson4.believed_and_charged),
    Exercise("4.4", "choice", L4, "l4-23", "key_strategy", lesson4.key_strategy),
    Exercise("5.1", "count", L5, "l5-14", "captures_after_charge_crash", lesson5.captures_after_charge_crash),
    Exercise("5.2", "setting", L5, "l5-17", "one_capture_setting", lesson5.one_capture_setting),
    Exercise("5.3", "pair", L5, "l5-20", "rows_and_captures", lesson5.rows_and_captures),
    Exercise("5.4", "function", L5, "l5-23", "money_matches_records", lesson5.money_matches_records),
    Exercise("6.1", "count", L6, "l6-15", "faults_to_break_naive", lesson6.faults_to_break_naive),
    Exercise("6.2", "setting", L6, "l6-18", "breaking_setting", lesson6.breaking_setting),
    Exercise("6.3", "design", L6, "l6-21", "my_design", lesson6.my_design),
    Exercise("6.4", "count", L6, "l6-24", "faults_to_break_my_design", lesson6.faults_to_break_my_design),
)}
"""Every exercise of the course, by id, in the order of the lessons."""
