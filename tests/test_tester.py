"""Tests of the tester: the search and the exhaustive enumeration FIND every known bug.

A property search that finds nothing proves nothing unless it is shown to find what is there. Each case below
is a broken configuration of the article; the same search that passes ``same-tx`` must return a counterexample
for it, shrunk to a single fault, that breaks the expected property. A search that finds nothing is a failure.
The budget is the explore default (200 examples) or the settings profile's, whichever is larger; every case
runs with several seeds.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from idemsim.runners import explore

SEEDS = (1, 2, 3)
BUDGET = max(explore.DEFAULT_MAX_EXAMPLES, settings().max_examples)

BUGS = {
    "naive": ("naive", [], "at-most-one-charge"),
    "check-then-insert": ("check-then-insert", [], "at-most-one-charge"),
    "new-key-per-retry": ("same-tx", ["client.key_strategy=per-attempt"], "at-most-one-charge"),
    "retention-shorter-than-retry-window": ("same-tx", ["api.ttl=1", "api.reap_every=1"], "at-most-one-charge"),
    "lease-shorter-than-handler": ("committed-first", ["api.lease=0.1"], "at-most-one-charge"),
    "committed-first-without-recovery": ("committed-first", ["api.lease=none"], "no-stuck-key"),
    "split-tx-key-first": ("split-tx", [], "client-view"),
    "same-tx-without-the-processors-key": ("same-tx", [], "at-most-one-capture"),
    "committed-first-lease-recaptures": ("committed-first", ["api.lease=3"], "at-most-one-capture"),
    "recovery-points-without-the-completer": ("recovery-points", ["api.completer_every=off"], "ledger-agrees"),
}
"""Each known bug: the design, the overrides that make it, and the property it breaks. Each search judges that
property alone (``--property``): the money-level bugs every article design also has would otherwise be found
first and hide the one named here."""


def broken(result) -> set[str]:
    assert result.counterexample is not None, f"no counterexample for {result.design} after {result.examples}"
    return {v.property for v in result.counterexample.violations}


@pytest.mark.slow
class TestSearchFindsEveryKnownBug:
    @pytest.mark.parametrize("seed", SEEDS)
    @pytest.mark.parametrize("bug", list(BUGS))
    def test_the_search_finds_the_bug_with_one_fault(self, bug, seed):
        """The Hypothesis search finds a one-fault counterexample that breaks the bug's property."""
        design, sets, prop = BUGS[bug]
        result = explore.search(design, sets, max_examples=BUDGET, seed=seed, properties=[prop])
        assert prop in broken(result)
        assert len(result.counterexample.faults) == 1

    def test_naive_is_broken_by_one_lost_response(self):
        """naive's shrunk counterexample is the article's: one lost response, two charges."""
        cx = explore.search("naive").counterexample
        assert [f.describe() for f in cx.faults] == ["lose the response of op 1 attempt 1"]
        assert cx.run.summary["charges"] == 2

    def test_check_then_insert_is_broken_by_a_concurrent_duplicate(self):
        """check-then-insert's shrunk counterexample is two concurrent copies that both read "absent"."""
        cx = explore.search("check-then-insert", properties=["at-most-one-charge"]).counterexample
        assert [f.kind for f in cx.faults] == ["duplicate"]
        assert cx.run.summary["charges"] == 2

    def test_committed_first_without_recovery_is_stuck_after_a_crash(self):
        """Without a lease, a crash after the key is committed leaves the key in_progress for ever."""
        cx = explore.search("committed-first", ["api.lease=none"], properties=["no-stuck-key"]).counterexample
        assert [f.kind for f in cx.faults] == ["crash"]
        assert cx.run.summary["keys_in_progress"] == 1

    def test_same_tx_is_broken_by_a_lost_answer_of_the_processor(self):
        """same-tx's shrunk counterexample: one lost answer of the processor, two captures, one charge row."""
        cx = explore.search("same-tx").counterexample
        assert [f.describe() for f in cx.faults] == ["lose the processor's answer to op 1 attempt 1"]
        assert (cx.run.summary["charges"], cx.run.summary["captures"]) == (1, 2)


class TestExhaustiveFindsEveryKnownBug:
    @pytest.mark.parametrize("bug", list(BUGS))
    def test_the_enumeration_finds_the_bug_with_one_fault(self, bug):
        """Every schedule of up to 2 faults is enumerated; the first that breaks the property has one fault."""
        design, sets, prop = BUGS[bug]
        result = explore.exhaustive(design, sets, max_faults=2, properties=[prop])
        assert prop in broken(result)
        assert len(result.counterexample.faults) == 1


@pytest.mark.slow
class TestCorrectDesignsPass:
    def test_the_same_search_finds_nothing_for_recovery_points(self):
        """The very search that finds the bugs finds no counterexample for recovery-points, on any property."""
        result = explore.search("recovery-points", max_examples=BUDGET)
        assert result.counterexample is None
        assert result.examples == BUDGET

    @pytest.mark.parametrize("design", ["same-tx", "committed-first"])
    def test_the_same_search_finds_no_double_charge_row_for_the_articles_designs(self, design):
        """same-tx and committed-first (with its lease) never record two charges: the database keeps its promise."""
        result = explore.search(design, max_examples=BUDGET, properties=["at-most-one-charge", "no-stuck-key"])
        assert result.counterexample is None

    def test_a_counterexample_is_reproducible_from_its_seed(self):
        """The same design, overrides and seed give the same examples and the same counterexample."""
        a = explore.search("check-then-insert", seed=5)
        b = explore.search("check-then-insert", seed=5)
        assert (a.examples, a.shrink_runs) == (b.examples, b.shrink_runs)
        assert a.counterexample.run.trace.to_json() == b.counterexample.run.trace.to_json()
