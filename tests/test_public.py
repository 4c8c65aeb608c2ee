"""idemsim's public face: what the course and the docs may import, and that it is all there and light.

The public names are ``idemsim.__all__`` and the ``__all__`` of each public submodule (`PUBLIC_SUBMODULES`,
which docs/python.md lists too). Every notebook (``notebooks/``, its answers and the Japanese ones), every
Python code block of the docs (and of the README) and every Python file under ``docs/`` imports idemsim only
through them, read from the code itself (ast): an ``import``, a ``from … import``, and an attribute of idemsim
or of a public submodule (``idemsim.x``), so that a notebook cannot reach inside the house either way.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import idemsim

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_SUBMODULES = ("idemsim.proof", "idemsim.course")
"""The public submodules of idemsim: docs/python.md lists the same under "Public submodules"."""
PYTHON_MD = ROOT / "docs" / "python.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")) \
    + sorted((ROOT / "notebooks" / "answers").glob("[0-9][0-9]-*.ipynb")) \
    + sorted((ROOT / "notebooks" / "ja").rglob("[0-9][0-9]-*.ipynb"))
MARKDOWN = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
DOCS_PYTHON = sorted((ROOT / "docs").rglob("*.py"))
HEAVY = ("matplotlib", "rich", "typer")
"""What a run from Python never loads."""


def public(module: str) -> set[str]:
    """The names a notebook may take from ``module`` (idemsim, or a public submodule)."""
    if module == "idemsim":
        return set(idemsim.__all__) | {name.rpartition(".")[2] for name in PUBLIC_SUBMODULES}
    return set(importlib.import_module(module).__all__)


def without_magics(source: str) -> str:
    """Python source with IPython's ``%magic`` and ``!shell`` lines blanked (their line numbers kept)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def trespasses(source: str, bound: dict[str, str]) -> list[str]:
    """What ``source`` takes from idemsim outside the public face, each in words. ``bound`` maps a local name to
    the idemsim module it stands for; the source's own imports are added to it (a notebook's cells share it)."""
    tree = ast.parse(without_magics(source))
    found = []  # (line, column, what): told in the order of the source
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "idemsim":
                    continue
                if alias.name != "idemsim" and alias.name not in PUBLIC_SUBMODULES:
                    found.append((node.lineno, node.col_offset, f"import {alias.name}"))
                elif alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound["idemsim"] = "idemsim"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "idemsim":
            if node.module != "idemsim" and node.module not in PUBLIC_SUBMODULES:
                names = ", ".join(alias.name for alias in node.names)
                found.append((node.lineno, node.col_offset, f"from {node.module} import {names}"))
                continue
            for alias in node.names:
                if alias.name not in public(node.module):
                    found.append((node.lineno, node.col_offset, f"from {node.module} import {alias.name}"))
                elif f"{node.module}.{alias.name}" in PUBLIC_SUBMODULES:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def module_of(node) -> str | None:
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.Attribute):
            outer = module_of(node.value)
            if outer is not None and f"{outer}.{node.attr}" in PUBLIC_SUBMODULES:
                return f"{outer}.{node.attr}"
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            module = module_of(node.value)
            if module is not None and node.attr not in public(module):
                found.append((node.lineno, node.col_offset, f"{module}.{node.attr}"))
    return [what for _, _, what in sorted(found)]


def notebook_trespasses(path: Path) -> list[str]:
    bound: dict[str, str] = {}
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            found += [f"cell {cell.get('id')}: {what}" for what in trespasses(source, bound)]
    return found


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """Each Python code block of a Markdown file, with its line: the statements of a doctest (``>>>``), the
    whole block otherwise."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
        language, body = match.group(1), match.group(2)
        if language not in ("python", "py", "pycon") and not body.lstrip().startswith(">>>"):
            continue
        lines = body.splitlines()
        if any(line.startswith(">>>") for line in lines):
            body = "\n".join(line[4:] for line in lines if line[:4] in (">>> ", "... ") or line in (">>>", "..."))
        blocks.append((text[:match.start()].count("\n") + 2, body))
    return blocks


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


class TestWhatTheCourseAndTheDocsImport:
    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_relative)
    def test_a_notebook_imports_only_public_names(self, path):
        """A notebook's code cells take from idemsim only names of its public face."""
        assert notebook_trespasses(path) == []

    @pytest.mark.parametrize("path", [p for p in MARKDOWN if python_blocks(p)], ids=_relative)
    def test_a_docs_example_imports_only_public_names(self, path):
        """Every Python block of a docs page takes from idemsim only names of its public face."""
        found = [f"line {line}: {what}" for line, block in python_blocks(path) for what in trespasses(block, {})]
        assert found == []

    @pytest.mark.parametrize("path", DOCS_PYTHON, ids=_relative)
    def test_a_docs_program_imports_only_public_names(self, path):
        """A Python file under docs/ (a figure's maker, a design) takes from idemsim only public names."""
        assert trespasses(path.read_text(encoding="utf-8"), {}) == []

    def test_the_course_is_read_at_all(self):
        """The notebooks, the docs' examples and the docs' programs are found (the checks above check something)."""
        assert len(NOTEBOOKS) >= 24 and DOCS_PYTHON and python_blocks(PYTHON_MD)

    def test_an_internal_path_is_a_trespass(self):
        """The check sees every way in: an import, a from-import, an attribute of idemsim, of a public submodule."""
        source = ("import idemsim\nimport idemsim.views.figure\nfrom idemsim.base.http import Response\n"
                  "from idemsim import Response, nothing\nfrom idemsim import proof\nidemsim.runners.compare\n"
                  "idemsim.proof.postgres\nproof.schedule\nidemsim.run\nproof.load\n%matplotlib inline\n")
        assert trespasses(source, {}) == ["import idemsim.views.figure", "from idemsim.base.http import Response",
                                          "from idemsim import nothing", "idemsim.runners", "idemsim.proof.postgres",
                                          "idemsim.proof.schedule"]


