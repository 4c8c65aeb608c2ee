"""`idemsim compare`: one story's faults under every design, as plain rows, a table and JSON."""

import json
import re

import pytest

from idemsim.model.designs import DESIGNS
from idemsim.runners.compare import compare, option_differences
from idemsim.scenario.schema import builtin_names, load, runs


def by_label(comparison):
    return {row["label"]: row for row in comparison.rows}


class TestCompareLostResponse:
    def test_naive_charges_twice_and_every_keyed_design_once(self):
        """The lost response gives 2 charges under naive and 1 under every keyed design."""
        rows = by_label(compare(load("lost-response")))
        assert {label: row["charges"] for label, row in rows.items()} == {
            "naive": 2, "check-then-insert": 1, "same-tx": 1, "committed-first": 1, "split-tx": 1,
            "recovery-points": 1}

    def test_every_row_is_judged_by_the_scenarios_expectation(self):
        """Every design has an expectation in lost-response, and every row holds."""
        assert [row["verdict"] for row in compare(load("lost-response")).rows] == ["held"] * 6

    def test_the_meaning_says_which_designs_are_broken(self):
        """A held verdict of a broken design reads "reproduces …"; the correct designs read "correct"."""
        rows = by_label(compare(load("lost-response")))
        assert rows["naive"]["meaning"] == "reproduces the double charge, the double capture"
        assert {row["meaning"] for label, row in rows.items() if label != "naive"} == {"correct"}

    def test_rows_count_the_money_and_name_what_broke(self):
        """Each row carries the captures and the violated properties beside the charges."""
        rows = by_label(compare(load("crash-after-processor")))
        assert (rows["same-tx"]["charges"], rows["same-tx"]["captures"]) == (1, 2)
        assert {v["property"] for v in rows["same-tx"]["violations"]} == {
            "at-most-one-capture", "exactly-one-on-success", "ledger-agrees"}
        assert (rows["same-tx (processor_key=request-key)"]["captures"], rows["recovery-points"]["captures"]) == (1, 1)

    def test_the_rows_follow_the_designs_order_and_share_one_seed(self):
        """Rows come in the order of DESIGNS, all with the seed the comparison reports."""
        comparison = compare(load("lost-response"), seed=9)
        assert [row["design"] for row in comparison.rows] == list(DESIGNS)
        assert comparison.seed == 9

    def test_the_gateway_variant_shows_the_designs_apart(self):
        """Under the 504 variant: naive charges 3 times, check-then-insert twice, committed-first sees a 409."""
        rows = by_label(compare(load("lost-response"), "gateway-504"))
        assert (rows["naive"]["charges"], rows["naive"]["outcome"]) == (3, "info")
        assert rows["check-then-insert"]["charges"] == 2
        assert rows["committed-first"]["seen"] == [[504, 409, 201]]
        assert rows["same-tx"]["wait_seconds"] == pytest.approx(0.4)


class TestOptionSets:
    def test_a_lease_variant_adds_committed_first_with_the_lease(self):
        """crash-in-progress compares committed-first without and with its lease, judged by each story."""
        rows = by_label(compare(load("crash-in-progress")))
        assert rows["committed-first"]["charges"] == 0
        assert rows["committed-first (lease=5)"]["charges"] == 1
        assert rows["committed-first (lease=5)"]["story"] == "lease-recovery"
        assert "same-tx (lease=5)" not in rows

    def test_a_fingerprint_variant_adds_the_check_off(self):
        """key-reuse compares the fingerprint check on and off for the designs the variant judges."""
        rows = by_label(compare(load("key-reuse")))
        assert rows["same-tx"]["seen"] == [[201], [422]]
        assert rows["same-tx (fingerprint_check=off)"]["seen"] == [[201], [201]]

    def test_a_variant_with_other_faults_is_not_an_option_set(self):
        """A variant that changes the faults is another story, not an option of this one."""
        base, gateway = runs(load("lost-response"))
        assert option_differences(base, gateway) is None

    def test_a_variant_that_changes_only_options_is_one(self):
        """A variant that changes only API options is an option set, named by what it changes."""
        base, lease, expiry = runs(load("crash-in-progress"))
        assert option_differences(base, lease) == {"lease": 5.0}
        assert option_differences(base, expiry) == {"ttl": 6.0, "reap_every": 1.0}

    @pytest.mark.parametrize("name", builtin_names())
    def test_no_built_in_comparison_fails(self, name):
        """Comparing any built-in scenario's main story gives no failed or vacuous row."""
        comparison = compare(load(name))
        assert comparison.exit_code == 0, [(r["label"], r["verdict"], r["failures"]) for r in comparison.rows]


