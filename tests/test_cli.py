"""The command line, in-process with CliRunner and once as a real subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class TestRun:
    def test_lost_response_shows_one_charge_and_an_identical_replay(self, cli):
        """`idemsim run lost-response` shows 1 charge, the replayed 201 and a held verdict."""
        result = cli("run", "lost-response", "--variant", "gateway-504")
        assert result.exit_code == 0, result.output
        assert "charges recorded   1" in result.stdout
        assert "replayed response  identical to the first" in result.stdout
        assert "504 Gateway Timeout" in result.stdout
        assert ("idemsim run lost-response --design same-tx --seed 1 --variant gateway-504" in
                result.stdout.replace(" \\\n    ", " "))

    def test_every_run_prints_its_seed(self, cli):
        """The summary names the seed, and --seed changes it."""
        result = cli("run", "lost-response", "--seed", "42")
        assert "seed               42" in result.stdout

    def test_naive_double_charge_shows_two_charges(self, cli):
        """`idemsim run naive-double-charge` records 2 charges, as expected: exit 0."""
        result = cli("run", "naive-double-charge")
        assert result.exit_code == 0
        assert "charges recorded  2" in result.stdout

    def test_json_has_version_seed_trace_and_summary(self, cli):
        """--format json prints version, seed, trace and a summary with charges, outcome, status, verdict."""
        result = cli("run", "lost-response", "--format", "json")
        doc = json.loads(result.stdout)
        assert doc["version"] == 1 and doc["seed"] == 1 and doc["design"] == "same-tx"
        assert {k: doc["summary"][k] for k in ("charges", "outcome", "status", "verdict", "replay_identical")} == \
            {"charges": 1, "outcome": "ok", "status": 201, "verdict": "held", "replay_identical": True}
        assert doc["trace"][0] == {"t": 0.0, "actor": "client", "target": None, "kind": "op.start",
                                   "data": {"op": 1, "method": "POST", "path": "/charges", "body": {"amount": 1000}}}
        assert [v["variant"] for v in doc["variants"]] == ["gateway-504"]
        assert doc["variants"][0]["summary"]["status"] == 201

    def test_a_design_without_expectation_reports_no_expectation(self, cli):
        """Running under a design the file states nothing for reports the outcome; it exits 0 only while no
        property breaks (the missing-key-processed variant charges twice under committed-first: exit 1)."""
        result = cli("run", "naive-double-charge", "--design", "committed-first", "--format", "json")
        doc = json.loads(result.stdout)
        assert (result.exit_code, doc["summary"]["verdict"], doc["summary"]["design_verdict"],
                doc["variants"][0]["summary"]["design_verdict"]) == (1, "no expectation", "holds", "broken")

    def test_a_failed_expectation_exits_1(self, cli, tmp_path):
        """A scenario whose expectation does not hold exits 1 and says what differed."""
        text = (ROOT / "scenarios" / "lost-response.toml").read_text(encoding="utf-8")
        mine = tmp_path / "mine.toml"
        mine.write_text(text.replace("[expect.same-tx]\ncharges = 1", "[expect.same-tx]\ncharges = 2"),
                        encoding="utf-8")
        result = cli("run", str(mine), "--variant", "gateway-504",
                     "--set", "variants.gateway-504.expect.same-tx.charges=2")
        assert result.exit_code == 1
        result = cli("run", str(mine))
        assert result.exit_code == 1
        assert "charges: expected 2, got 1" in result.stdout

    def test_a_fault_that_never_happens_makes_the_run_vacuous(self, cli):
        """Losing the response of an attempt that never happens proves nothing: exit 1."""
        result = cli("run", "lost-response", "--variant", "gateway-504", "--set", "faults=[{kind='lose', "
                     "message='response', attempt=3}]", "--format", "json")
        assert result.exit_code == 1
        assert json.loads(result.stdout)["summary"]["verdict"] == "vacuous"


class TestBadInput:
    def test_unknown_scenario_lists_the_valid_names(self, cli, one_line):
        """An unknown scenario is one line naming the valid ones, exit 2."""
        result = cli("run", "no-such-thing")
        assert result.exit_code == 2
        line = one_line(result)
        assert line.startswith("error: unknown scenario 'no-such-thing'; valid names: ")
        assert "lost-response" in line

    def test_unknown_design_lists_the_valid_designs(self, cli, one_line):
        """An unknown design is one line naming the six designs, exit 2."""
        result = cli("run", "lost-response", "--design", "magic")
        assert result.exit_code == 2
        assert one_line(result) == ("error: unknown design 'magic'; valid designs: naive, check-then-insert, "
                                    "same-tx, committed-first, split-tx, recovery-points (or path/to/file.py:function)")

    def test_missing_file_is_one_line(self, cli, tmp_path, one_line):
        """A path to a file that does not exist is one line, exit 2."""
        result = cli("run", str(tmp_path / "nope.toml"))
        assert result.exit_code == 2
        assert one_line(result) == f"error: {tmp_path / 'nope.toml'}: no such scenario file"

    def test_bad_field_names_file_and_field(self, cli, tmp_path, one_line):
        """A probability of 1.5 is refused with the file, the field and the bound."""
        bad = tmp_path / "bad.toml"
        bad.write_text('title = "t"\nsummary = "s"\n[network.request]\nloss = 1.5\n', encoding="utf-8")
        result = cli("run", str(bad))
        assert result.exit_code == 2
        assert one_line(result) == (f"error: {bad}: field 'network.request.loss': Input should be less than "
                                      f"or equal to 1 (got 1.5)")

    def test_unknown_field_lists_the_allowed_ones(self, cli, tmp_path, one_line):
        """A misspelt field is named, with the fields allowed there."""
        bad = tmp_path / "bad.toml"
        bad.write_text('title = "t"\nsummary = "s"\n[client]\ntimout = 1\n', encoding="utf-8")
        line = one_line(cli("run", str(bad)))
        assert line.startswith(f"error: {bad}: unknown field 'client.timout'; allowed: timeout, max_attempts")

    def test_not_toml_is_one_line(self, cli, tmp_path, one_line):
        """A file that is not TOML is one line naming the file."""
        bad = tmp_path / "bad.toml"
        bad.write_text("title = \n", encoding="utf-8")
        assert one_line(cli("run", str(bad))).startswith(f"error: {bad}: not valid TOML")

    def test_bad_set_is_one_line(self, cli, one_line):
        """A --set without '=' is one line, exit 2."""
        result = cli("run", "lost-response", "--set", "client.timeout")
        assert result.exit_code == 2
        assert one_line(result) == "error: --set 'client.timeout': expected section.field=value"


def test_version(cli):
    """--version prints the package version."""
    from idemsim import __version__

    assert cli("--version").stdout.strip() == f"idemsim {__version__}"


@pytest.mark.slow
def test_the_installed_command_runs_from_another_directory(tmp_path):
    """The console script finds the built-in scenarios from any working directory."""
    exe = Path(sys.executable).with_name("idemsim")
    command = [str(exe)] if exe.exists() else [sys.executable, "-c", "from idemsim.cli.app import main; main()"]
    done = subprocess.run([*command, "run", "lost-response", "--format", "json"], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "120"}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["charges"] == 1


@pytest.mark.slow
def test_run_imports_neither_matplotlib_hypothesis_nor_psycopg():
    """`idemsim run` starts without the heavy libraries."""
    code = ("import sys\nfrom idemsim.cli.app import main\nsys.argv = ['idemsim', 'run', 'lost-response']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('matplotlib', 'hypothesis', 'psycopg') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"
