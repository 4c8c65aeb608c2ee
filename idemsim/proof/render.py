"""Text views of DB schedule runs (rich): lanes of statements with their waits, final tables, comparisons.

The only module of `idemsim.model.db` that knows about rich. A run is drawn as one column (lane) per session and one
row per moment at which a step starts or ends: a statement that blocks opens a bracket at its start ("┬ waits
for s1") that runs down its lane ("│") to the moment it ends ("└ … after 4.000 s"), so a reader sees who
waited for whom and how long.
"""

from __future__ import annotations

import json

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..base.i18n import text
from ..views.prose import ProseText
from .agreement import Comparison
from .schedule import Schedule, StepNote, statement_fields

SQLSTATE_NAMES = {
    "23505": "unique_violation",
    "40001": "serialization_failure",
    "40P01": "deadlock_detected",
    "55P03": "lock_not_available",
    "25P02": "in_failed_sql_transaction",
    "42P10": "invalid_column_reference",
    "08003": "connection_does_not_exist",
    "42601": "syntax_error",
    "22P05": "untranslatable_character",
    "22003": "numeric_value_out_of_range",
    "22023": "invalid_parameter_value",
}
"""PostgreSQL's condition names for the SQLSTATEs a schedule can produce."""

WAIT_SHOWN = 0.05
"""A step lasting longer than this (seconds) is drawn as a wait."""


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(32), 127)}
"""Control characters (a NUL in a key, say) are shown escaped, never sent raw to the terminal."""


def _short(value: object, width: int = 28) -> str:
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) or value is None else str(value)
    text = text.translate(_CONTROL)
    return text if len(text) <= width else text[: width - 1] + "…"


def describe_step(op: str, fields: dict, lang: str = "en") -> str:
    """A short human form of a step: `register_key k-8f3a fp1`, `sleep 5 s`."""
    if op in ("sleep", "lock_timeout"):
        return f"{op} {text('db.seconds', lang, seconds=fields['seconds'])}"
    if op == "begin":
        return f"begin {fields.get('isolation', 'read committed')}"
    if op == "claim_key":
        return f"claim_key {_short(fields['key'])} lease {text('db.seconds', lang, seconds=fields['lease'])}"
    if op == "set_point":
        return f"set_point {_short(fields['key'])} {_short(fields['point'])}" + (" release" if fields.get("release")
                                                                                else "")
    shown = [_short(v) for k, v in fields.items() if k not in ("at",)]
    return " ".join([op, *shown])


def _rows(n: int, lang: str) -> str:
    return text("db.row", lang) if n == 1 else text("db.rows", lang, n=n)


def describe_result(entry: dict, note: StepNote | None, lang: str = "en") -> str:
    """A short human form of a step's result: `1 row, id 3`, `✗ 23505 unique_violation`."""
    op, error = entry["op"], entry["error"]
    if error is not None:
        result = f"✗ {error} {SQLSTATE_NAMES.get(error, '')}".rstrip()
        if note and note.id is not None:
            result += text("db.id_used", lang, id=note.id)
        return result
    if entry["row"] is not None and op == "count_charges":
        return text("db.count", lang, n=entry["row"]["count"])
    if op == "select_key":
        row = entry["row"]
        if row is None:
            return _rows(0, lang)
        return f"{_rows(entry['rows'], lang)}: {row['status']} {row['fingerprint']} {_short(row['response'], 24)}"
    if op in ("lock_key", "claim_key") and entry["row"] is not None:
        return f"{_rows(entry['rows'], lang)}: " + " ".join(_short(value, 24) for value in entry["row"].values())
    if entry["rows"] is not None:
        result = _rows(entry["rows"], lang)
        if note and note.id is not None:
            result += text("db.id" if entry["rows"] else "db.id_used", lang, id=note.id)
        return result
    return text("db.ok", lang)


def lanes(schedule: Schedule, document: dict, notes: dict[str, list[StepNote | None]] | None = None,
          title: str | None = None, lang: str = "en") -> Table:
    """The lanes of a run: one column per session, one row per moment a step starts or ends."""
    sessions = document["sessions"]
    moments = sorted({round(e["start"], 3) for entries in sessions.values() for e in entries}
                     | {round(e["end"], 3) for entries in sessions.values() for e in entries
                        if e["end"] - e["start"] > WAIT_SHOWN})
    table = Table(title=Text(title) if title is not None else None, box=box.SIMPLE_HEAD, show_lines=False,
                  title_justify="left")
    table.add_column(text("db.time", lang), justify="right", style="dim")
    for name in sessions:
        table.add_column(Text(name.translate(_CONTROL)), overflow="fold")
    for moment in moments:
        cells = []
        for name, entries in sessions.items():
            steps = schedule.sessions[name]
            lines: list[Text] = []
            for index, entry in enumerate(entries):
                start, end = round(entry["start"], 3), round(entry["end"], 3)
                note = notes[name][index] if notes and index < len(notes[name]) else None
                lines += _cell_lines(steps[index].op, statement_fields(steps[index]), entry, note, start, end, moment,
                                     lang)
            joined = Text("\n").join(lines)
            cells.append(ProseText(joined.plain, spans=joined.spans))  # Japanese wraps between characters
        table.add_row(f"{moment:.3f}", *cells)
    return table


