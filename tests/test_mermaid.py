"""Mermaid diagrams (`idemsim.views.mermaid`): every diagram idemsim writes parses with Mermaid's own parser.

The parser is the `mermaid` npm package at the version pinned in ``tests/mermaid/package-lock.json``, run by
Node (``tests/mermaid/check.mjs``); ``.ci/run`` installs it with ``npm ci``. Without Node or the installed
package these tests skip with the reason, except under CI=true, where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from idemsim.model.designs import DESIGNS
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs, validate
from idemsim.views import mermaid

pytestmark = pytest.mark.slow
"""Mermaid's own parser, run by Node: not on the fast path (pytest -m "not slow")."""

CHECKER = Path(__file__).resolve().parent / "mermaid"


def parse(texts: list[str]) -> list[dict]:
    """Mermaid's verdict on each text: ``{"ok": True, "type": ...}`` or ``{"ok": False, "error": ...}``."""
    node = shutil.which("node")
    problem = None
    if node is None:
        problem = "Node.js is not installed"
    elif not (CHECKER / "node_modules" / "mermaid").is_dir():
        problem = f"the mermaid package is not installed: npm ci --prefix {CHECKER}"
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {problem}")
        pytest.skip(problem)
    done = subprocess.run([node, str(CHECKER / "check.mjs")], input=json.dumps(texts), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


STORIES = [story for name in builtin_names() for story in runs(load(name))]


@cache
def every_diagram() -> dict[str, str]:
    """Every diagram of every shipped story under every design, both views, both languages, by a label."""
    out = {}
    for story in STORIES:
        for design in DESIGNS:
            run = simulate(story, design)
            for lang in ("en", "ja"):
                label = f"{story.name}/{story.variant or 'main'}/{design}/{lang}"
                out[f"{label}/sequence"] = mermaid.sequence(run, lang)
                out[f"{label}/state"] = mermaid.state(run, lang)
    return out


class TestMermaidParsesEverything:
    def test_every_sequence_and_state_diagram_of_every_story_parses(self):
        """Under every design and in both languages, Mermaid parses each diagram a shipped story gives."""
        diagrams = every_diagram()
        verdicts = parse(list(diagrams.values()))
        failed = {label: v["error"] for label, v in zip(diagrams, verdicts) if not v["ok"]}
        assert failed == {}
        assert {v["type"] for v in verdicts} == {"sequence", "stateDiagram"}

    def test_the_articles_own_diagrams_parse(self):
        """The diagrams `show --format mermaid` prints, the article's, parse as they are."""
        texts = [d for name in builtin_names() for d in load(name).diagrams]
        assert len(texts) == 9
        assert all(v["ok"] for v in parse(texts))

    def test_hostile_input_cannot_break_a_diagram(self, tmp_path):
        """A key full of Mermaid's own syntax and a comment marker, and a client name with control characters
        (a key cannot have them: it travels in an HTTP header), still parse."""
        from idemsim.model.faults import LoseMessage
        from idemsim.runners import explore

        raw = explore.base_raw("same-tx")
        raw["operations"][0]["key"] = "k;%%{init}%%->>A: end#<br/>"
        raw["operations"][0]["client"] = "c\n->>A: end\x1b[2J%%"
        scenario = validate(raw, "test").model_copy(update={"faults": [LoseMessage(message="response")]})
        run = simulate(scenario, "same-tx")
        verdicts = parse([mermaid.sequence(run), mermaid.state(run)])
        assert all(v["ok"] for v in verdicts), verdicts


def body(text: str) -> list[str]:
    """A diagram's lines after the article's init line."""
    lines = text.splitlines()
    assert lines[0] == mermaid.INIT
    return lines[1:]


def diagrams_of(name: str, lang: str = "en", kind: str = "sequence") -> list[str]:
    """The diagram of each story of a shipped scenario, under each design."""
    draw = mermaid.sequence if kind == "sequence" else mermaid.state
    return [draw(simulate(story, design), lang) for story in runs(load(name)) for design in DESIGNS]


class TestSequenceDiagram:
    def test_a_lost_response_drawn_whole(self):
        """lost-response: the time of each step first on its label, the lost 201 as Mermaid's lost-message arrow,
        the statements of one instant on one arrow, the retry inside a rect, the closing note in green (the
        design holds)."""
        assert body(mermaid.sequence(simulate(load("lost-response")))) == [
            "sequenceDiagram",
            "%% lost-response — design same-tx, seed 1",
            "participant C as client",
            "participant A as API",
            "participant D as DB",
            "participant P as processor",
            "C->>A: t=0.000 POST /charges<br/>key: k-8f3a",
            "A->>D: t=0.050 BEGIN<br/>register k-8f3a → 1 row",
            "A->>P: t=0.050 capture 1000",
            "Note over P: t=0.250 captures 1000 as cap_1",
            "P-->>A: t=0.250 captured cap_1",
            "A->>D: t=0.250 record a charge of 1000 → ch_1<br/>store the 201 answer → 1 row<br/>COMMIT",
            "A--xC: t=0.250 201 Created",
            "Note over A,C: the answer is lost on the network",
            "Note over C: t=2.000 no answer within 2.0 s",
            "rect rgba(234, 241, 245, 0.6)",
            "C->>A: t=2.500 POST /charges (attempt 2)<br/>key: k-8f3a",
            "A->>D: t=2.550 BEGIN<br/>register k-8f3a → 0 rows<br/>read k-8f3a → done, 201<br/>COMMIT",
            "A-->>C: t=2.550 201 Created (replayed)",
            "end",
            "rect rgba(0, 158, 115, 0.12)",
            "Note over C,P: charges recorded 1<br/>money captured 1<br/>client ends ok 201<br/>design: holds — all 9 "
            "properties hold<br/>story: reproduces the article",
            "end",
        ]

    def test_concurrent_handlers_get_a_lifeline_each(self):
        """same-tx-wait: two handlers alive at once are two lanes, API #1 and API #2, so the duplicate's wait and
        its replay are on its own lifeline; its wait says whose transaction it waits for. (The # is Mermaid's entity
        code: Mermaid drops a bare "#1" from a participant's name.)"""
        lines = body(mermaid.sequence(simulate(load("same-tx-wait"))))
        assert [line for line in lines if line.startswith("participant")] == [
            "participant C as client", "participant C2 as client (duplicate)", "participant A1 as API #35;1",
            "participant A2 as API #35;2", "participant D as DB", "participant P as processor"]
        assert lines[lines.index("A2->>D: t=1.000 register k-8f3a") + 1:][:1] == [
            "Note over A2,D: API #35;2 waits on the unique index<br/>until API #35;1 commits or rolls back"]
        assert "D-->>A2: t=5.000 after 4.0 s → 0 rows" in lines
        assert "A2-->>C2: t=5.000 201 Created (replayed)" in lines

    def test_in_the_rollback_variant_the_handler_that_failed_is_not_the_one_that_charged(self):
        """same-tx-wait's rollback: API #1 is declined and answers 500; API #2, which waited, charges."""
        story = next(s for s in runs(load("same-tx-wait")) if s.variant == "rollback")
        lines = body(mermaid.sequence(simulate(story)))
        assert lines.index("A1-->>C: t=5.000 500 Internal Server Error") < lines.index(
            "A2->>P: t=5.000 capture 1000")

    def test_one_handler_at_a_time_is_one_api_lane(self):
        """A retry handled after the first handler ended (lost-response, crash-in-progress) keeps one API lane."""
        for name in ("lost-response", "crash-in-progress"):
            lines = body(mermaid.sequence(simulate(load(name))))
            assert "participant A as API" in lines and not any(line.startswith("participant A1") for line in lines)

    def test_a_double_charge_is_emphasised_in_red(self):
        """naive-double-charge: the second capture and the second charge row, each in a red rect with a note
        naming the pair."""
        lines = body(mermaid.sequence(simulate(load("naive-double-charge"))))
        red = f"rect {mermaid.EMPHASIS['broken']}"
        at = lines.index("A->>D: t=2.750 record a charge of 1000 → ch_2")
        assert lines[at - 1:at + 3] == [red, "A->>D: t=2.750 record a charge of 1000 → ch_2",
                                        "Note over A,D: ch_1 and ch_2: one<br/>purchase, charged 2 times", "end"]
        at = lines.index("Note over P: t=2.750 captures 1000 as cap_2<br/>cap_1 and cap_2: one<br/>purchase, "
                         "captured 2 times")
        assert lines[at - 1] == red and lines[at + 1] == "end"
        assert lines.count(red) == 2
        assert lines[-3] == f"rect {mermaid.VERDICT_FILL[False]}"  # and the closing note: the design broke

    def test_a_crash_and_an_orphan_capture_are_emphasised_in_words(self):
        """crash-after-processor: the crash in its rect, said in words (no internal point name under any design,
        in either language, in either diagram); the capture no charge row records, in red."""
        lines = body(mermaid.sequence(simulate(load("crash-after-processor"))))
        at = lines.index("Note over A: t=0.250 the API process dies<br/>after the processor's capture,<br/>before "
                         "the charge row")
        assert lines[at - 1:at + 2] == [f"rect {mermaid.EMPHASIS['crash']}", lines[at], "end"]
        assert ("Note over P: t=0.250 captures 1000 as cap_1<br/>cap_1: money captured, and<br/>no charge row "
                "records it") in lines
        for lang in ("en", "ja"):
            for kind in ("sequence", "state"):
                assert not any("after_processor" in text for text in diagrams_of("crash-after-processor", lang, kind))

    def test_japanese_notes_are_wrapped_between_phrases(self):
        """With lang ja the participants and statements read as the article writes them; a long note is broken
        into lines that fit its box, between phrases, never inside a word."""
        text = mermaid.sequence(simulate(load("same-tx-wait")), "ja")
        assert "participant A1 as 決済 API #35;1" in text and "participant C as クライアント" in text
        assert "A1->>D: t=0.000 BEGIN<br/>k-8f3a を登録 → 1 行" in text
        assert ("Note over A2,D: 決済 API #35;2 は一意制約の検査で<br/>決済 API #35;1 が確定するか<br/>"
                "中止されるまで待たされる") in text
        lost = mermaid.sequence(simulate(load("lost-response")), "ja")
        assert "Note over A,C: 応答がネットワークで失われる" in lost

    def test_a_wrapped_line_fits_its_width_and_keeps_words_whole(self):
        """`_wrap` breaks at spaces and at Japanese phrase ends, never before a word of one kanji (の後、) nor
        between a number and its counter, and evens the lines out."""
        assert mermaid._wrap("the API process dies after the processor's capture", 20) == [
            "the API process", "dies after the", "processor's capture"]
        assert mermaid._wrap("決済代行の売上確定の後、課金の記録の前", 24) == [
            "決済代行の売上確定の後、", "課金の記録の前"]
        assert mermaid._wrap("課金の記録 2 件", 12) == ["課金の", "記録 2 件"]

    def test_a_load_is_summarised_in_one_screen(self):
        """pool (a load of 118 operations): its counts, outcomes and pool in a few lines, not message by message."""
        for lang in ("en", "ja"):
            assert len(mermaid.sequence(simulate(load("pool")), lang).splitlines()) < 40
        assert body(mermaid.sequence(simulate(load("pool")))) == [
            "sequenceDiagram",
            "%% pool — design same-tx, seed 1 — 118 operations, summarised",
            "participant C as 2 clients",
            "participant A as API (pool of 10)",
            "participant D as DB",
            "participant P as processor",
            "Note over C,P: a load: 118 operations from t=0 to t=6.100, summarised",
            "C->>A: 118 attempts (ok 118 · fail 0 · unknown 0)",
            "A->>D: 100 charge rows",
            "A->>P: 100 captures",
            "A-->>C: answers: 201 ×118",
            "Note over A,D: pool of 10: waits p50 0.449 s ·<br/>p95 0.674 s · max 0.828 s<br/>up to 3 waiting on "
            "the unique<br/>index at once, the longest 0.500 s<br/>key records left 100 (in_progress 0)",
            "rect rgba(0, 158, 115, 0.12)",
            "Note over C,P: operations 118: ok 118 · fail 0 · unknown 0<br/>charges recorded 100<br/>money captured "
            "100<br/>design: holds — all 9 properties hold<br/>story: no expectation",
            "end",
        ]


class TestStateDiagram:
    def test_same_tx_registers_the_key_with_the_charge(self):
        """Under same-tx the key is inserted uncommitted and commits with the charge: no "registration commits";
        the rollback variant draws the rolled-back insertion."""
        assert not any("registration commits" in text for story in runs(load("same-tx-wait"))
                       for text in [mermaid.state(simulate(story, "same-tx"))])
        story = next(s for s in runs(load("same-tx-wait")) if s.variant == "rollback")
        assert body(mermaid.state(simulate(story))) == [
            "stateDiagram-v2",
            "%% same-tx-wait/rollback — design same-tx, seed 1 — key k-8f3a",
            "[*] --> None",
            "None: absent",
            "InProgress: in_progress",
            "Done: done",
            "None --> InProgress: the key is inserted<br/>(not committed yet)<br/>(taken 2×)",
            "InProgress --> None: ROLLBACK: the<br/>key goes with it<br/>(taken 1×)",
            "InProgress --> Done: the key, the charge<br/>and the stored answer<br/>commit together<br/>(taken 1×)",
            mermaid.TAKEN[True],
            "class None,InProgress,Done taken",
        ]

    def test_committed_first_registers_then_completes(self):
        """Under committed-first the registration commits on its own; a crash leaves the record in_progress."""
        assert body(mermaid.state(simulate(load("crash-in-progress"))))[2:] == [
            "[*] --> None",
            "None: absent",
            "InProgress: in_progress",
            "None --> InProgress: the key's<br/>registration commits<br/>(taken 1×)",
            mermaid.TAKEN[False],
            "class None,InProgress taken",
        ]

    def test_reclaimed_and_expired_steps_are_drawn_when_they_happen(self):
        """lease-recovery's retry deletes the stale record and takes over; record-expires' reaper deletes it;
        ttl-shorter-than-retry-window's done record expires twice and the key is inserted again."""
        stories = {s.variant: s for s in runs(load("crash-in-progress"))}
        assert ("InProgress --> None: older than the lease:<br/>a retry deletes it<br/>and takes over<br/>(taken 1×)"
                in mermaid.state(simulate(stories["lease-recovery"])))
        assert ("InProgress --> None: the retention passes,<br/>the record is deleted<br/>(taken 1×)"
                in mermaid.state(simulate(stories["record-expires"])))
        text = mermaid.state(simulate(load("ttl-shorter-than-retry-window")))
        assert "Done --> None: the retention passes,<br/>the record is deleted<br/>(taken 2×)" in text
        assert "None --> InProgress: the key is inserted<br/>(not committed yet)<br/>(taken 2×)" in text

    def test_japanese_labels_break_between_phrases(self):
        """In Japanese each label line fits the label's width and breaks only between phrases."""
        text = mermaid.state(simulate(load("lost-response")), "ja")
        assert "InProgress --> Done: キー・業務処理・応答の<br/>保存がまとめて確定<br/>（この実行で 1 回）" in text
        assert "None: 未登録" in text

    def test_a_run_without_a_key_says_so(self):
        """naive sends no key: only the absent state, and a note saying why."""
        lines = body(mermaid.state(simulate(load("naive-double-charge"))))
        assert lines[-1] == "note right of None: this run sends no key"
        assert "InProgress: in_progress" not in lines
