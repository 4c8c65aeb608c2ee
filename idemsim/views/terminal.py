"""Rich output for the terminal: the one module that knows about colours and tables.

Everything shown here is a view of a `Run` (its trace and summary); nothing is computed here that a check or
the JSON output does not also have. Text from the input reaches rich only as `Text` made `safe` (or printed with
``markup=False``): a name such as ``[/bold]`` is shown as written, never read as rich markup.
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

from ..printable import safe  # noqa: F401 (views import it from here too)
from .timeline import endpoints, describe

KIND_STYLE = {"request.lost": "bold red", "response.lost": "bold red", "api.crash": "bold red",
              "db.wait": "yellow", "gateway.timeout": "magenta", "attempt.timeout": "magenta",
              "op.end": "bold", "response.send": "green", "state.change": "cyan"}
VERDICT_STYLE = {"held": "bold green", "failed": "bold red", "vacuous": "bold red", "no expectation": "yellow"}


def timeline_table(run) -> Table:
    """Every event of the run, one row each: time, who to whom, what happened (statements as short SQL)."""
    table = Table(title=Text(safe(f"{run.name} — design {run.design}")), title_justify="left", expand=False,
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    table.add_column("time (s)", justify="right", no_wrap=True)
    table.add_column("from → to", no_wrap=True)
    table.add_column("what happened", overflow="fold")
    for e in run.trace:
        src, dst = endpoints(e)
        style = KIND_STYLE.get(e.kind, "")
        if e.kind == "db.result" and e.data.get("waited"):
            style = "yellow"
        if e.kind == "db.result" and e.data.get("error"):
            style = "red"
        table.add_row(f"{e.t:.3f}", Text(safe(f"{src} → {dst}" if dst else src)), Text(safe(describe(e, short=True)),
                                                                                 style=style))
    return table


BRIEF_KINDS = frozenset({"op.start", "attempt.send", "request.lost", "request.refused", "response.send",
                         "response.lost", "response.arrive", "gateway.timeout", "attempt.timeout", "attempt.end",
                         "client.backoff", "client.give_up", "op.end", "api.crash", "api.restart"})
"""What ``run --brief`` shows: the exchange between the client and the API, and the API's crashes."""


def brief_lines(run, width: int) -> list[Text]:
    """The exchange between client and API, one line an event, cut to ``width`` with an ellipsis."""
    lines = [Text(safe(f"{run.name} — design {run.design}"), style="bold")]
    for e in run.trace:
        if e.kind not in BRIEF_KINDS:
            continue
        src, dst = endpoints(e)
        who = safe(f"{src} → {dst}" if dst else src)
        line = Text(f"{e.t:8.3f}  {who:<15} ", no_wrap=True, overflow="ellipsis")
        line.append(safe(describe(e)), style=KIND_STYLE.get(e.kind, ""))
        line.truncate(width, overflow="ellipsis")
        lines.append(line)
    return lines


def _seen(op: dict[str, Any]) -> str:
    seen = ", ".join(str(s) for s in op["seen"]) or "nothing"
    return f"{seen} → {op['outcome']} {op['status'] if op['status'] is not None else ''}".rstrip()


def _money(ledger: list[dict]) -> str:
    """The processor's ledger in a line: how many captures, and each one's id, amount and time (the first
    three of a long ledger)."""
    if not ledger:
        return "0  (the processor took nothing)"
    shown = ", ".join(f"{c['id']}: {c['amount']} at {c['t']:.3f} s" for c in ledger[:3])
    more = f", … {len(ledger) - 3} more" if len(ledger) > 3 else ""
    return f"{len(ledger)}  ({shown}{more})"


LOAD_OPERATIONS = 20
"""A run with more operations than this is a load: its text view summarises instead of listing every event."""
MAX_VIOLATIONS_SHOWN = 5