def _cell_lines(op: str, fields: dict, entry: dict, note: StepNote | None, start: float, end: float,
                moment: float, lang: str = "en") -> list[Text]:
    waited = entry["end"] - entry["start"]
    long = waited > WAIT_SHOWN
    what = describe_step(op, fields, lang)
    style = "red" if entry["error"] else None
    if not (start <= moment <= end):
        return []
    if not long:
        if moment != start:
            return []
        return [Text(what) + Text(" → ") + Text(describe_result(entry, note, lang), style=style or "green")]
    if moment == start:
        if op == "sleep":
            return [Text(f"{what} ┬", style="dim")]
        waits = text("db.waits_for", lang, who=note.blocked_by[0]) if note and note.blocked_by else \
            text("db.waits", lang)
        return [Text(what) + Text(waits, style="yellow")]
    if moment < end:
        return [Text("│", style="dim" if op == "sleep" else "yellow")]
    if op == "sleep":
        return [Text("┴", style="dim")]
    chain = text("db.chain", lang, who=text("db.then", lang).join(note.blocked_by)) \
        if note and len(note.blocked_by) > 1 else ""
    return [Text(text("db.after", lang, seconds=waited, chain=chain), style="yellow")
            + Text(describe_result(entry, note, lang), style=style or "green")]


def tables_view(tables: dict, ids: dict[str, list[int]] | None = None) -> list[Table]:
    """The final tables; `ids` (per table, in row order) adds the id column when known. Their names and columns
    are SQL's, in every language."""
    keys = Table(title="idempotency_keys", box=box.SIMPLE_HEAD, title_justify="left")
    columns = ["key", "fingerprint", "status", "response"]
    if ids:
        keys.add_column("id", justify="right")
    for column in columns:
        keys.add_column(column)
    for i, row in enumerate(tables["idempotency_keys"]):
        values = [_short(row[c], 60) if row[c] is not None else "NULL" for c in columns]
        keys.add_row(*([str(ids["idempotency_keys"][i])] if ids else []), *map(Text, values))
    charges = Table(title="charges", box=box.SIMPLE_HEAD, title_justify="left")
    if ids:
        charges.add_column("id", justify="right")
    charges.add_column("amount", justify="right")
    charges.add_column("key")
    for i, row in enumerate(tables["charges"]):
        charges.add_row(*([str(ids["charges"][i])] if ids else []), str(row["amount"]),
                        Text(row["key"] if row["key"] is not None else "NULL"))
    return [keys, charges]


def print_run(console: Console, schedule: Schedule, document: dict, notes=None, ids=None, title=None,
              lang: str = "en") -> None:
    """A whole run: the lanes, then the final tables."""
    console.print(lanes(schedule, document, notes, title, lang))
    for table in tables_view(document["tables"], ids):
        console.print(table)


def _side(entry: dict | None, note: StepNote | None = None, lang: str = "en") -> str:
    if entry is None:
        return "—"
    took = entry["end"] - entry["start"]
    timing = f"{entry['start']:.3f}→{entry['end']:.3f}"
    if took > WAIT_SHOWN:
        timing += text("db.waited", lang, seconds=took) if entry["op"] != "sleep" else ""
    said = describe_result(entry, note, lang) if entry["op"] != "sleep" else text("db.slept", lang)
    return f"{said}  {timing}"


def print_comparison(console: Console, schedule: Schedule, comparison: Comparison, lang: str = "en") -> None:
    """Per step: the model's result and end time beside PostgreSQL's, and whether they agree."""
    table = Table(box=box.SIMPLE_HEAD)
    for column in (text("db.col.session", lang), "#", text("db.col.step", lang), text("db.col.model", lang),
                   "PostgreSQL", text("db.col.agree", lang)):
        table.add_column(column, overflow="fold")
    results = comparison.model.results
    for verdict in comparison.steps:
        steps = schedule.sessions.get(verdict.session, [])
        step = steps[verdict.index] if verdict.index < len(steps) else None
        result = results.get(verdict.session, [None] * (verdict.index + 1))[verdict.index] \
            if verdict.index < len(results.get(verdict.session, [])) else None
        note = StepNote(result.id, result.blocked_by) if result is not None else None
        mark = Text("✓", style="green") if verdict.agrees else \
            Text("✗ " + "; ".join(problem.said(lang) for problem in verdict.problems), style="red")
        table.add_row(Text(verdict.session.translate(_CONTROL)), str(verdict.index + 1),
                      Text(describe_step(step.op, statement_fields(step), lang) if step else "?"),
                      Text(_side(verdict.model, note, lang)), Text(_side(verdict.postgres, None, lang)), mark)
    console.print(table)
    if comparison.tables_problems:
        problems = "; ".join(problem.said(lang) for problem in comparison.tables_problems)
        console.print(Text(text("db.tables_differ", lang, problems=problems), style="red"))
    else:
        console.print(Text(text("db.tables_equal", lang), style="green"))
