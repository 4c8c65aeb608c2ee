"""Scenario files: a user's own file, `--set`, validation errors, and the format's documentation.

`docs/scenarios.md` is executed here: its worked example must run and hold, its `--set` claim must hold, and
each of its bad files must give exactly the one-line error it shows.
"""

import json
import re
from pathlib import Path

import pytest

from idemsim.model.api import ApiConfig
from idemsim.model.client import ClientConfig, Operation, RetryBudget
from idemsim.model.network import Latency, Link
from idemsim.model.processor import ProcessorConfig
from idemsim.scenario.schema import Arrivals, Expectation, Scenario, SweepConfig, load

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"
BAD = re.findall(r"<!-- bad -->\n```toml\n(.*?)```\n```text\n(.*?)\n```", DOC.read_text(encoding="utf-8"), re.S)
EXAMPLE = re.search(r"<!-- example -->\n```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)


def write(tmp_path, text, name="mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


class TestUserFiles:
    def test_a_users_file_runs_like_a_built_in_one(self, cli, tmp_path):
        """`idemsim run path/to/mine.toml` runs the file's story, judged by its own expectation."""
        path = write(tmp_path, 'title = "mine"\nsummary = "one lost response"\n'
                               '[[faults]]\nkind = "lose"\nmessage = "response"\n'
                               '[expect.same-tx]\ncharges = 1\nseen = ["timeout", 201]\n')
        result = cli("run", path, "--format", "json")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert (doc["scenario"], doc["summary"]["charges"], doc["summary"]["verdict"]) == ("mine", 1, "held")

    def test_a_users_file_can_be_shown_and_compared(self, cli, tmp_path):
        """`show` and `compare` accept a file as well as a name."""
        path = write(tmp_path, 'title = "mine"\nsummary = "nothing goes wrong"\n')
        assert "mine" in cli("show", path).stdout
        rows = json.loads(cli("compare", path, "--format", "json").stdout)["rows"]
        assert [(r["design"], r["charges"]) for r in rows][:2] == [("naive", 1), ("check-then-insert", 1)]


class TestSet:
    def test_set_overrides_a_field_of_a_built_in_scenario(self, cli):
        """--set client.max_attempts=1 makes the client give up: one charge it does not know about, exit 1."""
        result = cli("run", "lost-response", "--variant", "gateway-504", "--set", "client.max_attempts=1",
                     "--format", "json")
        summary = json.loads(result.stdout)["summary"]
        assert (summary["charges"], summary["outcome"], summary["status"]) == (1, "info", 504)
        assert result.exit_code == 1
        assert "seen: expected [504, 201], got [504]" in summary["failures"]

    def test_set_is_repeatable_and_reads_toml_values(self, cli):
        """Several --set apply together; a TOML value may be a string, a number or a table."""
        result = cli("run", "same-tx-wait", "--variant", "repeatable-read", "--set", "api.isolation='serializable'",
                     "--set", "api.charge_seconds=3", "--format", "json")
        summary = json.loads(result.stdout)["summary"]
        assert summary["wait_seconds"] == 2.0
        assert summary["operations"][1]["seen"] == [503, 201]

    def test_set_reaches_a_variant(self, cli):
        """--set variants.NAME.field changes that variant only."""
        result = cli("run", "lost-response", "--set", "variants.gateway-504.api.gateway_timeout=5",
                     "--format", "json")
        doc = json.loads(result.stdout)
        assert doc["summary"]["verdict"] == "held"
        assert doc["variants"][0]["summary"]["operations"][0]["seen"] == [201]

    def test_set_applies_to_a_users_file(self, cli, tmp_path):
        """--set overrides a user's file just as a built-in one."""
        path = write(tmp_path, 'title = "mine"\nsummary = "s"\n')
        doc = json.loads(cli("run", path, "--set", "operations=[{body={amount=7}}]", "--design", "naive",
                             "--format", "json").stdout)
        assert doc["trace"][0]["data"]["body"] == {"amount": 7}

    def test_a_bad_set_value_is_reported_like_a_bad_file(self, cli, one_line):
        """A --set value out of range is one line naming the --set and the field, exit 2."""
        line = one_line(cli("run", "lost-response", "--set", "network.request.loss=1.5"))
        assert line == ("error: scenario 'lost-response', --set 'network.request.loss=1.5': field "
                        "'network.request.loss': Input should be less than or equal to 1 (got 1.5)")


class TestOptions:
    def test_an_operations_retry_names_only_what_differs(self, tmp_path):
        """An operation's retry table overrides the fields it names and takes the rest from [client]."""
        path = write(tmp_path, 'title = "t"\nsummary = "s"\n[client]\ntimeout = 7.0\nbackoff = 3.0\n'
                               '[[operations]]\nretry = { backoff = 1.0 }\n')
        retry = load(str(path)).operations[0].retry
        assert (retry.timeout, retry.backoff) == (7.0, 1.0)

    def test_ttl_forever_keeps_every_record(self, tmp_path):
        """ttl = "forever" means no retention limit: no reaper runs."""
        path = write(tmp_path, 'title = "t"\nsummary = "s"\n[api]\nttl = "forever"\n')
        assert load(str(path)).api.ttl is None


class TestSetNone:
    def test_none_unsets_a_field_that_may_be_unset(self):
        """--set api.gateway_timeout=none removes the gateway."""
        assert load("lost-response", ["api.gateway_timeout=2", "api.gateway_timeout=none"]).api.gateway_timeout is None

    def test_none_keeps_its_meaning_where_it_is_an_allowed_word(self):
        """--set client.key_strategy=none means "send no key", not "no value"."""
        assert load("lost-response", ["client.key_strategy=none"]).client.key_strategy == "none"


class TestValidationErrors:
    @pytest.mark.parametrize("text,field", [
        ('[client]\ntimout = 1.0\n', "unknown field 'client.timout'"),
        ('[api]\nfingerprint_check = "maybe"\n', "field 'api.fingerprint_check'"),
        ('[network.response]\nloss = 1.5\n', "field 'network.response.loss'"),
        ('[[operations]]\nat = -1.0\n', "field 'operations.0.at'"),
        ('[api]\ncharge_seconds = -0.5\n', "field 'api.charge_seconds'"),
        ('design = "magic"\n', "field 'design'"),
        ('compare = ["naive", "magic"]\n', "field 'compare.1'"),
        ('[expect.magic]\ncharges = 1\n', "field 'expect.magic'"),
        ('[expect.same-tx]\ncharge = 1\n', "unknown field 'expect.same-tx.charge'"),
        ('[[faults]]\nkind = "explode"\n', "field 'faults.0'"),
        ('[variants.v]\nclient = { timout = 1.0 }\n', "unknown field 'client.timout'"),
        ('[[operations]]\nretry = { timout = 1.0 }\n', "unknown field 'operations.0.retry.timout'"),
        ('[[operations]]\nretry = { max_attempts = 0 }\n', "field 'operations.0.retry.max_attempts'"),
        ('[api]\nttl = "never"\n', "field 'api.ttl'"),
    ])
    def test_each_problem_is_one_line_naming_file_and_field(self, cli, tmp_path, text, field, one_line):
        """A bad field gives one line on stderr with the file and the field, and exit 2."""
        path = write(tmp_path, 'title = "t"\nsummary = "s"\n' + text)
        line = one_line(cli("run", path))
        assert line.startswith(f"error: {path}")
        assert field in line

    def test_an_unknown_design_says_what_is_allowed(self, cli, tmp_path, one_line):
        """An unknown design in a file lists the five designs."""
        line = one_line(cli("run", write(tmp_path, 'title = "t"\nsummary = "s"\ndesign = "magic"\n')))
        assert ("unknown design; valid designs: naive, check-then-insert, same-tx, committed-first, split-tx, "
                "recovery-points") in line

    def test_a_missing_title_is_named(self, cli, tmp_path, one_line):
        """A file without its required title says so."""
        assert one_line(cli("run", write(tmp_path, 'summary = "s"\n'))).endswith("field 'title' is required")

    @pytest.mark.parametrize("command", ["show", "compare"])
    def test_show_and_compare_report_bad_files_the_same_way(self, cli, tmp_path, command, one_line):
        """`show` and `compare` give the same one-line error, exit 2."""
        path = write(tmp_path, 'title = "t"\nsummary = "s"\n[network.response]\nloss = 1.5\n')
        assert "field 'network.response.loss'" in one_line(cli(command, path))


class TestDocumentation:
    def test_every_field_of_the_format_is_documented(self):
        """Each field of each section's model appears, in backquotes, in docs/scenarios.md."""
        doc = DOC.read_text(encoding="utf-8")
        models = [Scenario, ClientConfig, Operation, ApiConfig, Expectation, ProcessorConfig, Arrivals, SweepConfig]
        fields = {f for m in models for f in m.model_fields} - {"variant", "variants", "expect", "client",
                                                                "operations", "network", "api", "faults",
                                                                "processor", "arrivals", "sweep"}
        fields |= {f for f in RetryBudget.model_fields}
        fields |= {"loss"} | {f"latency.{f}" for f in Latency.model_fields}
        assert set(Link.model_fields) == {"loss", "latency"}
        assert sorted(f for f in fields if f"`{f}`" not in doc) == []

    def test_the_bad_files_give_exactly_the_errors_shown(self, cli, tmp_path, monkeypatch, one_line):
        """Every bad file in the documentation gives exactly the one-line error printed below it."""
        assert len(BAD) == 6
        monkeypatch.chdir(tmp_path)
        for text, expected in BAD:
            write(tmp_path, text)
            assert one_line(cli("run", "mine.toml")) == expected

    def test_the_worked_example_runs_and_holds(self, cli, tmp_path):
        """The documentation's example runs: both stories hold, exit 0."""
        path = write(tmp_path, EXAMPLE, "double-click.toml")
        result = cli("run", path, "--format", "json")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert [doc["summary"]["verdict"]] + [v["summary"]["verdict"] for v in doc["variants"]] == ["held"] * 2

    def test_the_worked_example_compares_as_described(self, cli, tmp_path):
        """Its comparison shows same-tx waiting 2.5 s and committed-first answering 409."""
        path = write(tmp_path, EXAMPLE, "double-click.toml")
        rows = {r["design"]: r for r in json.loads(cli("compare", path, "--format", "json").stdout)["rows"]}
        assert rows["same-tx"]["wait_seconds"] == 2.5
        assert rows["committed-first"]["seen"][1][0] == 409

    def test_the_documented_set_makes_the_example_fail(self, cli, tmp_path):
        """With a fast processor the copy finds the first done, so the example's expectation fails: exit 1."""
        path = write(tmp_path, EXAMPLE, "double-click.toml")
        assert cli("run", path, "--set", "api.charge_seconds=0.1").exit_code == 1

    def test_the_example_loads_as_a_scenario(self, tmp_path):
        """The example is a valid scenario with one variant."""
        assert list(load(str(write(tmp_path, EXAMPLE, "double-click.toml"))).variants) == ["impatient"]