class TestCommand:
    def test_json_has_version_and_rows_with_design_and_charges(self, cli):
        """--format json prints version 1 and one row per design with at least design and charges."""
        result = cli("compare", "lost-response", "--format", "json")
        assert result.exit_code == 0
        doc = json.loads(result.stdout)
        assert doc["version"] == 1 and doc["scenario"] == "lost-response" and doc["variant"] is None
        assert [(row["design"], row["charges"]) for row in doc["rows"]] == [
            ("naive", 2), ("check-then-insert", 1), ("same-tx", 1), ("committed-first", 1), ("split-tx", 1),
            ("recovery-points", 1)]
        assert {"outcome", "seen", "wait_seconds", "replay_identical", "verdict", "options", "captures",
                "violations", "meaning"} <= set(doc["rows"][0])

    def test_the_table_shows_every_design(self, cli):
        """The text table has a row per design, with charges, the design's verdict and the story's check."""
        result = cli("compare", "lost-response")
        assert result.exit_code == 0
        for design in DESIGNS:
            assert design in result.stdout
        assert "charges" in result.stdout and "reproduces the article" in result.stdout

    def test_set_reaches_every_row(self, cli):
        """--set changes the story for every design: with no retry, no design charges twice."""
        result = cli("compare", "lost-response", "--set", "client.max_attempts=1", "--format", "json")
        doc = json.loads(result.stdout)
        assert {row["charges"] for row in doc["rows"]} == {1}
        assert result.exit_code == 1  # the expectations (a replayed 201) no longer hold

    def test_an_unknown_variant_is_one_line_and_exit_2(self, cli):
        """An unknown --variant names the valid ones, exit 2."""
        result = cli("compare", "lost-response", "--variant", "nope")
        assert result.exit_code == 2
        assert result.stderr.strip() == ("error: scenario 'lost-response' has no variant 'nope'; "
                                         "variants: gateway-504")


class TestShow:
    def test_show_tells_the_story_the_lesson_and_the_passage(self, cli):
        """`idemsim show` prints what happens, what it teaches, the article's passage and every variant."""
        result = cli("show", "same-tx-wait")
        assert result.exit_code == 0
        out = result.stdout
        for heading in ("What happens", "What it teaches", "From the article", "Expected",
                        "Variant rollback", "Variant repeatable-read"):
            assert heading in out
        assert "Time: 4009.185 ms" in out
        assert "wait_seconds=4.0" in out

    def test_show_of_an_unknown_scenario_is_exit_2(self, cli):
        """An unknown name is one line, exit 2."""
        result = cli("show", "no-such-thing")
        assert result.exit_code == 2
        assert result.stderr.startswith("error: unknown scenario 'no-such-thing'")


class TestWaitsAndReplays:
    """Each wait on the index, and each replayed answer, is shown on the client whose request it was."""

    def test_the_duplicate_that_waited_has_the_wait_and_the_replay(self):
        """same-tx-wait: client-dup's INSERT waited 4 s for the first's COMMIT and got the replay; client neither."""
        rows = by_label(compare(load("same-tx-wait")))
        for label in ("same-tx", "same-tx (isolation=repeatable read)"):
            row = rows[label]
            assert (row["clients"], row["waits"], row["replayed"], row["wait_seconds"]) == (
                ["client", "client-dup"], [0.0, 4.0], [0, 1], 4.0), label
        assert (rows["naive"]["waits"], rows["naive"]["replayed"]) == ([0.0, 0.0], [0, 0])

    def test_a_single_client_has_the_runs_wait(self):
        """lost-response's 504 variant: the one client waited 0.4 s under same-tx and got one replay."""
        row = by_label(compare(load("lost-response"), "gateway-504"))["same-tx"]
        assert (row["waits"], row["replayed"], row["wait_seconds"]) == ([0.4], [1], 0.4)

    @pytest.mark.parametrize("name", ["same-tx-wait", "simultaneous-first-attempts", "check-then-insert-race",
                                      "intended-duplicate", "key-reuse"])
    def test_the_longest_wait_of_the_clients_is_the_runs(self, name):
        """Every row has a wait per client, and their largest is the run's longest wait."""
        for row in compare(load(name)).rows:
            assert len(row["waits"]) == len(row["replayed"]) == len(row["clients"]), row["label"]
            assert max(row["waits"]) == row["wait_seconds"], row["label"]
            assert sum(row["replayed"]) == row["replays"], row["label"]

    def test_the_stacked_view_says_the_wait_on_the_duplicates_line(self, cli, monkeypatch):
        """Stacked (a narrow terminal), the same-tx row's lines end: client saw its 201; client (duplicate) saw its
        201, waited 4 s and got the identical replay (wrapped under its indent)."""
        monkeypatch.setenv("COLUMNS", "80")
        out = cli("compare", "same-tx-wait").stdout
        block = out[out.index("\nsame-tx  charges 1"):out.index("\nsame-tx (isolation")]
        assert block.split("\n")[-3:] == [
            "  client saw 201 → ok 201",
            "  client (duplicate) saw 201 → ok 201; waited 4.000 s on the index; replay",
            "  identical"]

    def test_the_table_puts_the_wait_on_the_duplicates_line(self, cli, monkeypatch):
        """In the table the wait column has a line per client: "—" beside client, 4.000 beside client (duplicate)."""
        monkeypatch.setenv("COLUMNS", "400")
        lines = cli("compare", "same-tx-wait").stdout.split("\n")
        first = next(i for i, line in enumerate(lines) if line.startswith(" same-tx "))
        assert re.search(r" client: 201 → ok 201 +— +yes ", lines[first])
        assert re.search(r"^ +client \(duplicate\): 201 → ok 201 +4\.000$", lines[first + 1])
