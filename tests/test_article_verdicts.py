"""The two verdicts of a run as the judge gives them (`idemsim.judge.summary`): the design's, judged on the ledgers,
and the story's check, held against what each shipped scenario file says the article shows (its ``breaks``
included); the two properties that judge what the article judges beyond the ledgers (`idemsim.judge.properties`);
and ``idemsim run``'s exit code. (How every view says the two verdicts: tests/test_verdicts.py.)
"""

from __future__ import annotations

import functools
import json

import pytest

from idemsim.judge.properties import (
    PROPERTIES,
    customer_can_find_out,
    intended_state,
    no_lost_update,
)
from idemsim.judge.run_summary import KEYS
from idemsim.judge.summary import exit_code
from idemsim.model.faults import Crash, LoseMessage
from idemsim.runners import explore
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import PROPERTY_IDS, builtin_dir, builtin_names, load, runs, validate


def stated_runs() -> list[tuple[str, str, str]]:
    """(scenario, variant or "-", design) for every expectation every shipped scenario file states."""
    out = []
    for name in builtin_names():
        for story in runs(load(name)):
            out.extend((name, story.variant or "-", design) for design in story.expect)
    return out


STATED = stated_runs()


@functools.cache
def story(name: str, variant: str):
    """The shipped story ``name`` as ``variant`` tells it ("-": the main story)."""
    return next(s for s in runs(load(name)) if (s.variant or "-") == variant)


def broken(run) -> list[str]:
    return [p for p in PROPERTIES if any(v["property"] == p for v in run.summary.violations)]


def run_with(design: str, *faults, sets: tuple[str, ...] = ()):
    """One run of the explore defaults of ``design`` with a scripted fault schedule."""
    scenario = explore.base_scenario(design, list(sets)).model_copy(update={"faults": list(faults)})
    return simulate(scenario, design, scenario.seed)


def run_of_operations(operations: list[dict], *faults: dict, sets: dict | None = None):
    """A naive run of hand-written ``operations`` (the balance starts at 500) with scripted ``faults``."""
    raw = explore.base_raw("naive")
    raw.update({"operations": operations, "faults": list(faults)})
    raw["client"] = {**raw.get("client", {}), "key_strategy": "none", **(sets or {})}
    return simulate(validate(raw, "test"), "naive")


class TestShippedStories:
    def test_every_expectation_states_its_breaks(self):
        """Every [expect.DESIGN] table of every shipped story and variant says which properties it breaks."""
        assert [(n, v, d) for n, v, d in STATED if story(n, v).expect[d].breaks is None] == []

    @pytest.mark.parametrize("name,variant,design", STATED, ids=["/".join(s) for s in STATED])
    def test_the_run_breaks_what_its_file_declares(self, name, variant, design):
        """The run's broken properties are the file's ``breaks``, its story reproduces, and it exits 0."""
        run = simulate(story(name, variant), design)
        s = run.summary
        assert (broken(run), s.story_check, s.expected_breaks, s.design_verdict, exit_code(s)) == (
            [p for p in PROPERTIES if p in story(name, variant).expect[design].breaks], "reproduces",
            broken(run), "broken" if broken(run) else "holds", 0)

    @pytest.mark.parametrize("name,variant,design", [s for s in STATED if s[1] != "-"],
                             ids=["/".join(s) for s in STATED if s[1] != "-"])
    def test_idemsim_run_of_a_variant_exits_0(self, cli, name, variant, design):
        """``idemsim run NAME --variant V --design D`` exits 0 for every expectation a variant states (a main
        story's, under another design than its own, is held by `exit_code` above: ``run`` runs every variant)."""
        result = cli("run", name, "--variant", variant, "--design", design, "--format", "json")
        assert result.exit_code == 0, result.output[-2000:]

    @pytest.mark.parametrize("name", builtin_names())
    def test_each_story_exits_0_under_its_own_designs(self, cli, name):
        """``idemsim run NAME`` (the story and every variant, each under its own design) exits 0."""
        result = cli("run", name, "--format", "json")
        assert result.exit_code == 0, result.output[-2000:]


