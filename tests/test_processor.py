"""The payment processor's key (`idemsim.model.processor`): a key is bound to the parameters of its first call.

A later call with the same key and the same amount is answered with the first call's answer and captures nothing;
with another amount it is refused (Stripe's ``idempotency_error``) and captures nothing. Every shipped design
answers a refusal 422, records no charge, and the client's operation ends ``fail``
(``idemsim run key-reuse --variant processor-refuses``).
"""

from __future__ import annotations

import random

import pytest
import simpy

from idemsim.model.faults import FaultPlan
from idemsim.model.processor import Processor, ProcessorAnswer, ProcessorConfig
from idemsim.model.trace import Trace
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import load, variant
from idemsim.views.timeline import describe

REFUSED_BODY = {"error": "idempotency_error: the processor refused a reused key with other parameters"}


def calls(*calls, capture_seconds: float = 0.2, key_ttl: float = 86400.0):
    """Run ``(at, amount, key)`` calls against a processor alone; their answers as ``(t, outcome, capture,
    replayed)``, in the order they came back, the ledger as ``(id, amount)`` and the processor's trace."""
    env, trace = simpy.Environment(), Trace()
    processor = Processor(env, ProcessorConfig(key_ttl=key_ttl), capture_seconds,
                          FaultPlan([], random.Random(0), {}), trace)
    answers = []

    def caller(at, amount, key):
        yield env.timeout(at)
        answer = yield from processor.call("api#1", None, amount, key, 5.0)
        answers.append((env.now, answer.outcome, answer.capture, answer.replayed))

    for at, amount, key in calls:
        env.process(caller(at, amount, key))
    env.run()
    return answers, [(c.id, c.amount) for c in processor.ledger], trace


def story(design: str, *sets: str):
    """``key-reuse --variant processor-refuses`` under ``design`` with ``--set`` ``sets``."""
    return simulate(variant(load("key-reuse", list(sets)), "processor-refuses", list(sets)), design)


def after_refusal(run) -> list[str]:
    """The statements the second request's handler runs after the processor refused it."""
    events = list(run.trace)
    refused = next(i for i, e in enumerate(events) if e.kind == "processor.refuse")
    return [e.data["op"] for e in events[refused:] if e.kind == "db.result" and e.actor == "api#2"]


class TestTheProcessorsKey:
    def test_the_same_key_and_amount_is_answered_with_the_first_capture(self):
        """A second call with the key and the amount of the first gets the first capture, a replay, nothing new."""
        answers, ledger, _ = calls((0, 1000, "k"), (1, 1000, "k"))
        assert answers == [(0.2, "captured", "cap_1", False), (1, "captured", "cap_1", True)]
        assert ledger == [("cap_1", 1000)]

    def test_the_same_key_with_another_amount_is_refused_and_captures_nothing(self):
        """A second call with the key and another amount is refused; the ledger keeps the first capture alone."""
        answers, ledger, trace = calls((0, 1000, "k"), (1, 2500, "k"))
        assert answers == [(0.2, "captured", "cap_1", False), (1, "refused", None, False)]
        assert ledger == [("cap_1", 1000)]
        assert [(e.t, e.kind, e.data) for e in trace.of_kind("processor.refuse")] == [
            (1, "processor.refuse", {"request": None, "key": "k", "amount": 2500, "first": 1000})]

    def test_the_first_amount_still_replays_after_a_refusal(self):
        """A refusal leaves the key bound to its first call: the first amount is still answered with cap_1."""
        answers, ledger, _ = calls((0, 1000, "k"), (1, 2500, "k"), (2, 1000, "k"))
        assert answers == [(0.2, "captured", "cap_1", False), (1, "refused", None, False),
                           (2, "captured", "cap_1", True)]
        assert ledger == [("cap_1", 1000)]

    def test_another_amount_is_refused_while_the_first_call_is_processed(self):
        """While the first call is processed, another amount is refused and the same amount is in use."""
        answers, ledger, _ = calls((0, 1000, "k"), (0.5, 2500, "k"), (0.6, 1000, "k"), capture_seconds=1.0)
        assert answers == [(0.5, "refused", None, False), (0.6, "in_use", None, False),
                           (1.0, "captured", "cap_1", False)]
        assert ledger == [("cap_1", 1000)]

    def test_a_lookup_is_never_compared(self):
        """A lookup carries no amount: it gets the key's first capture."""
        answers, _, _ = calls((0, 1000, "k"), (1, None, "k"))
        assert answers == [(0.2, "captured", "cap_1", False), (1, "captured", "cap_1", True)]

    def test_a_key_the_processor_forgot_captures_again(self):
        """After ``key_ttl`` the key is new to the processor: another amount is captured."""
        answers, ledger, _ = calls((0, 1000, "k"), (2, 2500, "k"), key_ttl=1.0)
        assert answers == [(0.2, "captured", "cap_1", False), (2.2, "captured", "cap_2", False)]
        assert ledger == [("cap_1", 1000), ("cap_2", 2500)]

    def test_calls_without_a_key_are_never_compared(self):
        """Calls without a key capture every time, whatever their amounts."""
        answers, ledger, _ = calls((0, 1000, None), (1, 2500, None))
        assert [a[1:] for a in answers] == [("captured", "cap_1", False), ("captured", "cap_2", False)]
        assert ledger == [("cap_1", 1000), ("cap_2", 2500)]

    def test_a_refusal_is_known(self):
        """The API knows that a refused call moved no money (unlike a timeout or a key in use)."""
        assert [ProcessorAnswer(o).known for o in ("refused", "declined", "timeout", "in_use")] == [
            True, True, False, False]


