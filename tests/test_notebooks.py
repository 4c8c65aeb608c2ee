"""The notebooks run: every code cell of every notebook executes without error, in order."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_code_cell_runs(path, capsys):
    """Each code cell of the notebook runs in one namespace, as a kernel would run them top to bottom."""
    namespace: dict = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{path.name}", "exec"), namespace)


def test_the_first_notebook_shows_what_it_says():
    """The lost-response notebook's numbers are the ones its text states."""
    namespace: dict = {}
    cells = json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    exec("".join(code[0]["source"]), namespace)
    exec("".join(code[1]["source"]), namespace)
    assert (namespace["run"].summary["charges"], namespace["naive"].summary["charges"]) == (1, 2)
    assert namespace["run"].summary["replay_identical"] is True
