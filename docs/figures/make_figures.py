"""Regenerate the figures in this directory: ``python docs/figures/make_figures.py [NAME ...]``.

Each figure is a run of a shipped scenario under its own design and seed (the comparison: lost-response under
every design), drawn by `Run.figure` and `idemsim.comparison_figure`, and each shipped sweep with its own settings
(`sweep-NAME.png`, about a minute on two cores); the same code gives the same files. Each figure is written as
``NAME.png`` and as its twin ``NAME.svg`` (fixed ``svg.hashsalt``, no date, so the same code draws the same
text); ``tests/test_docs_figures.py`` draws every figure again and fails when it differs from its twin. With
names, only those figures are drawn again.

The ``mermaid-*.png`` files are rendered from `idemsim run … --format mermaid` with Mermaid's own CLI, which
idemsim does not depend on (docs/views.md, README.md here); they are not drawn here.
"""

import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import idemsim

HERE = Path(__file__).resolve().parent
COMMAND = "python docs/figures/make_figures.py"
RUNS = ("lost-response", "same-tx-wait", "crash-after-processor", "ttl-shorter-than-retry-window",
        "naive-double-charge")


def _comparison():
    story = idemsim.load_scenario("lost-response")
    return idemsim.comparison_figure([idemsim.simulate(story, design) for design in idemsim.DESIGNS])


def _sweep(name: str):
    with idemsim.sweep.executor_for() as executor:  # every core of this machine
        result = idemsim.sweep(name, executor=executor)  # the sweep's own grid, designs and seeds
    return idemsim.sweep_figure(result, idemsim.load_scenario(name).sweep)


def figures() -> Iterator[tuple[str, Callable]]:
    """Every figure this script makes: its file name without ``.png``, and what draws it."""
    for name in RUNS:
        yield name, lambda name=name: idemsim.run(name).figure()
    yield "lost-response-ja", lambda: idemsim.run("lost-response").figure(lang="ja")
    yield "compare-lost-response", _comparison
    for name in idemsim.sweep_names():
        yield f"sweep-{name}", lambda name=name: _sweep(name)


def render(figure) -> tuple[bytes, str]:
    """``figure`` drawn by `idemsim.save_figure` as PNG and then as SVG text (fixed hash salt, no date). Always
    in this order: a constrained layout (the sweeps') moves a little on a second draw."""
    with tempfile.TemporaryDirectory() as tmp:
        png = idemsim.save_figure(figure, Path(tmp) / "figure.png").read_bytes()
        return png, idemsim.save_figure(figure, Path(tmp) / "figure.svg").read_text(encoding="utf-8")


def drawn_by(svg: str) -> str | None:
    """The matplotlib version an SVG's metadata names (``<dc:creator>Matplotlib v3.11.2, …``)."""
    match = re.search(r"Matplotlib v([^,<]+)", svg)
    return match.group(1) if match else None


def main(names: list[str]) -> None:
    known = dict(figures())
    unknown = [name for name in names if name not in known]
    if unknown:
        sys.exit(f"no figure named {', '.join(unknown)}; the figures: {', '.join(known)}")
    for name in names or known:
        figure = known[name]()
        png, svg = render(figure)
        (HERE / f"{name}.png").write_bytes(png)
        (HERE / f"{name}.svg").write_text(svg, encoding="utf-8")
        print(f"{name}.png, {name}.svg", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
