"""The invariants of exactly-once charging (`idemsim.judge.properties`), and that the correct designs keep them.

The Hypothesis tests run under the settings profile of ``tests/conftest.py`` (IDEMSIM_HYPOTHESIS_PROFILE=thorough
for a larger budget). Every example is a whole run chosen through the fault interface (`idemsim.runners.strategies`).
"""

from __future__ import annotations

import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from idemsim.judge.properties import (
    PROPERTIES,
    at_most_one_capture,
    at_most_one_charge,
    captures,
    check,
    client_view,
    committed_charges,
    exactly_one_on_success,
    ledger_agrees,
    no_stuck_key,
    replay_identical,
)
from idemsim.model.faults import Crash, Duplicate, LoseMessage, ProcessorError
from idemsim.runners import explore
from idemsim.runners.simulation import simulate
from idemsim.runners.strategies import LONGEST_HANDLER, Schedule, schedules
from idemsim.scenario.schema import load, validate


def run_with(design: str, *faults, sets: tuple[str, ...] = ()):
    """One run of the explore defaults of ``design`` with a scripted fault schedule."""
    scenario = explore.base_scenario(design, list(sets)).model_copy(update={"faults": list(faults)})
    return simulate(scenario, design, scenario.seed)


def run_of(design: str, schedule: Schedule, sets: tuple[str, ...] = ()):
    scenario = explore.scenario_for(design, schedule, list(sets))
    return simulate(scenario, design, scenario.seed)


def names(violations) -> list[str]:
    return sorted({v.property for v in violations})


class TestCommittedCharges:
    def test_a_charge_is_attributed_to_the_operation_whose_request_made_it(self):
        """Each committed charge names the request, client process and logical operation that made it."""
        run = run_with("naive", LoseMessage(message="response"))
        assert [(c["id"], c["request"], c["op"], c["logical"]) for c in committed_charges(run)] == [
            (1, "1.1", 1, 1), (2, "1.2", 1, 1)]

    def test_a_charge_rolled_back_by_a_crash_is_not_counted(self):
        """A charge inserted in a transaction that the crash rolls back is not a committed charge."""
        run = run_with("same-tx", Crash(point="before_commit"))
        assert [c["request"] for c in committed_charges(run)] == ["1.2"]
        assert len(run.tables["charges"]) == 1

    def test_a_duplicate_counts_for_the_operation_it_copies(self):
        """A duplicate's charge belongs to the logical operation it duplicates."""
        run = run_with("check-then-insert", Duplicate(at=0.0))
        assert [(c["op"], c["logical"]) for c in committed_charges(run)] == [(1, 1), (2, 1)]

    def test_charges_committed_out_of_id_order_read_in_id_order(self):
        """The tally keeps committed charges by id, whatever order their transactions committed in, and reads each
        as a `CommittedCharge`."""
        from idemsim.judge.tally import CommittedCharge, CommittedCharges

        committed = CommittedCharges()
        for conn, id, key in (("api#1", 2, "k1"), ("api#2", 5, "k2"), ("api#3", 3, None), ("completer", 9, "k3"),
                              ("api#4", 1, "k4")):
            committed.add(conn, id, key)
        assert list(committed) == [CommittedCharge("api#4", 1, "k4"), CommittedCharge("api#1", 2, "k1"),
                                   CommittedCharge("api#3", 3, None), CommittedCharge("api#2", 5, "k2"),
                                   CommittedCharge("completer", 9, "k3")]
        assert len(committed) == 5 and committed[2] == CommittedCharge("api#3", 3, None)
        other = CommittedCharges()
        for charge in reversed(list(committed)):
            other.add(charge.conn, charge.id, charge.key)
        assert other == committed and other != CommittedCharges()


class TestGroups:
    def test_groups_read_as_the_dict_made_item_by_item(self):
        """Items grouped by operation read as a dict built item by item: operations in the order of their first
        items, each with its items in order, an operation without items absent."""
        from types import SimpleNamespace

        from idemsim.judge.properties import _grouped

        run = SimpleNamespace(operations=[None] * 4)
        items = [("a", 3), ("b", 1), ("c", 3), ("d", None), ("e", 2), ("f", 3)]
        groups = _grouped(run, items, lambda item: item[1])
        expected: dict = {}
        for item in items:
            expected.setdefault(item[1], []).append(item)
        assert list(groups.items()) == [(op, tuple(group)) for op, group in expected.items()]
        assert list(groups) == [3, 1, None, 2] and len(groups) == 4 and groups[1] == (("b", 1),)
        assert [groups.count(op) for op in (None, 1, 2, 3, 4, 99)] == [1, 1, 1, 3, 0, 0]
        assert groups.get(4) == () and groups.get(99, None) is None
        assert list(groups.sizes) == [0, 1, 1, 2, 0, 1]  # by number (0 unused), None's last: none, one, several
        assert groups.several() == {3: (("a", 3), ("c", 3), ("f", 3))} and groups.several() is groups.several()

    def test_missing_from_names_the_operations_with_items_only_here(self):
        """``a.missing_from(b)``: the operations with items in ``a`` and none in ``b``, in ``a``'s order."""
        from types import SimpleNamespace

        from idemsim.judge.properties import _grouped

        run = SimpleNamespace(operations=[None] * 4)
        a = _grouped(run, [("a", 3), ("b", None), ("c", 1), ("d", 4)], lambda item: item[1])
        b = _grouped(run, [("e", 1), ("f", 2)], lambda item: item[1])
        assert a.missing_from(b) == [3, None, 4] and b.missing_from(a) == [2]


