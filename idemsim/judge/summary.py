"""Checks: the summary of a run and its verdicts, read from the trace and the final tables.

`summarize` derives every number a view shows (charges, what each operation saw, replays, the longest wait
on the index, key records held) and the verdict against the scenario's expectation for the design, and returns
them as one `idemsim.judge.run_summary.Summary`, made whole at once. Its ``verdict`` (kept as it was) judges the
expectation's measured fields:

- ``held``: every expected value matched;
- ``failed``: at least one did not (``failures`` says which, expected vs got);
- ``vacuous``: a scripted fault never happened, so the run proves nothing (checked before anything else);
- ``no expectation``: the scenario states none for this design; the outcome is reported, not judged.

Two verdicts say apart what that one mixed: the **design's verdict** (``design_verdict``), ``holds`` when every
property of `idemsim.judge.properties` holds and ``broken`` otherwise, judged on the ledgers whatever the file
expects; and the **story's check** (``story_check``, `story_check`): whether the run shows what the file says the
article shows, its declared ``breaks`` included. `exit_code` is what ``idemsim run`` exits with.
"""

from __future__ import annotations

from typing import Any

from ..base.i18n import text
from ..scenario.schema import shapes
from .properties import PROPERTIES, forget_facts
from .properties import check as check_properties
from .run_summary import Summary
from .statistics import percentile

WAIT_TOLERANCE = 0.05
"""Seconds by which a measured wait may differ from the expected one."""

def _seen(statuses: list, named: dict[int, list]) -> list:
    """What the client saw of each attempt, with "timeout" where it got no answer: its statuses list itself if
    it got every answer, else one list for each such list (equal lists of statuses are one list: `idemsim.model.client`
    ``_seen``), kept in ``named`` by its id."""
    if None not in statuses:
        return statuses
    seen = named.get(id(statuses))
    if seen is None:
        seen = named[id(statuses)] = ["timeout" if s is None else s for s in statuses]
    return seen


def summarize(run) -> Summary:
    """The run's summary: every field measured, then the verdict on them."""
    tally = run.tally
    replays = len(tally.replays)
    violations = check_properties(run)
    forget_facts(run)  # a load's are as big as the lists below: not both at once
    key_rows = run.tables["idempotency_keys"]  # (the committed key records left)
    keys_held, keys_in_progress = len(key_rows), sum(row["status"] == "in_progress" for row in key_rows)
    clients = [operation.client for operation in shapes(run.scenario.operations)]
    named: dict[int, list] = {}
    operations = [_Operation(
        r.op,
        r.logical,
        clients[r.logical - 1] + ("-dup" if r.logical != r.op else ""),
        r.keys[0] if r.keys else None,
        r.outcome,
        r.status,
        r.attempts,
        _seen(r.statuses, named),
    ).__dict__ for r in run.operations]
    first = operations[0]
    measured: dict[str, Any] = {
        "design": run.design,
        "charges": len(run.tables["charges"]),
        "captures": len(run.ledger),
        "outcome": first["outcome"],
        "status": first["status"],
        "operations": operations,
        "client_believes": len({op["logical"] for op in operations if op["outcome"] == "ok"}),
        "replays": replays,
        "replay_identical": None if replays == 0 else not any(v.property == "replay-identical"
                                                               for v in violations),
        "wait_seconds": round(tally.longest_wait, 6),
        "keys_held": keys_held,
        "keys_in_progress": keys_in_progress,
        "balance": run.state["balance"],
        "items": run.state["items"],
        "log_lines": run.state["log_lines"],
        "faults": [{"fault": f.describe(), "fired": i in run.fired} for i, f in enumerate(run.scenario.faults)],
        "ledger": [c.to_dict() for c in run.ledger],
        "attempts_per_second": tally.attempts_per_second(),
        "waiting_peak": tally.waiting_peak,
    }
    if run.scenario.api.pool_size is not None:

        waits = tally.pool_waits + [0.0] * (tally.arrivals - len(tally.pool_waits))
        measured["pool_wait"] = {"p50": percentile(waits, 50), "p95": percentile(waits, 95),
                                 "max": round(max(waits, default=0.0), 6)}
        measured["pool_wait_max"] = round(max(waits, default=0.0), 6)
    measured["violations"] = [v.to_dict() for v in violations]
    judged, failures = verdict(run, measured)
    broken = broken_properties(measured["violations"])
    expectation = run.scenario.expect.get(run.design)
    declared = None if expectation is None or expectation.breaks is None else \
        [p for p in PROPERTIES if p in expectation.breaks]
    checked = story_check(judged, broken, declared)
    return Summary.from_dict({**measured, "verdict": judged, "failures": failures,
                              "design_verdict": "broken" if violations else "holds", "story_check": checked,
                              "story_says": story_says(checked, run, measured, broken, declared),
                              "expected_breaks": declared, "stuck": stuck_of(run)})


