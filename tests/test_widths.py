"""Every line of the text views fits an 80-column terminal and, printed where no terminal reads it (a pipe, a
file), ends in no space: `run`, `run --brief`, `compare` and `show`, for every shipped scenario, in English and in
Japanese (rich reads the width from ``COLUMNS``, as a real terminal of that width would give it; a line's width is
counted in terminal cells, two for a Japanese character)."""

from __future__ import annotations

import io

import pytest
from rich.text import Text
from typer.testing import CliRunner

from idemsim.cli.app import app
from idemsim.scenario.schema import builtin_names
from idemsim.views.terminal import Unpadded

runner = CliRunner()
WIDTH = 80


def too_wide(*args: str) -> list[str]:
    """The lines of the command's output wider than 80 columns, or ending in a space (standard output is not a
    terminal here)."""
    result = runner.invoke(app, list(args), env={"COLUMNS": str(WIDTH)})
    assert result.exit_code in (0, 1), result.output
    return [line for line in result.stdout.splitlines() if Text(line).cell_len > WIDTH or line.endswith(" ")]


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("name", builtin_names())
class TestEightyColumns:
    def test_run_fits(self, name, lang):
        """Every line of `run` (timeline, summary, the reproduce command) fits in 80 columns, unpadded."""
        assert too_wide("run", name, "--lang", lang) == []

    def test_run_brief_fits(self, name, lang):
        """Every line of `run --brief` fits in 80 columns, unpadded."""
        assert too_wide("run", name, "--brief", "--lang", lang) == []

    def test_compare_fits(self, name, lang):
        """Every line of `compare` fits in 80 columns, unpadded: a wide table is stacked instead."""
        assert too_wide("compare", name, "--lang", lang) == []

    def test_show_fits(self, name, lang):
        """Every line of `show` fits in 80 columns, unpadded, and no raw diagram source is printed."""
        assert too_wide("show", name, "--lang", lang) == []
        assert "sequenceDiagram" not in runner.invoke(app, ["show", name], env={"COLUMNS": "80"}).stdout


class TestBrief:
    def test_brief_shows_the_exchange_between_client_and_api_only(self):
        """`run --brief` has no SQL and no processor line: one line per message or client event."""
        out = runner.invoke(app, ["run", "lost-response", "--variant", "gateway-504", "--brief"],
                            env={"COLUMNS": "80"}).stdout
        assert "INSERT" not in out and "processor" not in out
        assert "504 Gateway Timeout" in out and "attempt 2 of operation 1: ok (201 Created)" in out

    def test_the_reproduce_command_is_continued_not_cut(self):
        """A reproduce command longer than the terminal continues on the next line after a backslash."""
        out = runner.invoke(app, ["run", "same-tx-wait", "--variant", "repeatable-read"],
                            env={"COLUMNS": "80"}).stdout
        assert "reproduce: idemsim run same-tx-wait --design same-tx --seed 1 --variant \\\n    repeatable-read" in out

    def test_brief_aligns_its_columns_and_cuts_nothing(self):
        """`run --brief` at 80 columns: the time, who (as wide as the widest name) and what happened, wrapped
        under itself; no ellipsis, and the duplicate's rows align with the client's."""
        out = runner.invoke(app, ["run", "same-tx-wait", "--brief"], env={"COLUMNS": "80"}).stdout
        assert "…" not in out
        assert out.splitlines()[1:5] == [
            "   0.000  client                       operation 1 begins: POST /charges",
            "                                       {\"amount\": 1000}",
            "   0.000  client → API                 POST /charges  Idempotency-Key: k-8f3a",
            "                                       [attempt 1, request 1.1]"]
        assert "   5.000  API #2 → client (duplicate)  201 Created for 2.1 arrives" in out.splitlines()


class TestUnpadded:
    def test_spaces_before_a_newline_are_dropped_and_colour_codes_kept(self):
        """The stream drops the spaces rich pads a line with, holds those at the end of a write until it knows
        whether the line goes on, and keeps the colour codes after them."""
        out = io.StringIO()
        stream = Unpadded(out)
        for piece in ["a   \n", "b  ", "c  ", "\n", "\x1b[32mok\x1b[0m   \x1b[0m\n", "   \n"]:
            stream.write(piece)
        assert out.getvalue() == "a\nb  c\n\x1b[32mok\x1b[0m\x1b[0m\n\n"
