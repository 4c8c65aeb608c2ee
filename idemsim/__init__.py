"""idemsim: an educational simulator of HTTP idempotency keys.

What a notebook needs, and nothing more:

>>> import idemsim
>>> run = idemsim.run("lost-response")
>>> run.summary["charges"], run.summary["status"], run.summary["replay_identical"]
(1, 201, True)
"""

__version__ = "0.1.0"

__all__ = ["__version__", "run", "load_scenario", "simulate", "sweep", "register_design", "design", "DESIGNS"]


def load_scenario(name_or_path: str, sets: list[str] | None = None):
    """A built-in scenario by name, or a scenario file, validated (see ``docs/scenarios.md``)."""
    from .scenario import load

    return load(name_or_path, sets)


def simulate(scenario, design: str | None = None, seed: int | None = None, trace: bool = True):
    """Run a loaded scenario once; returns a `Run` with ``trace`` and ``summary`` (``trace=False``: no trace,
    the same summary)."""
    from .simulation import simulate as _simulate

    return _simulate(scenario, design, seed, trace)


def run(name_or_path: str, design: str | None = None, seed: int | None = None, sets: list[str] | None = None):
    """Load and run a scenario's main story in one call."""
    return simulate(load_scenario(name_or_path, sets), design, seed)


def register_design(name: str, handler, **options):
    """Make ``handler`` a design named ``name`` (see `idemsim.designs.register_design` and docs/designs.md)."""
    from .designs import register_design as register

    return register(name, handler, **options)


def design(**options):
    """Mark a handler function with how to register it (points, completer …); see docs/designs.md."""
    from .designs import design as mark

    return mark(**options)


def __getattr__(name: str):
    if name == "sweep":  # a module you can call: idemsim.sweep("loss", …), and idemsim.sweep.run(…)
        import importlib

        return importlib.import_module(".sweep", __name__)
    if name == "DESIGNS":
        from .designs import DESIGNS

        return DESIGNS
    raise AttributeError(name)
