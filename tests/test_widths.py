"""Every line of the text views fits an 80-column terminal: `run`, `run --brief`, `compare` and `show`, for every
shipped scenario, in English and in Japanese (rich reads the width from ``COLUMNS``, as a real terminal of that
width would give it; a line's width is counted in terminal cells, two for a Japanese character)."""

from __future__ import annotations

import pytest
from rich.text import Text
from typer.testing import CliRunner

from idemsim.cli.app import app
from idemsim.scenario.schema import builtin_names

runner = CliRunner()
WIDTH = 80


def too_wide(*args: str) -> list[str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": str(WIDTH)})
    assert result.exit_code in (0, 1), result.output
    return [line for line in result.stdout.splitlines() if Text(line).cell_len > WIDTH]


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("name", builtin_names())
class TestEightyColumns:
    def test_run_fits(self, name, lang):
        """Every line of `run` (timeline, summary, the reproduce command) fits in 80 columns."""
        assert too_wide("run", name, "--lang", lang) == []

    def test_run_brief_fits(self, name, lang):
        """Every line of `run --brief` fits in 80 columns."""
        assert too_wide("run", name, "--brief", "--lang", lang) == []

    def test_compare_fits(self, name, lang):
        """Every line of `compare` fits in 80 columns: a wide table is stacked instead."""
        assert too_wide("compare", name, "--lang", lang) == []

    def test_show_fits(self, name, lang):
        """Every line of `show` fits in 80 columns, and no raw diagram source is printed."""
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
