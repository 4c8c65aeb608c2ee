"""The ``idemsim`` command line.

Exit codes (after Click): 0 every expectation held (for ``run``: the story reproduces what its file states, its
declared ``breaks`` included, or the file states nothing for the design and no property broke), 1 an expectation
failed, a scripted fault never happened or (``run``) a property broke that the file does not declare, 2 bad input
or usage (`idemsim.judge.summary.exit_code`). Bad input is reported as one line, ``error: ...``,
naming the file, the field and what is allowed; never a traceback. Bad usage (an unknown option, a missing
argument, a bad value) is one line too (`idemsim.cli.common`). Both are said in the command's language
(``--lang``, ``IDEMSIM_LANG``).

Output: JSON is always strict (no NaN or Infinity; what a terminal would act on is escaped, and everything
is escaped to ASCII when standard output cannot encode it); text escapes control characters from the input
(`idemsim.base.printable`); a standard output that cannot take the characters (``PYTHONIOENCODING=ascii``) gets
them replaced. A write error on standard output is one line, ``error: cannot write to standard output: …``,
and exit 2; a closed pipe (``| head -1``) ends the command quietly with exit 141, as a Unix tool killed by
SIGPIPE does (`main`).

Start-up stays light: this module imports neither matplotlib, nor hypothesis, nor psycopg; the commands
that need them import them when they run.
"""

# No ``from __future__ import annotations`` here: typer reads every command's annotations at each start-up,
# and strings would be evaluated again each time (about 10 ms of ``idemsim run``'s start).

import errno
import io
import json
import math
import os
import shlex
import sys
from contextlib import contextmanager
from enum import Enum
from typing import Any, List, Optional

import typer
from rich.console import Console

from .. import __version__
from ..base.errors import InputError, os_reason
from ..base.output import check_output, discard_stdout, is_standard_output, write_output
from ..base.printable import one_line, safe
from ..base.readers import label
from ..kernel import collector
from . import watchdog
from .common import LANG_OPTION, LANGUAGE, Lang, OneLineTyper, user_errors
from .common import choose_language as _lang

app = OneLineTyper(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Watch a lost response, a retry and an idempotency key, in a simulation.\n\n"
         "Exit codes: 0 the run shows what its scenario states, 1 it does not (or a property broke that the "
         "scenario does not declare), 2 bad input.",
)


class Format(str, Enum):
    text = "text"
    json = "json"


class RunFormat(str, Enum):
    text = "text"
    json = "json"
    mermaid = "mermaid"
    mermaid_state = "mermaid-state"


class ShowFormat(str, Enum):
    text = "text"
    mermaid = "mermaid"


FAULTS_OPTION = typer.Option(None, "--faults", metavar="TOKENS",
                             help="Replace the story's faults: comma-separated tokens, e.g. "
                                  "'lose:response@1.1,crash:after_key@1.2' ('' = none; the syntax: docs/web.md). "
                                  "With --faults only one story runs: the main one, or --variant's.")


def _with_faults(story: Any, faults: str) -> Any:
    """``story`` with the faults ``--faults`` writes instead of its own (`idemsim.scenario.fault_text`)."""
    from ..scenario.fault_text import parse_faults, with_faults

    return with_faults(story, parse_faults(faults))


MAX_TIME_OPTION = typer.Option(None, "--max-time", metavar="SECONDS",
                               help="The bound on a run's simulated time (default 1e7 s, about 116 days): no time "
                                    "in the scenario may be longer, and a run that goes on longer stops with an "
                                    "error.")


def _max_time(seconds: Optional[float]) -> Optional[float]:
    """``--max-time``: a finite number of seconds > 0 (None: the default bound)."""
    if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        raise InputError("err.max_time", seconds=seconds)
    return seconds


def _console() -> Console:
    """The terminal view's console: input never read as rich markup, no line ending in a space."""
    from ..views.terminal import console

    return console()


