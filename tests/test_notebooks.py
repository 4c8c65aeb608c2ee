"""The course: the six lesson notebooks and their answers run in a Jupyter kernel, show figures and check
themselves; the catalogue of scenarios is what the simulator draws now.

Each notebook is executed once, with nbclient, in a kernel that is this very interpreter (the test extra
installs ipykernel, nbclient and nbformat), and the tests read the outputs it produced. A kernel that cannot
start fails the tests with the reason: it is never a skip. Cells tagged ``answer`` hold a student's answers
(placeholders in a lesson, filled in under ``notebooks/answers/``); cells tagged ``check`` print "right" or
"not yet".
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
"""Notebooks run in a Jupyter kernel: not on the fast path (pytest -m "not slow")."""

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
ANSWERS = sorted((NOTEBOOKS / "answers").glob("[0-9][0-9]-*.ipynb"))
EVERY = LESSONS + ANSWERS
TIME_LIMIT = 30.0
"""Seconds a notebook may take, top to bottom, kernel start included."""


def _ids(paths: list[Path]) -> list[str]:
    return [("answers/" if p.parent.name == "answers" else "") + p.stem for p in paths]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _tagged(cell: dict, tag: str) -> bool:
    return tag in cell.get("metadata", {}).get("tags", [])


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _kernel_manager(asynchronous: bool = False):
    """A kernel manager whose kernel is this interpreter, whatever kernels the machine has installed (an
    asyncio one when ``asynchronous``, to run several notebooks at once)."""
    from jupyter_client import AsyncKernelManager, KernelManager
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                              display_name=f"Python ({sys.executable})", language="python",
                              resource_dir=str(NOTEBOOKS))

    manager = AsyncKernelManager if asynchronous else KernelManager
    return manager(kernel_name="python3", kernel_spec_manager=ThisPython())


def _client(nb, cwd: Path, asynchronous: bool = False):
    from nbclient import NotebookClient

    return NotebookClient(nb, km=_kernel_manager(asynchronous), timeout=TIME_LIMIT, kernel_name="python3",
                          resources={"metadata": {"path": str(cwd)}})


def _why(name: str, error: Exception) -> str:
    """Why executing the notebook ``name`` failed, in words."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    if isinstance(error, CellExecutionError):
        return f"{name}: a cell raised an error:\n{error}"
    if isinstance(error, CellTimeoutError):
        return f"{name}: a cell ran longer than {TIME_LIMIT:g} s: {error}"
    if isinstance(error, DeadKernelError):
        return f"{name}: the Jupyter kernel died: {error}"
    # the kernel could not start: say why, never skip
    return (f"{name}: the Jupyter kernel ({sys.executable} -m ipykernel_launcher) could not run the "
            f"notebook: {type(error).__name__}: {error}. The test extra installs ipykernel, nbclient "
            "and nbformat: pip install -e '.[test]'")


def execute(nb, name: str, cwd: Path):
    """Run ``nb`` (an nbformat notebook) top to bottom in a fresh kernel; return the seconds it took. Fails the
    test, with the reason, on any error, on a cell slower than the limit, and when no kernel can start."""
    client = _client(nb, cwd)
    start = time.monotonic()
    try:
        client.execute()
    except Exception as error:
        pytest.fail(_why(name, error))
    return time.monotonic() - start


def execute_together(jobs: list[tuple], at_once: int = 2) -> list:
    """Run each ``(nb, name, cwd)`` of ``jobs`` as `execute` does, ``at_once`` kernels at a time (the machine
    has two cores; each kernel runs one notebook on one). For each job, in order, the seconds its notebook
    took, or the text of `_why` when it failed: the caller fails the test of that notebook only."""
    import asyncio

    async def run(nb, name, cwd, slots):
        async with slots:
            client = _client(nb, cwd, asynchronous=True)
            start = time.monotonic()
            try:
                await client.async_execute()
            except Exception as error:
                return _why(name, error)
            return time.monotonic() - start

    async def main():
        slots = asyncio.Semaphore(at_once)
        return await asyncio.gather(*(run(nb, name, cwd, slots) for nb, name, cwd in jobs))

    return asyncio.run(main())


_RUNS: dict[Path, tuple] = {}


def executed(path: Path):
    """The notebook at ``path`` after one execution (shared by every test that reads it), and its seconds."""
    if path not in _RUNS:
        import nbformat

        nb = nbformat.read(path, as_version=4)
        _RUNS[path] = (nb, execute(nb, path.name, path.parent))
    return _RUNS[path]


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o["output_type"] == "stream" and o.get("name") == "stdout")


def errors(cell) -> list[str]:
    return [f"{o['ename']}: {o['evalue']}" for o in cell.get("outputs", []) if o["output_type"] == "error"]


def images(nb) -> int:
    """Figures among the outputs: a PNG (a matplotlib Figure), or a Run's HTML with its figure inlined as SVG."""
    count = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "class=\"idemsim-figure\"" in "".join(data.get("text/html", "")):
                count += 1
    return count


def test_there_are_six_lessons_each_with_its_answers():
    """Six lesson notebooks, numbered in the article's order, each with an answer notebook of the same name."""
    assert [p.name[:3] for p in LESSONS] == ["01-", "02-", "03-", "04-", "05-", "06-"]
    assert [p.name for p in ANSWERS] == [p.name for p in LESSONS]
    assert f"notebooks/{LESSONS[0].name}" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", EVERY, ids=_ids(EVERY))
