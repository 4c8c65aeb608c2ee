"""`idemsim db …`: list, run and compare DB schedules (mounted by idemsim's main CLI).

Importing this module is cheap: every command imports what it needs when it runs, so mounting it costs
`idemsim run` nothing.

Exit codes: 0 — done, and for `compare` every step agreed; 1 — `compare` found a step or table that disagrees;
2 — bad input (a schedule, an option, an unreachable PostgreSQL): one line `error: …` on stderr.
"""

from __future__ import annotations

import json
import time
from enum import Enum
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from idemsim.errors import InputError

app = typer.Typer(
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


def _fail(error: InputError) -> typer.Exit:
    typer.echo(f"error: {error}", err=True)
    return typer.Exit(2)


@app.command("list")
def list_schedules() -> None:
    """List the shipped schedules (scenarios/db/) with a one-line description each."""
    from idemsim.db import schedule as schedules
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_header=True)
    table.add_column("schedule", style="bold", no_wrap=True)
    table.add_column("what it shows")
    for name, path in schedules.shipped().items():
        try:
            description = schedules.load(path).description or ""
        except InputError as error:
            description = f"(invalid: {error})"
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
) -> None:
    """Run a schedule on the model (default) or, with --postgres, on a real PostgreSQL."""
    from idemsim.db import schedule as schedules

    try:
        loaded = schedules.load(schedule)
        if postgres:
            from idemsim.db.postgres import run_postgres

            outcome = run_postgres(loaded, dsn, scale)
            document, notes, ids = outcome.document, outcome.notes, outcome.ids
            title = f"{schedule} on PostgreSQL (scale {scale:g})"
        else:
            model_run = schedules.run_on_model(loaded, scale)
            document, notes, ids = model_run.document, model_run.notes(), model_run.ids
            title = f"{schedule} on the model (scale {scale:g})"
    except InputError as error:
        raise _fail(error) from None
    if format is Format.json:
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    from idemsim.db.render import print_run

    print_run(Console(), schedules.scaled(loaded, scale), document, notes, ids, title)


@app.command("compare")
def compare(
    schedule: Annotated[str, typer.Argument(help="A schedule file, or the name of a shipped one (idemsim db list).")],
    dsn: Annotated[str | None, typer.Option("--postgres", "--dsn", metavar="DSN", help=DSN_HELP)] = None,
    scale: Annotated[float, typer.Option("--scale", metavar="F", help=SCALE_HELP)] = 1.0,
) -> None:
    """Run a schedule on the model and on PostgreSQL and show, per step, both results and whether they agree.

    Agreement (the spec's rule): same rows, row and error; equal tables; each step's end within 0.1 s + 5 % of
    PostgreSQL's duration for it; where PostgreSQL may choose which waiter goes first, any of its choices.
    Exit 1 if anything disagrees.
    """
    from idemsim.db import schedule as schedules
    from idemsim.db.compare import compare as judge, racy_instants
    from idemsim.db.postgres import default_dsn, run_postgres, server_version
    from idemsim.db.render import print_comparison

    console = Console()
    try:
        loaded = schedules.load(schedule)
        schedules.scaled(loaded, scale)  # a bad --scale is bad input, whether or not PostgreSQL answers
        dsn = dsn or default_dsn()
        version = server_version(dsn)
        started = time.monotonic()
        outcome = run_postgres(loaded, dsn, scale)
        wall = time.monotonic() - started
    except InputError as error:
        raise _fail(error) from None
    comparison = judge(loaded, outcome.document, scale)
    console.print(f"[bold]{escape(schedule)}[/bold], scale {scale:g}: model vs {version.split(' on ')[0]} "
                  f"({wall:.1f} s on PostgreSQL; model run under {comparison.model_runs} wake order(s))",
                  highlight=False)
    print_comparison(console, schedules.scaled(loaded, scale), comparison)
    racy = racy_instants(comparison.model)
    if racy:
        console.print(f"[yellow]note:[/yellow] at {', '.join(f'{t:g} s' for t in racy)} several sessions resume from "
                      "a wait and go straight on; PostgreSQL runs their next statements in an order nobody can know, "
                      "so a difference there may be a race.", highlight=False)
    if comparison.agrees:
        console.print("[green]agree[/green]")
        return
    console.print("[red]DISAGREE[/red]")
    raise typer.Exit(1)


if __name__ == "__main__":
    app()
