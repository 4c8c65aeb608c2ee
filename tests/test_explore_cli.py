"""The ``idemsim explore`` command: verdicts, exit codes, the saved counterexample and its replay."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
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
        assert f"saved: {tmp_path / 'cx.toml'}, a scenario" in " ".join(result.stdout.split())
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
        """`idemsim run FILE` on the saved counterexample gives the same trace, reproduces what the file states
        (the broken properties included) and exits 0, with the design's verdict broken."""
        path = tmp_path / "cx.toml"
        found = as_json(explore("naive", "--save", str(path), "--format", "json"))
        replay = runner.invoke(app, ["run", str(path), "--format", "json"])
        assert replay.exit_code == 0, replay.output
        doc = json.loads(replay.stdout)
        assert doc["trace"] == found["counterexample"]["trace"]
        assert doc["summary"]["charges"] == 2
        assert doc["summary"]["verdict"] == "held"
        assert (doc["summary"]["story_check"], doc["summary"]["design_verdict"]) == ("reproduces", "broken")

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
        """With the processor's key, a last attempt that dies after the capture leaves money unrecorded, and the
        client, its attempts spent, cannot find out that it paid."""
        result = explore("same-tx", "--set", "api.processor_key=request-key", "--format", "json")
        assert result.exit_code == 1, result.output
        assert {v["property"] for v in as_json(result)["counterexample"]["violations"]} == {
            "ledger-agrees", "customer-can-find-out"}


def idemsim_shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """``command``, a line idemsim printed (continued lines and all), run by bash as a user would paste it, with
    this environment's ``idemsim`` first on the PATH, 100 columns wide."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "PATH": path, "COLUMNS": "100"})


def reproduce_line(out: str) -> str:
    """The command after ``reproduce:``, with its continuation lines, as printed."""
    lines = out[out.index("\nreproduce: ") + len("\nreproduce: "):].split("\n")
    end = next(i for i, line in enumerate(lines) if not line.endswith(" \\"))
    return "\n".join(lines[:end + 1])


def broken_rows(out: str) -> list[str]:
    """The summary's ``property broken`` rows, each with its continuation lines."""
    rows, inside = [], False
    for line in out.split("\n"):
        if line.startswith("property broken"):
            rows.append(line.rstrip())
            inside = True
        elif inside and line.startswith(" "):
            rows[-1] += "\n" + line.rstrip()
        else:
            inside = False
    return rows


def words(command: str) -> list[str]:
    """A printed command's words, as the shell reads it (continued lines joined)."""
    return shlex.split(command.replace("\\\n", " "))


SAME_TX_REPRODUCE = (
    "idemsim run lost-response --design same-tx --seed 1 --set name=explore-same-tx --set "
    "'faults=[{op = 1, attempt = 1, kind = \"lose\", message = \"processor_response\"}]' "
    "--set client.retry_window=60.0 --set 'variants={}' --set 'expect={}'")


