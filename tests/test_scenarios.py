"""The built-in scenarios: every story meets its expectation under every design it names, with its faults fired.

The expectations themselves live in the scenario files (`scenarios/*.toml`); these tests run them all, and then
pin down the claims of SCENARIOS.md that a summary field alone does not show (who waited, on what, how long).
"""

from pathlib import Path

import pytest

from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs

ARTICLE = Path(__file__).resolve().parents[2] / "shared" / "article" / "idempotency-keys.ja.txt"

ARTICLE_SCENARIOS = [
    "lost-response", "naive-double-charge", "retry-or-give-up", "delta-vs-absolute", "http-methods",
    "same-tx-wait", "committed-first-409", "crash-in-progress", "check-then-insert-race", "split-transactions",
    "ttl-shorter-than-retry-window", "key-reuse", "new-key-per-retry", "uncertain-client", "intended-duplicate",
]
EXTRA_SCENARIOS = ["lease-shorter-than-handler", "stored-error-replay", "simultaneous-first-attempts"]
MONEY_SCENARIOS = ["crash-after-processor", "processor-timeout", "lease-recaptures", "completer-finishes"]
"""idemsim's additions beyond the article: the money outside the database."""

STORIES = {(name, story.variant): story for name in builtin_names() for story in runs(load(name))}
CASES = [(name, variant, design) for (name, variant), story in STORIES.items() for design in story.expect]


def run(name, variant=None, design=None):
    return simulate(STORIES[(name, variant)], design)


def waits(r, op):
    """``(rows, waited, blocked_by)`` of every statement ``op`` that a request handler ran, in order."""
    return [(e.data["rows"], e.data["waited"], e.data["blocked_by"]) for e in r.trace.of_kind("db.result")
            if e.actor.startswith("api#") and e.data["op"] == op]


class TestCatalogue:
    def test_every_scenario_of_the_article_and_every_extra_case_exists(self):
        """The fifteen scenarios of SCENARIOS.md, three extra cases and four of money are built in, nothing else."""
        assert sorted(builtin_names()) == sorted(ARTICLE_SCENARIOS + EXTRA_SCENARIOS + MONEY_SCENARIOS)

    @pytest.mark.parametrize("name", MONEY_SCENARIOS)
    def test_the_money_scenarios_say_they_are_idemsims_own(self, name):
        """A money scenario is marked as idemsim's in its title, summary and story, and quotes no passage."""
        s = load(name)
        assert s.title.startswith("(idemsim)") and s.summary.startswith("(idemsim)")
        assert "idemsim's addition" in s.story and s.article == ""
        assert s.group.startswith("8. ")

    @pytest.mark.parametrize("name", MONEY_SCENARIOS)
    def test_the_money_scenarios_state_every_designs_outcome(self, name):
        """Each money scenario expects charges and captures of every design, so compare tells the whole lesson."""
        from idemsim.model.designs import DESIGNS

        s = load(name)
        assert set(s.expect) == set(DESIGNS)
        assert all(e.charges is not None and e.captures is not None for e in s.expect.values())

    @pytest.mark.parametrize("name", sorted(ARTICLE_SCENARIOS + EXTRA_SCENARIOS))
    def test_every_scenario_explains_itself(self, name):
        """A scenario has a title, a one-line summary, a numbered group, a story, a lesson and its passage."""
        s = load(name)
        assert s.title and s.story.strip() and s.teaches.strip() and s.article.strip()
        assert s.summary and "\n" not in s.summary
        assert s.group[0].isdigit() and s.group[1:3] == ". "
        assert s.expect, "a scenario states what it must show"

    @pytest.mark.skipif(not ARTICLE.exists(), reason="the article is not beside the repository")
    @pytest.mark.parametrize("name", sorted(ARTICLE_SCENARIOS + EXTRA_SCENARIOS))
    def test_every_passage_is_quoted_exactly(self, name):
        """Every line of a scenario's `article` passage occurs word for word in the Japanese article."""
        article = ARTICLE.read_text(encoding="utf-8")
        for line in load(name).article.strip().splitlines():
            assert line in article, line

    def test_the_branches_named_by_the_spec_are_variants(self):
        """The branches SCENARIOS.md and the issue name are variants of their scenario."""
        expected = {
            "lost-response": {"gateway-504"},
            "retry-or-give-up": {"retry-after-lost-response", "give-up-after-lost-request",
                                 "give-up-after-lost-response"},
            "delta-vs-absolute": {"absolute", "interleaved-write"},
            "same-tx-wait": {"rollback", "repeatable-read"},
            "crash-in-progress": {"lease-recovery", "record-expires"},
            "check-then-insert-race": {"unique-constraint", "serializable"},
            "split-transactions": {"charge-first"},
            "ttl-shorter-than-retry-window": {"ttl-longer"},
            "key-reuse": {"no-fingerprint"},
            "stored-error-replay": {"two-xx-only"},
            "lease-shorter-than-handler": {"lease-longer"},
        }
        for name, variants in expected.items():
            assert variants <= set(load(name).variants), name


class TestExpectations:
    @pytest.mark.parametrize("name,variant,design", CASES,
                             ids=[f"{n}{'/' + v if v else ''}@{d}" for n, v, d in CASES])
    def test_every_story_meets_its_expectation(self, name, variant, design):
        """The story meets the expectation its file states for the design, and every scripted fault fired."""
        r = run(name, variant, design)
        assert r.summary["verdict"] == "held", r.summary["failures"]
        assert all(f["fired"] for f in r.summary["faults"])

    def test_every_story_states_an_expectation_for_its_own_design(self):
        """`idemsim run NAME` always judges: the scenario's design has an expectation in every story."""
        assert [(n, v) for (n, v), s in STORIES.items() if s.design not in s.expect] == []


