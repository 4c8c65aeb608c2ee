"""The house's floors: what may import what, read from the code's own imports (ast), top-level and in functions.

idemsim/ is laid out as its architecture, one folder a floor, from the bottom:

    base/      errors, the catalogue of words, HTTP messages, the input's field types, files     (imports nothing)
    kernel/    the engine's tricks: SimPy's and CPython's internals, in one room
    model/     the simulated world: client, network, API, designs, processor, faults, trace, db/
    scenario/  what a run simulates: the schema of scenario files and their loading
    judge/     what a finished run shows: tally, properties, summary, measures, statistics
    views/     a finished run drawn one way (text, figure, Mermaid, HTML); they never run anything
    runners/   what runs the model: simulation, compare, sweep, explore
    proof/     the DB model held against a real PostgreSQL (schedules, the runner, the agreement rule)
    course/    the checks of the course's exercises (idemsim.course.check), judged on runs
    web/       the page's engine (JSON in, JSON out), idemsim serve's server, idemsim site's static site
    idemsim/__init__.py  the public face: what a notebook imports
    cli/       the command line, on top (and ``python -m idemsim.bench`` beside it)

A module imports only from its own floor and the floors below it; the model imports only base/ and kernel/;
nothing imports the CLI or the benchmark; and no module imports itself back through others (no circle).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "idemsim"
FLOORS = ["base", "kernel", "model", "scenario", "judge", "views", "runners", "proof", "course", "web", "", "cli"]
"""The floors, from the bottom up; ``""`` is the public face, ``idemsim/__init__.py``."""
TOP = {"idemsim.bench"}
"""Above every floor: ``python -m idemsim.bench``."""


@cache
def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path) -> set[str]:
    """The idemsim modules that ``name`` imports, anywhere in the file (a name imported from a package counts
    as that package's module when it is one)."""
    known = modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "idemsim"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "idemsim":
                target = node.module
            else:
                continue
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
    return {m for m in found if m != name}


def floor(name: str) -> int | None:
    parts = name.split(".") + [""]
    return FLOORS.index(parts[1]) if parts[1] in FLOORS else None


GRAPH = {name: imports(name, path) for name, path in modules().items()}


class TestFloors:
    def test_every_module_lives_on_a_floor(self):
        """Every module is on one of the floors, but the public face and the benchmark above them."""
        assert [name for name in GRAPH if floor(name) is None and name not in TOP] == []

    @pytest.mark.parametrize("name", sorted(GRAPH))
    def test_a_module_imports_only_its_floor_and_those_below(self, name):
        """No import runs back up: a module's imports are on its own floor or lower."""
        if name in TOP:
            return
        here = floor(name)
        up = sorted(m for m in GRAPH[name] if m in TOP or floor(m) > here)
        assert up == [], f"{name} imports from a floor above it"

    def test_the_model_imports_only_the_foundation_and_the_kernel(self):
        """model/ reads as the simulated world alone: base/ and kernel/ are all it stands on."""
        allowed = {"base", "kernel", "model"}
        wrong = {name: sorted(m for m in deps if m.split(".")[1] not in allowed)
                 for name, deps in GRAPH.items() if floor(name) == FLOORS.index("model")}
        assert {name: deps for name, deps in wrong.items() if deps} == {}

    def test_nothing_imports_the_cli_or_the_benchmark(self):
        """The command line and the benchmark are the top: only the CLI's own modules import the CLI."""
        wrong = sorted((name, m) for name, deps in GRAPH.items() for m in deps
                       if (m == "idemsim.bench" or floor(m) == FLOORS.index("cli")) and floor(name) != floor(m))
        assert wrong == []

    def test_no_circle(self):
        """No module reaches itself again through the modules it imports."""
        seen: dict[str, int] = {}
        circles = []

        def visit(name: str, path: list[str]) -> None:
            seen[name] = 1
            for dep in sorted(GRAPH.get(name, ())):
                if dep not in GRAPH:
                    continue
                if seen.get(dep) == 1:
                    circles.append(path[path.index(dep):] + [dep])
                elif dep not in seen:
                    visit(dep, path + [dep])
            seen[name] = 2

        for name in sorted(GRAPH):
            if name not in seen:
                visit(name, [name])
        assert circles == []


KERNEL = "idemsim.kernel"
"""The one room where idemsim leans on another library's internals (SimPy's, CPython's), each module saying what."""


def private_imports(source: str) -> list[str]:
    """The private modules and names of other libraries that ``source`` imports: ``import x._y``,
    ``from x._y import z``, ``from x import _y`` (a name with one leading underscore; x not idemsim)."""

    def private(dotted: str) -> bool:
        return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if alias.name.split(".")[0] != "idemsim" and private(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] != "idemsim":
            found += [node.module] if private(node.module) else []
            found += [f"{node.module}.{alias.name}" for alias in node.names if private(alias.name)]
    return found


class TestNoPrivateApis:
    def test_private_imports_are_found(self):
        """A private module or name of another library is found, however imported; idemsim's own are not."""
        source = ("import typer._click.core\nfrom typer._click.exceptions import UsageError\n"
                  "from simpy.events import Event, _describe_frame\nfrom __future__ import annotations\n"
                  "from rich.segment import Segment\nfrom .timeline import _status\nfrom idemsim.base import _x\n")
        assert private_imports(source) == ["typer._click.core", "typer._click.exceptions",
                                           "simpy.events._describe_frame"]

    def test_no_module_imports_a_private_api_of_another_library(self):
        """Outside the kernel, idemsim uses other libraries (typer, rich, SimPy, …) through their public API
        only."""
        found = {name: private_imports(path.read_text(encoding="utf-8")) for name, path in modules().items()
                 if name != KERNEL and not name.startswith(KERNEL + ".")}
        assert {name: names for name, names in found.items() if names} == {}


OPTIONAL = {"matplotlib", "matplotlib_fontja", "hypothesis", "psycopg", "dask", "distributed", "pandas"}
"""Packages imported where they are used: optional extras, or heavy ones a run must not load."""
IMPORTS_ANYWHERE = ("idemsim.cli", "idemsim.bench")
"""The command line imports each command's runner when the command runs, so that ``idemsim run`` starts fast."""


def late_imports(name: str, path: Path) -> list[str]:
    """The imports of ``name`` made inside a function, but those of an optional package and those that say why
    they are late (a ``(lazy: …)`` comment on the line), as ``line: module``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    at_top = {id(node) for node in tree.body} | {id(inner) for node in tree.body if isinstance(node, (ast.If, ast.Try))
                                                 for inner in ast.walk(node)}
    late = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in at_top:
            continue
        module = "." * node.level + (node.module or "") if isinstance(node, ast.ImportFrom) else node.names[0].name
        if module.split(".")[0] in OPTIONAL or "(lazy: " in lines[node.lineno - 1]:
            continue
        late.append(f"{node.lineno}: {module}")
    return late


class TestImportsAtTheTop:
    def test_a_module_says_what_it_depends_on_at_its_top(self):
        """Imports sit at the top of a file, where a reader sees what it depends on; only an optional package, a
        view a run must not load (said on the line), the public face's lazy names and the CLI's commands wait."""
        found = {name: late_imports(name, path) for name, path in modules().items()
                 if name != "idemsim" and not name.startswith(IMPORTS_ANYWHERE)}
        assert {name: lines for name, lines in found.items() if lines} == {}
