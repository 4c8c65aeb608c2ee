"""Every command output the docs quote is what the command prints.

A fenced ``text`` block of README.md, docs/designs.md or docs/explore.md whose first line is ``$ idemsim …``
quotes that command: its other lines are lines of the output, in the order printed (whitespace aside: the
terminal's width wraps a long line), where ``…`` (or ``...``) leaves out part of a line and a line in parentheses
is a note to the reader that stands for lines left out; the ``# exit N`` comment after the command is its exit
code. Each command runs in-process, from the repository's root, as a reader would type it there.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import NamedTuple

import pytest
from typer.testing import CliRunner

from idemsim.cli.app import app
from idemsim.model.designs import DESIGNS, SHIPPED

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/designs.md", "docs/explore.md")
BLOCK = re.compile(r"^```text\n(\$ idemsim .*?)^```", re.MULTILINE | re.DOTALL)
EXIT = re.compile(r"#.*\bexit (\d+)\s*$")
ELLIPSIS = re.compile(r"…|\.\.\.")


class Quote(NamedTuple):
    """One quoted command: where it is, what it runs, the exit code the doc states, and the lines it quotes."""

    where: str
    args: list[str]
    exit_code: int | None
    lines: list[str]


def quotes(doc: str) -> list[Quote]:
    """The quoted commands of ``doc`` (a path under the repository's root), in order."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    out = []
    for block in BLOCK.finditer(text):
        command, *lines = block[1].rstrip("\n").split("\n")
        code = EXIT.search(command)
        args = shlex.split(command[2:].split("#")[0])[1:]
        where = f"{doc}:{text.count(chr(10), 0, block.start()) + 2}"
        out.append(Quote(where, args, int(code[1]) if code else None, lines))
    return out


def flat(text: str) -> str:
    """``text`` with its shell line continuations undone and every run of whitespace one space."""
    return " ".join(text.replace("\\\n", " ").split())


def missing(quoted: list[str], output: str) -> list[str]:
    """The ``quoted`` lines not found in ``output`` after the lines before them (notes in parentheses aside; a
    line continued with a backslash, as a shell command, is one line)."""
    printed, at, out = flat(output), 0, []
    for line in "\n".join(quoted).replace("\\\n", " ").split("\n"):
        if line.startswith("(") and line.endswith(")"):
            continue
        start, found = at, True
        for part in (flat(p) for p in ELLIPSIS.split(line) if p.strip()):
            where = printed.find(part, start)
            if where < 0:
                found = False
                break
            start = where + len(part)
        if found:
            at = start
        else:
            out.append(line)
    return out


ALL = [q for doc in DOCS for q in quotes(doc)]
RUNS = [pytest.param(q, id=q.where, marks=[] if "--exhaustive" in q.args else [pytest.mark.slow]) for q in ALL]
"""The quoted commands to run: a Hypothesis search takes a second or more (slow), an exhaustive run with few
faults a tenth."""


class TestReadingAQuote:
    def test_a_block_gives_its_command_exit_code_and_lines(self, tmp_path, monkeypatch):
        """``$ idemsim explore naive   # exit 1`` then two lines: the arguments, 1, and the two lines."""
        (tmp_path / "doc.md").write_text("Text.\n\n```text\n$ idemsim explore naive --set 'api.ttl=5'   # exit 1\n"
                                         "verdict: COUNTEREXAMPLE — 1 fault:\n  1. lose …\n```\n", encoding="utf-8")
        monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
        assert quotes("doc.md") == [Quote("doc.md:4", ["explore", "naive", "--set", "api.ttl=5"], 1,
                                          ["verdict: COUNTEREXAMPLE — 1 fault:", "  1. lose …"])]

    def test_quoted_lines_are_found_in_order_across_wrapping(self):
        """A line wrapped by the terminal or continued by a backslash is found; ``…`` skips part of a line; a note
        in parentheses skips lines."""
        printed = "a: one\ntwo three\nb: four five six\nc: seven eight \\\n    nine\n"
        assert missing(["a: one two three", "(what comes between)", "b: four … six", "c: seven \\", "  eight nine"],
                       printed) == []

    def test_a_line_out_of_order_or_absent_is_missing(self):
        """A line printed before the one quoted before it, or not printed, is reported."""
        assert missing(["b: four", "a: one", "d: eight"], "a: one\nb: four\n") == ["a: one", "d: eight"]

    def test_the_docs_quote_commands_with_their_exit_codes(self):
        """The docs quote several commands, each with its exit code and at least one line."""
        assert len(ALL) >= 10
        assert [q.where for q in ALL if q.exit_code is None or not q.lines] == []


@pytest.fixture
def shipped_designs_only():
    """A quoted command that names a design file registers it; the next test starts with the shipped designs."""
    yield
    for name in [n for n in DESIGNS if n not in SHIPPED]:
        del DESIGNS[name]


@pytest.mark.usefixtures("shipped_designs_only")
class TestQuotedCommands:
    @pytest.mark.parametrize("quote", RUNS)
    def test_the_command_prints_what_the_doc_quotes(self, quote, monkeypatch):
        """The quoted command exits as the doc says and prints every line the doc quotes, in order."""
        monkeypatch.chdir(ROOT)
        result = CliRunner().invoke(app, quote.args, env={"COLUMNS": "200"}, catch_exceptions=False)
        assert (result.exit_code, missing(quote.lines, result.stdout)) == (quote.exit_code, [])
