"""Rich output for the terminal: the one module that knows about colours and tables.

Everything shown here is a view of a `Run` (its trace and summary); nothing is computed here that a check or
the JSON output does not also have.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
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


def _money(ledger: list[dict]) -> str:
    """The processor's ledger in one line: how many captures, and each one's amount, id and time."""
    if not ledger:
        return "0 (the processor took nothing)"
    return f"{len(ledger)}  (" + ", ".join(f"{c['id']} {c['amount']} at {c['t']:.3f} s" for c in ledger) + ")"


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
    table.add_row("money captured", _money(s["ledger"]))
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
    if s["violations"]:
        for v in s["violations"]:
            table.add_row("property broken", Text(f"{v['property']}: {v['message']}", style="red"))
    else:
        from ..properties import PLAIN_NAMES

        table.add_row("properties", f"all {len(PLAIN_NAMES)} hold: " + ", ".join(PLAIN_NAMES.values()))
    for f in s["faults"]:
        table.add_row("fault", f"{f['fault']} — {'happened' if f['fired'] else 'NEVER HAPPENED'}")
    verdict = Text(s["verdict"], style=VERDICT_STYLE[s["verdict"]])
    expectation = run.scenario.expect.get(run.design)
    if expectation is not None and s["verdict"] == "held":
        verdict.append("  (" + ", ".join(f"{k}={v!r}" for k, v in
                                          expectation.model_dump(exclude_none=True).items()) + ")")
    table.add_row("expectation", verdict)
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


# -- idemsim compare ---------------------------------------------------------------------------------------
def comparison_table(comparison) -> Table:
    """design × charges, the client's final outcome, statuses seen, the longest wait, replay identical, verdict.

    With several operations (a duplicate, a second purchase) the two client columns have one line per
    operation, in the same order, the first naming the client."""
    story = f" / {comparison.variant}" if comparison.variant else ""
    table = Table(title=f"{comparison.scenario}{story} — the same faults under every design (seed {comparison.seed})",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("design", no_wrap=True)
    table.add_column("charges", justify="right", min_width=7)
    table.add_column("client ended", no_wrap=True)
    table.add_column("statuses seen")
    table.add_column("wait (s)", justify="right", min_width=5)
    table.add_column("replay identical", min_width=4)
    table.add_column("verdict", min_width=7)
    for row in comparison.rows:
        several = len(row["seen"]) > 1
        ended = "\n".join((f"{client}: " if several else "") + f"{outcome} {seen[-1] if seen else ''}".rstrip()
                          for client, outcome, seen in zip(row["clients"], row["outcomes"], row["seen"]))
        seen = "\n".join(", ".join(str(s) for s in statuses) or "nothing" for statuses in row["seen"])
        identical = {None: "—", True: "yes", False: "NO"}[row["replay_identical"]]
        table.add_row(row["label"], str(row["charges"]), ended, seen,
                      f"{row['wait_seconds']:.3f}" if row["wait_seconds"] else "—", identical,
                      Text(row["verdict"], style=VERDICT_STYLE[row["verdict"]]))
    return table


def print_comparison(console: Console, comparison) -> None:
    table = comparison_table(comparison)
    # Never squeeze a column to fit a narrow terminal: a truncated status list would misreport the run.
    natural = Measurement.get(console, console.options.update(max_width=10_000), table).maximum
    width = console.width
    console.width = max(width, natural)
    console.print(table)
    console.width = width
    for row in comparison.rows:
        for failure in row["failures"]:
            console.print(Text(f"{row['label']}: {failure}", style="red"))
    words = ["idemsim", "run", comparison.scenario, "--design", "DESIGN", "--seed", str(comparison.seed)]
    if comparison.variant:
        words += ["--variant", comparison.variant]
    console.print(f"Each row is one run; its timeline: {shlex.join(words)}")
    variants = {row["label"].partition(" ")[2].strip("()"): row["story"] for row in comparison.rows if row["options"]}
    if variants:
        console.print("Rows with options run a variant: " + "; ".join(
            f"{options} → " + (f"--variant {story}" if story else "the main story (no --variant)")
            for options, story in variants.items()))


# -- idemsim show ------------------------------------------------------------------------------------------
def _expectations(scenario) -> list[str]:
    return [f"{design}: " + ", ".join(f"{k}={v!r}" for k, v in e.model_dump(exclude_none=True).items())
            for design, e in scenario.expect.items()]


def _section(console: Console, heading: str, body: str) -> None:
    console.print(Text(heading, style="bold"))
    for line in body.strip().splitlines():
        console.print("  " + line, soft_wrap=True)
    console.print()


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in table.items():
        if isinstance(v, dict) and v:
            out += _flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v))
    return out


def print_show(console: Console, scenario, stories) -> None:
    """What happens, what it teaches, the article's passage, the set-up, and every story's expectations."""
    console.print(Text(f"{scenario.name} — {scenario.title}", style="bold cyan"))
    console.print(f"{scenario.group}  ·  {scenario.summary}", soft_wrap=True)
    console.print()
    _section(console, "What happens", scenario.story)
    _section(console, "What it teaches", scenario.teaches)
    if scenario.article.strip():
        _section(console, "From the article", scenario.article)
    setup = [f"design: {scenario.design}   (compare: {', '.join(scenario.compare or ['every design'])})",
             f"client: key {scenario.client.key_strategy}, timeout {scenario.client.timeout:g} s, "
             f"{scenario.client.max_attempts} attempts, backoff {scenario.client.backoff:g} s"]
    for i, op in enumerate(scenario.operations, start=1):
        key = f", key {op.key}" if op.key else ""
        body = f" {json.dumps(op.body, ensure_ascii=False)}" if op.body else ""
        setup.append(f"operation {i} at {op.at:g} s ({op.client}): {op.method} {op.path}{body}{key}")
    setup += [f"fault {i}: {f.describe()}" for i, f in enumerate(scenario.faults, start=1)] or ["faults: none"]
    _section(console, "Set-up", "\n".join(setup))
    _section(console, "Expected", "\n".join(_expectations(scenario)) or "nothing stated")
    for story in stories[1:]:
        heading = f"Variant {story.variant} — {story.title}"
        changes = [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in _flatten(scenario.variants[story.variant])
                   if k.split(".")[0] not in ("title", "summary", "story", "teaches", "article", "expect", "faults")]
        if "faults" in scenario.variants[story.variant]:
            changes.append("faults: " + ("; ".join(f.describe() for f in story.faults) or "none"))
        body = [story.summary, ""] + story.story.strip().splitlines() + [""] + \
               ([f"changes: {'; '.join(changes)}"] if changes else []) + \
               [f"expected {line}" for line in _expectations(story)]
        _section(console, heading, "\n".join(body))
    console.print(f"Run it: idemsim run {scenario.name}   ·   every design: idemsim compare {scenario.name}")