def is_load(run) -> bool:
    return len(run.operations) > LOAD_OPERATIONS


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(counts: list[int], width: int) -> str:
    """``counts`` as a line of block characters at most ``width`` wide (neighbouring windows summed)."""
    if not counts:
        return ""
    step = max(1, -(-len(counts) // width))
    sums = [sum(counts[i:i + step]) for i in range(0, len(counts), step)]
    top = max(sums) or 1
    return "".join(SPARKS[min(len(SPARKS) - 1, (v * (len(SPARKS) - 1) + top - 1) // top)] if v else " " for v in sums)


def load_table(run, width: int) -> Table:
    """A load's figures instead of its thousands of events: attempts and how they ended, the statuses seen,
    the time to the final answer, waits, and the attempts per second over time."""
    from collections import Counter

    from ..sweep import percentile

    s = run.summary
    ops = s["operations"]
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    series = s["attempts_per_second"]
    outcomes = Counter(op["outcome"] for op in ops)
    table.add_row("operations", f"{len(ops)}: ok {outcomes['ok']} · fail {outcomes['fail']} · info "
                                f"{outcomes['info']} (info: the client does not know)")
    by_attempt = {k: sum(v) for k, v in series["by_outcome"].items()}
    table.add_row("attempts", f"{sum(series['counts'])}: ok {by_attempt['ok']} · fail {by_attempt['fail']} · "
                              f"info {by_attempt['info']}")
    statuses = Counter(str(x) for op in ops for x in op["seen"])
    table.add_row("statuses seen", ", ".join(f"{k} ×{v}" for k, v in statuses.most_common()))
    times = [r.ended - r.started for r in run.operations if r.ended is not None]
    table.add_row("time to the answer", f"p50 {percentile(times, 50):.2f} s · p95 {percentile(times, 95):.2f} s · "
                                        f"max {max(times, default=0):.2f} s")
    if s["wait_seconds"]:
        table.add_row("wait on the index", f"{s['wait_seconds']:.3f} s at the longest; up to {s['waiting_peak']} "
                                           f"handlers waiting at once, each holding its connection")
    if "pool_wait" in s:
        w = s["pool_wait"]
        table.add_row("pool waits", f"p50 {w['p50']:.3f} s · p95 {w['p95']:.3f} s · max {w['max']:.3f} s "
                                    f"(pool of {run.scenario.api.pool_size})")
    counts = series["counts"]
    peak = max(counts, default=0)
    at = counts.index(peak) * series["window"] if counts else 0
    table.add_row("attempts per second", f"peak {peak / series['window']:g}/s at {at:g} s")
    table.add_row("", sparkline(counts, max(10, width - 24)))
    return table


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
    for op in ([] if is_load(run) else s["operations"]):
        label = Text("client saw" if len(s["operations"]) == 1 else f"op {op['op']} ({safe(op['client'])}) saw")
        table.add_row(label, _seen(op))
    if s["replays"]:
        table.add_row("replayed response", "identical to the first" if s["replay_identical"]
                      else "DIFFERENT from the first")
    if s["wait_seconds"]:
        table.add_row("wait on the index", f"{s['wait_seconds']:.3f} s (the longest)")
    if run.design != "naive":
        table.add_row("key records held", f"{s['keys_held']} ({s['keys_in_progress']} in_progress)")
    if any(e.kind == "state.change" and e.data["resource"] == "balance" for e in run.trace):
        table.add_row("balance", str(s["balance"]))
    if s["violations"]:
        for v in s["violations"][:MAX_VIOLATIONS_SHOWN]:
            table.add_row("property broken", Text(safe(f"{v['property']}: {v['message']}"), style="red"))
        if len(s["violations"]) > MAX_VIOLATIONS_SHOWN:
            table.add_row("", Text(f"and {len(s['violations']) - MAX_VIOLATIONS_SHOWN} more (--format json lists "
                                   f"them all)", style="red"))
    else:
        from ..properties import PLAIN_NAMES

        table.add_row("properties", f"all {len(PLAIN_NAMES)} hold: " + ", ".join(PLAIN_NAMES.values()))
    for f in s["faults"]:
        table.add_row("fault", Text(safe(f"{f['fault']} — {'happened' if f['fired'] else 'NEVER HAPPENED'}")))
    verdict = Text(s["verdict"], style=VERDICT_STYLE[s["verdict"]])
    expectation = run.scenario.expect.get(run.design)
    if expectation is not None and s["verdict"] == "held":
        verdict.append(safe("  (" + ", ".join(f"{k}={v!r}" for k, v in
                                               expectation.model_dump(exclude_none=True).items()) + ")"))
    table.add_row("expectation", verdict)
    for failure in s["failures"]:
        table.add_row("", Text(safe(failure), style="red"))
    table.add_row("seed", str(run.seed))
    return table


def continued(command: str, width: int, first: str = "") -> list[str]:
    """A shell command broken into lines of at most ``width`` columns, each but the last continued with
    `` \\``, so that it can still be copied and pasted whole."""
    words = shlex.split(command)
    quoted = [shlex.quote(w) for w in words]
    lines, line = [], first + quoted[0]
    for word in quoted[1:]:
        if len(line) + 1 + len(word) + 2 > width and line.strip():
            lines.append(line + " \\")
            line = "    " + word
        else:
            line += " " + word
    lines.append(line)
    return lines


def print_run(console: Console, run, sets: list[str] | None = None, source: str | None = None,
              brief: bool = False, full: bool = False) -> None:
    """The run's timeline (or, ``brief``, its client–API exchange; for a load, unless ``full``, its figures),
    its summary and the command that reproduces it, each line within the console's width."""
    if is_load(run) and not full:
        console.print(Text(safe(f"{run.name} — design {run.design}: a load of {len(run.operations)} operations, "
                                f"summarised (--full prints every event)"), style="bold", overflow="fold"))
        console.print(load_table(run, console.width))
    elif brief:
        for line in brief_lines(run, console.width):
            console.print(line, soft_wrap=True)
    else:
        console.print(timeline_table(run))
    console.print(summary_table(run, sets, source))
    for line in continued(reproduce_command(run, sets, source), console.width, "reproduce: "):
        console.print(safe(line), soft_wrap=True, highlight=False, markup=False)
    console.print()


# -- idemsim compare ---------------------------------------------------------------------------------------
def _title(comparison) -> str:
    story = f" / {comparison.variant}" if comparison.variant else ""
    return safe(f"{comparison.scenario}{story} — the same faults under every design (seed {comparison.seed})")


def _ended(row: dict, saw: str = "") -> list[str]:
    """Each client process's statuses and how it ended: ``timeout, 201 → ok 201``, after ``client{saw}`` when
    there are several processes (and always when ``saw`` is given)."""
    several = len(row["seen"]) > 1 or saw
    return [(f"{client}{saw or ':'} " if several else "") + (", ".join(str(s) for s in seen) or "nothing") +
            f" → {outcome} {seen[-1] if seen else ''}".rstrip()
            for client, outcome, seen in zip(row["clients"], row["outcomes"], row["seen"])]


def comparison_table(comparison) -> Table:
    """design × charges, captures, what the client saw, the longest wait, replay identical, verdict, meaning.

    With several operations (a duplicate, a second purchase) the client column has one line per operation,
    in the same order, each naming its client."""
    table = Table(title=Text(_title(comparison)), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("design", no_wrap=True)
    table.add_column("charges", justify="right", min_width=7)
    table.add_column("captures", justify="right", min_width=8)
    table.add_column("client saw → ended", no_wrap=True)
    table.add_column("wait (s)", justify="right", min_width=5)
    table.add_column("replay identical", min_width=9)
    table.add_column("verdict", no_wrap=True)
    table.add_column("meaning", no_wrap=True)
    for row in comparison.rows:
        identical = {None: "—", True: "yes", False: "NO"}[row["replay_identical"]]
        table.add_row(Text(safe(row["label"])), str(row["charges"]), str(row["captures"]),
                      Text(safe("\n".join(_ended(row)))),
                      f"{row['wait_seconds']:.3f}" if row["wait_seconds"] else "—", identical,
                      Text(row["verdict"], style=VERDICT_STYLE[row["verdict"]]),
                      Text(row["meaning"], style="green" if row["meaning"] == "correct" else "red"))
    return table


def comparison_stack(comparison) -> list[Text]:
    """The comparison for a narrow terminal: a block of short lines per row instead of one wide table row."""
    from rich.padding import Padding

    lines: list = [Text(_title(comparison), style="bold"), Text("")]
    for row in comparison.rows:
        head = Text(safe(row["label"]), style="bold")
        head.append(f"  charges {row['charges']}  captures {row['captures']}  ")
        head.append(row["verdict"], style=VERDICT_STYLE[row["verdict"]])
        lines.append(head)
        lines.append(Padding(Text(row["meaning"], style="green" if row["meaning"] == "correct" else "red"),
                             (0, 0, 0, 2)))
        extra = []
        if row["wait_seconds"]:
            extra.append(f"waited {row['wait_seconds']:.3f} s on the index")
        if row["replay_identical"] is not None:
            extra.append("replay identical" if row["replay_identical"] else "replay DIFFERENT")
        for i, ended in enumerate(_ended(row, saw=" saw")):
            lines.append(Padding(Text(safe(ended + ("; " + "; ".join(extra) if extra and i == 0 else ""))),
                                 (0, 0, 0, 2)))
    return lines


def print_comparison(console: Console, comparison) -> None:
    """The comparison as one table when it fits the terminal, else stacked; then failures and the commands."""
    table = comparison_table(comparison)
    natural = Measurement.get(console, console.options.update(max_width=10_000), table).maximum
    if natural <= console.width:
        console.print(table)
    else:  # never squeeze a column: a truncated status list would misreport the run
        for line in comparison_stack(comparison):
            console.print(line)
        console.print()
    for row in comparison.rows:
        for failure in row["failures"]:
            console.print(Text(safe(f"{row['label']}: {failure}"), style="red"))
    words = ["idemsim", "run", comparison.source or comparison.scenario, "--design", "DESIGN", "--seed",
             str(comparison.seed)]
    if comparison.variant:
        words += ["--variant", comparison.variant]
    for line in continued(shlex.join(words), console.width, "Each row is one run; its timeline: "):
        console.print(safe(line), markup=False, highlight=False)
    variants = {row["label"].partition(" ")[2].strip("()"): row["story"] for row in comparison.rows if row["options"]}
    if variants:
        console.print(Text(safe("Rows with options run a variant: " + "; ".join(
            f"{options} → " + (f"--variant {story}" if story else "the main story (no --variant)")
            for options, story in variants.items()))))


# -- idemsim show ------------------------------------------------------------------------------------------
def _expectations(scenario) -> list[str]:
    return [f"{design}: " + ", ".join(f"{k}={v!r}" for k, v in e.model_dump(exclude_none=True).items())
            for design, e in scenario.expect.items()]


def reflow(text: str) -> str:
    """Prose written with hard line breaks, as paragraphs: the lines of each paragraph joined by spaces."""
    paragraphs = [" ".join(line.strip() for line in block.splitlines() if line.strip())
                  for block in text.strip().split("\n\n")]
    return "\n".join(p for p in paragraphs if p)


def _section(console: Console, heading: str, body: str, prose: bool = False) -> None:
    """A heading and its text, indented two columns and wrapped at the terminal's width; ``prose`` is
    reflowed first (its line breaks are the file's, not the reader's)."""
    from rich.padding import Padding

    console.print(Text(safe(heading), style="bold", overflow="fold"))
    for line in (reflow(body) if prose else body.strip()).splitlines():
        console.print(Padding(Text(safe(line), overflow="fold"), (0, 0, 0, 2)))
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
    console.print(Text(safe(f"{scenario.name} — {scenario.title}"), style="bold cyan", overflow="fold"))
    console.print(Text(safe(f"{scenario.group}  ·  {scenario.summary}"), overflow="fold"))
    console.print()
    _section(console, "What happens", scenario.story, prose=True)
    _section(console, "What it teaches", scenario.teaches, prose=True)
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
        body = [story.summary, ""] + reflow(story.story).splitlines() + [""] + \
               ([f"changes: {'; '.join(changes)}"] if changes else []) + \
               [f"expected {line}" for line in _expectations(story)]
        _section(console, heading, "\n".join(body))
    if scenario.diagrams:
        n = len(scenario.diagrams)
        console.print(Text(f"The article draws {n} diagram{'s' if n > 1 else ''} for this story: "
                           f"idemsim show {safe(scenario.name)} --format mermaid", overflow="fold"))
    console.print(Text(f"Run it: idemsim run {safe(scenario.name)}   ·   every design: idemsim compare "
                       f"{safe(scenario.name)}   ·   as a diagram: idemsim run {safe(scenario.name)} --format "
                       f"mermaid", overflow="fold"))


# -- idemsim sweep -------------------------------------------------------------------------------------------
def _percent(x: float) -> str:
    return f"{x * 100:.1f}" if x < 0.1 else f"{x * 100:.0f}"


def _rate(figure: dict[str, float]) -> str:
    """A rate and its 95 % interval, in percent, as short as its size allows: ``6.0% (2.1–16)``."""
    return f"{_percent(figure['rate'])}% ({_percent(figure['low'])}–{_percent(figure['high'])})"


def _measure(row: dict, measure: str) -> str:
    """A row's measure as the table shows it: a rate with its interval, or a number."""
    head, _, tail = measure.partition(".")
    value = row[head]
    if isinstance(value, dict) and "rate" in value:
        return _rate(value)
    if isinstance(value, dict):
        value = value[tail or next(iter(value))]
    return f"{value:.2f}"


def sweep_table(result, config=None) -> Table:
    """One row per point and design: the varied fields, the runs, the rates the sweep is about (with their
    intervals), attempts per purchase and the time to the final answer (p95)."""
    from ..sweep import point_text

    measures = list(config.measures) if config else ["double_charge"]
    measures += [m for m in ("double_capture", "gave_up_unknowing") if m not in measures][:max(0, 2 - len(measures))]
    measures = [m for m in measures if m != "time_to_answer.p95"][:2]
    table = Table(title=Text(safe(f"{result.scenario} — {result.seeds} runs a point (seed {result.base_seed}); "
                                  f"rates with their 95 % intervals")), title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    table.add_column("design", no_wrap=True)
    for axis in result.axes:
        table.add_column(Text(safe(axis.field.rsplit(".", 1)[-1].replace("_", " "))), justify="right")
    for m in measures:
        table.add_column(m.replace("_", " ").replace(".", " "), justify="right")
    table.add_column("attempts", justify="right")
    table.add_column("p95 (s)", justify="right")
    previous = None
    for row in result.rows:
        point = tuple(row[a.field] for a in result.axes)
        if previous is not None and point != previous and len(result.designs) > 1:
            table.add_section()
        previous = point
        table.add_row(Text(safe(row["design"])), *(Text(safe(point_text(v))) for v in point),
                      *(_measure(row, m) for m in measures),
                      f"{row['attempts']:.2f}", f"{row['time_to_answer']['p95']:.2f}")
    return table


def print_sweep(console: Console, result, config=None) -> None:
    console.print(sweep_table(result, config))
    console.print(Text("Rates are of runs in which at least one purchase suffered it; the JSON (--format json) "
                       "has every rate, the percentiles and the key records held.", overflow="fold"))
