"""The runs a check judges an answer on: a shipped story (or one of its variants), under a design, with ``--set``
texts, as ``idemsim.run`` makes it; and what a check reads of a run that the summary does not hold.

A student's ``--set`` text that idemsim refuses raises `idemsim.base.errors.InputError`, which the check turns
into "not yet" with idemsim's own one line (`idemsim.course.check`).
"""

from __future__ import annotations

from typing import Any

from ..runners.rows import records
from ..runners.simulation import Run, simulate
from ..scenario.schema import load, variant


def story(name: str, variant_name: str | None = None, *, design: str | None = None,
          sets: list[str] | None = None) -> Run:
    """Run the shipped story ``name`` (its variant ``variant_name``), as ``idemsim.run`` does."""
    scenario = load(name, sets)
    if variant_name is not None:
        scenario = variant(scenario, variant_name, sets)
    return simulate(scenario, design)


def events(run: Run, kind: str) -> list[dict[str, Any]]:
    """The run's events of ``kind`` (``"processor.capture"``, ``"response.send"``), as plain records."""
    return [row for row in records(run) if row["kind"] == kind]


def seen(run: Run, op: int = 0) -> str:
    """What the client of operation ``op`` saw, as the summary lists it: ``['timeout', 201]``."""
    return str(run.summary["operations"][op]["seen"])
