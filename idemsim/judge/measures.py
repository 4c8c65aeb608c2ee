"""What one run counts for a sweep: a handful of numbers and flags, small enough to cross a process boundary.

`of_run` reads a finished `Run` (its summary, what each client concluded, and the two ledgers through
`idemsim.judge.properties`) and returns a plain dict; `idemsim.runners.sweep` aggregates many of them into rates and
percentiles. Everything here is derived from what the checks already read; nothing is measured twice.

The flags, each true when *some* purchase of the run suffered it:

=====================  ==========================================================================
``double_charge``      a logical operation has two charge rows (``at-most-one-charge`` broken)
``double_capture``     a logical operation's card was captured twice (``at-most-one-capture``)
``lost_charge``        a client ended ``ok`` although its purchase was never recorded
``client_wrong``       the client's conclusion is false (``client-view``)
``gave_up_unknowing``  a client ended ``info``: it stopped without knowing whether it paid
``saw_409``            a client got a 409 Conflict on some attempt
``stuck_key``          a key record is left ``in_progress`` (``no-stuck-key``)
``orphan``             the ledgers disagree: money without a record or a record without money
=====================  ==========================================================================
"""

from __future__ import annotations

from typing import Any

from .properties import charged_operations, is_charge

FLAGS = ("double_charge", "double_capture", "lost_charge", "client_wrong", "gave_up_unknowing", "saw_409",
         "stuck_key", "orphan")
"""Every flag `of_run` sets, in the order reports list them."""

BY_PROPERTY = {"double_charge": "at-most-one-charge", "double_capture": "at-most-one-capture",
               "client_wrong": "client-view", "stuck_key": "no-stuck-key", "orphan": "ledger-agrees"}


def of_run(run) -> dict[str, Any]:
    """The run's flags (`FLAGS`) and its numbers: attempts per purchase, each purchase's time to its final
    answer, the longest wait on the index, key records held, charges, captures, and the pool's figures."""

    s = run.summary
    violated = {v["property"] for v in s.violations}
    purchases = [r for r in run.operations if is_charge(run, r)]
    charged = charged_operations(run)
    out: dict[str, Any] = {flag: BY_PROPERTY[flag] in violated for flag in BY_PROPERTY}
    out["lost_charge"] = any(r.outcome == "ok" and r.logical not in charged for r in purchases)
    out["gave_up_unknowing"] = any(r.outcome == "info" for r in purchases)
    out["saw_409"] = any(409 in r.statuses for r in purchases)
    out["attempts"] = sum(r.attempts for r in purchases) / len(purchases) if purchases else 0.0
    out["times"] = [round(r.ended - r.started, 6) for r in purchases if r.ended is not None]
    out["wait"] = s.wait_seconds
    out["keys_held"] = s.keys_held
    out["charges"] = s.charges
    out["captures"] = s.captures
    out["waiting_peak"] = s.waiting_peak
    series = s.attempts_per_second
    out["attempts_per_second"] = {"window": series["window"], "counts": series["counts"]}
    outages = [f.until for f in run.scenario.faults if f.kind == "outage"]
    if outages:
        first = int(max(outages) // series["window"] + (max(outages) % series["window"] > 0))
        out["peak_after_outage"] = max(series["counts"][first:], default=0) / series["window"]
    if s.pool_wait_max is not None:
        out["pool_wait_max"] = s.pool_wait_max
    return out