def test_a_notebook_is_saved_without_outputs(path):
    """A notebook is committed with its outputs cleared: the tests execute it and read the outputs."""
    for cell in _cells(path):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, _source(cell)[:80]


@pytest.mark.parametrize("path", LESSONS, ids=_ids(LESSONS))
def test_an_answer_notebook_is_its_lesson_with_the_answers_filled_in(path):
    """The answer notebook has the lesson's cells, word for word, except the answer cells, which it fills in."""
    lesson, answers = _cells(path), _cells(NOTEBOOKS / "answers" / path.name)
    assert len(lesson) == len(answers)
    checks = [c for c in lesson if _tagged(c, "check")]
    assert checks and len(checks) == len([c for c in lesson if _tagged(c, "answer")])
    for mine, theirs in zip(lesson, answers):
        assert mine.get("metadata") == theirs.get("metadata") and mine["cell_type"] == theirs["cell_type"]
        if _tagged(mine, "answer"):
            assert _source(mine) != _source(theirs)
        else:
            assert _source(mine) == _source(theirs)


@pytest.mark.parametrize("path", EVERY, ids=_ids(EVERY))
def test_a_notebook_runs_top_to_bottom_within_the_time_limit(path):
    """The notebook executes in a fresh kernel without any error, in at most 30 s."""
    nb, seconds = executed(path)
    failed = {i: errors(c) for i, c in enumerate(nb.cells) if errors(c)}
    assert not failed
    assert seconds <= TIME_LIMIT, f"{path.name} took {seconds:.1f} s"


@pytest.mark.parametrize("path", EVERY, ids=_ids(EVERY))
def test_a_notebook_shows_a_figure(path):
    """Executing the notebook gives at least one figure as an image output."""
    nb, _ = executed(path)
    assert images(nb) >= 1


def assert_every_check_prints(nb, verdict: str) -> None:
    """The executed notebook has checking cells, and each printed ``verdict: why`` and raised nothing."""
    checks = [c for c in nb.cells if _tagged(c, "check")]
    assert checks
    for cell in checks:
        assert stdout(cell).startswith(f"{verdict}: ") and not errors(cell), (_source(cell)[:40], stdout(cell))


@pytest.mark.parametrize("path", ANSWERS, ids=_ids(ANSWERS))
def test_every_check_of_an_answer_notebook_prints_right(path):
    """In an answer notebook every checking cell prints "right", with why."""
    nb, _ = executed(path)
    assert_every_check_prints(nb, "right")


@pytest.mark.parametrize("path", LESSONS, ids=_ids(LESSONS))
def test_every_check_of_a_lesson_left_unanswered_prints_not_yet(path):
    """In a lesson as shipped (answers left as placeholders) every checking cell prints "not yet" and raises
    nothing."""
    nb, _ = executed(path)
    assert_every_check_prints(nb, "not yet")


@pytest.mark.parametrize("path", LESSONS, ids=_ids(LESSONS))
def test_a_check_run_before_anything_else_prints_not_yet(path):
    """A checking cell run in a fresh kernel before any other cell (no answer written, nothing imported) prints
    "not yet" and raises nothing."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if _tagged(c, "check")]
    execute(nb, f"the checks of {path.name}", path.parent)
    for cell in nb.cells:
        assert stdout(cell).startswith("not yet: ") and not errors(cell), (_source(cell)[:40], stdout(cell))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lesson_3_runs_without_a_postgresql_server(monkeypatch):
    """Without a PostgreSQL server, lesson 3 still runs and shows the figures recorded on PostgreSQL 15.20."""
    import nbformat

    path = next(p for p in LESSONS if p.name.startswith("03-"))
    monkeypatch.setenv("IDEMSIM_PG_DSN", f"postgresql://postgres@127.0.0.1:{_closed_port()}/test")
    nb = nbformat.read(path, as_version=4)
    seconds = execute(nb, path.name + " without a server", path.parent)
    text = "".join(stdout(c) for c in nb.cells)
    assert "recorded on PostgreSQL 15.20" in text and "measured just now" not in text
    assert images(nb) >= 2 and seconds <= TIME_LIMIT


def _catalogue_generator():
    spec = importlib.util.spec_from_file_location("make_catalogue", ROOT / "docs" / "make_catalogue.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_catalogue_is_what_the_simulator_draws_now():
    """docs/catalogue.md is exactly what docs/make_catalogue.py generates from the simulator now."""
    generator = _catalogue_generator()
    assert (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8") == generator.render(), \
        "docs/catalogue.md is out of date: regenerate it with  python docs/make_catalogue.py"


def test_the_catalogue_holds_every_shipped_scenario_with_its_diagram():
    """The catalogue has a section and a Mermaid sequence diagram for every shipped scenario."""
    from idemsim.scenario.schema import builtin_names

    text = (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8")
    names = builtin_names()
    assert all(f"\n### {name}\n" in text for name in names)
    assert text.count("```mermaid\n") == len(names) and text.count("\nsequenceDiagram\n") == len(names)
