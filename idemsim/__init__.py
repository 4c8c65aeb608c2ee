"""idemsim: an educational simulator of HTTP idempotency keys.

What a notebook needs, and nothing more:

>>> import idemsim
>>> run = idemsim.run("lost-response")
>>> run.summary["charges"], run.summary["status"], run.summary["replay_identical"]
(1, 201, True)

A variant's story, and results as plain records (a list of dicts; ``idemsim.dataframe`` gives the same rows as a
pandas DataFrame when pandas is installed, ``pip install 'idemsim[pandas]'``):

>>> branch = idemsim.run("retry-or-give-up", variant="retry-after-lost-response")
>>> branch.summary["charges"], [row["kind"] for row in idemsim.records(branch)][:2]
(2, ['op.start', 'attempt.send'])
"""

__version__ = "0.1.0"

__all__ = ["__version__", "run", "load_scenario", "simulate", "sweep", "register_design", "design", "DESIGNS",
           "records", "dataframe"]


def load_scenario(name_or_path: str, sets: list[str] | None = None):
    """A built-in scenario by name, or a scenario file, validated (see ``docs/scenarios.md``)."""
    from .scenario.schema import load

    return load(name_or_path, sets)


def simulate(scenario, design: str | None = None, seed: int | None = None, trace: bool = True):
    """Run a loaded scenario once; returns a `Run` with ``trace`` and ``summary`` (``trace=False``: no trace,
    the same summary)."""
    from .runners.simulation import simulate as _simulate

    return _simulate(scenario, design, seed, trace)


def run(name_or_path: str, design: str | None = None, seed: int | None = None, sets: list[str] | None = None,
        variant: str | None = None):
    """Load and run a scenario's main story in one call (or, with ``variant``, that variant's story), as
    ``idemsim run NAME [--variant V] [--design D] [--seed S] [--set …]`` does."""
    scenario = load_scenario(name_or_path, sets)
    if variant is not None:
        from .scenario.schema import variant as pick

        scenario = pick(scenario, variant, sets)
    return simulate(scenario, design, seed)


def records(result):
    """A `Run`'s trace, a sweep's rows or a comparison's rows as plain dicts, one per row (`idemsim.runners.rows`)."""
    from .runners.rows import records as rows

    return rows(result)


def dataframe(result):
    """``records(result)`` as a pandas DataFrame; needs the extra: ``pip install 'idemsim[pandas]'``."""
    from .runners.rows import dataframe as frame

    return frame(result)


def register_design(name: str, handler, **options):
    """Make ``handler`` a design named ``name`` (see `idemsim.model.designs.register_design` and docs/designs.md)."""
    from .model.designs import register_design as register

    return register(name, handler, **options)


def design(**options):
    """Mark a handler function with how to register it (points, completer …); see docs/designs.md."""
    from .model.designs import design as mark

    return mark(**options)


def __getattr__(name: str):
    if name in ("sweep", "explore"):  # idemsim.sweep("loss", …) (a module you can call), idemsim.explore.search
        import importlib

        return importlib.import_module(f".runners.{name}", __name__)
    if name == "DESIGNS":
        from .model.designs import DESIGNS

        return DESIGNS
    raise AttributeError(name)
