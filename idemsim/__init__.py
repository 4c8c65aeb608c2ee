"""idemsim: an educational simulator of HTTP idempotency keys.

The public face: what a notebook, a docs example or your own design imports, and nothing more. Every name in
`__all__` is importable from ``idemsim`` itself (``idemsim.run``, ``from idemsim import Response``); the
public submodules are the PostgreSQL proof, `idemsim.proof`, and the course's checks, `idemsim.course`.
docs/python.md lists them all, and
tests/test_public.py holds the notebooks and the docs to them. Everything else (``idemsim.model``,
``idemsim.runners`` …) is the inside of the house and may move.

Guarantees: ``import idemsim`` imports no other module of idemsim (nor pydantic, SimPy, matplotlib, rich or
typer): every name below loads its module when first used, and a run (`run`) never loads matplotlib, rich or
typer.

>>> import idemsim
>>> run = idemsim.run("lost-response")
>>> run.summary.charges, run.summary.status, run.summary.replay_identical
(1, 201, True)

A variant's story, and results as plain records (a list of dicts; ``idemsim.dataframe`` gives the same rows as a
pandas DataFrame when pandas is installed, ``pip install 'idemsim[pandas]'``):

>>> branch = idemsim.run("retry-or-give-up", variant="retry-after-lost-response")
>>> branch.summary.charges, [row["kind"] for row in idemsim.records(branch)][:2]
(2, ['op.start', 'attempt.send'])
"""

__version__ = "0.1.0"

__all__ = [  # noqa: RUF022 (grouped by what they are for, as docs/python.md lists them)
    "__version__",        # the package's version
    # scenarios and runs
    "run",                # load a scenario and run its main story (or a variant): a Run
    "load_scenario",      # a built-in scenario by name, or a scenario file, validated: a Scenario
    "simulate",           # run a loaded scenario (or one of its stories) once: a Run
    "scenario_names",     # the built-in scenarios' names, in the article's order, as `idemsim list` shows them
    "stories_of",         # a loaded scenario's stories: its main story, then each variant
    "sweep_names",        # the built-in sweeps' names (scenarios/sweeps/)
    "Run",                # the result of one simulation: trace, summary, tables; .figure(), .mermaid()
    "Summary",            # a Run's summary: charges, captures, status, verdict …, the JSON summary's fields
    "Scenario",           # a validated scenario (a story and its variants), as load_scenario returns it
    "InputError",         # what a wrong input raises (an unknown name, a bad --set): its message says what is allowed
    # many runs
    "compare",            # one story under several designs, side by side: a Comparison
    "Comparison",         # a comparison's rows (one per design and option set) and .runs
    "sweep",              # idemsim.sweep(NAME, …): a grid of runs and their rates (a module you can call)
    "explore",            # the search for a counterexample: explore.search, explore.exhaustive (a module)
    "PROPERTY_NAMES",     # each property the runs are judged on, by name, in a few words
    # results as data and pictures
    "records",            # a Run's trace, a sweep's or a comparison's rows as plain dicts
    "dataframe",          # records(...) as a pandas DataFrame (needs the extra: pip install 'idemsim[pandas]')
    "timeline",           # a Run's timeline as fixed-width text
    "comparison_figure",  # one panel per run of a comparison: a matplotlib Figure
    "sweep_figure",       # a sweep's rates against its varied field: a matplotlib Figure
    "save_figure",        # save a figure as .png, .svg or .pdf, byte for byte the same each time
    # your own design
    "register_design",    # make a handler function a design, by name
    "design",             # a decorator: how to register a handler (its crash points, its completer …)
    "DESIGNS",            # every design, by name
    "Response",           # the HTTP response a handler returns: Response(status, body)
    # the course
    "course",             # the checks of the course's exercises: course.check("6.3", my_design) (a module)
]

_ELSEWHERE = {
    "Run": ("runners.simulation", "Run"),
    "Summary": ("judge.run_summary", "Summary"),
    "Scenario": ("scenario.schema", "Scenario"),
    "InputError": ("base.errors", "InputError"),
    "stories_of": ("scenario.schema", "runs"),
    "compare": ("runners.compare", "compare"),
    "Comparison": ("runners.compare", "Comparison"),
    "PROPERTY_NAMES": ("judge.properties", "PLAIN_NAMES"),
    "save_figure": ("views.figure", "save"),
    "DESIGNS": ("model.designs", "DESIGNS"),
    "Response": ("base.http", "Response"),
}
"""The public names that live elsewhere, and where: (module under idemsim, its name there), loaded on first use."""