def json_text(document: Any) -> str:
    """``document`` as strict JSON: no NaN or Infinity (a value that is not finite is a bug and raises), every
    character a terminal could act on escaped (``\\u009b``), and everything escaped to ASCII when standard
    output cannot encode it."""
    text = json.dumps(document, ensure_ascii=False, indent=1, allow_nan=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except UnicodeEncodeError:
        text = json.dumps(document, ensure_ascii=True, indent=1, allow_nan=False)
    if not all(line.isprintable() for line in text.split("\n")):
        text = "".join(ch if ch.isprintable() or ch == "\n" else _json_escape(ch) for ch in text)
    return text


def print_json(document: Any) -> None:
    """``document`` as strict JSON (`json_text`) on standard output."""
    print(json_text(document))


def _json_escape(ch: str) -> str:
    """A character as JSON's ``\\uXXXX`` (a surrogate pair above the BMP). Outside strings JSON here has only
    printable ASCII and newlines, so every character escaped is inside a string."""
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _version(value: bool) -> None:
    if value:
        print(f"idemsim {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(ctx: typer.Context,
                  version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                               help="Print the version and exit.")) -> None:
    """Every command runs a user's design (``--design file.py:function``) under the watchdog
    (`idemsim.cli.watchdog`: ``IDEMSIM_DESIGN_SECONDS``, 5 s unless told), which is taken away when it ends."""
    with user_errors():
        ctx.with_resource(watchdog.installed())


def _check_design(design: Optional[str]) -> Optional[str]:
    """A design named on the command line, resolved: a known name, or ``path/to/file.py:function`` (loaded
    and registered under that text)."""
    from ..model.designs import resolve_design

    return None if design is None else resolve_design(design)


