"""Where the shipped scenario files are.

Inside an installed wheel they are package data (``idemsim/scenarios``); in a source checkout or an editable
install they are the repository's top-level ``scenarios/``. Both the scenarios and the DB schedules
(``scenarios/db``) are found through `scenarios_dir`, so ``idemsim`` works from any working directory.
"""

from functools import cache
from pathlib import Path


@cache
def scenarios_dir() -> Path:
    """The directory of the shipped scenarios (found once: it does not move while idemsim runs). The package is
    a directory on disk (a wheel installs it so), so its data is beside this file, where
    ``importlib.resources.files("idemsim")`` would find it too, without importing its readers."""
    packaged = Path(__file__).parents[1] / "scenarios"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "scenarios"
