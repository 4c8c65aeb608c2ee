"""The scene (`idemsim.views.scene`): what every picture of a run shows, as plain data that serialises to JSON."""

import dataclasses
import functools
import json

import pytest

from idemsim.model.db.engine import OPS
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs
from idemsim.views.scene import scene

RECOVERY_POINTS_READY = "claim_key" in OPS
STORIES = [(name, story.variant) for name in builtin_names() for story in runs(load(name))]


@functools.lru_cache(maxsize=None)
def story_run(name: str, variant: str | None = None, design: str | None = None):
    story = next(s for s in runs(load(name)) if s.variant == variant)
    if (design or story.design) == "recovery-points" and not RECOVERY_POINTS_READY:
        pytest.skip("recovery-points awaits the DB statements of the db-recovery-ops branch")
    return simulate(story, design)


def as_dict(thing) -> dict:
    return dataclasses.asdict(thing)


@pytest.fixture(scope="module")
def lost():
    """The scene of lost-response under same-tx, in English."""
    return scene(story_run("lost-response"), "en")


class TestLostResponse:
    """lost-response under same-tx: the 201 is lost, the retry gets the stored 201; one charge, one capture."""

    def test_the_lanes_name_each_party_once(self, lost):
        """The client and its belief, the handlers, the DB and the key's record, the processor, the ledgers."""
        assert [(lane.id, lane.role, lane.name) for lane in lost.lanes] == [
            ("client", "client", "client"), ("belief:client", "belief", "client believes"),
            ("api#1", "handler", "API #1"), ("api#2", "handler", "API #2"), ("db", "db", "DB"),
            ("key:k-8f3a", "key", "key k-8f3a"), ("processor", "processor", "processor"),
            ("ledger:charges", "charges", "charge rows"), ("ledger:captures", "captures", "captures")]

    def test_the_messages_with_their_events_times_and_words(self, lost):
        """Each message: the trace index of its sending, from, to, sent, arrived or lost, its words, its status."""
        assert [(m.event, m.kind, m.src, m.dst, m.sent, m.arrived, m.lost_at, m.what, m.status)
                for m in lost.messages] == [
            (1, "request", "client", "api#1", 0.0, 0.05, None, 'POST /charges  {"amount": 1000}  key k-8f3a', None),
            (5, "processor.call", "api#1", "processor", 0.05, 0.05, None, "", None),
            (7, "processor.answer", "processor", "api#1", 0.25, 0.25, None, "", None),
            (11, "response", "api#1", "client", 0.25, None, 0.275, "201", 201),
            (16, "request", "client", "api#2", 2.5, 2.55, None, "attempt 2  key k-8f3a", None),
            (22, "response", "api#2", "client", 2.55, 2.6, None, "201 replayed", 201)]

    def test_the_key_record_goes_in_progress_then_done_and_stays(self, lost):
        """One record: in_progress under API #1 from its INSERT, done 201 at its COMMIT, kept for a day."""
        assert [as_dict(track) for track in lost.keys] == [{"key": "k-8f3a", "lane": "key:k-8f3a", "records": [{
            "key": "k-8f3a", "created": 0.05, "owner": "api#1", "event": 4,
            "states": [
                {"state": "in_progress", "start": 0.05, "end": 0.25, "owner": "api#1", "status": None, "event": 4,
                 "label": "in_progress (API #1)"},
                {"state": "done", "start": 0.25, "end": 2.6, "owner": "api#1", "status": 201, "event": 9,
                 "label": "done 201"}],
            "ended": None,
            "retention": {"start": 0.05, "end": 86400.05, "ttl": 86400.0, "label": "retention 86400 s (TTL)"},
            "again": False, "again_label": ""}]}]

    def test_the_ledgers_hold_one_charge_and_one_capture(self, lost):
        assert [as_dict(p) for p in lost.ledger] == [{
            "logical": 1, "key": "k-8f3a",
            "charges": [{"kind": "charge", "id": "ch_1", "t": 0.25, "by": "api#1", "event": 8, "duplicate": False,
                         "orphan": False, "label": "ch_1"}],
            "captures": [{"kind": "capture", "id": "cap_1", "t": 0.25, "by": "api#1", "event": 6, "duplicate": False,
                          "orphan": False, "label": "cap_1"}],
            "pairs": []}]

    def test_the_client_does_not_know_until_the_replay_then_believes_paid(self, lost):
        """Unknown while waiting (the money captured meanwhile), unknown after the timeout, paid after the 201."""
        assert [(s.start, s.end, s.believes, s.captured, s.differs, s.told) for b in lost.beliefs
                for s in b.spans] == [
            (0.0, 0.25, "unknown", 0, False, False), (0.25, 2.0, "unknown", 1, False, False),
            (2.0, 2.6, "unknown", 1, False, True), (2.6, 2.6, "paid", 1, False, True)]

    def test_both_verdicts(self, lost):
        assert as_dict(lost.verdicts) == {
            "design_verdict": "holds", "design": "holds — all 9 properties hold", "holds": True,
            "story_check": "reproduces", "story": "reproduces the article",
            "story_says": "reproduces the article: 1 charge",
            "design_named": "holds — all 9 properties hold: one charge row at most, one capture at most, exactly "
                            "one on success, ledgers agree, replays identical, no stuck key, client never wrong, "
                            "customer can find out, state as if each write ran once",
            "problems": [], "broken": [],
            "story_long": "reproduces the article: 1 charge · client saw timeout, 201 → ok 201 · replay identical · "
                          "1 replay",
            "story_reasons": []}

    def test_what_the_text_views_read(self, lost):
        """The parties' names, the attempts, how each client ended and the key's steps: what the terminal, the
        HTML page and Mermaid write from the scene instead of the trace."""
        assert lost.parties["api#1"] == "API #1" and lost.parties["client"] == "client"
        assert lost.attempts == {"1.1": "attempt 1", "1.2": "attempt 2"}
        assert [as_dict(e) for e in lost.endings] == [
            {"op": 1, "client": "client", "name": "client", "seen": ["timeout", 201], "outcome": "ok", "status": 201,
             "said": "timeout, 201 → ok 201"}]
        assert lost.key == "k-8f3a"
        assert [(s.src, s.dst, s.why) for s in lost.key_steps] == [
            ("None", "InProgress", "st.inserted"), ("InProgress", "Done", "st.together")]


