"""Regenerate the figures in this directory: ``python docs/figures/make_figures.py``.

Each figure is a run of a shipped scenario under its own design and seed (the comparison: lost-response under
every design but recovery-points), drawn by `idemsim.views.figure`; the same code gives the same files.
"""

from pathlib import Path

from idemsim.designs import DESIGNS
from idemsim.scenario import load
from idemsim.simulation import simulate
from idemsim.views.figure import comparison_figure, run_figure, save

HERE = Path(__file__).resolve().parent


def main() -> None:
    for name in ("lost-response", "same-tx-wait", "crash-after-processor"):
        save(run_figure(simulate(load(name))), HERE / f"{name}.png")
    save(run_figure(simulate(load("lost-response")), lang="ja"), HERE / "lost-response-ja.png")
    story = load("lost-response")
    runs = [simulate(story, design) for design in DESIGNS if design != "recovery-points"]
    save(comparison_figure(runs), HERE / "compare-lost-response.png")


if __name__ == "__main__":
    main()
