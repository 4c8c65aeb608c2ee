"""Fingerprints of what the model does: a hash of each run's trace, summary, tables, ledger, operations and event
count, for every shipped story x design (traced and untraced), every shipped sweep (its rows) and the bench's
loads. A change that must not change behaviour (a refactoring) leaves every line of the output identical:

    python tests/fingerprints.py > before.txt     # on the commit before
    python tests/fingerprints.py > after.txt      # on the change
    diff before.txt after.txt

It reads only idemsim's public face (``idemsim``), so the same script runs on both sides of a move of modules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys

import idemsim


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=_plain).encode()).hexdigest()[:16]


def _plain(value):
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if hasattr(value, "_asdict"):
        return value._asdict()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "__dict__"):
        return vars(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def summary_of(run) -> dict:
    summary = run.summary
    return dict(summary) if isinstance(summary, dict) else summary.to_dict()


def run_print(run, traced: bool) -> str:
    parts = {"summary": summary_of(run), "tables": run.tables, "ledger": run.ledger, "ops": run.operations,
             "events": run.sim_events, "state": run.state, "fired": run.fired}
    if traced:
        parts["trace"] = run.trace_json()
    return " ".join(f"{k}={digest(v)}" for k, v in parts.items())


def stories():
    try:
        from idemsim import scenario_names, stories_of
    except ImportError:  # the layout before the house issue
        from idemsim.scenario.schema import builtin_names as scenario_names
        from idemsim.scenario.schema import runs as stories_of
    for name in sorted(scenario_names()):  # by name, as before: idemsim.scenario_names gives the article's order
        scenario = idemsim.load_scenario(name)
        for story in stories_of(scenario):
            yield name, story


def main() -> int:
    designs = list(idemsim.DESIGNS)
    for name, story in stories():
        label = f"{name}/{story.variant or '-'}"
        for design in [None, *designs]:
            for traced in (True, False):
                try:
                    run = idemsim.simulate(story, design, trace=traced)
                    line = run_print(run, traced)
                except Exception as e:  # an input a design refuses is a fingerprint too
                    line = f"error {type(e).__name__}: {e}"
                print(f"{label} {design or 'own'} {'traced' if traced else 'untraced'} {line}")
    for sweep in ("loss", "ttl", "lease", "herd", "pool"):
        result = idemsim.sweep(sweep, seeds=3)
        print(f"sweep {sweep} {digest(result.rows)}")
    from idemsim import bench

    for arrivals in ("concurrent", "poisson", "sequential"):
        run = idemsim.simulate(bench.scenario(300, arrivals), trace=False)
        print(f"bench {arrivals} {run_print(run, False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
