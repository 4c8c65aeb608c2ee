"""Every run ends: when its clients are done, nothing a party waits for is in flight, and a window of background
recovery changed nothing; what is still open then (a key record left in_progress, an unanswered lookup) is
reported as ``stuck``, not as an input error. An input error stays for input: a handler that never answers, and a
run past its bound (the guard against a design whose background work never stops changing things)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.text import Text
from typer.testing import CliRunner

import idemsim
from idemsim.base.errors import InputError, Message
from idemsim.cli.app import app
from idemsim.model.designs import DESIGNS, SHIPPED, recovery_points
from idemsim.model.designs.recovery_points import abandoned
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs, validate

SLOW_LOOKUP = ["processor.latency=1.5", "api.processor_timeout=1"]
"""The processor 1.5 s away each way, a handler or the completer waiting 1 s for it: every call's answer comes
back 3 s after it was sent, after its caller stopped waiting."""
SLOW_COMMAND = ["run", "crash-after-processor", "--design", "recovery-points",
                *[a for s in SLOW_LOOKUP for a in ("--set", s)]]
"""The story and its variant run; the story's own is printed first (its summary is the JSON's top level)."""
LEFT_OPEN = ["key k-8f3a is left in_progress at payment_requested",
             "the completer's lookup of key k-8f3a, sent at 15 s, is unanswered"]
DOCS = Path(__file__).resolve().parent.parent / "docs" / "model.md"


@pytest.fixture(autouse=True)
def forget_registered_designs():
    """Each test starts with the shipped designs only."""
    yield
    for name in [n for n in DESIGNS if n not in SHIPPED]:
        del DESIGNS[name]


def slow_lookup_run(trace: bool = True):
    return simulate(load("crash-after-processor", SLOW_LOOKUP), "recovery-points", trace=trace)


def invoke(*args: str, lang: str = "en"):
    return CliRunner().invoke(app, [*args, "--lang", lang], env={"COLUMNS": "80"}, catch_exceptions=False)


class TestASlowLookupEnds:
    def test_it_ends_after_a_window_of_the_completer_that_changed_nothing(self):
        """The clients end at 3.8 s, the handlers' late answers are back at 4.65 s, and a window of a lease and
        two periods later (16.65 s) the completer, whose every lookup timed out, has changed nothing: the run
        ends there, its last lookup abandoned."""
        run = slow_lookup_run()
        assert run.ended == pytest.approx(16.65)
        assert run.stuck == [Message("stuck.key_at", key="k-8f3a", point="payment_requested"),
                             Message("stuck.lookup", key="k-8f3a", t=15.0)]

    def test_it_shows_the_lesson_one_capture_no_row_a_client_that_does_not_know_a_stuck_key(self):
        """1 capture, 0 rows, the client ended info (503, 503, 409), the key left in_progress: the design is
        broken (no-stuck-key among what it breaks), and the summary says what was left open."""
        summary = slow_lookup_run().summary
        assert (summary.charges, summary.captures, summary.outcome, summary.operations[0]["seen"],
                summary.keys_held, summary.keys_in_progress) == (0, 1, "info", [503, 503, 409], 1, 1)
        assert [v["property"] for v in summary.violations] == ["ledger-agrees", "no-stuck-key",
                                                                 "customer-can-find-out"]
        assert summary.design_verdict == "broken"
        assert summary.stuck == LEFT_OPEN

    def test_a_run_without_a_trace_ends_at_the_same_time_with_the_same_things_open(self):
        """Traced or not, the run ends at the same instant, after the same events, with the same things open."""
        traced, untraced = slow_lookup_run(), slow_lookup_run(trace=False)
        assert (untraced.ended, untraced.sim_events, untraced.stuck, untraced.summary.to_dict()) == \
            (traced.ended, traced.sim_events, traced.stuck, traced.summary.to_dict())

    def test_the_command_exits_1_for_the_story_not_2_for_the_input(self):
        """`idemsim run` prints the summary with its stuck list and exits 1 (the story's crash never happened),
        not 2: nothing in the input is wrong."""
        result = invoke(*SLOW_COMMAND, "--format", "json")
        assert result.exit_code == 1, result.output
        assert json.loads(result.stdout)["summary"]["stuck"] == LEFT_OPEN


class TestTheTextViewSaysWhatWasLeftOpen:
    @pytest.mark.parametrize("lang, lines", [
        ("en", ["left open         key k-8f3a is left in_progress at payment_requested",
                "                  the completer's lookup of key k-8f3a, sent at 15 s, is",
                "                  unanswered"]),
        ("ja", ["終わらずに残ったもの    キー k-8f3a が回復地点 payment_requested で処理中のまま",
                "                        残っている",
                "                        完了処理が 15 秒に送ったキー k-8f3a の照会に、応答がない"]),
    ])
    def test_the_left_open_lines_follow_the_key_records_within_80_columns(self, lang, lines):
        """Under the key records, one item a line (wrapped within 80 columns), in the chosen language."""
        printed = [line.rstrip() for line in invoke(*SLOW_COMMAND, "--brief", lang=lang).stdout
                   .splitlines()]
        keys = next(i for i, line in enumerate(printed) if line.startswith(("key records held", "残ったキーの記録")))
        assert printed[keys + 1:keys + 1 + len(lines)] == lines
        assert all(Text(line).cell_len <= 80 for line in printed)

    def test_a_run_that_left_nothing_open_prints_no_such_line(self):
        """lost-response leaves nothing open: no "left open" line."""
        assert "left open" not in invoke("run", "lost-response", "--brief").stdout


class TestRecoveryThatCanActStillActs:
    def test_a_completer_whose_lookups_are_answered_in_time_finishes_the_key(self):
        """The same slow processor with a 5 s wait: the completer learns of cap_1 and records it; nothing is
        left open."""
        run = simulate(load("completer-finishes", ["processor.latency=1.5", "api.processor_timeout=5"]),
                       "recovery-points")
        assert (run.summary.charges, run.summary.captures, run.summary.keys_in_progress, run.stuck) == (1, 1, 0, [])

    @pytest.mark.parametrize("name, variant, ended, stuck", [
        ("completer-finishes", None, 14.0, []),
        ("completer-finishes", "no-completer", 2.0, ["key k-8f3a is left in_progress at payment_requested"]),
        ("crash-in-progress", None, 9.3, ["key k-8f3a is left in_progress"]),
        ("crash-in-progress", "lease-recovery", 5.4, []),
        ("crash-in-progress", "record-expires", 9.5, []),
        ("lease-shorter-than-handler", None, 8.6, []),
        ("lease-recaptures", None, 3.9, []),
    ])
    def test_the_shipped_stories_of_recovery_end_where_they_did(self, name, variant, ended, stuck):
        """The stories whose end background recovery decides end at the same time as before this rule (their
        fingerprints are unchanged), with what they left open."""
        story = next(s for s in runs(load(name)) if s.variant == variant)
        run = simulate(story)
        assert (round(run.ended, 6), run.summary.stuck) == (ended, stuck)


class TestEveryShippedStoryEnds:
    @pytest.mark.parametrize("name", builtin_names())
    def test_what_is_left_open_is_the_keys_left_in_progress(self, name):
        """Under every design, every shipped story ends, and what it left open is exactly its key records
        left in_progress (the processor answers at once: no lookup is ever left unanswered)."""
        for story in runs(load(name)):
            for design in SHIPPED:
                run = simulate(story, design)
                summary = run.summary
                in_progress = [row["key"] for row in run.tables["idempotency_keys"] if row["status"] == "in_progress"]
                assert [item.split()[1] for item in summary.stuck] == in_progress, (story.variant, design)
                assert all(item.startswith("key ") for item in summary.stuck)

    def test_many_keys_are_named_up_to_five_then_counted(self):
        """Seven records left in_progress: five named, the rest counted in one sentence."""
        raw = {"name": "seven-crashes", "title": "t", "summary": "s", "design": "committed-first",
               "client": {"key_strategy": "per-operation", "max_attempts": 1, "timeout": 1.0},
               "operations": [{"method": "POST", "path": "/charges", "body": {"amount": 100}, "key": f"k-{i}",
                               "at": 2.0 * i} for i in range(7)],
               "faults": [{"kind": "crash", "point": "after_key", "op": i + 1, "restart_after": 0.5}
                          for i in range(7)]}
        summary = simulate(validate(raw, "test")).summary
        assert summary.stuck == [f"key k-{i} is left in_progress" for i in range(5)] + \
            ["2 more keys are left in_progress"]


class TestAnInputErrorIsKeptForInput:
    def test_a_handler_that_never_answers_is_one_error(self):
        """A design whose handler never answers is still refused: it would never end."""
        def never(h):
            while True:
                yield from h.work(3600)

        idemsim.register_design("never-answers", never)
        with pytest.raises(InputError) as refused:
            simulate(load("lost-response"), "never-answers")
        assert refused.value.message.id == "err.run_settle"

    def test_a_completer_that_changes_something_for_ever_meets_the_bound(self):
        """A completer that moves an abandoned key to a new recovery point every round changes something in
        every window: the run goes on until its bound of events stops it, one InputError."""
        rounds = iter(range(10**9))

        def restless(w, key):
            yield from w.sql("set_point", key=key, point=f"step-{next(rounds)}", release=True)

        idemsim.register_design("restless", recovery_points, completer=restless, abandoned=abandoned,
                                options={"processor_timeout", "completer_every"})
        with pytest.raises(InputError) as refused:
            simulate(load("completer-finishes"), "restless", max_events=1_000)
        assert refused.value.message.id == "err.run_events"


class TestTheDocs:
    def test_docs_model_says_what_the_slow_lookup_run_shows(self):
        """docs/model.md's command, end time and the items left open are the run's."""
        doc = " ".join(DOCS.read_text(encoding="utf-8").split())
        run = slow_lookup_run()
        assert "idemsim run crash-after-processor --design recovery-points --set processor.latency=1.5 \\ " \
               "--set api.processor_timeout=1" in doc
        assert f"ends at {run.ended:.2f} s with 1 capture, no charge row" in doc
        for item in run.summary.stuck:
            assert f"`{item}`" in doc