_MODULES = {"sweep": "runners.sweep", "explore": "runners.explore", "proof": "proof", "course": "course"}
"""The public modules, by the name idemsim gives them: ``idemsim.sweep(…)`` (a module you can call, whose
``run``, ``Sweep`` … stay reachable), ``from idemsim import explore``, ``idemsim.proof``, ``idemsim.course``."""


def load_scenario(name_or_path: str, sets: list[str] | None = None):
    """A built-in scenario by name, or a scenario file, validated (see ``docs/scenarios.md``)."""
    from .scenario.schema import load

    return load(name_or_path, sets)


def simulate(scenario, design: str | None = None, seed: int | None = None, trace: bool = True, *,
             quiet_collector: bool | None = None):
    """Run a loaded scenario once; returns a `Run` with ``trace`` and ``summary`` (``trace=False``: no trace,
    the same summary). ``quiet_collector=True`` keeps Python's cyclic garbage collector out of the run's way
    (faster for a large load; it touches only what the run makes); from a notebook it is off unless asked."""
    from .runners.simulation import simulate as _simulate

    return _simulate(scenario, design, seed, trace, quiet_collector=quiet_collector)


def run(name_or_path: str, design: str | None = None, seed: int | None = None, sets: list[str] | None = None,
        variant: str | None = None, *, quiet_collector: bool | None = None):
    """Load and run a scenario's main story in one call (or, with ``variant``, that variant's story), as
    ``idemsim run NAME [--variant V] [--design D] [--seed S] [--set …]`` does (``quiet_collector``: as
    `simulate`)."""
    scenario = load_scenario(name_or_path, sets)
    if variant is not None:
        from .scenario.schema import variant as pick

        scenario = pick(scenario, variant, sets)
    return simulate(scenario, design, seed, quiet_collector=quiet_collector)


def scenario_names() -> list[str]:
    """The built-in scenarios' names, grouped as ``idemsim list`` groups them (the groups in the article's
    order), by name within a group."""
    from .scenario.schema import builtin_names, load

    return sorted(builtin_names(), key=lambda name: load(name).group)


def sweep_names() -> list[str]:
    """The built-in sweeps' names (``scenarios/sweeps/*.toml``), each runnable as ``idemsim.sweep(NAME)``."""
    from .scenario.schema import sweep_names as names

    return names()


def records(result):
    """A `Run`'s trace, a sweep's rows or a comparison's rows as plain dicts, one per row (docs/python.md)."""
    from .runners.rows import records as rows

    return rows(result)


def dataframe(result):
    """``records(result)`` as a pandas DataFrame; needs the extra: ``pip install 'idemsim[pandas]'``."""
    from .runners.rows import dataframe as frame

    return frame(result)


def timeline(run) -> str:
    """A `Run`'s timeline as fixed-width text, one line an event: its time, who to whom, what happened."""
    from .views.timeline import plain

    return plain(run.trace)


def comparison_figure(runs, lang: str | None = None):
    """One panel per run, side by side, as ``idemsim compare NAME --plot FILE`` draws them: a matplotlib Figure.
    ``runs`` is a `Comparison` (its ``runs``) or any list of runs; ``lang`` as for `Run.figure`. A load is drawn as
    its connection pool, one panel per design."""
    from .views.sweep_plot import comparison_figure as draw

    return draw(getattr(runs, "runs", runs), lang)


def sweep_figure(result, config=None, lang: str | None = None):
    """A sweep's figure, as ``idemsim sweep NAME --plot FILE`` draws it: ``config`` is the scenario's ``[sweep]``
    table (``idemsim.load_scenario(NAME).sweep``), which chooses the plot and the measures (None: the double-
    charge rate against the varied field)."""
    from .views.sweep_plot import figure

    return figure(result, config, lang)


def register_design(name: str, handler, **options):
    """Make ``handler`` a design named ``name``, usable as ``design=name`` anywhere (see docs/designs.md)."""
    from .model.designs import register_design as register

    return register(name, handler, **options)


def design(**options):
    """Mark a handler function with how to register it (points, completer …); see docs/designs.md."""
    from .model.designs import design as mark

    return mark(**options)


def __getattr__(name: str):
    import importlib

    if name in _MODULES:
        value = importlib.import_module(f".{_MODULES[name]}", __name__)
    elif name in _ELSEWHERE:
        module, attribute = _ELSEWHERE[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    else:
        raise AttributeError(f"module 'idemsim' has no attribute {name!r}")
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_MODULES))
