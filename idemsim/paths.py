"""Where the shipped scenario files are.

Inside an installed wheel they are package data (``idemsim/scenarios``); in a source checkout or an editable
install they are the repository's top-level ``scenarios/``. Both the scenarios and the DB schedules
(``scenarios/db``) are found through `scenarios_dir`, so ``idemsim`` works from any working directory.
"""

from importlib import resources
from pathlib import Path


def scenarios_dir() -> Path:
    packaged = resources.files("idemsim") / "scenarios"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "scenarios"
