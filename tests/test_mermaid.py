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


class TestSequenceDiagram:
    def test_a_lost_response_is_a_lost_message_arrow(self):
        """lost-response draws the lost 201 with Mermaid's lost-message arrow and the retry inside a rect."""
        text = mermaid.sequence(simulate(load("lost-response")))
        assert "A--xC: 201 Created\n" in text
        assert "rect " in text and "C->>A: POST /charges (retry)<br/>key: k-8f3a" in text

    def test_a_wait_on_the_index_is_a_note_with_its_length(self):
        """same-tx-wait notes the duplicate's wait on the unique index and answers it after 4.0 s."""
        text = mermaid.sequence(simulate(load("same-tx-wait")))
        assert "Note over A,D: api#35;2 waits on the unique index for api#35;1" in text
        assert "D-->>A: after 4.0 s → 0 rows" in text

    def test_the_output_starts_with_the_articles_theme_and_the_diagram(self):
        """Each diagram is raw Mermaid: the article's init line, the diagram's first line, a comment naming it."""
        lines = mermaid.sequence(simulate(load("lost-response"))).splitlines()
        assert lines[0] == mermaid.INIT
        assert lines[1:3] == ["sequenceDiagram", "%% lost-response — design same-tx, seed 1"]

    def test_japanese_uses_the_articles_words(self):
        """With lang ja the participants and statements read as the article writes them."""
        text = mermaid.sequence(simulate(load("lost-response")), "ja")
        assert "participant C as クライアント" in text and "participant A as 決済 API" in text
        assert "A->>D: BEGIN<br/>k-8f3a を登録 → 1 行" in text
        assert "Note over A,C: 応答がネットワークで失われる" in text


class TestStateDiagram:
    def test_the_path_the_run_took_is_marked(self):
        """lost-response's key went absent → in_progress → done once; the three states are marked."""
        text = mermaid.state(simulate(load("lost-response")))
        assert "None --> InProgress: the key's registration commits (taken 1×)" in text
        assert "InProgress --> Done: the charge and the stored answer commit (taken 1×)" in text
        assert "class None,InProgress,Done taken" in text

    def test_an_expired_record_takes_the_way_back_to_absent(self):
        """Each time the retention passes the record goes back to absent, and a retry registers it again."""
        text = mermaid.state(simulate(load("ttl-shorter-than-retry-window")))
        assert "Done --> None: the retention passes, the record is deleted (taken 2×)" in text
        assert "None --> InProgress: the key's registration commits (taken 2×)" in text
