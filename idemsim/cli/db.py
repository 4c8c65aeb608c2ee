"""`idemsim db …`: list, run and compare DB schedules (mounted by idemsim's main CLI).

Importing this module is cheap: every command imports what it needs when it runs, so mounting it costs
`idemsim run` nothing.

Exit codes: 0 — done, and for `compare` every step agreed; 1 — `compare` found a step or table that disagrees;
2 — bad input (a schedule, an option, an unreachable PostgreSQL): one line `error: …` on stderr.

Every command takes `--lang` (or `IDEMSIM_LANG`): headings, results, verdicts and error lines in English or
Japanese (`idemsim.base.i18n`); SQL, identifiers and numbers stay as they are.
"""

# No ``from __future__ import annotations`` here: typer reads the commands' annotations at each start-up of
# ``idemsim``, and strings would be evaluated again each time (see idemsim/cli/app.py).

import json
import time
from enum import Enum
from typing import Annotated, Optional

import typer
from rich.console import Console

from ..base.errors import InputError
from ..base.i18n import text
from .common import LANG_OPTION, Lang, OneLineTyper, choose_language, user_errors

app = OneLineTyper(
    name="db",
    help="DB schedules: run them on idemsim's PostgreSQL model or on a real PostgreSQL, and compare the two. "
         "Exit codes: 0 ok, 1 a comparison disagrees, 2 bad input or PostgreSQL unreachable.",
    no_args_is_help=True,
    add_completion=False,
)

DSN_HELP = "PostgreSQL connection string; default: $IDEMSIM_PG_DSN, else postgresql://postgres@127.0.0.1:5432/test."
SCALE_HELP = "Multiply every time in the schedule (at, sleep, lock_timeout, lease) by F; deadlock_timeout stays 1 s."


class Format(str, Enum):
    text = "text"
    json = "json"


@app.command("list")
def list_schedules(lang: Optional[Lang] = LANG_OPTION) -> None:
    """List the shipped schedules (scenarios/db/) with a one-line description each."""
    from rich import box
    from rich.table import Table

    from ..proof import schedule as schedules

    language = choose_language(lang)
    table = Table(box=box.SIMPLE_HEAD, show_header=True)
    table.add_column(text("db.list.schedule", language), style="bold", no_wrap=True)
    table.add_column(text("db.list.shows", language))
    for name, path in schedules.shipped().items():
        try:
            description = schedules.load(path).description or ""
        except InputError as error:
            description = text("db.list.invalid", language, error=error.said(language))
        table.add_row(name, description)
    Console().print(table)


@app.command("run")
def run(
    schedule: Annotated[str, typer.Argument(help="A schedule file, or the name of a shipped one (idemsim db list).")],
    format: Annotated[Format, typer.Option("--format", help="text: lanes and tables; json: the result document.")]
    = Format.text,
    scale: Annotated[float, typer.Option("--scale", metavar="F", help=SCALE_HELP)] = 1.0,
    postgres: Annotated[bool, typer.Option("--postgres", help="Run on a real PostgreSQL (see --dsn) instead of "
                                                              "the model.")] = False,
    dsn: Annotated[str | None, typer.Option("--dsn", help=DSN_HELP)] = None,
    lang: Optional[Lang] = LANG_OPTION,
) -> None:
    """Run a schedule on the model (default) or, with --postgres, on a real PostgreSQL."""
    from ..proof import schedule as schedules

    language = choose_language(lang)
    with user_errors():
        loaded = schedules.load(schedule)
        if postgres:
            from ..proof.postgres import run_postgres

            outcome = run_postgres(loaded, dsn, scale)
            document, notes, ids = outcome.document, outcome.notes, outcome.ids
            title = text("db.title.postgres", language, schedule=schedule, scale=scale)
        else:
            model_run = schedules.run_on_model(loaded, scale)
            document, notes, ids = model_run.document, model_run.notes(), model_run.ids
            title = text("db.title.model", language, schedule=schedule, scale=scale)
    if format is Format.json:
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    from ..proof.render import print_run

    print_run(Console(), schedules.scaled(loaded, scale), document, notes, ids, title, language)


@app.command("compare")
def compare(
    schedule: Annotated[str, typer.Argument(help="A schedule file, or the name of a shipped one (idemsim db list).")],
    dsn: Annotated[str | None, typer.Option("--postgres", "--dsn", metavar="DSN", help=DSN_HELP)] = None,
    scale: Annotated[float, typer.Option("--scale", metavar="F", help=SCALE_HELP)] = 1.0,
    lang: Optional[Lang] = LANG_OPTION,
) -> None:
    """Run a schedule on the model and on PostgreSQL and show, per step, both results and whether they agree.

    Agreement (the spec's rule): same rows, row and error; equal tables; each step's end within 0.1 s + 5 % of
    PostgreSQL's duration for it; where PostgreSQL may choose which waiter goes first, any of its choices.
    Exit 1 if anything disagrees.
    """
    from rich.text import Text

    from ..proof import schedule as schedules
    from ..proof.agreement import compare as judge
    from ..proof.agreement import racy_instants
    from ..proof.postgres import default_dsn, run_postgres, server_version
    from ..proof.render import print_comparison

    language = choose_language(lang)
    console = Console()
    with user_errors():
        loaded = schedules.load(schedule)
        schedules.scaled(loaded, scale)  # a bad --scale is bad input, whether or not PostgreSQL answers
        dsn = dsn or default_dsn()
        version = server_version(dsn)
        started = time.monotonic()
        outcome = run_postgres(loaded, dsn, scale)
        wall = time.monotonic() - started
    comparison = judge(loaded, outcome.document, scale)
    console.print(Text(schedule, style="bold") + Text(text("db.cmp.header", language, scale=scale,
                                                           version=version.split(" on ")[0], wall=wall,
                                                           runs=comparison.model_runs)))
    print_comparison(console, schedules.scaled(loaded, scale), comparison, language)
    racy = racy_instants(comparison.model)
    if racy:
        times = ", ".join(text("db.seconds", language, seconds=t) for t in racy)
        console.print(Text(text("db.cmp.note", language), style="yellow")
                      + Text(text("db.cmp.racy", language, times=times)))
    if comparison.agrees:
        console.print(Text(text("db.cmp.agree", language), style="green"))
        return
    console.print(Text(text("db.cmp.disagree", language), style="red"))
    raise typer.Exit(1)


if __name__ == "__main__":
    app()