class TestThePublicFace:
    @pytest.mark.parametrize("name", idemsim.__all__)
    def test_every_public_name_resolves(self, name):
        """Every name in ``idemsim.__all__`` is there, and ``dir(idemsim)`` shows it."""
        assert getattr(idemsim, name) is not None
        assert name in dir(idemsim)

    @pytest.mark.parametrize("module", PUBLIC_SUBMODULES)
    def test_every_name_of_a_public_submodule_resolves(self, module):
        """A public submodule is reachable as an attribute of idemsim, and every name of its ``__all__`` is there."""
        loaded = importlib.import_module(module)
        assert getattr(idemsim, module.rpartition(".")[2]) is loaded
        assert [name for name in loaded.__all__ if getattr(loaded, name, None) is None] == []

    def test_every_public_name_is_listed_once(self):
        """``__all__`` names each public name once."""
        assert len(idemsim.__all__) == len(set(idemsim.__all__))

    def test_a_name_outside_the_face_is_an_attribute_error(self):
        """A name the face does not have raises AttributeError, as any module's missing attribute does."""
        with pytest.raises(AttributeError, match="nothing"):
            idemsim.nothing  # noqa: B018

    def test_the_old_spellings_still_work(self):
        """``idemsim.sweep(...)`` is callable and its module's functions reachable; ``explore`` is the module."""
        assert callable(idemsim.sweep) and callable(idemsim.sweep.run) and callable(idemsim.sweep.executor_for)
        assert callable(idemsim.explore.search) and callable(idemsim.explore.exhaustive)

    def test_the_scenario_names_are_in_the_order_of_idemsim_list(self):
        """`scenario_names` gives every built-in scenario, in the order ``idemsim list`` shows them."""
        from typer.testing import CliRunner

        from idemsim.cli.app import app

        shown = CliRunner().invoke(app, ["list"], env={"COLUMNS": "200"}).output
        names = idemsim.scenario_names()
        assert sorted(names) == sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
        assert sorted(
            names, key=lambda name: re.search(rf"^\s*{re.escape(name)}\s", shown, re.MULTILINE).start()) == names

    def test_the_stories_of_a_scenario_are_its_main_story_then_each_variant(self):
        """`stories_of` gives the main story, then each variant, by name."""
        scenario = idemsim.load_scenario("retry-or-give-up")
        stories = idemsim.stories_of(scenario)
        assert [s.variant for s in stories] == [None, *scenario.variants]

    def test_a_comparison_figure_takes_a_comparison_or_its_runs(self):
        """`comparison_figure` draws a `Comparison` as it draws the list of its runs."""
        pytest.importorskip("matplotlib")
        comparison = idemsim.compare(idemsim.load_scenario("lost-response"), designs=["naive", "same-tx"])
        whole, runs = idemsim.comparison_figure(comparison), idemsim.comparison_figure(comparison.runs)
        assert [t.get_text() for t in whole.texts] == [t.get_text() for t in runs.texts]
        assert len(whole.axes) == len(runs.axes) >= 2


class TestTheDocsListTheFace:
    def table_names(self) -> list[str]:
        text = PYTHON_MD.read_text(encoding="utf-8")
        table = text[text.index("## The public face"):text.index("## Public submodules")]
        return re.findall(r"^\| `(\w+)", table, re.MULTILINE)

    def test_docs_python_md_has_a_row_for_every_public_name(self):
        """docs/python.md's table has one row per name of ``idemsim.__all__``, and no other."""
        names = self.table_names()
        assert sorted(names) == sorted(idemsim.__all__) and len(names) == len(set(names))

    def test_docs_python_md_lists_the_public_submodules(self):
        """docs/python.md lists exactly the public submodules that the checks allow."""
        text = PYTHON_MD.read_text(encoding="utf-8")
        section = text[text.index("## Public submodules"):]
        section = section[:section.index("\n## ")] if "\n## " in section else section
        assert tuple(re.findall(r"^- `(idemsim\.[\w.]+)`", section, re.MULTILINE)) == PUBLIC_SUBMODULES


class TestALightImport:
    def loaded(self, code: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sorted(sys.modules)))"],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        return out.stdout.split()

    def test_importing_idemsim_loads_none_of_its_modules(self):
        """``import idemsim`` imports no other module of idemsim, nor pydantic or SimPy: names load on first use."""
        modules = self.loaded("import idemsim")
        assert [m for m in modules if m.split(".")[0] in ("idemsim", "pydantic", "simpy", *HEAVY)] == ["idemsim"]

    def test_a_run_loads_neither_matplotlib_nor_rich_nor_typer(self):
        """``idemsim.run(...)`` loads no drawing, terminal or command-line library."""
        modules = self.loaded("import idemsim; idemsim.run('lost-response')")
        assert [m for m in modules if m.split(".")[0] in HEAVY] == []
        assert "idemsim.runners.simulation" in modules

    def test_the_proof_loads_psycopg_only_to_run_on_postgresql(self):
        """``idemsim.proof`` runs a schedule on the model without importing psycopg."""
        modules = self.loaded("from idemsim import proof; proof.run_on_model(proof.load('article-wait-commit'))")
        assert "psycopg" not in modules and "idemsim.proof.schedule" in modules
