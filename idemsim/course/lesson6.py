"""The checks of Lesson 6, *Find the bug yourself*: the fewest faults that break naive, a setting that breaks
committed-first, the student's own design fixed (judged by `idemsim.course.designs`), and what still breaks it."""

from __future__ import annotations

from typing import Any

from ..runners.explore import exhaustive, search
from . import answers
from .checked import Said, right, wrong
from .designs import faults_of, judge_design, least_faults_to_break_the_fix, violation_of


def faults_to_break_naive(answer: Any) -> Said:
    """6.1: the fewest faults of the exhaustive mode that break naive."""
    given = answers.count(answer)
    counterexample = exhaustive("naive", max_faults=2).counterexample
    truth = len(counterexample.faults)
    if given == truth:
        return right("course.6.1.right", faults=faults_of(counterexample))
    return wrong("course.6.1.too_few" if given < truth else "course.6.1.too_many")


def breaking_setting(answer: Any) -> Said:
    """6.2: a setting with which the search finds two charge rows for one purchase under committed-first."""
    sets = answers.settings(answer, "")
    found = search("committed-first", sets, properties=["at-most-one-charge"])
    if found.counterexample is not None:
        return right("course.6.2.right", faults=faults_of(found.counterexample))
    return wrong("course.6.2.wrong", examples=found.examples)


def my_design(answer: Any) -> Said:
    """6.3: the starter fixed: no schedule of up to 2 faults records two rows or captures twice, and every
    purchase of a story of several is charged once."""
    return judge_design(answers.function(answer, "design"))


def faults_to_break_my_design(answer: Any) -> Said:
    """6.4: the fewest faults that break the fixed starter on every property."""
    given = answers.count(answer)
    counterexample = least_faults_to_break_the_fix()
    truth = len(counterexample.faults)
    if given == truth:
        return right("course.6.4.right", faults=faults_of(counterexample), violation=violation_of(counterexample))
    return wrong("course.6.4.too_few" if given < truth else "course.6.4.too_many", answer=given)