class TestTheArticlesClaims:
    def test_same_tx_wait_reproduces_the_articles_measurement(self):
        """The duplicate's key insert starts at t=1, waits 4.0 s for the first commit at t=5, gets 0 rows."""
        r = run("same-tx-wait")
        assert r.summary["wait_seconds"] == 4.0
        assert waits(r, "register_key") == [(1, 0.0, []), (0, 4.0, ["api#1"])]
        commits = [e.t for e in r.trace.of_kind("db.result") if e.actor == "api#1" and e.data["op"] == "commit"]
        assert commits == [5.0]

    def test_after_a_rollback_the_waiting_duplicate_becomes_the_first(self):
        """When request 1 rolls back at t=5, the duplicate, after its 4 s wait, gets 1 row and charges."""
        r = run("same-tx-wait", "rollback")
        assert waits(r, "register_key")[:2] == [(1, 0.0, []), (1, 4.0, ["api#1"])]
        charges = [e.actor for e in r.trace.of_kind("db.result") if e.data["op"] == "insert_charge"]
        assert charges == ["api#2"]

    def test_under_repeatable_read_the_waiter_gets_40001(self):
        """(idemsim, measured) Under repeatable read the duplicate waits 4 s, then fails with 40001."""
        r = run("same-tx-wait", "repeatable-read")
        errors = [(e.data["error"], e.data["waited"]) for e in r.trace.of_kind("db.result")
                  if e.data["op"] == "register_key" and e.data["error"]]
        assert errors == [("40001", 4.0)]

    def test_a_lost_response_is_info_never_fail(self):
        """The client reads a timeout and a gateway's 504 as info, then ends ok with the replayed 201."""
        for variant in (None, "gateway-504"):
            ends = [e.data["outcome"] for e in run("lost-response", variant).trace.of_kind("attempt.end")]
            assert ends == ["info", "ok"]

    def test_crash_in_progress_refuses_every_retry_in_the_window(self):
        """Without recovery every retry gets 409, the record stays in_progress and nothing is charged."""
        r = run("crash-in-progress")
        assert r.summary["operations"][0]["seen"][1:] == [409] * 3
        assert (r.summary["charges"], r.summary["keys_in_progress"], r.summary["outcome"]) == (0, 1, "info")

    def test_check_then_insert_race_leaves_two_rows_with_one_key(self):
        """Without a unique constraint both copies insert the key: two rows with the same key, two charges."""
        r = run("check-then-insert-race")
        assert [row["key"] for row in r.tables["idempotency_keys"]] == ["k-8f3a", "k-8f3a"]
        assert len(r.tables["charges"]) == 2

    def test_the_late_copy_of_an_absolute_write_overwrites_another_write(self):
        """The teller's 700 lands between two copies of "set to 400"; the late copy puts 400 back."""
        changes = [(e.data["before"], e.data["after"]) for e in
                   run("delta-vs-absolute", "interleaved-write").trace.of_kind("state.change")]
        assert changes == [(500, 400), (400, 700), (700, 400)]

    def test_ttl_reaps_the_record_before_the_late_retry(self):
        """The reaper deletes the first record before the retry at t=17, which then charges again."""
        r = run("ttl-shorter-than-retry-window")
        reaped = [e.t for e in r.trace.of_kind("db.result") if e.actor == "reaper"]
        retry = [e.t for e in r.trace.of_kind("attempt.send") if e.data["request"] == "1.2"]
        assert reaped[0] < retry[0] == 17.0
        assert [c["key"] for c in r.tables["charges"]].count("k-0001") == 2

    def test_the_lease_takes_over_a_request_that_is_still_running(self):
        """With a lease shorter than the handler, both handlers charge under one key."""
        r = run("lease-shorter-than-handler")
        charged = [e.actor for e in r.trace.of_kind("db.result") if e.data["op"] == "insert_charge"]
        assert charged == ["api#1", "api#2"]
        assert {c["key"] for c in r.tables["charges"]} == {"k-8f3a"}


class TestApiCrash:
    def test_a_crash_drops_idle_connections_at_once_and_blocked_ones_after_their_statement(self):
        """A crash rolls back the idle handler now; the handler blocked on the index gets its row, then dies."""
        story = load("same-tx-wait", ["faults=[{kind='duplicate', at=1.0}, {kind='crash', point='before_commit'}]"])
        r = simulate(story)
        at_five = [(e.actor, e.kind, e.data.get("op"), e.data.get("rows")) for e in r.trace
                   if e.t == 5.0 and e.kind in ("api.crash", "api.died", "db.result")
                   and e.data.get("op") not in ("insert_charge", "complete_key")]
        assert at_five == [("api#1", "api.crash", None, None), ("api#1", "db.result", "disconnect", None),
                           ("api#1", "api.died", None, None), ("api#2", "db.result", "register_key", 1),
                           ("api#2", "db.result", "disconnect", None), ("api#2", "api.died", None, None)]
        assert r.summary["charges"] == 1
        assert [op["seen"] for op in r.summary["operations"]] == [["timeout", 201], ["timeout", 201]]