class TestKeyTrack:
    def test_a_key_expires_and_a_retry_makes_a_new_purchase_on_it(self):
        """ttl-shorter-than-retry-window: k-0001's first record is done at 0.25 s and deleted by the reaper at 11 s
        (its retention, 10 s from its transaction's start, ran out at 10.05 s); the retry at 17 s finds no record,
        registers the key again (a new purchase) under API #3, which the reaper deletes at 28 s."""
        track = next(t for t in scene(story_run("ttl-shorter-than-retry-window"), "en").keys if t.key == "k-0001")
        assert [([(s.state, s.start, s.end, s.owner, s.status) for s in r.states],
                 (r.ended.how, r.ended.t, r.ended.by, r.ended.label), (r.retention.start, r.retention.end),
                 r.again, r.again_label) for r in track.records] == [
            ([("in_progress", 0.05, 0.25, "api#1", None), ("done", 0.25, 11.0, "api#1", 201)],
             ("expired", 11.0, "reaper", "expired: deleted by the reaper"), (0.05, 10.05), False, ""),
            ([("in_progress", 17.05, 17.25, "api#3", None), ("done", 17.25, 28.0, "api#3", 201)],
             ("expired", 28.0, "reaper", "expired: deleted by the reaper"), (17.05, 27.05), True,
             "k-0001 again: a new purchase")]

    def test_a_crash_rolls_the_key_back(self):
        """crash-after-processor: the key's record is rolled back with API #1's transaction at the crash."""
        track = scene(story_run("crash-after-processor"), "en").keys[0]
        assert [(r.owner, r.ended and r.ended.how, r.again) for r in track.records] == [
            ("api#1", "rolled_back", False), ("api#2", None, True)]


    def test_a_key_registered_outside_a_transaction_outlives_the_crash(self):
        """split-transactions: the key's INSERT commits on its own; the crash leaves the record in_progress under
        API #1 to the end of the run, and the client, told ok, believes paid where nothing was captured."""
        sc = scene(story_run("split-transactions"), "en")
        record, = sc.keys[0].records
        assert ([(s.state, s.start, s.end, s.owner) for s in record.states], record.ended) == (
            [("in_progress", 0.05, 2.6, "api#1")], None)
        assert [(s.believes, s.captured, s.differs) for s in sc.beliefs[0].spans if s.told] == [
            ("unknown", 0, False), ("paid", 0, True)]


class TestLedger:
    def test_the_second_charge_and_capture_of_one_purchase_are_duplicates_named_as_a_pair(self):
        """naive-double-charge: ch_2 and cap_2 are the second of purchase 1, each pair named."""
        purchase, = scene(story_run("naive-double-charge"), "en").ledger
        assert [(e.id, e.duplicate, e.orphan) for e in purchase.charges + purchase.captures] == [
            ("ch_1", False, False), ("ch_2", True, False), ("cap_1", False, False), ("cap_2", True, False)]
        assert [as_dict(p) for p in purchase.pairs] == [
            {"kind": "charged_twice", "first": "ch_1", "second": "ch_2", "start": 0.25, "end": 2.75,
             "label": "ch_1 and ch_2: one purchase, charged twice"},
            {"kind": "captured_twice", "first": "cap_1", "second": "cap_2", "start": 0.25, "end": 2.75,
             "label": "cap_1 and cap_2: one purchase, captured twice"}]

    def test_an_orphan_capture_is_flagged(self):
        """crash-after-processor: cap_1 has no charge row."""
        purchase, = scene(story_run("crash-after-processor"), "en").ledger
        assert [(e.id, e.orphan, e.label) for e in purchase.captures] == [
            ("cap_1", True, "cap_1: money taken, no charge row"), ("cap_2", False, "cap_2")]


class TestWaits:
    def test_a_wait_is_tied_to_the_commit_that_releases_it(self):
        """same-tx-wait: API #2 waits 4 s on the unique index for API #1's COMMIT, which released_by names."""
        run = story_run("same-tx-wait")
        wait, = [s for s in scene(run, "en").spans if s.kind == "wait"]
        released = list(run.trace)[wait.released_by]
        assert (wait.lane, wait.start, wait.end, wait.label) == ("api#2", 1.0, 5.0, "waits for API #1's COMMIT")
        assert (released.actor, released.kind, released.data["op"], released.t) == ("api#1", "db.result", "commit", 5.0)

    def test_in_japanese_in_the_articles_words(self):
        wait, = [s for s in scene(story_run("same-tx-wait"), "ja").spans if s.kind == "wait"]
        assert wait.label == "決済 API #1 のトランザクションが確定するまで待つ"


class TestJson:
    @pytest.mark.parametrize("name,variant", STORIES)
    def test_every_shipped_story_serialises_to_json_and_back(self, name, variant):
        """The scene of every shipped story (under its own design) is JSON as it is: dumping and loading it gives
        the same dict."""
        data = scene(story_run(name, variant), "en").to_dict()
        assert json.loads(json.dumps(data, ensure_ascii=False)) == data
