"""Regenerate the figures in this directory: ``python docs/figures/make_figures.py``.

Each figure is a run of a shipped scenario under its own design and seed (the comparison: lost-response under
every design), drawn by `idemsim.views.figure`, and each shipped sweep with its own settings (`sweep-NAME.png`,
about a minute on two cores); the same code gives the same files. The ``mermaid-*.png`` files are rendered
from `idemsim run … --format mermaid` with Mermaid's own CLI, which idemsim does not depend on (docs/views.md).
"""

from pathlib import Path

from idemsim.model.designs import DESIGNS
from idemsim.scenario.schema import load
from idemsim.runners.simulation import simulate
from idemsim.views.figure import comparison_figure, run_figure, save

HERE = Path(__file__).resolve().parent


def main() -> None:
    for name in ("lost-response", "same-tx-wait", "crash-after-processor"):
        save(run_figure(simulate(load(name))), HERE / f"{name}.png")
    save(run_figure(simulate(load("lost-response")), lang="ja"), HERE / "lost-response-ja.png")
    story = load("lost-response")
    runs = [simulate(story, design) for design in DESIGNS]
    save(comparison_figure(runs), HERE / "compare-lost-response.png")
    from idemsim import sweep
    from idemsim.scenario.schema import sweep_names
    from idemsim.views import sweep_plot

    for name in sweep_names():
        scenario = load(name)
        config = scenario.sweep
        spec = sweep.Sweep(scenario, sweep.axes_of(config.vary), list(config.designs or DESIGNS), config.seeds)
        with sweep.executor_for() as executor:
            result = sweep.run(spec, executor)
        sweep_plot.save(sweep_plot.figure(result, config), str(HERE / f"sweep-{name}.png"))


if __name__ == "__main__":
    main()