class TestTheArticlesBreaks:
    def test_giving_up_after_a_lost_response_leaves_a_customer_who_cannot_find_out(self, cli):
        """The give-up branch: 1 charge, a client that gave up not knowing, and a broken design."""
        result = cli("run", "retry-or-give-up", "--variant", "give-up-after-lost-response", "--format", "json")
        s = json.loads(result.stdout)["summary"]
        assert (result.exit_code, s["charges"], s["outcome"], s["design_verdict"], s["story_check"],
                s["expected_breaks"], [v["property"] for v in s["violations"]]) == (
            0, 1, "info", "broken", "reproduces", ["customer-can-find-out"], ["customer-can-find-out"])

    def test_an_interleaved_write_is_lost(self, cli):
        """A late copy of "set to 400" undoes the teller's 700: the design breaks no-lost-update."""
        result = cli("run", "delta-vs-absolute", "--variant", "interleaved-write", "--format", "json")
        s = json.loads(result.stdout)["summary"]
        assert (result.exit_code, s["balance"], s["design_verdict"], s["story_check"], s["violations"]) == (
            0, 400, "broken", "reproduces",
            [{"property": "no-lost-update", "key": "viol.state_balance", "fields": {"got": 400, "expected": 700},
              "message": "the balance ends at 400, but each operation applied once, in the order of its first "
                         "attempt, gives 700"}])

    def test_a_story_says_what_it_reproduces(self):
        """``story_says``: the article's figures the run reproduces, in a short English sentence."""
        s = simulate(story("naive-double-charge", "-"), "naive").summary
        assert (s.story_check, s.story_says) == ("reproduces", "reproduces the article: 2 charges")


class TestCustomerCanFindOut:
    def test_a_payment_with_no_key_record_after_giving_up_breaks_it(self):
        """naive, the response lost, one attempt: the card is captured and nothing answers a retry."""
        run = run_with("naive", LoseMessage(message="response"), sets=("client.max_attempts=1",))
        assert [v.message for v in customer_can_find_out(run)] == [
            "operation 1 ended info with its card captured (cap_1 by 1.1 at 0.250 s), and no key record holds a "
            "final answer that a retry with its key would get: the customer paid and cannot find out"]

    def test_a_done_key_record_after_giving_up_keeps_it(self):
        """same-tx, the same give-up: the done record holds the 201 a retry with the key would get."""
        run = run_with("same-tx", LoseMessage(message="response"), sets=("client.max_attempts=1",))
        assert (run.operations[0].outcome, run.summary.captures, run.tables["idempotency_keys"][0]["status"],
                customer_can_find_out(run)) == ("info", 1, "done", [])

    def test_a_finished_completer_keeps_it(self):
        """recovery-points, a crash after the capture and no retry: the completer records the answer."""
        run = run_with("recovery-points", Crash(point="after_processor"), sets=("client.max_attempts=1",))
        assert (run.operations[0].outcome, run.summary.captures, run.tables["idempotency_keys"][0]["status"],
                customer_can_find_out(run)) == ("info", 1, "done", [])

    def test_without_the_completer_the_same_crash_breaks_it(self):
        """The same crash with the completer off: the key stays in progress, the customer cannot find out."""
        run = run_with("recovery-points", Crash(point="after_processor"),
                       sets=("client.max_attempts=1", "api.completer_every=off"))
        assert [v.property for v in customer_can_find_out(run)] == ["customer-can-find-out"]

    def test_nothing_captured_is_nothing_to_find_out(self):
        """A lost request and a client that gives up: unknown, but no money moved."""
        run = run_with("naive", LoseMessage(message="request"), sets=("client.max_attempts=1",))
        assert (run.operations[0].outcome, run.summary.captures, customer_can_find_out(run)) == ("info", 0, [])


