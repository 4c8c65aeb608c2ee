"""A run's two verdicts in the reader's words, for every view: the design's and the story's check.

- *The design's verdict* (``design_verdict``): ``holds`` when every property holds on the ledgers, else ``broken``.
  A broken design is said as what went wrong (``2 charge rows for one purchase``), never as the name of the
  property it broke (``broken: at-most-one-charge`` reads as the opposite of the problem).
- *The story's check* (``story_check``): whether the run shows what the scenario file says the article shows
  (``reproduces the article: 2 charges · client saw timeout, 201 → ok 201``). It is a fact about the story, not
  praise of the design: its words and colour are neutral.

Guarantees: every word comes from the catalogue (`idemsim.base.i18n`), in ``lang``; `green` is true only for a
design that holds, so a view that colours by it draws nothing green on a run whose design broke a property.
Nothing here reads a trace: a summary (or a compare row) and the scenario's expectation are enough.
"""

from __future__ import annotations

import json
from typing import Any

from ..base.i18n import MESSAGES
from ..base.i18n import text as t
from ..judge.properties import PROPERTIES
from .names import outcome_name

HOLDS = "holds"
"""The design's verdict when every property holds; ``broken`` otherwise."""


def green(design_verdict: str) -> bool:
    """Whether a view may draw this run's verdict, and the client's ``ok``, in green: only when the design holds."""
    return design_verdict == HOLDS


# -- the design's verdict ---------------------------------------------------------------------------------------
def problems(violations: list[dict[str, Any]], lang: str = "en") -> list[str]:
    """What went wrong, one phrase a kind of problem, in the order the properties broke: each violation said by
    its catalogue entry (``problem.charged`` for ``viol.charged``), else by its property (``problem.<id>``), else
    as ``<property> does not hold``; of several violations of one kind (a load's), the one with the largest
    count. ``exactly-one-on-success`` is left out when another property broke too: what else broke says more."""
    broken = {v["property"] for v in violations}
    worst: dict[tuple[str, str], dict[str, Any]] = {}
    for v in violations:
        if v["property"] == "exactly-one-on-success" and len(broken) > 1:
            continue
        kind = (v["property"], str(v.get("key") or ""))
        if kind not in worst or _count(v) > _count(worst[kind]):
            worst[kind] = v
    out: list[str] = []
    for v in worst.values():
        phrase = _problem(v, lang)
        if phrase not in out:
            out.append(phrase)
    return out


def _count(v: dict[str, Any]) -> int:
    n = (v.get("fields") or {}).get("n")
    return n if isinstance(n, int) else 0


def _problem(v: dict[str, Any], lang: str) -> str:
    fields = v.get("fields") or {}
    by_message = "problem." + str(v.get("key") or "").removeprefix("viol.")
    for message in (by_message, f"problem.{v['property']}"):
        if message in MESSAGES:
            return t(message, lang, **fields)
    name = t(f"property.{v['property']}", lang) if f"property.{v['property']}" in MESSAGES else v["property"]
    return t("problem.generic", lang, name=name)


def design_words(design_verdict: str, violations: list[dict[str, Any]], lang: str = "en",
                 names: bool = False) -> str:
    """The design's verdict in words: ``holds — all 9 properties hold`` (``names``: and which they are) or
    ``broken — 2 charge rows for one purchase; …``."""
    if green(design_verdict):
        if names:
            return t("design.holds_names", lang, n=len(PROPERTIES),
                     names=t("list.sep", lang).join(t(f"property.{p}", lang) for p in PROPERTIES))
        return t("design.holds", lang, n=len(PROPERTIES))
    return t("design.broken", lang, problems=t("problem.sep", lang).join(problems(violations, lang)))


def short_design_words(design_verdict: str, violations: list[dict[str, Any]], lang: str = "en") -> str:
    """The design's verdict for a table cell: ``holds``, or ``broken — `` and what went wrong."""
    return t("design.short_holds", lang) if green(design_verdict) else design_words(design_verdict, violations, lang)


