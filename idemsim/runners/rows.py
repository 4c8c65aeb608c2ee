"""Results as plain records (a list of dicts), and as a pandas DataFrame when pandas is installed.

`records` reads what a notebook holds and returns rows of plain values, one dict per row, the same keys in
every row of one kind:

=======================  ===================================================================================
a `Run`                  one row per trace event, in order: ``t``, ``actor``, ``target``, ``kind``, ``what``
                         (the event in words, as the timeline prints it), then the event's own data
                         (`idemsim.model.trace` lists it per kind; a DB event adds its whole ``sql``). ``op`` is the
                         operation's number on a client's event and the statement's name on a DB event, as
                         in ``idemsim run --format json``.
a `SweepResult`          one row per point and design, its figures flattened as the CSV's columns
                         (``double_charge.rate``, ``time_to_answer.p95``, ``attempts_per_second.peak`` …)
a `Comparison`           one row per design (and option set), as ``idemsim compare --format json``
=======================  ===================================================================================

`dataframe` is the same rows as a `pandas.DataFrame`. pandas is not a dependency of idemsim: it is imported
only when `dataframe` is called, and its absence is one clear error naming the extra to install
(``pip install 'idemsim[pandas]'``). Nothing here changes or re-runs what it reads.
"""

from __future__ import annotations

from typing import Any

from ..views.timeline import describe
from .compare import Comparison
from .simulation import Run
from .sweep import SweepResult, flat_row

EVENT_KEYS = ("t", "actor", "target", "kind", "what")
"""The keys every row of a run's records starts with."""


def records(result: Any) -> list[dict[str, Any]]:
    """``result`` (a `Run`, a `SweepResult` or a `Comparison`) as a list of plain dicts, one per row."""

    if isinstance(result, Run):
        return _events(result)
    if isinstance(result, SweepResult):
        return [flat_row(row) for row in result.rows]
    if isinstance(result, Comparison):
        return [dict(row) for row in result.rows]
    raise TypeError(f"records() takes a Run, a SweepResult or a Comparison, not {type(result).__name__}")


def dataframe(result: Any):
    """``records(result)`` as a `pandas.DataFrame`; needs pandas (``pip install 'idemsim[pandas]'``)."""
    rows = records(result)
    try:
        import pandas
    except ImportError:
        raise ImportError("idemsim.dataframe() needs pandas, which idemsim does not install by itself: "
                          "pip install 'idemsim[pandas]' (or use idemsim.records(), plain dicts)") from None
    return pandas.DataFrame(rows)


def _events(run) -> list[dict[str, Any]]:

    rows = []
    for event, data in zip(run.trace, run.trace_json()):
        row: dict[str, Any] = {"t": data["t"], "actor": data["actor"], "target": data["target"],
                               "kind": data["kind"], "what": describe(event)}
        for key, value in data["data"].items():
            row[key if key not in EVENT_KEYS else f"data.{key}"] = value
        rows.append(row)
    return rows