class TestNoLostUpdate:
    SET_400 = {"method": "PUT", "path": "/balance", "body": {"value": 400}}
    TELLER_700 = {"method": "PUT", "path": "/balance", "body": {"value": 700}, "at": 1.0, "client": "teller"}
    LOST_FIRST_ANSWER = {"kind": "lose", "message": "response", "op": 1, "attempt": 1}

    def test_a_late_copy_of_an_old_write_breaks_it(self):
        """Set to 400, its answer lost; a teller sets 700; the retry puts 400 back: the 700 is lost."""
        run = run_of_operations([self.SET_400, self.TELLER_700], self.LOST_FIRST_ANSWER)
        assert (run.state["balance"], intended_state(run), [v.message for v in no_lost_update(run)]) == (
            400, {"balance": 700, "items": {}},
            ["the balance ends at 400, but each operation applied once, in the order of its first attempt, "
             "gives 700"])

    def test_a_repeated_absolute_write_keeps_it(self):
        """Set to 400 three times: 400, as once."""
        run = run_of_operations([self.SET_400], {**self.LOST_FIRST_ANSWER},
                                {"kind": "lose", "message": "response", "op": 1, "attempt": 2})
        assert (run.state["balance"], run.operations[0].attempts, no_lost_update(run)) == (400, 3, [])

    def test_a_difference_applied_twice_breaks_it(self):
        """Decrease by 100, its answer lost: applied twice, 300 instead of 400."""
        run = run_of_operations([{"method": "POST", "path": "/balance/decrement", "body": {"amount": 100}}],
                                self.LOST_FIRST_ANSWER)
        assert (run.state["balance"], [v.key for v in no_lost_update(run)]) == (300, ["viol.state_balance"])

    def test_a_write_that_never_arrived_is_not_lost(self):
        """Set to 400, its only request lost: the balance stays 500 and nothing took effect to be lost."""
        run = run_of_operations([self.SET_400], {"kind": "lose", "message": "request", "op": 1, "attempt": 1},
                                sets={"max_attempts": 1})
        assert (run.state["balance"], run.operations[0].outcome, intended_state(run)["balance"],
                no_lost_update(run)) == (500, "info", 500, [])

    def test_items_are_judged_too(self):
        """PUT then DELETE of an item, each retried: gone, as once each; a PUT arriving after the DELETE is not."""
        put = {"method": "PUT", "path": "/items/42", "body": {"name": "mug"}}
        delete = {"method": "DELETE", "path": "/items/42", "body": {}, "at": 10.0}
        kept = run_of_operations([put, delete], {"kind": "lose", "message": "response", "op": 1, "attempt": 1},
                                 {"kind": "lose", "message": "response", "op": 2, "attempt": 1})
        assert (kept.state["items"], no_lost_update(kept)) == ({}, [])
        late = run_of_operations([put, {**delete, "at": 1.0}], {"kind": "delay", "message": "request", "op": 1,
                                                                 "attempt": 1, "seconds": 2.0})
        assert (late.state["items"], [v.message for v in no_lost_update(late)]) == (
            {"42": {"name": "mug"}},
            ["the items end as {'42': {'name': 'mug'}}, but each operation applied once, in the order of its first "
             "attempt, gives {}"])

    def test_a_run_of_charges_alone_has_no_state_to_judge(self):
        """Only POST /charges: the balance and the items are not the runs' to judge."""
        assert no_lost_update(run_with("naive", LoseMessage(message="response"))) == []


class TestTheSummary:
    def test_the_new_fields_come_after_every_old_one(self):
        """The JSON summary keeps its fields and adds the two verdicts and their companions at the end."""
        assert KEYS[-7:] == ("verdict", "failures", "design_verdict", "story_check", "story_says",
                             "expected_breaks", "stuck")

    def test_the_schema_knows_every_property(self):
        """A scenario's ``breaks`` takes exactly the properties the judge has, in report order: the seven, then
        the two that judge what the article judges beyond the ledgers."""
        assert list(PROPERTIES) == list(PROPERTY_IDS) == [
            "at-most-one-charge", "at-most-one-capture", "exactly-one-on-success", "ledger-agrees",
            "replay-identical", "no-stuck-key", "client-view", "customer-can-find-out", "no-lost-update"]

    def test_a_run_with_nothing_open_is_stuck_on_nothing(self):
        """``stuck`` is empty when the run left nothing open."""
        assert simulate(load("lost-response")).summary.stuck == []


