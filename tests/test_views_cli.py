"""The pictures from the command line and from Python: Mermaid output, `idemsim plot`, `compare --plot`, and a
`Run` that shows itself in Jupyter."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console

from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import load
from idemsim.scenario.schema import variant as variant_of
from idemsim.views.mermaid import INIT
from idemsim.views.terminal import print_run


class TestMermaidOutput:
    def test_each_story_is_a_raw_diagram_separated_by_a_blank_line(self, cli):
        """`run --format mermaid` prints one sequence diagram per story: init line, diagram, a comment naming it."""
        out = cli("run", "lost-response", "--format", "mermaid").stdout
        stories = out.strip("\n").split("\n\n")
        assert len(stories) == 2
        for story, name in zip(stories, ["lost-response", "lost-response/gateway-504"]):
            lines = story.splitlines()
            assert lines[0] == INIT and lines[1] == "sequenceDiagram"
            assert lines[2] == f"%% {name} — design same-tx, seed 1"
        assert "A--xC: t=0.250 201 Created" in stories[0] and "```" not in out

    def test_the_state_diagram_marks_the_path(self, cli):
        """`run --format mermaid-state` prints the key record's stateDiagram-v2 with the states it went through."""
        out = cli("run", "lost-response", "--variant", "gateway-504", "--format", "mermaid-state").stdout
        assert out.splitlines()[1] == "stateDiagram-v2" and "class None,InProgress,Done taken" in out

    def test_show_prints_the_articles_own_diagrams(self, cli):
        """`show --format mermaid` prints the article's diagrams for the story, verbatim; none is said on stderr."""
        out = cli("show", "lost-response", "--format", "mermaid").stdout
        assert out.count("sequenceDiagram") == 2 and "participant C as クライアント" in out
        none = cli("show", "http-methods", "--format", "mermaid")
        assert none.exit_code == 0 and none.stdout == "" and "draws no diagram" in none.stderr

    def test_japanese_labels_come_with_lang_ja(self, cli):
        """--lang ja (or IDEMSIM_LANG=ja) writes the article's words."""
        assert "participant A as 決済 API" in cli("run", "lost-response", "--format", "mermaid", "--lang", "ja").stdout


@pytest.mark.slow
class TestPlot:
    def test_plot_writes_the_figure_and_prints_its_path(self, cli, tmp_path):
        """`idemsim plot same-tx-wait -o w.svg` writes the time-space diagram, the wait labelled 4.0 s."""
        target = tmp_path / "w.svg"
        result = cli("plot", "same-tx-wait", "-o", target)
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == str(target)
        assert "4.0 s" in target.read_text()

    def test_the_default_file_is_the_names_png_in_the_working_directory(self, cli, tmp_path, monkeypatch):
        """Without -o the figure is NAME.png here."""
        monkeypatch.chdir(tmp_path)
        assert cli("plot", "lost-response").stdout.strip() == "lost-response.png"
        assert (tmp_path / "lost-response.png").read_bytes().startswith(b"\x89PNG")

    def test_a_variant_a_design_and_japanese(self, cli, tmp_path):
        """--variant, --design and --lang ja draw that story under that design, in the article's words."""
        target = tmp_path / "ja.svg"
        assert cli("plot", "lost-response", "--variant", "gateway-504", "--design", "naive", "--lang", "ja", "-o",
                   target).exit_code == 0
        svg = target.read_text()
        assert "クライアント" in svg and "design naive" not in svg

    def test_compare_draws_one_panel_per_design(self, cli, tmp_path):
        """`compare NAME --plot FILE` draws every row's run, and still prints its table."""
        target = tmp_path / "c.svg"
        result = cli("compare", "lost-response", "--plot", target)
        assert result.exit_code == 0 and "recovery-points" in result.stdout
        svg = target.read_text()
        assert all(design in svg for design in ("naive", "same-tx", "committed-first", "recovery-points"))

    def test_a_bad_file_name_is_one_line_before_anything_runs(self, cli, one_line, tmp_path):
        """An unknown extension, or a directory that does not exist, is one line and exit 2; nothing is written."""
        assert "a figure is saved as .png, .svg, .pdf" in one_line(
            cli("plot", "lost-response", "-o", tmp_path / "x.gif"))
        assert "no such directory" in one_line(cli("plot", "lost-response", "-o", tmp_path / "no" / "x.png"))
        assert list(tmp_path.iterdir()) == []


class TestFromPython:
    def test_a_run_draws_itself(self):
        """`run.figure()` is a matplotlib Figure, `run.mermaid()` the sequence diagram's text."""
        run = simulate(load("lost-response"))
        assert type(run.figure()).__name__ == "Figure"
        assert run.mermaid().splitlines()[1] == "sequenceDiagram"
        assert run.mermaid(kind="state").splitlines()[1] == "stateDiagram-v2"


class TestFastStart:
    @pytest.mark.slow
    def test_run_list_and_show_never_import_matplotlib(self, tmp_path):
        """Only drawing imports matplotlib: `run`, `list` and `show` do not (a real subprocess)."""
        code = ("import sys\nfrom idemsim.cli.app import app\n"
                "for args in (['run', 'lost-response'], ['list'], ['show', 'lost-response']):\n"
                "    try:\n        app(args)\n    except SystemExit:\n        pass\n"
                "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'hypothesis', 'psycopg',"
                " 'dask', 'distributed')))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             cwd=tmp_path).stdout
        assert out.strip().splitlines()[-1] == "[]"


class TestTerminalColours:
    @staticmethod
    def coloured(name: str, variant: str | None = None, brief: bool = True) -> list[str]:
        """The lines `print_run` writes for a story on a colour terminal (ANSI codes kept)."""
        out = io.StringIO()
        console = Console(file=out, width=200, force_terminal=True, color_system="standard")
        story = load(name) if variant is None else variant_of(load(name), variant)
        print_run(console, simulate(story), brief=brief)
        return out.getvalue().splitlines()

    def test_an_answer_is_coloured_by_what_it_means_to_the_client(self):
        """A 500 is the colour of unknown (magenta), never green; the 201 of a run whose design holds is green."""
        lines = self.coloured("same-tx-wait", "rollback")
        error = next(line for line in lines if "500 Internal Server Error for 1.1 arrives" in line)
        created = next(line for line in lines if "201 Created for 1.2 arrives" in line)
        assert "\x1b[35m" in error and "\x1b[32m" not in error
        assert "\x1b[32m" in created

    def test_nothing_is_green_on_a_run_whose_design_broke(self):
        """On the naive double charge the client's ok 201 is neutral: no line of the timeline is green."""
        lines = self.coloured("naive-double-charge", brief=False)
        assert [line for line in lines if "\x1b[32m" in line] == []
