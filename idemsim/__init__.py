"""idemsim: an educational simulator of HTTP idempotency keys.

What a notebook needs, and nothing more:

>>> import idemsim
>>> run = idemsim.run("lost-response")
>>> run.summary["charges"], run.summary["status"], run.summary["replay_identical"]
(1, 201, True)
"""

__version__ = "0.1.0"

__all__ = ["__version__", "run", "load_scenario", "simulate", "DESIGNS"]


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


def __getattr__(name: str):
    if name == "DESIGNS":
        from .designs import DESIGNS

        return DESIGNS
    raise AttributeError(name)
