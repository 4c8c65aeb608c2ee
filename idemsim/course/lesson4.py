"""The checks of Lesson 4, *Keys expire and get reused*: retention against the retry window, a client that
retries in time, the fingerprint, one key per purchase."""

from __future__ import annotations

from typing import Any

from ..scenario.schema import load
from . import answers
from .checked import Said, pair_said, right, wrong
from .stories import seen, story

KEY_STRATEGIES = ("none", "per-operation", "per-attempt")


def shortest_safe_ttl(answer: Any) -> Said:
    """4.1: the shortest retention safe by reasoning: the client's retry window."""
    given = answers.number(answer, "seconds")
    window = load("ttl").client.retry_window
    if given == window:
        return right("course.4.1.right", window=f"{window:g}")
    return wrong("course.4.1.too_long" if given > window else "course.4.1.too_short")


def client_fix(answer: Any) -> Said:
    """4.2: keep the 10 s retention; a client whose late retry comes while the record lives."""
    sets = answers.settings(answer, "client", many=True)
    run = story("ttl-shorter-than-retry-window", sets=sets)
    outcomes = {op["outcome"] for op in run.summary["operations"]}
    if run.summary["charges"] == 4 and outcomes == {"ok"}:
        return right("course.4.2.right", seen=seen(run))
    if outcomes != {"ok"}:
        return wrong("course.4.2.gave_up")
    return wrong("course.4.2.wrong", charges=run.summary["charges"])


def believed_and_charged(answer: Any) -> Said:
    """4.3: key-reuse without the fingerprint check: what the client believes, what was charged."""
    believed, charged = answers.pair(answer)
    summary = story("key-reuse", "no-fingerprint").summary
    return pair_said((believed, charged), (summary["client_believes"], summary["charges"]), "course.4.3",
                     "believed", "charged")


def key_strategy(answer: Any) -> Said:
    """4.4: the key strategy with which new-key-per-retry records one charge and the client ends ok."""
    strategy = answers.choice(answer, KEY_STRATEGIES)
    summary = story("new-key-per-retry", sets=[f"client.key_strategy={strategy}"]).summary
    if summary["charges"] == 1 and summary["outcome"] == "ok":
        return right("course.4.4.right")
    if summary["outcome"] == "fail":
        return wrong("course.4.4.refused", status=summary["status"])
    return wrong("course.4.4.wrong", charges=summary["charges"])
