"""Rich output for the terminal: the one module that knows about colours and tables.

Everything shown here is a view of a `Run` (its trace and summary); nothing is computed here that a check or
the JSON output does not also have. What a run's summary says of its story (the parties' names, how each client
ended, the two verdicts in words) is read from the run's scene (`idemsim.views.scene`), as every picture reads it.
Text from the input reaches rich only as `Text` made `safe` (or printed with ``markup=False``): a name such as
``[/bold]`` is shown as written, never read as rich markup.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections import Counter
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment, Segments
from rich.style import Style
from rich.table import Table
from rich.text import Text

from ..base.http import classify
from ..base.i18n import MESSAGES
from ..base.i18n import text as t
from ..base.printable import (
    point_text,
    safe,  # noqa: F401 (views import it from here too)
)
from ..judge.statistics import percentile
from ..judge.summary import is_load
from ..model.designs import DESIGNS
from .names import money_text, party_name, seen_text
from .prose import ProseText, cells, reflow, unwrap_japanese, wrap
from .scene import scene
from .timeline import describe
from .timeline import who as who_text
from .verdicts import design_words, green, short_design_words, short_story_words, story_reasons

OUTCOME_STYLE = {"ok": "green", "fail": "red", "info": "magenta"}
"""What an answer means to the client, one colour each (Jepsen's, as the figures draw them): green an ``ok``
(2xx: it happened), red a ``fail`` (definitely not done), magenta an ``info`` (unknown: a timeout, a 409, any
5xx). An ``ok`` is green only on a run whose design holds (`event_style`)."""
KIND_STYLE = {"request.lost": "bold", "response.lost": "bold", "api.crash": "bold", "db.wait": "yellow",
              "gateway.timeout": "magenta", "attempt.timeout": "magenta", "state.change": "cyan"}
"""The events coloured by their kind: a fault in bold (its ✗ or 💥 says what it is; it is not yet a failure), a
wait on the index yellow, a timeout the colour of unknown, a change of state cyan."""
ANSWERS = frozenset({"response.send", "response.arrive", "attempt.end", "op.end"})
"""The events coloured by what their answer means to the client (`OUTCOME_STYLE`)."""
DESIGN_STYLE = {"holds": "bold green", "broken": "bold red"}
"""The design's verdict: green only when every property holds."""
STORY_STYLE = {"reproduces": "", "no expectation": "", "differs": "yellow", "vacuous": "yellow"}
"""The story's check: a fact about the story, in neutral colours (yellow when the run does not show what the
scenario file states)."""


class Unpadded:
    """A text stream (standard output, looked up at each write) that drops the spaces rich pads a line with: a
    table pads every cell to its column, so that a piped line would end in spaces. Spaces before a newline are
    dropped, those at the end of a write held until what follows shows whether the line goes on; colour codes
    after them are kept. Everything else is passed through."""

    _END = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$")

    def __init__(self, stream=None) -> None:
        self._stream = stream
        self._spaces = ""

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stdout

    def write(self, text: str) -> int:
        lines = (self._spaces + text).split("\n")
        self._spaces = ""
        last = self._END.search(lines[-1])
        if last:
            self._spaces = lines[-1][last.start():last.start(1)]
            lines[-1] = lines[-1][:last.start()] + last.group(1)
        self.stream.write("\n".join([self._END.sub(r"\1", line) for line in lines[:-1]] + lines[-1:]))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def console() -> Console:
    """The console every command prints on: standard output, no line ending in a space (`Unpadded`); what it
    prints is never read as rich markup, nor highlighted."""
    return Console(file=Unpadded(), highlight=False, soft_wrap=False, markup=False)


def event_style(e, holds: bool, methods: dict[str, str] | None = None) -> str:
    """The style of an event in the timeline: an answer by what it means to the client (`OUTCOME_STYLE`; the
    method of its request, from ``methods``, decides a DELETE's 404), an operation's end in bold too, others by
    their kind; nothing green on a run whose design broke a property, an ``ok`` there neutral."""
    d = e.data
    if e.kind not in ANSWERS:
        return KIND_STYLE.get(e.kind, "")
    if e.kind == "response.arrive" and d.get("ignored"):
        return "dim"
    outcome = d.get("outcome") or classify(d.get("status"), (methods or {}).get(d.get("request")))
    style = OUTCOME_STYLE[outcome] if holds or outcome != "ok" else ""
    return f"bold {style}".rstrip() if e.kind == "op.end" else style


def request_methods(run) -> dict[str, str]:
    """Each request's HTTP method, by its id (``1.2``): how the client reads a DELETE's 404."""
    return {e.data["request"]: e.data["method"] for e in run.trace if e.kind == "attempt.send"}


def timeline_table(run, lang: str = "en") -> Table:
    """Every event of the run, one row each: time, who to whom, what happened (statements as short SQL)."""
    table = _timeline_frame(run, lang)
    for time, who, what, style in _timeline_rows(run, lang):
        table.add_row(time, Text(who), ProseText(what, style=style))
    return table


LONG_TIMELINE = 0
"""A timeline with more events than this is written row by row (`print_timeline`) instead of as one rich Table:
every timeline, since the two print the same characters and rows cost a tenth."""


def _timeline_rows(run, lang: str) -> list[tuple[str, str, str, str]]:
    """Each event as the timeline table shows it: time, who to whom, what happened, and its style."""
    rows = []
    holds = green(run.summary.design_verdict)
    methods = request_methods(run)
    names = scene(run, lang).parties
    for e in run.trace:
        style = event_style(e, holds, methods)
        if e.kind == "db.result" and e.data.get("waited"):
            style = "yellow"
        if e.kind == "db.result" and e.data.get("error"):
            style = "red"
        rows.append((f"{e.t:.3f}", safe(who_text(e, lang, names)), safe(describe(e, short=True, lang=lang)), style))
    return rows


def print_timeline(console: Console, run, lang: str = "en", long: int = LONG_TIMELINE) -> None:
    """The timeline table of `timeline_table`, printed; one of more than ``long`` events is written row by row,
    exactly as rich would lay the whole table out, without building it: rich takes about 200 µs a row to measure
    and render a table, and holds all of it; this takes a few µs a row and holds one. The column widths are the
    ones rich computes for the table (from the header and the widest cell of each column: only the widest counts);
    the title, the header and the edges are rich's own, rendered from a table of no rows with those widths; a
    description longer than its column is wrapped by rich, as in the table. The rows reach the console as
    segments (their styles rendered by rich), so a console that captures what it prints captures them too; one
    that records it gets rich's own table. Only rich's public API is used."""
    if len(run.trace) <= long or console.record:
        console.print(timeline_table(run, lang))  # short, or the console keeps what it prints: rich's own table
        return

    rows = _timeline_rows(run, lang)
    widths = _column_widths(console, run, lang, rows)
    if widths is None or any(w < 3 for w in widths):
        console.print(timeline_table(run, lang))  # too narrow for the columns as they are: rich's last resort
        return
    frame = _timeline_frame(run, lang, [widths[0] - 1, widths[1] - 2, widths[2] - 1])
    with console.capture() as capture:
        console.print(frame)
    head = capture.get().split("\n")
    time_width, who_width, what_width = widths[0] - 1, widths[1] - 2, widths[2] - 1
    blank = Segment(" " * (widths[0] + widths[1] + 4))
    styles: dict[str, Any] = {"": None}
    out = [Segment("\n".join(head[:-2]) + "\n")]  # (already rendered: written as it is)
    for time, who, what, style in rows:
        left = Segment(f" {' ' * (time_width - len(time))}{time}   {who}{' ' * (who_width - cells(who))}   ")
        if cells(what) <= what_width:
            pieces = [what.rstrip()]
        else:  # (the description is a ProseText in the table: wrapped so, and stripped, its padding unstyled)
            pieces = [line.plain for line in ProseText(what).wrap(console, what_width, overflow="fold")]
        if style not in styles:
            styles[style] = Style.parse(style)
        for i, piece in enumerate(pieces):
            out += [blank if i else left, Segment(piece, styles[style]), Segment(" " * (what_width - cells(piece))
                                                                                  + " \n")]
        if len(out) > 1500:
            console.print(Segments(out), crop=False)
            out = []
    out.append(Segment(head[-2] + "\n"))
    console.print(Segments(out), crop=False)


def _column_widths(console: Console, run, lang: str, rows: list[tuple[str, str, str, str]]) -> list[int] | None:
    """The widths rich gives the timeline's columns (padding included) on this console: those of the table of
    the widest cell of each column, read from its top edge drawn with a box that marks where columns meet (the
    title and the box change no width); None when the table is wider than the console."""
    widest = [max(rows, key=lambda row, i=i: cells(row[i]))[i] for i in range(3)]
    sizing = _timeline_frame(run, lang)
    sizing.title, sizing.box = None, box.ASCII2  # its top edge: +---+---+---+
    sizing.add_row(widest[0], Text(widest[1]), ProseText(widest[2]))
    top = "".join(segment.text for segment in console.render(sizing)).split("\n", 1)[0]
    edges = top.split("+")
    if len(top) > console.width or len(edges) != 5 or any(set(edge) != {"-"} for edge in edges[1:-1]):
        return None
    return [len(edge) for edge in edges[1:-1]]


def _timeline_frame(run, lang: str, widths: list[int] | None = None) -> Table:
    """The timeline table without rows (its columns of fixed ``widths``, if given)."""
    table = Table(title=Text(safe(t("term.title", lang, name=run.name, design=run.design))), title_justify="left",
                  expand=False, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    table.add_column(t("term.time", lang), justify="right", no_wrap=True, width=widths[0] if widths else None)
    table.add_column(t("term.from_to", lang), no_wrap=True, width=widths[1] if widths else None)
    table.add_column(t("term.what", lang), overflow="fold", width=widths[2] if widths else None)
    return table


BRIEF_KINDS = frozenset({"op.start", "attempt.send", "request.lost", "request.refused", "response.send",
                         "response.lost", "response.arrive", "gateway.timeout", "attempt.timeout", "attempt.end",
                         "client.backoff", "client.give_up", "op.end", "api.crash", "api.restart"})
"""What ``run --brief`` shows: the exchange between the client and the API, and the API's crashes."""


def brief_lines(run, width: int, lang: str = "en") -> list[Text]:
    """The exchange between client and API, one event a row of three aligned columns: the time, who to whom
    (as wide as the widest name in the run) and what happened, wrapped under itself (`prose.wrap`) within
    ``width``, never cut."""
    lines = [Text(safe(t("term.title", lang, name=run.name, design=run.design)), style="bold", overflow="fold")]
    drawn = scene(run, lang)
    holds = drawn.verdicts.holds
    methods = request_methods(run)
    rows = [(f"{e.t:8.3f}", safe(who_text(e, lang, drawn.parties)), safe(describe(e, lang=lang)),
             event_style(e, holds, methods))
            for e in run.trace if e.kind in BRIEF_KINDS]
    names = max((cells(w) for _, w, _, _ in rows), default=0)
    indent = 8 + 2 + names + 2
    if width - indent < BRIEF_TEXT:  # names too wide for a column: what happened goes under its row's head
        names, indent = 0, 10
    for at, w, what, style in rows:
        head = f"{at}  {w}{' ' * (names - cells(w))}  " if names else f"{at}  {w}"
        pieces = wrap(what, max(1, width - indent)) or [""]
        if not names:
            lines.append(Text(head, overflow="fold"))
            head = " " * indent
        for i, piece in enumerate(pieces):
            line = Text(head if i == 0 else " " * indent)
            line.append(piece, style=style)
            lines.append(line)
    return lines


BRIEF_TEXT = 30
"""The narrowest column ``--brief`` gives what happened beside the names; on a narrower terminal the description
goes on its own lines under each row's time and names."""


MAX_VIOLATIONS_SHOWN = 5


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(counts: list[int], width: int) -> str:
    """``counts`` as a line of block characters at most ``width`` wide (neighbouring windows summed)."""
    if not counts:
        return ""
    step = max(1, -(-len(counts) // width))
    sums = [sum(counts[i:i + step]) for i in range(0, len(counts), step)]
    top = max(sums) or 1
    return "".join(SPARKS[min(len(SPARKS) - 1, (v * (len(SPARKS) - 1) + top - 1) // top)] if v else " " for v in sums)


def load_table(run, width: int, lang: str = "en") -> Table:
    """A load's figures instead of its thousands of events: attempts and how they ended, the statuses seen,
    the time to the final answer, waits, and the attempts per second over time."""


    s = run.summary
    ops = s.operations
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    series = s.attempts_per_second
    outcomes = Counter(op["outcome"] for op in ops)
    _row(table, t("term.operations", lang), t("term.operations_value", lang, n=len(ops), ok=outcomes["ok"],
                                                 fail=outcomes["fail"], info=outcomes["info"]))
    by_attempt = {k: sum(v) for k, v in series["by_outcome"].items()}
    _row(table, t("term.attempts", lang), t("term.attempts_value", lang, n=sum(series["counts"]),
                                               ok=by_attempt["ok"], fail=by_attempt["fail"], info=by_attempt["info"]))
    statuses = Counter(t("tl.timeout", lang) if x == "timeout" else str(x) for op in ops for x in op["seen"])
    _row(table, t("term.statuses", lang), ", ".join(f"{k} ×{v}" for k, v in statuses.most_common()))
    times = [r.ended - r.started for r in run.operations if r.ended is not None]
    _row(table, t("term.answer_time", lang), t("term.answer_time_value", lang, p50=percentile(times, 50),
                                                  p95=percentile(times, 95), max=max(times, default=0)))
    if s.wait_seconds:
        _row(table, t("term.wait", lang), t("term.load_wait", lang, seconds=s.wait_seconds, n=s.waiting_peak))
    if s.pool_wait is not None:
        w = s.pool_wait
        _row(table, t("term.pool", lang), t("term.pool_value", lang, p50=w["p50"], p95=w["p95"], max=w["max"],
                                               size=run.scenario.api.pool_size))
    counts = series["counts"]
    peak = max(counts, default=0)
    at = counts.index(peak) * series["window"] if counts else 0
    _row(table, t("term.aps", lang), t("term.aps_value", lang, peak=peak / series["window"], at=at))
    _row(table, "", sparkline(counts, max(10, width - 24)))
    return table


def reproduce_command(run, sets: list[str] | None = None, source: str | None = None) -> str:
    words = ["idemsim", "run", source or run.scenario.name, "--design", run.design, "--seed", str(run.seed)]
    if run.scenario.variant:
        words += ["--variant", run.scenario.variant]
    for s in sets or []:
        words += ["--set", s]
    return shlex.join(words)


def _row(table: Table, *cells) -> None:
    """A row of a two-column summary: text cells wrap as prose does (Japanese between characters), and are
    never read as rich markup."""
    table.add_row(*(ProseText(safe(c)) if isinstance(c, str) else c for c in cells))


def summary_table(run, sets: list[str] | None = None, source: str | None = None, lang: str = "en") -> Table:
    """The run's summary as two columns: the ledgers, what each client saw, the waits and key records, the
    design's verdict and the story's check (their words, the clients' names and endings from the run's scene)."""
    s = run.summary
    drawn = scene(run, lang)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    _row(table, t("term.charges", lang), str(s.charges))
    _row(table, t("term.captures", lang), money_text(s.ledger, lang))
    for ending in ([] if is_load(run) else drawn.endings):
        one = len(drawn.endings) == 1
        label = t("term.client_saw", lang) if one else t("term.op_saw", lang, op=ending.op)
        _row(table, label, ending.said if one else f"{ending.name}: {ending.said}")
    if s.replays:
        _row(table, t("term.replayed", lang), t("term.identical", lang) if s.replay_identical
                      else t("term.different", lang))
    if s.wait_seconds:
        _row(table, t("term.wait", lang), t("term.wait_value", lang, seconds=s.wait_seconds))
    if DESIGNS[run.design].stores_keys:
        _row(table, t("term.keys", lang), t("term.keys_value", lang, held=s.keys_held,
                                               in_progress=s.keys_in_progress))
    for i, item in enumerate(_left_open(run, lang)):
        _row(table, "" if i else t("term.left_open", lang), item)
    if any(e.kind == "state.change" and e.data["resource"] == "balance" for e in run.trace):
        _row(table, t("term.balance", lang), str(s.balance))
    verdicts = drawn.verdicts
    _row(table, t("term.design", lang), ProseText(safe(verdicts.design_named),
                                                  style=DESIGN_STYLE[verdicts.design_verdict]))
    for said in verdicts.broken[:MAX_VIOLATIONS_SHOWN]:
        _row(table, t("term.broken", lang), ProseText(safe(said), style="red"))
    if len(s.violations) > MAX_VIOLATIONS_SHOWN:
        _row(table, "", Text(t("term.more_broken", lang, n=len(s.violations) - MAX_VIOLATIONS_SHOWN), style="red"))
    for f, fault in zip(s.faults, run.scenario.faults):
        said = fault.describe(lang) if hasattr(fault, "describe") else f["fault"]
        _row(table, t("term.fault", lang), ProseText(safe(f"{said} — " + (t("term.happened", lang) if f["fired"]
                                                                       else t("term.never", lang)))))
    check = verdicts.story_check
    _row(table, t("term.story", lang), ProseText(safe(verdicts.story_long), style=STORY_STYLE[check]))
    for reason in verdicts.story_reasons:
        _row(table, "", ProseText(safe(reason), style=STORY_STYLE[check]))
    _row(table, t("term.seed", lang), str(run.seed))
    return table


def _left_open(run, lang: str) -> list[str]:
    """What was still open when the run ended, one item each, in ``lang``: from the run's own messages, or the
    summary's English ``stuck`` for a run that has none (one read back from JSON)."""
    said = getattr(run, "stuck", None)
    if said:
        return [item.said(lang) if hasattr(item, "said") else str(item) for item in said]
    return list(run.summary.get("stuck") or [])


def continued(command: str, width: int, first: str = "") -> list[str]:
    """A shell command broken into lines of at most ``width`` columns, each but the last continued with
    `` \\``, so that it can still be copied and pasted whole."""
    words = shlex.split(command)
    quoted = [shlex.quote(w) for w in words]
    lines, line = [], first + quoted[0]
    for word in quoted[1:]:
        if cells(line) + 1 + cells(word) + 2 > width and line.strip():
            lines.append(line + " \\")
            line = "    " + word
        else:
            line += " " + word
    lines.append(line)
    return lines


def print_run(console: Console, run, sets: list[str] | None = None, source: str | None = None,
              brief: bool = False, full: bool = False, lang: str = "en", command: str | None = None) -> None:
    """The run's timeline (or, ``brief``, its client–API exchange; for a load, unless ``full``, its figures),
    its summary and the command that reproduces it (``command``, else `reproduce_command`), each line within the
    console's width."""
    if is_load(run) and not full:
        console.print(Text(safe(t("term.load_title", lang, name=run.name, design=run.design, n=len(run.operations))),
                           style="bold", overflow="fold"))
        console.print(load_table(run, console.width, lang))
    elif brief:
        for line in brief_lines(run, console.width, lang):
            console.print(line, crop=False)
    else:
        print_timeline(console, run, lang)
    console.print(summary_table(run, sets, source, lang))
    for line in continued(command or reproduce_command(run, sets, source), console.width, t("term.reproduce", lang)):
        console.print(safe(line), soft_wrap=True, highlight=False, markup=False)
    console.print()


# -- idemsim compare ---------------------------------------------------------------------------------------
def _title(comparison, lang: str = "en") -> str:
    story = f" / {comparison.variant}" if comparison.variant else ""
    return safe(t("cmp.title", lang, scenario=comparison.scenario, story=story, seed=comparison.seed))


def _ended(row: dict, saw: bool = False, lang: str = "en") -> list[str]:
    """Each client process's statuses and how it ended: ``timeout, 201 → ok 201``, after the client's name
    when there are several processes (``client: …``), and always when ``saw`` (``client saw …``)."""
    out = []
    for client, outcome, seen in zip(row["clients"], row["outcomes"], row["seen"]):
        said = seen_text(seen, outcome, seen[-1] if seen else None, lang)
        if saw:
            said = t("cmp.ended_saw", lang, client=party_name(client, lang), seen=said)
        elif len(row["seen"]) > 1:
            said = f"{party_name(client, lang)}: {said}"
        out.append(said)
    return out


def _design_cell(row: dict, lang: str) -> Text:
    """A row's design verdict: ``holds`` in green, or ``broken — `` and what went wrong, in red."""
    design = row["design_verdict"]
    return Text(safe(short_design_words(design, row["violations"], lang)), style=DESIGN_STYLE[design])


def _story_cell(row: dict, lang: str) -> Text:
    """A row's story check, in neutral words."""
    check = row["story_check"]
    return Text(short_story_words(check, lang), style=STORY_STYLE[check])


def comparison_table(comparison, lang: str = "en") -> Table:
    """design × charges, captures, what the client saw, the longest wait, replay identical, the design's verdict
    (what went wrong, if anything) and the story's check.

    With several operations (a duplicate, a second purchase) the client column has one line per operation,
    in the same order, each naming its client, and the wait column gives each its own longest wait on its line."""
    table = Table(title=Text(_title(comparison, lang)), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(t("cmp.design", lang), no_wrap=True)
    table.add_column(t("cmp.charges", lang), justify="right", min_width=7)
    table.add_column(t("cmp.captures", lang), justify="right", min_width=8)
    table.add_column(t("cmp.saw", lang), no_wrap=True)
    table.add_column(t("cmp.wait", lang), justify="right", min_width=5)
    table.add_column(t("cmp.identical", lang), min_width=9)
    table.add_column(t("cmp.design_verdict", lang), no_wrap=True)
    table.add_column(t("cmp.story_check", lang), no_wrap=True)
    for row in comparison.rows:
        identical = {None: "—", True: t("cmp.yes", lang), False: t("cmp.no", lang)}[row["replay_identical"]]
        table.add_row(Text(safe(row["label"])), str(row["charges"]), str(row["captures"]),
                      Text(safe("\n".join(_ended(row, lang=lang)))), _waits_cell(row), identical,
                      _design_cell(row, lang), _story_cell(row, lang))
    return table


def comparison_stack(comparison, lang: str = "en") -> list[Text]:
    """The comparison for a narrow terminal: a block of short lines per row instead of one wide table row."""

    lines: list = [Text(_title(comparison, lang), style="bold"), Text("")]
    for row in comparison.rows:
        head = Text(safe(row["label"]), style="bold")
        head.append(t("cmp.head", lang, charges=row["charges"], captures=row["captures"]).rstrip())
        lines.append(head)
        design = row["design_verdict"]
        said = t("design.line", lang, verdict=design_words(design, row["violations"], lang))
        lines.append(Padding(ProseText(safe(said), style=DESIGN_STYLE[design]), (0, 0, 0, 2)))
        check = row["story_check"]
        lines.append(Padding(ProseText(t("story.line", lang, check=short_story_words(check, lang)),
                                       style=STORY_STYLE[check]), (0, 0, 0, 2)))
        for ended, extra in zip(_ended(row, saw=True, lang=lang), _per_client(row, lang)):
            lines.append(Padding(Text(safe(ended + ("; " + "; ".join(extra) if extra else ""))), (0, 0, 0, 2)))
    return lines


def _waits_cell(row: dict) -> str:
    """The wait column: each client's longest wait on the index, on its line of the client column (one line
    when a single client ran, or none waited: "—")."""
    if not any(row["waits"]):
        return "—"
    return "\n".join(f"{w:.3f}" if w else "—" for w in row["waits"])


def _per_client(row: dict, lang: str) -> list[list[str]]:
    """What each client's line of a stacked row adds: its own wait on the index, and whether the answers
    replayed to it were identical to the first (on the first client's line if none was replayed to any)."""
    out: list[list[str]] = [[t("cmp.waited", lang, seconds=w)] if w else [] for w in row["waits"]]
    if row["replay_identical"] is not None:
        said = t("cmp.replay_identical", lang) if row["replay_identical"] else t("cmp.replay_different", lang)
        to = [i for i, n in enumerate(row["replayed"]) if n] or [0]
        for i in to:
            out[i].append(said)
    return out


def print_comparison(console: Console, comparison, lang: str = "en") -> None:
    """The comparison as one table when it fits the terminal, else stacked; then failures and the commands."""
    table = comparison_table(comparison, lang)
    natural = Measurement.get(console, console.options.update(max_width=10_000), table).maximum
    if natural <= console.width:
        console.print(table)
    else:  # never squeeze a column: a truncated status list would misreport the run
        for line in comparison_stack(comparison, lang):
            console.print(line)
        console.print()
    for row in comparison.rows:
        for reason in story_reasons(row["story_check"], row["failures"], row["violations"], row["expected_breaks"],
                                    lang):
            console.print(Text(safe(f"{row['label']}: {reason}"), style=STORY_STYLE[row["story_check"]]))
    words = ["idemsim", "run", comparison.source or comparison.scenario, "--design", "DESIGN", "--seed",
             str(comparison.seed)]
    if comparison.variant:
        words += ["--variant", comparison.variant]
    if comparison.faults is not None:
        words += ["--faults", comparison.faults]
    for line in continued(shlex.join(words), console.width, t("cmp.each_row", lang)):
        console.print(safe(line), markup=False, highlight=False)
    variants = {row["label"].partition(" ")[2].strip("()"): row["story"] for row in comparison.rows if row["options"]}
    if variants:
        console.print(Text(safe(t("cmp.options", lang, list="; ".join(
            f"{options} → " + (f"--variant {story}" if story else t("cmp.main_story", lang))
            for options, story in variants.items())))))


# -- idemsim show ------------------------------------------------------------------------------------------
def _expectations(scenario) -> list[str]:
    return [f"{design}: " + ", ".join(f"{k}={v!r}" for k, v in e.stated().items())
            for design, e in scenario.expect.items()]


def _section(console: Console, heading: str, body: str, prose: bool = False) -> None:
    """A heading and its text, indented two columns and wrapped at the terminal's width; ``prose`` is
    reflowed first (its line breaks are the file's, not the reader's)."""
    print_prose(console, heading, style="bold")
    for line in (reflow(body) if prose else body.strip()).splitlines():
        print_prose(console, line, indent=2)
    console.print()


def print_prose(console: Console, line: str, indent: int = 0, style: str = "") -> None:
    """One line of text wrapped at the terminal's width, Japanese or English (`prose.wrap`), every piece
    indented as far as the line itself is, plus ``indent``."""
    line = safe(line)
    indent += len(line) - len(line.lstrip(" "))
    for piece in wrap(line.lstrip(" "), console.width - indent) or [""]:
        console.print(Text(" " * indent + piece, style=style, no_wrap=True, overflow="ignore"))


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in table.items():
        if isinstance(v, dict) and v:
            out += _flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v))
    return out


def print_show(console: Console, scenario, stories, lang: str = "en") -> None:
    """What happens, what it teaches, the article's passage, the set-up, and every story's expectations."""
    text = scenario.text
    print_prose(console, f"{scenario.name} — {text('title', lang)}", style="bold cyan")
    print_prose(console, f"{text('group', lang)}  ·  {text('summary', lang)}")
    console.print()
    _section(console, t("show.happens", lang), text("story", lang), prose=True)
    _section(console, t("show.teaches", lang), text("teaches", lang), prose=True)
    if scenario.article.strip():
        _section(console, t("show.article", lang), unwrap_japanese(scenario.article))
    c = scenario.client
    setup = [t("show.design", lang, design=scenario.design,
               compare=", ".join(scenario.compare or [t("show.every_design", lang)])),
             t("show.client", lang, keys=c.key_strategy, timeout=c.timeout, attempts=c.max_attempts,
               backoff=c.backoff)]
    for i, op in enumerate(scenario.operations, start=1):
        key = t("show.key", lang, key=op.key) if op.key else ""
        body = f" {json.dumps(op.body, ensure_ascii=False)}" if op.body else ""
        setup.append(t("show.operation", lang, i=i, at=op.at, client=op.client, method=op.method, path=op.path,
                       body=body, key=key))
    setup += [t("show.fault", lang, i=i, fault=f.describe(lang)) for i, f in enumerate(scenario.faults, start=1)] \
        or [t("show.no_faults", lang)]
    _section(console, t("show.setup", lang), "\n".join(setup))
    _section(console, t("show.expected", lang), "\n".join(_expectations(scenario)) or t("show.nothing_stated", lang))
    for story in stories[1:]:
        heading = t("show.variant", lang, name=story.variant, title=story.text("title", lang))
        changes = [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in _flatten(scenario.variants[story.variant])
                   if k.split(".")[0] not in ("title", "summary", "story", "teaches", "article", "expect", "faults",
                                              "ja")]
        if "faults" in scenario.variants[story.variant]:
            changes.append("faults: " + ("; ".join(f.describe(lang) for f in story.faults) or t("show.none", lang)))
        body = [story.text("summary", lang), ""] + reflow(story.text("story", lang)).splitlines() + [""] + \
               ([t("show.changes", lang, changes="; ".join(changes))] if changes else []) + \
               [t("show.expected_line", lang, line=line) for line in _expectations(story)]
        _section(console, heading, "\n".join(body))
    if scenario.diagrams:
        n = len(scenario.diagrams)
        console.print(Text(t("show.diagrams", lang, n=n, s="s" if n > 1 else "", name=safe(scenario.name)),
                           overflow="fold"))
    console.print(Text(t("show.run_it", lang, name=safe(scenario.name)), overflow="fold"))


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


def sweep_table(result, config=None, lang: str = "en") -> Table:
    """One row per point and design: the varied fields, the runs, the rates the sweep is about (with their
    intervals), attempts per purchase and the time to the final answer (p95)."""

    measures = list(config.measures) if config else ["double_charge"]
    measures += [m for m in ("double_capture", "gave_up_unknowing") if m not in measures][:max(0, 2 - len(measures))]
    measures = [m for m in measures if m not in ("time_to_answer.p95", "attempts")][:2]  # columns of their own
    table = Table(title=Text(safe(t("sw.title", lang, scenario=result.scenario, seeds=result.seeds,
                                    seed=result.base_seed))), title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    table.add_column(t("cmp.design", lang), no_wrap=True)
    for axis in result.axes:
        table.add_column(Text(safe(axis.field.rsplit(".", 1)[-1].replace("_", " "))), justify="right")
    for m in measures:
        table.add_column(ProseText(m.replace("_", " ").replace(".", " ") if lang == "en" else _measure_name(m, lang),
                                   justify="right"), justify="right")
    table.add_column(t("sw.attempts", lang), justify="right")
    table.add_column(t("sw.p95", lang), justify="right")
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


def _measure_name(measure: str, lang: str) -> str:

    key = f"sweep.{measure}"
    return t(key, lang) if key in MESSAGES else measure


def print_sweep(console: Console, result, config=None, lang: str = "en") -> None:
    console.print(sweep_table(result, config, lang))
    console.print(Text(t("sw.note", lang), overflow="fold"))
