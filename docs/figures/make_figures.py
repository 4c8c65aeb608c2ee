"""Regenerate the figures in this directory: ``python docs/figures/make_figures.py``.

Each figure is a run of a shipped scenario under its own design and seed (the comparison: lost-response under
every design), drawn by `Run.figure` and `idemsim.comparison_figure`, and each shipped sweep with its own settings
(`sweep-NAME.png`, about a minute on two cores); the same code gives the same files. The ``mermaid-*.png`` files
are rendered from `idemsim run … --format mermaid` with Mermaid's own CLI, which idemsim does not depend on
(docs/views.md).
"""

from pathlib import Path

import idemsim

HERE = Path(__file__).resolve().parent


def main() -> None:
    for name in ("lost-response", "same-tx-wait", "crash-after-processor", "ttl-shorter-than-retry-window",
                 "naive-double-charge"):
        idemsim.save_figure(idemsim.run(name).figure(), HERE / f"{name}.png")
    idemsim.save_figure(idemsim.run("lost-response").figure(lang="ja"), HERE / "lost-response-ja.png")
    story = idemsim.load_scenario("lost-response")
    runs = [idemsim.simulate(story, design) for design in idemsim.DESIGNS]
    idemsim.save_figure(idemsim.comparison_figure(runs), HERE / "compare-lost-response.png")
    for name in idemsim.sweep_names():
        with idemsim.sweep.executor_for() as executor:  # every core of this machine
            result = idemsim.sweep(name, executor=executor)  # the sweep's own grid, designs and seeds
        config = idemsim.load_scenario(name).sweep
        idemsim.save_figure(idemsim.sweep_figure(result, config), HERE / f"sweep-{name}.png")


if __name__ == "__main__":
    main()
