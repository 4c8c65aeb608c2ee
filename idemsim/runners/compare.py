"""``idemsim compare``: one story's faults under every design, side by side, as plain data.

A comparison takes one story of a scenario (its main story, or one variant) and runs it under every design in
the scenario's ``compare`` list (all five by default), with the same seed and the same fault schedule. It adds
the *relevant option sets*: every other story of the scenario that differs from this one only in design
options (`idemsim.model.designs.DESIGN_OPTIONS`, e.g. a variant that sets ``api.lease``) is run as well, under
each design whose ``options`` include one of them and that the story states an expectation for, and is judged by
that expectation. So ``compare crash-in-progress`` shows committed-first with and without its lease,
``compare key-reuse`` the fingerprint check on and off, and ``compare lost-response`` exactly the five designs.

Guarantees: every row is a run that ``idemsim run`` reproduces (same story, design and seed); a row's verdict
is that run's verdict; a row's ``waits`` and ``replayed`` give each operation (in the order of its ``clients``)
its own waits on the index and replayed answers, so a view puts them on the client that waited or got them;
nothing here prints. `idemsim.views.terminal` draws the table; ``to_json`` is the JSON output,
``{"version": 1, "rows": [...]}``, each row with at least ``design`` and ``charges``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..judge.summary import meaning
from ..model.designs import DESIGN_OPTIONS, DESIGNS
from ..scenario.fault_text import with_faults
from ..scenario.schema import Scenario, runs
from ..scenario.schema import variant as pick
from .simulation import simulate

FORMAT_VERSION = 1

_RUN_FIELDS = ("seed", "client", "operations", "network", "faults")
"""What, besides the API options, makes two stories the same run."""


@dataclass
class Comparison:
    """The rows of one comparison, and what they were run from."""

    scenario: str
    variant: str | None
    seed: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    source: str | None = None
    """What the user named: the scenario's name, or the path of its file (for the commands shown)."""
    runs: list = field(default_factory=list)
    """The runs behind the rows, in the same order (for figures; not in the JSON)."""

    def to_json(self) -> dict[str, Any]:
        return {"version": FORMAT_VERSION, "scenario": self.scenario, "variant": self.variant, "seed": self.seed,
                "rows": self.rows}

    @property
    def exit_code(self) -> int:
        """0 when no row failed, 1 when one did (a failed or vacuous verdict)."""
        return 1 if any(row["verdict"] in ("failed", "vacuous") for row in self.rows) else 0


def option_differences(story: Scenario, other: Scenario) -> dict[str, Any] | None:
    """The design options ``other`` sets differently from ``story``, or None if it is another run altogether
    (other faults, operations, client, network or non-option API fields) or the very same one."""
    if any(getattr(story, f) != getattr(other, f) for f in _RUN_FIELDS):
        return None
    mine, theirs = story.api.model_dump(), other.api.model_dump()
    differing = {k: v for k, v in theirs.items() if mine[k] != v}
    if not differing or any(k not in DESIGN_OPTIONS for k in differing):
        return None
    return differing


def compare(scenario: Scenario, variant: str | None = None, seed: int | None = None,
            sets: list[str] | None = None, designs: list[str] | None = None, *,
            faults: list | None = None) -> Comparison:
    """Run story ``variant`` (None: the main story) of ``scenario`` under every design (or ``designs``), plus
    option sets; with ``faults`` (``--faults``), every story has those faults instead of its own."""

    if variant is not None:
        pick(scenario, variant)  # an unknown variant is an InputError that names the valid ones
    stories = runs(scenario, sets)
    if faults is not None:
        stories = [with_faults(s, faults) for s in stories]
    story = next(s for s in stories if s.variant == variant)
    siblings = [(other, diff) for other in stories if other is not story
                for diff in [option_differences(story, other)] if diff is not None]
    designs = designs or story.compare or list(DESIGNS)
    result = Comparison(scenario.name, story.variant, story.seed if seed is None else seed)
    for design in designs:
        result.runs.append(simulate(story, design, seed))
        result.rows.append(_row(result.runs[-1], {}))
        for other, diff in siblings:
            if design in other.expect and any(k in DESIGNS[design].options for k in diff):
                result.runs.append(simulate(other, design, seed))
                result.rows.append(_row(result.runs[-1], diff))
    return result


def _row(run, options: dict[str, Any]) -> dict[str, Any]:
    s = run.summary
    label = run.design + (" (" + ", ".join(f"{k}={_value(v)}" for k, v in options.items()) + ")" if options
                          else "")
    return {
        "design": run.design,
        "options": options,
        "label": label,
        "story": run.scenario.variant,
        "charges": s.charges,
        "captures": s.captures,
        "outcome": s.outcome,
        "status": s.status,
        "outcomes": [op["outcome"] for op in s.operations],
        "seen": [op["seen"] for op in s.operations],
        "clients": [op["client"] for op in s.operations],
        "client_believes": s.client_believes,
        "wait_seconds": s.wait_seconds,
        "waits": waits_by_operation(run),
        "replays": s.replays,
        "replayed": replays_by_operation(run),
        "replay_identical": s.replay_identical,
        "keys_held": s.keys_held,
        "verdict": s.verdict,
        "meaning": meaning(s.verdict, s.violations),
        "violations": s.violations,
        "failures": s.failures,
        "design_verdict": s.design_verdict,
        "story_check": s.story_check,
        "expected_breaks": s.expected_breaks,
    }


def waits_by_operation(run) -> list[float]:
    """The longest wait on the index of each operation's statements, in the summary's ``operations`` order (0.0
    for one that never waited): a statement waits in the handler that serves a request, and the request is an
    attempt of one operation (``"2.1"``: operation 2). Read from the run's trace; their largest is the summary's
    ``wait_seconds``."""
    operation_of: dict[str, int] = {}
    longest: dict[int, float] = {}
    for e in run.trace:
        if e.kind == "request.arrive" and e.data.get("handler"):
            operation_of[e.data["handler"]] = _operation(e.data["request"])
        elif e.kind == "db.result" and e.data["waited"] and e.actor in operation_of:
            op = operation_of[e.actor]
            longest[op] = max(longest.get(op, 0.0), round(e.data["waited"], 6))
    return [longest.get(op["op"], 0.0) for op in run.summary.operations]


def replays_by_operation(run) -> list[int]:
    """How many responses the API replayed from a key record to each operation, in the summary's order."""
    replayed: dict[int, int] = {}
    for request, *_ in run.tally.replays:
        replayed[_operation(request)] = replayed.get(_operation(request), 0) + 1
    return [replayed.get(op["op"], 0) for op in run.summary.operations]


def _operation(request: str) -> int:
    """The operation a request id belongs to: ``"2.1"`` (operation 2, attempt 1) -> 2."""
    return int(request.partition(".")[0])


def _value(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float) and v.is_integer():
        return f"{v:g}"
    return str(v)
