"""The figures in docs/figures are what their commands draw today.

``docs/figures/make_figures.py`` writes each figure as ``NAME.png`` and as its SVG twin ``NAME.svg``, drawn
deterministically (fixed ``svg.hashsalt``, no date). Each test here draws one figure again as SVG and compares
the text with the committed twin, so a change to the model or the drawing that moves a shipped picture fails
until the pictures are drawn again. SVG text depends on matplotlib's version (its metadata names it): under
another version the comparison skips with the reason, except under CI=true, which installs the same version.
The ``mermaid-*.png`` files are rendered by a browser (docs/figures/README.md) and are not compared.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import matplotlib
import pytest

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"


def _load_script():
    """docs/figures/make_figures.py as a module (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_figures", FIGURES / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_figures = _load_script()
MAKERS = dict(make_figures.figures())


def test_every_picture_is_drawn_by_the_script_or_is_a_mermaid_rendering():
    pngs = {path.stem for path in FIGURES.glob("*.png")}
    svgs = {path.stem for path in FIGURES.glob("*.svg")}
    assert svgs == set(MAKERS)
    assert {name for name in pngs if not name.startswith("mermaid-")} == set(MAKERS)
    readme = (FIGURES / "README.md").read_text(encoding="utf-8")
    assert [name for name in sorted(pngs) if name.startswith("mermaid-") and f"{name}.png" not in readme] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MAKERS))
def test_a_shipped_figure_is_what_its_command_draws_today(name):
    shipped = (FIGURES / f"{name}.svg").read_text(encoding="utf-8")
    version = make_figures.drawn_by(shipped)
    if version != matplotlib.__version__:
        reason = (f"docs/figures/{name}.svg was drawn by matplotlib {version}, this is "
                  f"{matplotlib.__version__}: SVG text differs between versions")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    _, drawn = make_figures.render(MAKERS[name]())  # as the script draws it: PNG, then SVG
    if drawn != shipped:
        line = next(i for i, (a, b) in enumerate(zip(drawn.splitlines() + [""], shipped.splitlines() + [""])) if a != b)
        pytest.fail(f"docs/figures/{name}.svg (and .png) is not what the code draws today (first difference on "
                    f"line {line + 1}); look at the change, then draw it again: "
                    f"{make_figures.COMMAND} {name}", pytrace=False)
