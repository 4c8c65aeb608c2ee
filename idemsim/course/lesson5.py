"""The checks of Lesson 5, *Money outside the database*: the two ledgers after a crash, a downstream key, an
orphan capture, and a function that compares the ledgers.

The function exercise (5.4) is judged on runs chosen to tell the right function from the plausible wrong ones:
beside the lesson's four, a run whose ledgers agree although properties break (two rows, two captures), and
one with more rows than captures, so that "no property broke", "one charge row", "one capture" and "no more
rows than captures" each give a wrong answer somewhere.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..scenario.schema import load
from . import answers
from .checked import Said, not_yet, pair_said, right, wrong
from .lesson1 import by_count
from .stories import story


class Case(NamedTuple):
    """A run a function exercise is tried on, and what the right function returns for it."""

    name: str
    variant: str | None
    sets: tuple[str, ...]
    expected: bool

    def label(self) -> str:
        """The run as the command line would name it: ``split-transactions --variant charge-first --set …``."""
        return " ".join([self.name, *(["--variant", self.variant] if self.variant else []),
                         *(word for s in self.sets for word in ("--set", s))])


LEDGER_CASES = (
    Case("lost-response", None, (), True),
    Case("crash-after-processor", None, (), False),
    Case("crash-after-processor", "processor-key", (), True),
    Case("completer-finishes", "no-completer", (), False),
    Case("naive-double-charge", None, (), True),
    Case("split-transactions", "charge-first", ("api.processor_key=request-key",), False),
)
"""5.4's runs: the lesson's four, then two rows and two captures (properties broken, ledgers agreeing), then two
rows for one capture (the retry's call answered from the processor's key)."""


def captures_after_charge_crash(answer: Any) -> Said:
    """5.1: crash-after-processor with the crash after the charge row, before the COMMIT."""
    given = answers.count(answer)
    summary = story("crash-after-processor",
                    sets=["faults=[{kind='crash', point='after_charge', attempt=1}]"]).summary
    return by_count(given, summary["captures"], "5.1", charges=summary["charges"], captures=summary["captures"])


def one_capture_setting(answer: Any) -> Said:
    """5.2: processor-timeout with one row and one capture, the story's design: the processor gets the key."""
    sets = answers.settings(answer, "")
    summary = story("processor-timeout", sets=sets).summary
    if summary["design"] != load("processor-timeout").design:
        return wrong("course.5.2.design", design=summary["design"])
    if summary["charges"] == 1 and summary["captures"] == 1:
        return right("course.5.2.right")
    return wrong("course.5.2.wrong", charges=summary["charges"], captures=summary["captures"])


def rows_and_captures(answer: Any) -> Said:
    """5.3: completer-finishes without the completer: rows and captures at the end."""
    rows, captures = answers.pair(answer)
    summary = story("completer-finishes", "no-completer").summary
    return pair_said((rows, captures), (summary["charges"], summary["captures"]), "course.5.3", "rows", "captures")


def money_matches_records(answer: Any) -> Said:
    """5.4: a function of a run, True when it has as many charge rows as captures."""
    function = answers.function(answer)
    got = []
    for case in LEDGER_CASES:
        run = story(case.name, case.variant, sets=list(case.sets))
        try:
            value = function(run)
        except Exception as error:  # the student's code: its error is the hint
            raise not_yet("course.5.4.failed", run=case.label(), error=f"{type(error).__name__}: {error}") from None
        got.append((case, run, value))
    if all(value is None for _, _, value in got):
        return wrong("course.5.4.none")
    for case, _, value in got:
        if not isinstance(value, bool):
            return wrong("course.5.4.not_bool", run=case.label(), value=repr(value))
    wrong_runs = [(case, run, value) for case, run, value in got if value != case.expected]
    if not wrong_runs:
        return right("course.5.4.right", n=len(LEDGER_CASES))
    case, run, value = wrong_runs[0]
    return wrong("course.5.4.wrong", run=case.label(), charges=run.summary["charges"],
                 captures=run.summary["captures"], expected=case.expected, value=value, n=len(wrong_runs),
                 runs=len(LEDGER_CASES))
