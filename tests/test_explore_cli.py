"""The ``idemsim explore`` command: verdicts, exit codes, the saved counterexample and its replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from idemsim.cli.app import app

runner = CliRunner()


def explore(*args: str):
    return runner.invoke(app, ["explore", *args])


def as_json(result) -> dict:
    return json.loads(result.stdout)


@pytest.mark.slow
class TestExploreNaive:
    def test_it_exits_1_with_a_two_charge_counterexample_of_one_lost_response(self, tmp_path, monkeypatch):
        """`idemsim explore naive` finds one lost response, shows two charges, and exits 1."""
        monkeypatch.chdir(tmp_path)
        result = explore("naive")
        assert result.exit_code == 1, result.output
        out = result.stdout
        assert "verdict: COUNTEREXAMPLE — 1 fault:\n  1. lose the response of op 1 attempt 1\n" in out
        assert "at-most-one-charge: operation 1 was charged 2 times" in out
        assert "charges recorded  2" in out
        assert "✗ the response of 1.1 is lost (fault #1)" in out
        assert "not saved: add --save FILE" in out

    def test_without_save_nothing_is_written(self, tmp_path, monkeypatch):
        """Without --save no file appears in the working directory, not even Hypothesis's folder."""
        monkeypatch.chdir(tmp_path)
        explore("naive", "--seed", "4")
        assert sorted(p.name for p in tmp_path.iterdir()) == []

    def test_save_writes_the_file_with_the_usual_mode_and_no_temporary_file(self, tmp_path):
        """--save writes the scenario (mode as any new file: 0644 under umask 022) and nothing else."""
        import os

        old = os.umask(0o022)
        try:
            result = explore("naive", "--save", str(tmp_path / "cx.toml"))
        finally:
            os.umask(old)
        assert "replay: idemsim run " in result.stdout
        assert sorted(p.name for p in tmp_path.iterdir()) == ["cx.toml"]
        assert (tmp_path / "cx.toml").stat().st_mode & 0o777 == 0o644

    def test_an_existing_file_is_kept_unless_forced(self, tmp_path):
        """--save onto an existing file is refused (exit 2) unless --force is given."""
        path = tmp_path / "cx.toml"
        path.write_text("mine\n")
        refused = explore("naive", "--save", str(path))
        assert refused.exit_code == 2 and "the file exists; add --force" in refused.stderr
        assert path.read_text() == "mine\n"
        assert explore("naive", "--save", str(path), "--force").exit_code == 1
        assert path.read_text().startswith("# A counterexample found by")

    def test_the_saved_file_replays_exactly(self, tmp_path):
        """`idemsim run FILE` on the saved counterexample gives the same trace, and its expectation holds."""
        path = tmp_path / "cx.toml"
        found = as_json(explore("naive", "--save", str(path), "--format", "json"))
        replay = runner.invoke(app, ["run", str(path), "--format", "json"])
        assert replay.exit_code == 0, replay.output
        doc = json.loads(replay.stdout)
        assert doc["trace"] == found["counterexample"]["trace"]
        assert doc["summary"]["charges"] == 2
        assert doc["summary"]["verdict"] == "held"

    def test_the_same_seed_gives_the_same_output(self, tmp_path):
        """Two explorations with the same seed print the same report."""
        a = explore("check-then-insert", "--seed", "9", "--save", str(tmp_path / "a.toml"), "--force")
        b = explore("check-then-insert", "--seed", "9", "--save", str(tmp_path / "a.toml"), "--force")
        assert a.stdout == b.stdout


@pytest.mark.slow
class TestExploreMoney:
    def test_same_tx_is_broken_by_two_captures_and_one_row(self, tmp_path, monkeypatch):
        """The default same-tx search ends in a double capture between the capture and the COMMIT: exit 1."""
        monkeypatch.chdir(tmp_path)
        result = explore("same-tx", "--format", "json")
        assert result.exit_code == 1, result.output
        cx = as_json(result)["counterexample"]
        assert (cx["summary"]["charges"], cx["summary"]["captures"]) == (1, 2)
        assert "at-most-one-capture" in {v["property"] for v in cx["violations"]}
        assert len(cx["faults"]) == 1

    def test_the_processors_key_stops_the_double_capture(self):
        """With api.processor_key=request-key no schedule of up to 3 faults captures twice."""
        result = explore("same-tx", "--set", "api.processor_key=request-key", "--exhaustive",
                         "--property", "at-most-one-capture", "--property", "at-most-one-charge")
        assert result.exit_code == 0, result.output
        assert "verdict: PROVED — every judged property held" in result.stdout

    def test_with_the_processors_key_an_orphan_capture_remains(self):
        """With the processor's key, a last attempt that dies after the capture leaves money unrecorded."""
        result = explore("same-tx", "--set", "api.processor_key=request-key", "--format", "json")
        assert result.exit_code == 1, result.output
        assert {v["property"] for v in as_json(result)["counterexample"]["violations"]} == {"ledger-agrees"}