def stuck_of(run) -> list[str]:
    """What was still open when the run ended, each a short English sentence: the run's own ``stuck`` (the
    simulation fills it with messages of the catalogue when a run ends with work left open), each said in English,
    else nothing."""
    return [str(item) for item in getattr(run, "stuck", None) or []]


def broken_properties(violations: list[dict[str, Any]]) -> list[str]:
    """The properties ``violations`` (a summary's) break, each once, in report order."""
    broken = {v["property"] for v in violations}
    return [p for p in PROPERTIES if p in broken]


def story_check(verdict: str, broken: list[str], declared: list[str] | None) -> str:
    """The story's check from the expectation's verdict (`verdict`) and the properties broken against those the
    file declares: ``vacuous`` and ``no expectation`` as the verdict; ``reproduces`` when every stated value
    matched and the broken properties are those declared (``declared`` None, a file that states no ``breaks``:
    not checked); ``differs`` otherwise."""
    if verdict in ("vacuous", "no expectation"):
        return verdict
    if verdict == "failed" or (declared is not None and set(broken) != set(declared)):
        return "differs"
    return "reproduces"


FIGURES = ("charges", "captures", "balance")
"""The expected values a story's check names when it reproduces (the others are said by the views)."""


def story_says(check: str, run, measured: dict[str, Any], broken: list[str], declared: list[str] | None,
               lang: str = "en") -> str:
    """The story's check in a short sentence from the catalogue: ``reproduces the article: 2 charges``,
    ``does not reproduce the article: expected 1 charge, got 2``, ``proves nothing: …`` or ``not checked: …``."""
    if check == "vacuous":
        return text("meaning.vacuous", lang)
    if check == "no expectation":
        return text("story.no_expectation", lang)
    stated = run.scenario.expect[run.design].stated()
    if check == "reproduces":
        what = text("list.sep", lang).join(_figure(name, stated[name], lang) for name in FIGURES if name in stated)
        return text("story.reproduces_what", lang, what=what) if what else text("story.reproduces", lang)
    got = _got(measured)
    parts = []
    for name, expected in stated.items():
        actual = got[name]
        if _matches(name, expected, actual):
            continue
        if name in FIGURES:
            parts.append(text("story.expected_got", lang, expected=_figure(name, expected, lang), got=actual))
        else:
            parts.append(text("expect.failure", lang, field=name, expected=repr(expected), got=repr(actual)))
    if declared is not None and set(broken) != set(declared):
        sep, nothing = text("list.sep", lang), text("verdict.nothing", lang)
        parts.append(text("story.breaks_differ", lang, expected=sep.join(declared) or nothing,
                          got=sep.join(broken) or nothing))
    return text("story.differs_what", lang, what=text("list.sep", lang).join(parts))


def _figure(name: str, value: Any, lang: str) -> str:
    if name == "balance":
        return text("verdict.balance", lang, n=value)
    return text(f"said.{name}", lang, n=value, s="" if value == 1 else "s")