@pytest.mark.slow
class TestReproduce:
    """The ``reproduce:`` line runs as printed, with or without --save, and shows the same counterexample."""

    def test_without_save_the_line_runs_as_printed_and_shows_the_same_run(self, tmp_path):
        """`explore same-tx` prints an `idemsim run` of a shipped story with --sets; pasted into a shell it prints
        the very timeline and summary explore printed (the same broken properties) and exits 1, as explore did."""
        found = idemsim_shell("idemsim explore same-tx", tmp_path)
        assert found.returncode == 1, found.stderr
        assert words(reproduce_line(found.stdout)) == shlex.split(SAME_TX_REPRODUCE)
        again = idemsim_shell(reproduce_line(found.stdout), tmp_path)
        assert again.returncode == 1, again.stderr
        assert broken_rows(again.stdout) == broken_rows(found.stdout) == [
            "property broken    at-most-one-capture: operation 1's card was captured 2 times (cap_1 by 1.1 at\n"
            "                   0.250 s, cap_2 by 1.2 at 5.250 s)",
            "property broken    exactly-one-on-success: operation 1 ended ok but has 1 charge row and 2 captures",
            "property broken    ledger-agrees: capture cap_1 of operation 1 (by 1.1 at 0.250 s) has no charge\n"
            "                   row: the customer paid and the API has no record"]
        head, shown, tail = found.stdout.partition("\n" + again.stdout)
        assert shown and head.endswith("paid and the API has no record\n")
        assert " ".join(tail.split()) == ("not saved: add --save FILE to keep it as a scenario that `idemsim run "
                                          "FILE` replays (counterexample-same-tx-1.toml, say)")
        assert list(tmp_path.iterdir()) == []

    def test_with_save_the_same_line_runs_and_the_file_replays_it(self, tmp_path):
        """With --save the reproduce line is the same and exits 1 with the same broken properties; the file
        replays the run, and `idemsim run FILE` exits 0: it reproduces what the file states, breaks included."""
        found = idemsim_shell("idemsim explore same-tx --save cx.toml", tmp_path)
        assert found.returncode == 1, found.stderr
        assert words(reproduce_line(found.stdout)) == shlex.split(SAME_TX_REPRODUCE)
        again = idemsim_shell(reproduce_line(found.stdout), tmp_path)
        assert again.returncode == 1, again.stderr
        assert broken_rows(again.stdout) == broken_rows(found.stdout) != []
        assert " ".join(found.stdout.split("\n\n")[-1].split()) == (
            "saved: cx.toml, a scenario that states what this counterexample shows and the properties it "
            "breaks; `idemsim run cx.toml` replays it, exiting 0 as long as the run still shows them")
        replay = idemsim_shell("idemsim run cx.toml", tmp_path)
        assert replay.returncode == 0, replay.stdout
        assert broken_rows(replay.stdout) == broken_rows(found.stdout)

    def test_the_saved_file_states_every_figure_and_the_broken_properties(self, tmp_path):
        """The saved expectation states the charges and the captures, what the client saw, the keys left in
        progress, the replay, and the broken properties as `breaks`; its header gives both commands."""
        path = tmp_path / "cx.toml"
        assert explore("same-tx", "--save", str(path)).exit_code == 1
        text = path.read_text(encoding="utf-8")
        assert tomllib.loads(text)["expect"] == {"same-tx": {
            "charges": 1, "captures": 2, "seen": ["timeout", "timeout", 201], "outcomes": ["ok"],
            "keys_in_progress": 0, "replay_identical": True,
            "breaks": ["at-most-one-capture", "exactly-one-on-success", "ledger-agrees"]}}
        assert text.startswith(
            "# A counterexample found by: idemsim explore same-tx --seed 1 --max-examples 200 --max-faults 5\n"
            f"# Replay it with: idemsim run {path}\n"
            "# (exit 0 while it reproduces what [expect.same-tx] states, breaks included)\n"
            "# Or, with no file: " + SAME_TX_REPRODUCE + "\n\n")

    def test_a_keyless_counterexample_sets_the_operation_and_the_client(self, tmp_path):
        """naive's line replaces the story's keyed operation and client; run as printed, it prints what explore
        printed of the run."""
        found = explore("naive")
        command = reproduce_line(found.stdout)
        assert words(command) == [
            "idemsim", "run", "lost-response", "--design", "naive", "--seed", "1", "--set", "name=explore-naive",
            "--set", 'faults=[{op = 1, attempt = 1, kind = "lose", message = "response"}]',
            "--set", 'operations=[{at = 0.0, method = "POST", path = "/charges", body = {amount = 1000}, '
                     'client = "client"}]',
            "--set", "client.retry_window=60.0", "--set", "client.key_strategy=none",
            "--set", "variants={}", "--set", "expect={}"]
        again = runner.invoke(app, words(command)[1:])
        assert again.exit_code == 1
        assert again.stdout in found.stdout and broken_rows(again.stdout) != []

    def test_the_exhaustive_mode_with_a_processor_setting_saves_and_reproduces_it(self, tmp_path):
        """`--set processor.key_ttl=5` reaches the reproduce line and the saved file's [processor] table (the
        replay of a file without it would differ), and both give the counterexample again."""
        path = tmp_path / "cx.toml"
        doc = as_json(explore("recovery-points", "--exhaustive", "--max-faults", "1", "--set", "processor.key_ttl=5",
                              "--save", str(path), "--format", "json"))
        cx = doc["counterexample"]
        assert cx["reproduce"] == (
            "idemsim run lost-response --design recovery-points --seed 1 --set name=explore-recovery-points --set "
            "'faults=[{op = 1, attempt = 1, kind = \"lose\", message = \"processor_response\"}]' --set "
            "client.retry_window=60.0 --set processor.key_ttl=5.0 --set 'variants={}' --set 'expect={}'")
        assert tomllib.loads(path.read_text(encoding="utf-8"))["processor"] == {"latency": 0.0, "key_ttl": 5.0}
        again = runner.invoke(app, shlex.split(cx["reproduce"])[1:] + ["--format", "json"])
        assert again.exit_code == 1
        assert json.loads(again.stdout)["trace"] == cx["trace"]

    def test_a_longer_max_time_reaches_the_command_and_the_saved_file(self, tmp_path):
        """With --max-time 1e8 and a retention of 5e7 s, explore saves the file (no traceback) and prints a
        command that carries --max-time, which runs and exits 1."""
        path = tmp_path / "cx.toml"
        doc = as_json(explore("same-tx", "--exhaustive", "--max-faults", "1", "--max-time", "1e8",
                              "--set", "api.ttl=5e7", "--save", str(path), "--format", "json"))
        command = words(doc["counterexample"]["reproduce"])
        assert command[-2:] == ["--max-time", "100000000.0"] and "api.ttl=50000000.0" in command
        assert runner.invoke(app, command[1:]).exit_code == 1
        assert runner.invoke(app, ["run", str(path), "--max-time", "1e8"]).exit_code == 0


class TestReproduceCommand:
    """`explore.reproduce_sets` and `toml_inline`: the --sets that make the shipped story the counterexample's run."""

    def test_only_the_faults_and_what_differs_are_set(self):
        """The faults always; of the configuration only the fields that differ from lost-response's."""
        from idemsim.model.faults import Crash
        from idemsim.runners import explore as ex

        scenario = ex.base_scenario("committed-first", ["network.response.latency.seconds=0.3"]).model_copy(
            update={"faults": [Crash(attempt=2, point="after_key", restart_after=1.0)]})
        assert ex.reproduce_sets(scenario) == [
            "name=explore-committed-first",
            'faults=[{op = 1, attempt = 2, kind = "crash", point = "after_key", restart_after = 1.0}]',
            "client.retry_window=60.0", "network.response.latency.seconds=0.3", "api.lease=10.0",
            "variants={}", "expect={}"]

    def test_toml_inline_writes_one_line_that_toml_reads_back(self):
        """Nested tables and arrays, quotes, non-ASCII and a DEL character: one line, read back the same."""
        from idemsim.runners.explore import toml_inline

        value = [{"a b": 'say "hi"\x7f', "n": 1, "x": 0.5, "ok": True, "none": None, "t": {"k": ["é", 2]}}]
        line = toml_inline(value)
        assert "\n" not in line
        assert tomllib.loads(f"v = {line}")["v"] == [{"a b": 'say "hi"\x7f', "n": 1, "x": 0.5, "ok": True,
                                                      "t": {"k": ["é", 2]}}]


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