class TestEachProperty:
    def test_a_clean_same_tx_run_breaks_nothing(self):
        """A lost response under same-tx is answered from the record: every property holds."""
        assert check(run_with("same-tx", LoseMessage(message="response"))) == []

    def test_two_charges_for_one_operation_break_at_most_one(self):
        """Naive after a lost response: operation 1 is charged twice."""
        violations = at_most_one_charge(run_with("naive", LoseMessage(message="response")))
        assert [v.message for v in violations] == ["operation 1 was charged 2 times (ch_1 by 1.1, ch_2 by 1.2)"]

    def test_success_with_two_charges_breaks_exactly_one(self):
        """The client ended ok, yet two charges exist."""
        assert names(exactly_one_on_success(run_with("naive", LoseMessage(message="response")))) == [
            "exactly-one-on-success"]

    def test_success_without_a_charge_breaks_the_client_view(self):
        """split-tx answers "already processed" after a crash between key and charge: ok with no charge."""
        run = run_with("split-tx", Crash(point="after_key"))
        assert run.summary["charges"] == 0
        assert names(client_view(run)) == ["client-view"]
        assert names(exactly_one_on_success(run)) == ["exactly-one-on-success"]

    def test_a_key_left_in_progress_breaks_no_stuck_key(self):
        """committed-first without recovery keeps the key in_progress after a crash."""
        run = run_with("committed-first", Crash(point="after_key"), sets=("api.lease=none",))
        assert [v.message for v in no_stuck_key(run)] == ["key k-8f3a is left in_progress"]

    def test_recovery_clears_the_key_and_the_property_holds(self):
        """committed-first with its lease returns the crashed key to absent before the run ends."""
        assert check(run_with("committed-first", Crash(point="after_key"))) == []

    def test_a_replay_of_a_different_answer_breaks_replay_identical(self):
        """After the retention expired, the second charge's answer differs from the first stored one."""
        run = run_with("same-tx", LoseMessage(message="response"), Duplicate(at=2.5),
                       sets=("api.ttl=1", "api.reap_every=1"))
        assert [v.message for v in replay_identical(run)] == [
            "1.2 got a replayed 201 {'id': 'ch_2', 'amount': 1000, 'status': 'succeeded'} for key k-8f3a; "
            "the first stored was 201 {'id': 'ch_1', 'amount': 1000, 'status': 'succeeded'}"]

    def test_a_named_scenario_is_judged_like_a_searched_run(self):
        """The built-in lost-response story breaks nothing under same-tx and charges twice under naive."""
        scenario = load("lost-response")
        assert check(simulate(scenario, "same-tx")) == []
        assert names(check(simulate(scenario, "naive"))) == ["at-most-one-capture", "at-most-one-charge",
                                                             "exactly-one-on-success"]

    def test_requests_other_than_charges_are_not_judged(self):
        """A PUT /balance charges nothing, and its ok is not a claim about a charge."""
        raw = explore.base_raw("same-tx")
        raw["operations"] = [{"method": "PUT", "path": "/balance", "body": {"value": 400}}]
        run = simulate(validate(raw, "test"), "same-tx")
        assert run.operations[0].outcome == "ok"
        assert check(run) == []

    def test_properties_are_listed_in_report_order(self):
        """The nine properties, in the order reports list them: the seven on the ledgers, then the two that judge
        what the article judges beyond them (tests/test_article_verdicts.py)."""
        assert list(PROPERTIES) == ["at-most-one-charge", "at-most-one-capture", "exactly-one-on-success",
                                    "ledger-agrees", "replay-identical", "no-stuck-key", "client-view",
                                    "customer-can-find-out", "no-lost-update"]