def scenario_text(tmp_path, name: str, old: str, new: str):
    """A copy of shipped scenario ``name`` with ``old`` replaced by ``new``."""
    path = tmp_path / f"{name}.toml"
    text = (builtin_dir() / f"{name}.toml").read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


class TestExitCodes:
    def test_an_undeclared_break_exits_1(self, cli, tmp_path):
        """naive-double-charge declaring no breaks for naive: its story differs, exit 1, and says why."""
        path = scenario_text(tmp_path, "naive-double-charge",
                             'breaks = ["at-most-one-charge", "at-most-one-capture", "exactly-one-on-success"]',
                             "breaks = []")
        assert cli("run", path, "--variant", "missing-key-processed", "--format", "json").exit_code == 0
        result = cli("run", path, "--format", "json")
        s = json.loads(result.stdout)["summary"]
        assert (result.exit_code, s["verdict"], s["story_check"], s["story_says"]) == (
            1, "held", "differs",
            "does not reproduce the article: expected nothing broken, got at-most-one-charge, at-most-one-capture, "
            "exactly-one-on-success")

    def test_a_declared_break_that_does_not_happen_exits_1(self, cli, tmp_path):
        """lost-response declaring a break under same-tx that the run does not show: exit 1."""
        path = scenario_text(tmp_path, "lost-response", "replay_identical = true\nbreaks = []",
                             'replay_identical = true\nbreaks = ["no-stuck-key"]')
        result = cli("run", path, "--format", "json")
        assert (result.exit_code, json.loads(result.stdout)["summary"]["story_check"]) == (1, "differs")

    def test_a_failed_figure_is_said_in_words(self, cli, tmp_path):
        """An expected figure that differs: ``expected 1 charge, got 2``."""
        path = scenario_text(tmp_path, "naive-double-charge", "charges = 2", "charges = 1")
        result = cli("run", path, "--format", "json")
        s = json.loads(result.stdout)["summary"]
        assert (result.exit_code, s["verdict"], s["story_says"]) == (
            1, "failed", "does not reproduce the article: expected 1 charge, got 2")

    def test_an_expectation_without_breaks_is_not_checked_against_them(self, cli, tmp_path):
        """A file written before ``breaks``: its story is checked on its figures alone, and exits as they say."""
        path = scenario_text(tmp_path, "naive-double-charge",
                             'breaks = ["at-most-one-charge", "at-most-one-capture", "exactly-one-on-success"]',
                             "")
        result = cli("run", path, "--format", "json")
        s = json.loads(result.stdout)["summary"]
        assert (result.exit_code, s["design_verdict"], s["story_check"], s["expected_breaks"]) == (
            0, "broken", "reproduces", None)

    def test_no_expectation_exits_0_only_when_nothing_broke(self, cli):
        """A design the file states nothing for: exit 0 if every property holds, 1 if one broke undeclared."""
        held = cli("run", "same-tx-wait", "--variant", "rollback", "--design", "committed-first", "--format", "json")
        s = json.loads(held.stdout)["summary"]
        assert (held.exit_code, s["story_check"], s["design_verdict"]) == (0, "no expectation", "holds")
        broke = cli("run", "same-tx-wait", "--variant", "rollback", "--design", "naive", "--format", "json")
        s = json.loads(broke.stdout)["summary"]
        assert (broke.exit_code, s["story_check"], s["design_verdict"], s["expected_breaks"], s["story_says"]) == (
            1, "no expectation", "broken", None,
            "not checked: the scenario states nothing for this design and these faults")

    def test_the_text_view_exits_as_the_json(self, cli):
        """The exit code does not depend on the format."""
        assert cli("run", "retry-or-give-up").exit_code == cli("run", "retry-or-give-up", "--format",
                                                                "json").exit_code == 0