# -- the story's check ------------------------------------------------------------------------------------------
def story_words(story_check: str, stated: dict[str, Any] | None = None, lang: str = "en") -> str:
    """The story's check in neutral words; a story that reproduces the article says what it reproduced when
    ``stated`` (the expectation's stated fields) is given: ``reproduces the article: 2 charges · …``."""
    if story_check == "reproduces":
        what = said(stated or {}, lang)
        return t("story.reproduces_what", lang, what=what) if what else t("story.reproduces", lang)
    if story_check == "differs":
        return t("story.differs", lang)
    if story_check == "vacuous":
        return t("meaning.vacuous", lang)
    return t("story.no_expectation", lang)


def short_story_words(story_check: str, lang: str = "en") -> str:
    """The story's check for a table cell or a figure: ``reproduces the article``, ``does not reproduce the
    article``, ``proves nothing: …`` or ``no expectation``."""
    if story_check == "no expectation":
        return t("verdict.no expectation", lang)
    return story_words(story_check, None, lang)


def story_reasons(story_check: str, failures: list[str], violations: list[dict[str, Any]],
                  expected_breaks: list[str] | None, lang: str = "en") -> list[str]:
    """Why a story's check did not reproduce the article, one line each: every failed expectation (`failure_words`)
    and, when the properties broken are not those the file declares, both lists (``expected at-most-one-charge
    broken, got nothing``)."""
    out = [failure_words(failure, lang) for failure in failures]
    broken = [p for p in PROPERTIES if any(v["property"] == p for v in violations)]
    broken += [p for p in dict.fromkeys(v["property"] for v in violations) if p not in broken]
    if story_check == "differs" and expected_breaks is not None and set(broken) != set(expected_breaks):
        nothing = t("verdict.nothing", lang)
        out.append(t("story.breaks_differ", lang, expected=", ".join(expected_breaks) or nothing,
                     got=", ".join(broken) or nothing))
    return out


def failure_words(failure: str, lang: str = "en") -> str:
    """Why a story's check failed, in ``lang`` (a summary keeps its ``failures`` in English):
    ``charges: expected 1, got 2``, or that a fault never happened."""
    if lang == "en":
        return failure
    if failure.startswith("the fault never happened: "):
        return t("expect.never", lang, fault=failure.removeprefix("the fault never happened: "))
    field, sep, rest = failure.partition(": expected ")
    expected, sep2, got = rest.partition(", got ")
    return t("expect.failure", lang, field=field, expected=expected, got=got) if sep and sep2 else failure


def said(stated: dict[str, Any], lang: str = "en") -> str:
    """An expectation's stated fields in the reader's words: ``2 charges · client saw timeout, 201 → ok 201``.
    The declared ``breaks`` are left out (the design's verdict says what broke)."""
    parts: list[str] = []
    sep = t("list.sep", lang)
    seen, outcome, status = stated.get("seen"), stated.get("outcome"), stated.get("status")
    end = " ".join(str(x) for x in (outcome_name(outcome, lang) if outcome else None, status) if x is not None)
    for name, value in stated.items():
        if name in ("outcome", "status") and (seen is not None or name == "status" and outcome):
            continue  # said with what the client saw, or with the outcome
        if name == "seen":
            parts.append(t("said.client", lang, seen=sep.join(_status(x, lang) for x in value) or
                           t("term.nothing", lang)) + (f" → {end}" if end else ""))
        elif name in ("outcome", "status"):
            parts.append(t("said.ends", lang, end=end))
        elif name == "outcomes":
            parts.append(t("said.outcomes", lang, outcomes=sep.join(outcome_name(x, lang) for x in value)))
        elif name == "seen_by_op":
            parts.append(t("said.seen_by_op", lang, seen=" / ".join(
                sep.join(_status(x, lang) for x in op) or t("term.nothing", lang) for op in value)))
        elif name == "replay_identical":
            parts.append(t("cmp.replay_identical" if value else "cmp.replay_different", lang))
        elif name == "wait_seconds":
            parts.append(t("cmp.waited", lang, seconds=value))
        elif name == "balance":
            parts.append(t("verdict.balance", lang, n=value))
        elif name == "items":
            parts.append(t("said.items", lang, items=json.dumps(value, ensure_ascii=False)))
        elif name == "breaks":
            continue
        elif f"said.{name}" in MESSAGES:
            parts.append(t(f"said.{name}", lang, n=value, s="" if value == 1 else "s"))
        else:
            parts.append(f"{name}={value!r}")
    return t("said.sep", lang).join(parts)


def _status(status: Any, lang: str) -> str:
    return t("tl.timeout", lang) if status in (None, "timeout") else str(status)