class TestTheMoney:
    def test_a_capture_names_the_request_that_made_it(self):
        """The processor's ledger: each capture with its id, amount, key, time and request."""
        run = run_with("naive", LoseMessage(message="response"))
        assert [(c["id"], c["amount"], c["request"], c["t"], c["logical"]) for c in captures(run)] == [
            ("cap_1", 1000, "1.1", 0.25, 1), ("cap_2", 1000, "1.2", 2.75, 1)]

    def test_a_crash_after_the_capture_charges_the_card_twice_with_one_row(self):
        """same-tx with a crash between capture and COMMIT: one charge row, two captures, and it is caught."""
        run = run_with("same-tx", Crash(point="after_processor"))
        assert (run.summary["charges"], run.summary["captures"]) == (1, 2)
        assert [v.message for v in at_most_one_capture(run)] == [
            "operation 1's card was captured 2 times (cap_1 by 1.1 at 0.250 s, cap_2 by 1.2 at 2.750 s)"]
        assert [v.message for v in ledger_agrees(run)] == [
            "capture cap_1 of operation 1 (by 1.1 at 0.250 s) has no charge row: the customer paid and the API "
            "has no record"]

    def test_the_processors_key_captures_once(self):
        """With the request's key passed on, the retry's call is answered with the first capture."""
        run = run_with("same-tx", Crash(point="after_processor"), sets=("api.processor_key=request-key",))
        assert (run.summary["charges"], run.summary["captures"]) == (1, 1)
        assert check(run) == []

    def test_a_declined_call_captures_nothing(self):
        """A processor_error fault captures no money: the ledger stays empty, and agrees with no row."""
        run = run_with("same-tx", ProcessorError(), sets=("client.max_attempts=1",))
        assert run.summary["captures"] == 0
        assert ledger_agrees(run) == []

    def test_an_api_that_records_a_charge_twice_for_one_capture_is_caught(self):
        """naive with the processor's key records a second row for the replayed capture: a row without money."""
        run = run_with("naive", LoseMessage(message="response"), sets=("api.processor_key=request-key",
                                                                         "client.key_strategy=per-operation"))
        assert (run.summary["charges"], run.summary["captures"]) == (2, 1)
        assert [v.message for v in ledger_agrees(run)] == [
            "charge ch_2 of operation 1 (by 1.2) has no capture: the API recorded money it never took"]


@pytest.mark.slow
class TestStrategies:
    def test_the_simplest_schedule_is_no_fault_on_the_default_timings(self):
        """Shrinking any schedule to its simplest gives no fault, the first latency and the default retry."""
        simplest = find(schedules(), lambda s: True)
        assert simplest.faults == ()
        assert simplest.client == {"timeout": 2.0, "max_attempts": 3, "backoff": 0.5, "jitter": "none"}
        assert simplest.api == {"charge_seconds": 0.2}
        assert simplest.network["request"]["latency"] == {"dist": "constant", "seconds": 0.05}

    def test_the_simplest_single_fault_is_a_lost_response(self):
        """Of all one-fault schedules the plainest is the loss of the first attempt's response."""
        simplest = find(schedules(), lambda s: len(s.faults) == 1)
        assert [f.describe() for f in simplest.faults] == ["lose the response of op 1 attempt 1"]

    def test_the_default_lease_outlasts_the_longest_handler(self):
        """committed-first's default lease is longer than any handler time the search can choose."""
        assert explore.base_scenario("committed-first").api.lease > LONGEST_HANDLER

    @given(schedules())
    def test_without_a_fault_nothing_times_out(self, schedule):
        """A fault-free run under any chosen timings is answered in time: one attempt, ok."""
        run = run_of("same-tx", Schedule((), schedule.network, schedule.client, schedule.api))
        assert [(op.attempts, op.outcome) for op in run.operations] == [(1, "ok")]


DATABASE_PROPERTIES = ("at-most-one-charge", "replay-identical", "no-stuck-key")
"""What the article's designs promise about their own database, whatever happens to the money."""


@pytest.mark.slow
class TestSameTx:
    @given(schedules())
    def test_the_database_keeps_its_promise_under_any_schedule(self, schedule):
        """same-tx with one key per operation, fingerprint check and long retention never records two charges."""
        assert [v for v in check(run_of("same-tx", schedule)) if v.property in DATABASE_PROPERTIES] == []

    @given(schedules())
    def test_with_the_processors_key_no_card_is_captured_twice(self, schedule):
        """same-tx passing the request's key to the processor never captures twice, nor misleads the client (a
        crash after the capture still leaves it unrecorded, and a client that gave up meanwhile cannot find out)."""
        violations = check(run_of("same-tx", schedule, ("api.processor_key=request-key",)))
        assert [v for v in violations if v.property not in ("ledger-agrees", "exactly-one-on-success",
                                                            "customer-can-find-out")] == []


@pytest.mark.slow
class TestCommittedFirstWithLease:
    @given(schedules())
    def test_the_database_keeps_its_promise_under_any_schedule(self, schedule):
        """committed-first with a lease longer than the longest handler time never records two charges."""
        assert [v for v in check(run_of("committed-first", schedule)) if v.property in DATABASE_PROPERTIES] == []


@pytest.mark.slow
class TestRecoveryPoints:
    @given(schedules())
    def test_every_property_holds_under_any_schedule(self, schedule):
        """recovery-points with its completer keeps every property, on both ledgers, under any schedule."""
        assert check(run_of("recovery-points", schedule)) == []


@pytest.mark.slow
class TestClientView:
    @given(schedules(), st.sampled_from(["naive", "check-then-insert", "same-tx", "committed-first",
                                         "recovery-points"]))
    def test_the_client_is_never_wrong(self, schedule, design):
        """ok only if charged and captured, fail only if neither: under every design but split-tx."""
        assert client_view(run_of(design, schedule)) == []

    @given(schedules())
    def test_the_client_is_never_wrong_without_recovery(self, schedule):
        """committed-first without recovery leaves a key stuck, but never misleads the client."""
        assert client_view(run_of("committed-first", schedule, ("api.lease=none",))) == []
