"""Rich output for the terminal: the one module that knows about colours and tables.

Everything shown here is a view of a `Run` (its trace and summary); nothing is computed here that a check or
the JSON output does not also have.
"""

from __future__ import annotations

import shlex
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .timeline import endpoints, describe

KIND_STYLE = {"request.lost": "bold red", "response.lost": "bold red", "api.crash": "bold red",
              "db.wait": "yellow", "gateway.timeout": "magenta", "attempt.timeout": "magenta",
              "op.end": "bold", "response.send": "green", "state.change": "cyan"}
VERDICT_STYLE = {"held": "bold green", "failed": "bold red", "vacuous": "bold red", "no expectation": "yellow"}


def timeline_table(run) -> Table:
    table = Table(title=f"{run.name} — design {run.design}", title_justify="left", expand=False)
    table.add_column("time (s)", justify="right", no_wrap=True)
    table.add_column("from → to", no_wrap=True)
    table.add_column("what happened")
    for e in run.trace:
        src, dst = endpoints(e)
        style = KIND_STYLE.get(e.kind, "")
        if e.kind == "db.result" and e.data.get("waited"):
            style = "yellow"
        if e.kind == "db.result" and e.data.get("error"):
            style = "red"
        table.add_row(f"{e.t:.3f}", f"{src} → {dst}" if dst else src, Text(describe(e), style=style))
    return table


def _seen(op: dict[str, Any]) -> str:
    seen = ", ".join(str(s) for s in op["seen"]) or "nothing"
    return f"{seen} → {op['outcome']} {op['status'] if op['status'] is not None else ''}".rstrip()


def reproduce_command(run, sets: list[str] | None = None, source: str | None = None) -> str:
    words = ["idemsim", "run", source or run.scenario.name, "--design", run.design, "--seed", str(run.seed)]
    if run.scenario.variant:
        words += ["--variant", run.scenario.variant]
    for s in sets or []:
        words += ["--set", s]
    return shlex.join(words)


def summary_table(run, sets: list[str] | None = None, source: str | None = None) -> Table:
    s = run.summary
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("charges recorded", str(s["charges"]))
    for op in s["operations"]:
        label = "client saw" if len(s["operations"]) == 1 else f"op {op['op']} ({op['client']}) saw"
        table.add_row(label, _seen(op))
    if s["replays"]:
        table.add_row("replayed response", "identical to the first" if s["replay_identical"]
                      else "DIFFERENT from the first")
    if s["wait_seconds"]:
        table.add_row("longest wait on the index", f"{s['wait_seconds']:.3f} s")
    if run.design != "naive":
        table.add_row("key records held", f"{s['keys_held']} ({s['keys_in_progress']} in_progress)")
    if any(e.kind == "state.change" and e.data["resource"] == "balance" for e in run.trace):
        table.add_row("balance", str(s["balance"]))
    for f in s["faults"]:
        table.add_row("fault", f"{f['fault']} — {'happened' if f['fired'] else 'NEVER HAPPENED'}")
    verdict = Text(s["verdict"], style=VERDICT_STYLE[s["verdict"]])
    expectation = run.scenario.expect.get(run.design)
    if expectation is not None and s["verdict"] == "held":
        verdict.append("  (" + ", ".join(f"{k}={v!r}" for k, v in
                                          expectation.model_dump(exclude_none=True).items()) + ")")
    table.add_row("verdict", verdict)
    for failure in s["failures"]:
        table.add_row("", Text(failure, style="red"))
    table.add_row("seed", str(run.seed))
    return table


def print_run(console: Console, run, sets: list[str] | None = None, source: str | None = None) -> None:
    console.print(timeline_table(run))
    console.print(summary_table(run, sets, source))
    # Never wrapped, so that it can be copied whole.
    console.print(f"reproduce: {reproduce_command(run, sets, source)}", soft_wrap=True, highlight=False)
    console.print()
