"""The spec's agreement rule between a model run and a PostgreSQL run of the same schedule.

Two results agree when every step has the same `rows`, `row` and `error`, the tables are equal, and every step's
`end` differs by at most 0.1 s + 5 % of PostgreSQL's duration for that step. Where PostgreSQL may choose — which
of several statements waiting on one transaction goes first when it ends — the model is run under *every* order
PostgreSQL could choose, and the PostgreSQL result agrees if it agrees with any of those runs. Waiting inserts
may go in any order (all are woken at once and race). Waiting UPDATE/DELETEs and row locks (`lock_key`,
`claim_key`, `set_point`) queue on a tuple lock: when the holder rolls back, the first in the queue takes the row
it waited for and the others follow it (queue order); when the holder commits, any order is accepted — after an
update or delete they all chase the new row version (EvalPlanQual) and race; after a lock that changed nothing
PostgreSQL keeps the queue order, one of the orders accepted.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..base.errors import Message
from ..model.db.mvcc import ABORTED, LockWait
from .schedule import ModelRun, Schedule, run_on_model

ABSOLUTE_TOLERANCE = 0.1
RELATIVE_TOLERANCE = 0.05
MAX_MODEL_RUNS = 720
"""A bound on the wake orders tried (6 waiters on one rollback)."""


def tolerance(pg_duration: float) -> float:
    """How far a step's `end` may be from PostgreSQL's: 0.1 s + 5 % of PostgreSQL's duration."""
    return ABSOLUTE_TOLERANCE + RELATIVE_TOLERANCE * max(0.0, pg_duration)


@dataclass
class StepVerdict:
    """One step of one session, both sides, and whether they agree."""

    session: str
    index: int
    """0-based position in the session."""
    model: dict | None
    postgres: dict | None
    problems: list[Message] = field(default_factory=list)
    """Why they disagree, in words of the catalogue (`idemsim.base.errors.Message`); empty when they agree."""

    @property
    def agrees(self) -> bool:
        return not self.problems


@dataclass
class Comparison:
    """A PostgreSQL result against the model run that agrees best with it."""

    steps: list[StepVerdict]
    tables_problems: list[Message]
    """The tables that differ, each in words of the catalogue; empty when the tables are equal."""
    model: ModelRun
    postgres: dict
    model_runs: int
    """How many wake orders the model was run under."""

    @property
    def agrees(self) -> bool:
        return not self.tables_problems and all(step.agrees for step in self.steps)


def compare_documents(model: dict, postgres: dict) -> tuple[list[StepVerdict], list[Message]]:
    """Per-step verdicts and the tables that differ, by the spec's rule."""
    verdicts: list[StepVerdict] = []
    for session in postgres["sessions"].keys() | model["sessions"].keys():
        ours, theirs = model["sessions"].get(session, []), postgres["sessions"].get(session, [])
        for index in range(max(len(ours), len(theirs))):
            m = ours[index] if index < len(ours) else None
            p = theirs[index] if index < len(theirs) else None
            verdicts.append(StepVerdict(session, index, m, p, _step_problems(m, p)))
    verdicts.sort(key=lambda v: (list(postgres["sessions"]).index(v.session)
                                 if v.session in postgres["sessions"] else 999, v.index))
    differ = [Message("db.cmp.differ", name=table, model=str(model["tables"].get(table)),
                      postgres=str(postgres["tables"][table]))
              for table in postgres["tables"] if model["tables"].get(table) != postgres["tables"][table]]
    return verdicts, differ


def _step_problems(m: dict | None, p: dict | None) -> list[Message]:
    if m is None or p is None:
        return [Message("db.cmp.missing_model" if m is None else "db.cmp.missing_postgres")]
    problems = [Message("db.cmp.differ", name=name, model=repr(m[name]), postgres=repr(p[name]))
                for name in ("op", "rows", "row", "error") if m[name] != p[name]]
    allowed = tolerance(p["end"] - p["start"])
    if abs(m["end"] - p["end"]) > allowed:
        problems.append(Message("db.cmp.end", model=m["end"], postgres=p["end"], allowed=allowed))
    return problems


def racy_instants(run: ModelRun) -> list[float]:
    """Instants at which two or more sessions, just released from a wait, go straight on to their next step.

    Their next statements run concurrently on PostgreSQL, in an order nobody can know (the model takes them in
    turn); a schedule without such instants is determinate, and the comparison of one with them can fail on a
    race rather than on a difference. (A session whose wait ended in an error and that goes on to end its
    already aborted transaction does not count: that step changes nothing another session can see.)
    """
    released: dict[float, int] = {}
    for name, entries in run.document["sessions"].items():
        for index, (entry, result) in enumerate(zip(entries, run.results[name])):
            if result is None or result.waited == 0 or index + 1 == len(entries):
                continue
            following = entries[index + 1]
            if following["start"] != entry["end"]:
                continue
            if entry["error"] is not None and following["op"] in ("commit", "rollback", "disconnect"):
                continue
            released[entry["end"]] = released.get(entry["end"], 0) + 1
    return sorted(t for t, count in released.items() if count > 1)


class WakeChoices:
    """A `Database.wake_order` that follows a given list of choices, records the ones it made, and defaults
    to arrival order; a transaction ending with several waiters is a choice."""

    def __init__(self, prefix: Sequence[int] = ()):
        self.prefix = list(prefix)
        self.made: list[tuple[int, int]] = []
        """(choice, number of options) at each choice point, in order."""

    def __call__(self, waits: Sequence[LockWait]) -> Sequence[LockWait]:
        if len(waits) < 2:
            return waits
        options = allowed_orders(waits)
        if len(options) == 1:
            return waits
        depth = len(self.made)
        choice = self.prefix[depth] if depth < len(self.prefix) else 0
        self.made.append((choice, len(options)))
        return options[choice]


def allowed_orders(waits: Sequence[LockWait]) -> list[tuple[LockWait, ...]]:
    """Every order PostgreSQL could resume `waits` (all waiting on one transaction that just ended) in, arrival
    order first: any order, except that after a rollback the waiters that lock the row keep their queue order."""
    if waits[0].holder.state != ABORTED:
        return list(itertools.permutations(waits))
    queue = [w for w in waits if not w.inserting]
    return [order for order in itertools.permutations(waits) if [w for w in order if not w.inserting] == queue]


def model_runs(schedule: Schedule, scale: float = 1.0) -> Iterator[ModelRun]:
    """The model's runs of `schedule` under every allowed wake order (the default order first)."""
    pending: list[list[int]] = [[]]
    runs = 0
    while pending and runs < MAX_MODEL_RUNS:
        prefix = pending.pop()
        chooser = WakeChoices(prefix)
        yield run_on_model(schedule, scale, wake_order=chooser)
        runs += 1
        for depth in range(len(prefix), len(chooser.made)):
            base = [choice for choice, _ in chooser.made[:depth]]
            pending.extend(base + [alternative] for alternative in range(chooser.made[depth][1] - 1, 0, -1))


def compare(schedule: Schedule, postgres: dict, scale: float = 1.0) -> Comparison:
    """Judge a PostgreSQL result of `schedule` against the model (every wake order PostgreSQL could choose)."""
    best: Comparison | None = None
    count = 0
    for run in model_runs(schedule, scale):
        count += 1
        steps, tables_problems = compare_documents(run.document, postgres)
        candidate = Comparison(steps, tables_problems, run, postgres, count)
        if candidate.agrees:
            best = candidate
            break
        if best is None:
            best = candidate
    assert best is not None
    best.model_runs = count
    return best