DESIGNS = [
    ("naive", ("api.processor_key='request-key'",), []),
    ("same-tx", ("api.processor_key='request-key'",), ["rollback"]),
    ("check-then-insert", ("api.processor_key='request-key'",), ["rollback"]),
    ("committed-first", ("api.processor_key='request-key'",), ["rollback", "delete_key"]),
    ("split-tx", ("api.processor_key='request-key'",), ["delete_key"]),
    ("split-tx", ("api.processor_key='request-key'", "api.order='charge-first'"), []),
    ("recovery-points", (), ["delete_key"]),
]


class TestEveryDesignHandlesARefusal:
    @pytest.mark.parametrize("design,sets,undo", DESIGNS, ids=[f"{d}{'+' + s[-1] if len(s) > 1 else ''}"
                                                               for d, s, _ in DESIGNS])
    def test_a_refused_call_is_undone_recorded_nowhere_and_answered_422(self, design, sets, undo):
        """The 2,500-yen request with the forgotten key: refused, undone, no charge, 422, and the client fails."""
        run = story(design, *sets)
        summary = run.summary
        assert (summary["captures"], summary["charges"]) == (1, 1)
        assert [(o["outcome"], o["seen"]) for o in summary["operations"]] == [("ok", [201]), ("fail", [422])]
        assert [e.data["body"] for e in run.trace.of_kind("response.send") if e.data["request"] == "2.1"] == [
            REFUSED_BODY]
        assert after_refusal(run) == undo
        assert summary["violations"] == []


class TestTheStory:
    def test_the_variant_reproduces_under_recovery_points(self):
        """key-reuse/processor-refuses runs recovery-points, reaps the key at t=3, and holds its expectation."""
        run = simulate(variant(load("key-reuse"), "processor-refuses"))
        assert run.design == "recovery-points"
        assert [e.t for e in run.trace.of_kind("db.result") if e.actor == "reaper" and e.data["rows"]] == [3.0]
        assert (run.summary["verdict"], run.summary["failures"]) == ("held", [])
        assert [(c["id"], c["amount"], c["request"]) for c in run.summary["ledger"]] == [("cap_1", 1000, "1.1")]

    def test_the_timeline_says_the_refusal_in_english_and_japanese(self):
        """The refusal and its answer, in both languages."""
        run = story("recovery-points")
        refuse = next(iter(run.trace.of_kind("processor.refuse")))
        answer = next(e for e in run.trace.of_kind("processor.answer") if e.data["outcome"] == "refused")
        assert [describe(e, lang=lang) for lang in ("en", "ja") for e in (refuse, answer)] == [
            "key k-8f3a was first used for 1000, not 2500: refuses this call (idempotency_error), captures nothing",
            "400 key reused with other parameters",
            "キー k-8f3a は 2500 ではなく 1000 で使われた: この要求を断る（idempotency_error）、売上確定なし",
            "400 キーが別の内容で使われた",
        ]

    def test_the_sequence_diagram_draws_the_refusal(self):
        """The Mermaid diagram draws the processor's answer as the refusal."""
        lines = story("recovery-points").mermaid().splitlines()
        assert [line for line in lines if "key reused" in line] == [
            "P-->>A: t=5.050 400 key reused with other parameters"]

    @pytest.mark.slow
    def test_the_figure_labels_the_refusal_in_english_and_japanese(self):
        """The figure labels the processor's answer as the refusal, in both languages."""
        run = story("recovery-points")
        labels = {lang: [t.get_text() for ax in run.figure(lang).axes for t in ax.texts
                         if t.get_text() in ("refused: other parameters", "断る: 別の内容")] for lang in ("en", "ja")}
        assert labels == {"en": ["refused: other parameters"], "ja": ["断る: 別の内容"]}