def exit_code(summary: Summary) -> int:
    """What ``idemsim run`` exits with for one run: 0 when the story reproduces what its file states (its declared
    breaks included) or the file states nothing for the design and no property broke; 1 when the story's check
    differs or is vacuous, or a property broke that the file does not declare (a file that states an expectation
    but no ``breaks`` declares none to check: its runs exit as their check says)."""
    check = summary.story_check
    if check in ("differs", "vacuous"):
        return 1
    if check == "no expectation" and summary.violations:
        return 1
    declared = summary.expected_breaks
    if declared is not None and any(p not in declared for p in broken_properties(summary.violations)):
        return 1
    return 0


# A load's summary holds an item per operation: the attribute dict of an instance of this class, a plain `dict`
# (JSON, equality and order as a literal's) whose keys CPython keeps in one table shared by every instance of the
# class (a split table), so that an item holds only its values: about half the memory of a dict literal.
class _Operation:
    def __init__(self, op, logical, client, key, outcome, status, attempts, seen) -> None:
        self.op = op
        self.logical = logical
        self.client = client
        self.key = key
        self.outcome = outcome
        self.status = status
        self.attempts = attempts
        self.seen = seen


def verdict(run, measured: dict[str, Any]) -> tuple[str, list[str]]:
    """The verdict and its failures on what a run measured (a summary's keys, up to its violations)."""
    unfired = [f["fault"] for f in measured["faults"] if not f["fired"]]
    if unfired:
        return "vacuous", [f"the fault never happened: {f}" for f in unfired]
    expectation = run.scenario.expect.get(run.design)
    if expectation is None:
        return "no expectation", []
    got = _got(measured)
    failures = []
    for name, expected in expectation.stated().items():
        actual = got[name]
        if not _matches(name, expected, actual):
            failures.append(f"{name}: expected {expected!r}, got {actual!r}")
    return ("failed" if failures else "held"), failures


def _got(measured: dict[str, Any]) -> dict[str, Any]:
    """What an expectation's fields are compared with: the summary's keys, and what each operation saw."""
    return {**measured, "seen": measured["operations"][0]["seen"],
            "outcomes": [op["outcome"] for op in measured["operations"]],
            "seen_by_op": [op["seen"] for op in measured["operations"]]}


def _matches(name: str, expected: Any, actual: Any) -> bool:
    if name == "wait_seconds":
        return abs(actual - expected) <= WAIT_TOLERANCE
    return actual == expected


SHOWS = {
    "at-most-one-charge": "meaning.double_charge",
    "at-most-one-capture": "meaning.double_capture",
    "no-stuck-key": "meaning.stuck_key",
    "client-view": "meaning.misled_client",
    "replay-identical": "meaning.different_replay",
    "customer-can-find-out": "meaning.cannot_find_out",
    "no-lost-update": "meaning.lost_update",
}
"""What a run that breaks a property shows the reader, in a few words (catalogue entries)."""


def meaning(verdict: str, violations: list[dict[str, str]], lang: str = "en") -> str:
    """What a row's verdict means for the reader: a broken design's green ``held`` is no good design.

    ``correct`` when no property is broken; ``reproduces …`` naming what the run shows when some are (whether
    or not the scenario expected it); ``proves nothing`` when its fault never happened; and a failed
    expectation says the run did not show what the scenario states."""
    if verdict == "vacuous":
        return text("meaning.vacuous", lang)
    if verdict == "failed":
        return text("meaning.failed", lang)
    broken = [v["property"] for v in violations]
    shown: list[str] = []
    for v in violations:
        prop = v["property"]
        if prop == "ledger-agrees":
            phrase = "meaning.orphan_capture" if "has no charge row" in v["message"] else "meaning.uncaptured_charge"
        elif prop == "exactly-one-on-success":
            if len(set(broken)) > 1:
                continue  # what else broke says more
            phrase = "meaning.success_without"
        else:
            phrase = SHOWS[prop]
        if phrase not in shown:
            shown.append(phrase)
    if not shown:
        return text("meaning.correct", lang)
    return text("meaning.reproduces", lang, what=("、" if lang == "ja" else ", ").join(text(p, lang) for p in shown))


LOAD_OPERATIONS = 20
"""A run with more operations than this is a load: its text view summarises instead of listing every event."""


def is_load(run) -> bool:
    return len(run.operations) > LOAD_OPERATIONS