@app.command("list")
def list_scenarios(lang: Optional[Lang] = LANG_OPTION) -> None:
    """List the built-in scenarios, grouped."""
    from rich.table import Table
    from rich.text import Text

    from ..base.i18n import text
    from ..scenario.schema import builtin_names, load
    from ..views.prose import ProseText

    language = _lang(lang)
    with user_errors():
        scenarios = [load(name) for name in builtin_names()]
    groups: dict[str, list] = {}
    for s in scenarios:
        groups.setdefault(s.group, []).append(s)
    console = _console()
    for group, members in sorted(groups.items()):
        title = members[0].text("group", language)
        table = Table(title=Text(safe(title)), title_justify="left", show_header=False, box=None, padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for s in members:
            n = len(s.variants)
            variants = text("list.variants", language, n=n, s="s" if n > 1 else "") if n else ""
            table.add_row(Text(safe(s.name)), ProseText(safe(s.text("summary", language) + variants)))
        console.print(table)
        console.print()
    console.print(text("list.footer", language), markup=False)


@app.command()
def run(
    scenario: str = typer.Argument(..., help="A built-in scenario's name (see `idemsim list`) or a .toml file."),
    seed: Optional[int] = typer.Option(None, help="Seed of the run's random numbers (default: the scenario's)."),
    format: RunFormat = typer.Option(RunFormat.text, "--format",
                                     help="text: timeline and summary; json: the trace; mermaid: a sequence "
                                          "diagram per story; mermaid-state: the key record's state diagram."),
    design: Optional[str] = typer.Option(None, help="Run under this design instead of the scenario's: a name, or "
                                                    "path/to/file.py:function (docs/designs.md)."),
    variant: Optional[str] = typer.Option(None, help="Run only this variant (default: the story and every "
                                                     "variant)."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: section.field=value (repeatable)."),
    brief: bool = typer.Option(False, "--brief", help="Text: only the exchange between client and API, one "
                                                      "line an event, no SQL."),
    full: bool = typer.Option(False, "--full", help="Text, for a load of many operations: every event instead "
                                                    "of the figures."),
    faults: Optional[str] = FAULTS_OPTION,
    lang: Optional[Lang] = LANG_OPTION,
    max_time: Optional[float] = MAX_TIME_OPTION,
) -> None:
    """Run a scenario and check what it must show."""
    from ..judge.summary import exit_code
    from ..runners.simulation import FORMAT_VERSION, simulate
    from ..scenario.schema import load, runs
    from ..scenario.schema import variant as pick

    language = _lang(lang)
    with user_errors():
        design = _check_design(design)
        loaded = load(scenario, set_, max_time=_max_time(max_time))
        stories = [pick(loaded, variant, set_)] if variant is not None else runs(loaded, set_)
        if faults is not None:  # one story: the main one or --variant's, with these faults
            stories = [_with_faults(stories[0], faults)]
        if format is RunFormat.json:  # written as the runs go (views/json_stream.py); else kept and printed
            from . import json_stream

            summaries = json_stream.write(stories, design, seed, FORMAT_VERSION, _json_escape)
            if summaries is not None:
                raise typer.Exit(max(exit_code(s) for s in summaries))
        results = [simulate(s, design, seed) for s in stories]
    if format is RunFormat.json:
        main, *others = results
        print_json({"version": FORMAT_VERSION, **main.to_dict(), "variants": [r.to_dict() for r in others]})
    elif format in (RunFormat.mermaid, RunFormat.mermaid_state):
        from ..views import mermaid

        draw = mermaid.sequence if format is RunFormat.mermaid else mermaid.state
        print(mermaid.diagrams(draw(r, language) for r in results), end="")
    else:
        from ..views.terminal import print_run, reproduce_command

        console = _console()
        for r in results:
            command = None
            if faults is not None:  # the command that reproduces it names the faults it ran with
                from ..scenario.fault_text import faults_text

                said = shlex.quote(faults_text(r.scenario.faults))
                command = f"{reproduce_command(r, set_, scenario)} --faults {said}"
            print_run(console, r, set_, scenario, brief=brief, full=full, lang=language, command=command)
    raise typer.Exit(max(exit_code(r.summary) for r in results))


@app.command()
def plot(
    scenario: str = typer.Argument(..., help="A built-in scenario's name (see `idemsim list`) or a .toml file."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="The file to write: PNG, SVG or PDF by "
                                                                       "its extension (default: NAME.png)."),
    design: Optional[str] = typer.Option(None, help="Run under this design instead of the scenario's."),
    variant: Optional[str] = typer.Option(None, help="Draw this variant's story (default: the main story)."),
    seed: Optional[int] = typer.Option(None, help="Seed of the run's random numbers (default: the scenario's)."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: section.field=value (repeatable)."),
    lang: Optional[Lang] = LANG_OPTION,
    max_time: Optional[float] = MAX_TIME_OPTION,
) -> None:
    """Draw a run as a time-space diagram: a lane per party, messages as arrows, waits as bars."""
    from pathlib import Path

    from ..runners.simulation import simulate
    from ..scenario.schema import load
    from ..scenario.schema import variant as pick

    language = _lang(lang)
    with user_errors():
        design = _check_design(design)
        loaded = load(scenario, set_, max_time=_max_time(max_time))
        story = pick(loaded, variant, set_) if variant is not None else loaded
        target = output if output is not None else f"{Path(scenario).stem}.png"
        from ..views import figure

        figure.check_path(target)
        result = simulate(story, design, seed)
        from ..judge.summary import is_load

        if is_load(result):
            from ..views.sweep_plot import attempts_figure

            figure.save(attempts_figure(result, language), target)
        else:
            figure.save(figure.run_figure(result, language), target)
    if not is_standard_output(target):
        print(safe(target))


@app.command()
def explore(
    design: str = typer.Argument(..., help="The design to explore: naive, check-then-insert, same-tx, "
                                           "committed-first, split-tx, recovery-points, or your own as "
                                           "path/to/file.py:function (docs/designs.md)."),
    set_: List[str] = typer.Option([], "--set", help="Fix a field of the default configuration: "
                                                     "section.field=value (repeatable); field=none makes it "
                                                     "none (e.g. api.lease=none: no recovery)."),
    max_examples: int = typer.Option(200, "--max-examples", min=1, help="Search: how many runs Hypothesis "
                                                                        "tries before it gives up."),
    seed: int = typer.Option(1, help="Seed of the search and of every run's random numbers."),
    exhaustive: bool = typer.Option(False, "--exhaustive", help="Check every schedule of the small universe "
                                                                "instead of searching (see docs/explore.md)."),
    max_faults: Optional[int] = typer.Option(None, "--max-faults", min=0, help="Faults per schedule at most "
                                                                               "(default: search 5, "
                                                                               "exhaustive 3; exhaustive "
                                                                               "allows up to 6)."),
    save: Optional[str] = typer.Option(None, "--save", help="Write a counterexample to this scenario file, which "
                                                            "`idemsim run FILE` replays (default: nothing is "
                                                            "written)."),
    force: bool = typer.Option(False, "--force", help="With --save: replace an existing file."),
    format: Format = typer.Option(Format.text, "--format", help="text: verdict and timeline; json: verdict, "
                                                               "counts and the counterexample's trace."),
    property_: List[str] = typer.Option([], "--property", help="Judge only this property (repeatable; default: "
                                                               "all nine). E.g. at-most-one-charge: the "
                                                               "database's promise alone."),
    workers: Optional[int] = typer.Option(None, "--workers", help="With --exhaustive: processes on this "
                                                                  "machine (default: 1; at most 4 a core)."),
    dask: Optional[str] = typer.Option(None, "--dask", help="With --exhaustive: a Dask scheduler's address "
                                                            "(HOST:PORT or tcp://HOST:PORT), or 'local'."),
    max_time: Optional[float] = MAX_TIME_OPTION,
    lang: Optional[Lang] = LANG_OPTION,
) -> None:
    """Search for a fault schedule that breaks exactly-once charging: on the database's charges and on the
    money the payment processor captured.

    The default configuration gives the article's designs their best chance: one key per operation,
    fingerprint check on, retention longer than the retry window, committed-first with a lease longer than
    any handler. The processor is called without a key of its own, so same-tx is broken by a crash or a lost
    answer between the capture and the COMMIT (two captures, one row); --set api.processor_key=request-key
    stops the double capture but leaves an orphan when nobody retries; recovery-points, with its completer,
    survives every schedule. --property at-most-one-charge judges the database's promise alone. See
    docs/explore.md. Exit codes: 1 a counterexample was found (printed with the `idemsim run` command that
    shows it again, which exits 1 too, and saved with --save), 0 none was, 2 bad input.
    """
    from ..runners import explore as ex
    from ..runners.simulation import FORMAT_VERSION

    mode = "exhaustive" if exhaustive else "search"
    language = _lang(lang)
    with user_errors():
        needs = {"--force": (force, save is not None, "--save"),
                 "--workers": (workers is not None, exhaustive, "--exhaustive"),
                 "--dask": (dask is not None, exhaustive, "--exhaustive")}
        for option, (given, present, other) in needs.items():
            if given and not present:  # it would do nothing
                raise InputError("err.needs", option=option, needs=other)
        if exhaustive:
            from ..runners.sweep import check_dask, check_workers

            check_workers(workers, dask)
            if dask is not None and dask != "local":
                check_dask(dask)  # before the exploration is set up
        if exhaustive and max_faults is not None and max_faults > ex.MAX_EXHAUSTIVE_FAULTS:
            most = ex.MAX_EXHAUSTIVE_FAULTS
            raise InputError("err.max_faults", n=max_faults, most=most,
                             schedules=ex.count_schedules(len(ex.universe()), most))
        k = ex.DEFAULT_MAX_FAULTS[mode] if max_faults is None else max_faults
        bound = _max_time(max_time)
        base = ex.base_scenario(design, set_, seed, max_time=bound)
        if save is not None:
            ex.check_save_path(save, force=force)
        ex.judged_properties(property_)
        command = ex.command_line(design, set_, seed, exhaustive_mode=exhaustive, max_faults=k,
                                  max_examples=None if exhaustive else max_examples, properties=property_,
                                  max_time=bound)
        if exhaustive:
            from ..runners.sweep import executor_for

            with executor_for(workers or 1, dask) as executor:
                result = ex.exhaustive(design, set_, max_faults=k, seed=seed, properties=property_,
                                       executor=executor, max_time=bound)
        else:
            result = ex.search(design, set_, max_examples=max_examples, seed=seed, max_faults=k,
                               properties=property_, max_time=bound)
        cx = result.counterexample
        if cx is not None and save is not None:
            ex.save(cx, save, command)
    if format is Format.json:
        print_json({"version": FORMAT_VERSION, **result.to_dict(), "sets": list(set_), "command": command})
    else:
        console = _console()
        from ..base.i18n import text
        from ..views.terminal import print_prose

        for line in ex.header_lines(result, base, command, language) + ex.verdict_lines(result, language):
            print_prose(console, line)
        if cx is not None:
            from ..views.terminal import print_run

            console.print()
            print_run(console, cx.run, lang=language, command=cx.reproduce_command())
            if cx.saved:
                console.print(safe(text("ex.saved", language, path=cx.saved, command=cx.replay_command())),
                              markup=False)
            else:
                console.print(text("ex.not_saved", language, path=ex.default_path(design, seed)), markup=False)
    raise typer.Exit(1 if result.counterexample is not None else 0)


class SweepFormat(str, Enum):
    text = "text"
    json = "json"
    csv = "csv"


@app.command()
def sweep(
    scenario: str = typer.Argument(..., help="A shipped sweep (loss, ttl, lease, herd, pool), a scenario's name, "
                                             "or a .toml file."),
    vary: List[str] = typer.Option([], "--vary", help="A field and its values: FIELD=V1,V2,… or "
                                                      "FIELD=START:STOP:STEP (repeatable: a product). Default: "
                                                      "the scenario's [sweep] grid."),
    design: List[str] = typer.Option([], "--design", help="A design to sweep (repeatable; default: the "
                                                          "scenario's [sweep] designs, else all)."),
    seeds: Optional[int] = typer.Option(None, "--seeds", help="Runs per point and design, 1 to 100,000 (default: "
                                                              "the scenario's [sweep] seeds, else 100)."),
    seed: int = typer.Option(1, help="The base seed every run's seed is derived from."),
    variant: Optional[str] = typer.Option(None, help="Sweep this variant's story instead of the main one."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: section.field=value (repeatable)."),
    format: SweepFormat = typer.Option(SweepFormat.text, "--format", help="text: a table; json; csv."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write the JSON or CSV to this file."),
    plot: Optional[str] = typer.Option(None, "--plot", help="Draw the rates against the varied field (PNG, SVG "
                                                            "or PDF)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Processes on this machine (default: all "
                                                                  "cores; at most 4 a core)."),
    dask: Optional[str] = typer.Option(None, "--dask", help="Run on a Dask cluster: the scheduler's address "
                                                            "(HOST:PORT or tcp://HOST:PORT; it must answer "
                                                            "within 3 s), or 'local' for a LocalCluster here."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    lang: Optional[Lang] = LANG_OPTION,
    max_time: Optional[float] = MAX_TIME_OPTION,
) -> None:
    """Run a scenario over a grid of parameters, every design and many seeds: how often does it go wrong?"""
    from ..runners import sweep as sw
    from ..scenario.schema import load
    from ..scenario.schema import variant as pick

    language = _lang(lang)
    with user_errors():
        sw.check_workers(workers, dask)
        designs = [_check_design(d) for d in design]
        loaded = load(scenario, set_, max_time=_max_time(max_time))
        if variant is not None:
            pick(loaded, variant, set_)
        config = loaded.sweep
        if not vary and (config is None or not config.vary):
            raise InputError("err.nothing_to_vary", scenario=scenario)
        spec = sw.plan(loaded, vary, designs, seeds, seed, set_, variant)  # every limit, every point checked
        _check_outputs(output, plot, format.value)
        if plot is not None:
            from ..views import sweep_plot

            sweep_plot.check_path(plot)
        with sw.executor_for(workers, dask) as executor, _progress(quiet) as progress:
            result = sw.run(spec, executor, progress)
        if config is not None:
            sw.check_measured(result, config.measures, loaded._source or loaded.name)
        if plot is not None:
            sweep_plot.save(sweep_plot.figure(result, config, language), plot)
    if format is SweepFormat.text:
        from ..views.terminal import print_sweep

        print_sweep(_console(), result, config, language)
        text = None
    elif format is SweepFormat.json:
        text = json_text(result.to_json()) + "\n"
    else:
        text = sw.to_csv(result)
    if text is not None:
        if output is None:
            print(text, end="")
        else:
            with user_errors():
                written = write_output(output, text)
            if written != "standard output":
                print(safe(output))
    if plot is not None:  # where the figure went; on stderr when stdout carries the JSON or CSV itself
        print(safe(plot), file=sys.stdout if text is None or output is not None else sys.stderr)


def _check_outputs(output: Optional[str], plot: Optional[str], format: str) -> None:
    """Refuse, before a sweep runs, files it could not write or would write wrongly: what
    `idemsim.base.output.check_output` refuses, ``-o`` with ``--format text`` (the table goes to the terminal)
    or with a .json or .csv name that contradicts ``--format``, and ``-o`` and ``--plot`` naming one file."""
    if output is not None:
        suffix = os.path.splitext(output)[1].lower().lstrip(".")
        if format == "text":
            raise InputError("err.output.text", file=label(output))
        if suffix in ("json", "csv") and suffix != format:
            raise InputError("err.output.suffix", file=label(output), suffix=f".{suffix}", format=format)
    for path in (output, plot):
        if path is not None:
            check_output(path)
    if output is not None and plot is not None and _same_file(output, plot):
        raise InputError("err.output.same_file", file=label(output), plot=label(plot))


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (through links, ``./``, or as one existing file)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


@contextmanager
def _progress(quiet: bool):
    """A progress bar on stderr while a long command works; none when stderr is not a terminal or --quiet."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        from ..base.i18n import text

        task = bar.add_task(text("progress.sweeping", LANGUAGE["now"]), total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


@app.command()
def show(
    scenario: str = typer.Argument(..., help="A built-in scenario's name (see `idemsim list`) or a .toml file."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: section.field=value (repeatable)."),
    format: ShowFormat = typer.Option(ShowFormat.text, "--format",
                                      help="text: the explanation; mermaid: the article's own diagrams for it."),
    lang: Optional[Lang] = LANG_OPTION,
    max_time: Optional[float] = MAX_TIME_OPTION,
) -> None:
    """Explain a scenario: what happens, what it teaches, the article's passage, its variants and expectations."""
    from ..base.i18n import text
    from ..scenario.schema import load, runs

    language = _lang(lang)
    with user_errors():
        loaded = load(scenario, set_, max_time=_max_time(max_time))
        stories = runs(loaded, set_)
    if format is ShowFormat.mermaid:
        if not loaded.diagrams:
            print(one_line(text("show.no_diagram", language, name=loaded.name)), file=sys.stderr)
            return
        print("\n".join(safe(d.strip("\n"), keep="\n\t") + "\n" for d in loaded.diagrams), end="")
        return
    from ..views.terminal import print_show

    print_show(_console(), loaded, stories, language)


@app.command()
def compare(
    scenario: str = typer.Argument(..., help="A built-in scenario's name (see `idemsim list`) or a .toml file."),
    seed: Optional[int] = typer.Option(None, help="Seed of the runs' random numbers (default: the scenario's)."),
    format: Format = typer.Option(Format.text, "--format", help="text: one table; json: version and rows."),
    variant: Optional[str] = typer.Option(None, help="Compare this variant's story instead of the main one."),
    set_: List[str] = typer.Option([], "--set", help="Override a field: section.field=value (repeatable)."),
    plot: Optional[str] = typer.Option(None, "--plot", help="Also draw the runs, one panel per design, to this "
                                                            "file (PNG, SVG or PDF)."),
    design: List[str] = typer.Option([], "--design", help="Compare these designs only (repeatable; a name or "
                                                          "path/to/file.py:function). Default: the scenario's, "
                                                          "else every design."),
    faults: Optional[str] = FAULTS_OPTION,
    lang: Optional[Lang] = LANG_OPTION,
    max_time: Optional[float] = MAX_TIME_OPTION,
) -> None:
    """Run a scenario's faults under every design (and its option sets) and show one table."""
    from ..runners.compare import compare as run_comparison
    from ..scenario.schema import load

    language = _lang(lang)
    with user_errors():
        if plot is not None:
            from ..views import figure

            figure.check_path(plot)
        designs = [_check_design(d) for d in design]
        if faults is not None:
            from ..scenario.fault_text import parse_faults

            faults = parse_faults(faults)
        comparison = run_comparison(load(scenario, set_, max_time=_max_time(max_time)), variant, seed, set_,
                                    designs or None, faults=faults)
        comparison.source = scenario
        if plot is not None:
            from ..views.sweep_plot import comparison_figure  # a load's: its pool under each design

            figure.save(comparison_figure(comparison.runs, language), plot)
    if format is Format.json:
        print_json(comparison.to_json())
    else:
        from ..views.terminal import print_comparison

        print_comparison(_console(), comparison, language)
    raise typer.Exit(comparison.exit_code)


@app.command()
def serve(
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="The port to listen on (0: a free one, "
                                                                    "printed)."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on (default: this machine "
                                                          "only; 0.0.0.0 lets others on the network in)."),
    lang: Optional[Lang] = LANG_OPTION,
) -> None:
    """Serve the page on this machine: pick a story, lose a message, crash a handler, in a browser (Ctrl-C
    stops it; docs/web.md)."""
    from ..web.server import make_server
    from ..web.server import serve as serve_page  # (lazy: the server and the engine load when it runs)

    language = _lang(lang)
    with user_errors():
        server = make_server(host, port)
    serve_page(server, language)


@app.command()
def site(
    directory: str = typer.Argument(..., metavar="DIR", help="The folder to write the static site into (made, or "
                                                             "an earlier site replaced)."),
    cache: Optional[str] = typer.Option(None, "--cache", metavar="PATH",
                                        help="Where downloads are kept (default: $IDEMSIM_CACHE, else "
                                             "~/.cache/idemsim)."),
    lang: Optional[Lang] = LANG_OPTION,
) -> None:
    """Write the page as a static site (Pyodide and the wheels included) that any static host serves, offline
    (docs/web.md)."""
    from pathlib import Path

    from ..web.site import build_site  # (lazy: the site's builder loads when it runs)

    _lang(lang)
    with user_errors():
        build_site(Path(directory), Path(cache) if cache is not None else None)
    print(safe(directory))


from .db import app as db_app  # noqa: E402 (light: psycopg is imported only when PostgreSQL is used)

app.add_typer(db_app, name="db", help="Run DB schedules on the model and on a real PostgreSQL.")


class _GuardedStdout:
    """Standard output that keeps its first write error instead of raising it, and discards what follows, so
    that `main` reports the error once at the end: never a traceback from a full disk or a closed pipe. It
    delegates everything else to the real stream, except ``buffer``, so that nothing writes around it. A closed
    file descriptor 1 (Python's ``sys.stdout`` is then None) fails the first write with EBADF."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                if self.stream is None:
                    raise OSError(errno.EBADF, os.strerror(errno.EBADF))
                return self.stream.write(text)
            except OSError as e:
                self.error = e
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        """Write bytes (a file asked for as ``/dev/stdout``) after the text written so far, keeping an error as
        `write` does."""
        if self.error is None:
            try:
                if self.stream is None:
                    raise OSError(errno.EBADF, os.strerror(errno.EBADF))
                self.stream.flush()
                self.stream.buffer.write(data)
                self.stream.buffer.flush()
            except OSError as e:
                self.error = e

    def flush(self) -> None:
        if self.error is None and self.stream is not None:
            try:
                self.stream.flush()
            except OSError as e:
                self.error = e

    def isatty(self) -> bool:
        """A closed standard output (``>&-``: no stream at all) is no terminal."""
        try:
            return self.stream is not None and self.stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self.stream, name)


def main() -> None:
    """Console-script entry point: the commands, with standard output guarded (`_GuardedStdout`).

    A standard output that cannot encode a character replaces it instead of failing (text only: JSON escapes
    it, see `print_json`). A write error is reported at the end: a closed pipe quietly, exit 141 (128 +
    SIGPIPE, what a shell reports for a Unix tool that a closed pipe ended); any other one as one line,
    ``error: cannot write to standard output: …`` (in the command's language), exit 2. The process is idemsim's:
    its runs keep Python's collector out of their way (`idemsim.kernel.collector`)."""
    collector.own_process()
    if isinstance(sys.stdout, io.TextIOWrapper) and sys.stdout.errors == "strict":
        sys.stdout.reconfigure(errors="replace")
    guarded = sys.stdout = _GuardedStdout(sys.stdout)  # type: ignore[assignment]
    code: Any = 0
    try:
        app()
    except SystemExit as done:
        code = done.code
    guarded.flush()
    if guarded.error is not None:
        discard_stdout()
        if guarded.error.errno == errno.EPIPE:
            sys.exit(141)
        from ..base.errors import Message
        from .common import error_line

        print(error_line(Message("err.stdout", reason=os_reason(guarded.error)), LANGUAGE["now"]), file=sys.stderr)
        sys.exit(2)
    collector.before_exit()  # the last collection at exit examines nothing (25-45 ms of every command)
    sys.exit(code)