@pytest.mark.slow
class TestExploreCorrectDesigns:
    def test_recovery_points_has_no_counterexample_and_exits_0(self, tmp_path, monkeypatch):
        """The default configuration of recovery-points survives the search; nothing is written."""
        monkeypatch.chdir(tmp_path)
        result = explore("recovery-points", "--max-examples", "100")
        assert result.exit_code == 0, result.output
        assert "verdict: no counterexample in 100 examples" in result.stdout
        assert list(tmp_path.iterdir()) == []

    def test_exhaustive_proves_recovery_points_for_every_schedule_of_three_faults(self):
        """--exhaustive --max-faults 3 checks all 3683 schedules of the 28-fault universe and proves it."""
        result = explore("recovery-points", "--exhaustive", "--max-faults", "3")
        assert result.exit_code == 0, result.output
        assert "schedules: 3683 in the universe, 3683 checked" in result.stdout
        assert "verdict: PROVED — every property held" in result.stdout

    def test_exhaustive_proves_same_tx_for_the_database(self):
        """same-tx never records two charge rows, replays identically, leaves no stuck key: the article's claim."""
        result = explore("same-tx", "--exhaustive", "--format", "json", "--property", "at-most-one-charge",
                         "--property", "replay-identical", "--property", "no-stuck-key")
        assert result.exit_code == 0, result.output
        assert as_json(result)["verdict"] == "proved"

    def test_exhaustive_proves_committed_first_with_its_lease_for_the_database(self):
        """committed-first with the default lease never records two charge rows under up to 3 faults."""
        result = explore("committed-first", "--exhaustive", "--format", "json", "--property", "at-most-one-charge")
        assert result.exit_code == 0, result.output
        assert as_json(result)["verdict"] == "proved"


class TestExploreJson:
    def test_a_search_reports_version_verdict_examples_and_the_counterexample(self, tmp_path):
        """JSON of a search: version, verdict, examples, and the counterexample's faults, summary and trace."""
        doc = as_json(explore("naive", "--format", "json", "--save", str(tmp_path / "n.toml")))
        assert doc["version"] == 1
        assert (doc["mode"], doc["verdict"], doc["valid"]) == ("search", "counterexample", False)
        assert doc["examples"] >= 1
        cx = doc["counterexample"]
        assert cx["faults"] == [{"kind": "lose", "op": 1, "attempt": 1, "message": "response"}]
        assert cx["summary"]["charges"] == 2
        assert cx["trace"][0]["kind"] == "op.start"
        assert [v["property"] for v in cx["violations"]] == ["at-most-one-charge", "at-most-one-capture",
                                                             "exactly-one-on-success"]
        assert cx["saved"] == str(tmp_path / "n.toml")

    def test_an_exhaustive_run_reports_the_universe_and_schedules_checked(self):
        """JSON of an exhaustive run: the universe's size, schedules checked, and no counterexample."""
        doc = as_json(explore("recovery-points", "--exhaustive", "--max-faults", "1", "--format", "json"))
        assert (doc["mode"], doc["verdict"], doc["valid"]) == ("exhaustive", "proved", True)
        assert (doc["universe"]["faults"], doc["universe"]["schedules"], doc["schedules_checked"]) == (28, 29, 29)
        assert doc["counterexample"] is None


class TestExploreBadInput:
    @pytest.mark.parametrize("args, message", [
        (["bogus"], "error: unknown design 'bogus'; valid designs: naive, check-then-insert, same-tx"),
        (["same-tx", "--set", "api.leas=1"], "error: explore, --set 'api.leas=1': unknown field 'api.leas'"),
        (["same-tx", "--set", "client.timeout=soon"],
         "error: explore, --set 'client.timeout=soon': field 'client.timeout'"),
        (["same-tx", "--set", "api.ttl=none"], "error: --set api.ttl=none: a scenario file cannot express it"),
        (["same-tx", "--exhaustive", "--max-faults", "6"], "error: --max-faults 6: the exhaustive mode allows"),
        (["same-tx", "--property", "exactly-once"], "error: --property 'exactly-once': no such property; allowed: "),
        (["naive", "--save", ""], "error: --save '': give a file name"),
        (["naive", "--save", "/nonexistent-dir/cx.toml"], "error: --save /nonexistent-dir/cx.toml: no such"),
    ])
    def test_it_exits_2_with_one_line(self, args, message):
        """Bad input is one line on stderr, exit code 2, never a traceback."""
        result = explore(*args)
        assert result.exit_code == 2
        assert result.stderr.startswith(message)
        assert result.stderr.count("\n") == 1
        assert "Traceback" not in result.output

    def test_a_budget_below_one_is_a_usage_error(self):
        """--max-examples 0 is refused by the command line parser with exit code 2."""
        result = explore("same-tx", "--max-examples", "0")
        assert result.exit_code == 2
        assert "--max-examples" in result.stderr


@pytest.mark.slow
class TestFastStart:
    def test_run_does_not_import_hypothesis(self, tmp_path):
        """`idemsim run` imports neither Hypothesis nor the explore modules (a real subprocess)."""
        code = ("import sys\nfrom idemsim.cli.app import app\n"
                "try:\n    app(['run', 'lost-response'])\nexcept SystemExit:\n    pass\n"
                "print(sorted(m for m in sys.modules if m.split('.')[0] == 'hypothesis' "
                "or m in ('idemsim.runners.explore', 'idemsim.runners.strategies', 'tomli_w')))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             cwd=tmp_path).stdout
        assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
class TestDocs:
    def test_every_command_of_docs_explore_exits_as_documented(self, tmp_path, monkeypatch):
        """Each `idemsim explore` line of docs/explore.md's first example exits with the code its comment says."""
        import re
        import shlex

        doc = (Path(__file__).resolve().parent.parent / "docs" / "explore.md").read_text(encoding="utf-8")
        block = re.search(r"```sh\n(.*?)\n```", doc, re.S).group(1)
        lines = re.findall(r"^idemsim (explore .*?)\s+# exit (\d)", block, re.M)
        assert len(lines) == 4
        monkeypatch.chdir(tmp_path)
        for command, code in lines:
            result = runner.invoke(app, shlex.split(command))
            assert result.exit_code == int(code), command


def test_set_none_keeps_a_word_of_the_field(cli):
    """`explore --set client.key_strategy=none` runs a client without keys rather than failing validation."""
    result = cli("explore", "same-tx", "--set", "client.key_strategy=none", "--max-examples", "5")
    assert result.exit_code == 0 and "error:" not in result.stderr
