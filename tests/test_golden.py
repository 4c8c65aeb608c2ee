"""Golden timelines: the whole plain-text timeline of every built-in story, compared with a file.

Each story (a scenario's main story, and each variant) runs under the scenario's own design and seed; its
`idemsim.views.timeline.plain` text must equal ``tests/golden/<scenario>[__<variant>].txt`` byte for byte, so any
change of order, timing or wording shows as a readable diff. After an intended change, regenerate the files
with ``IDEMSIM_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` and review the diff before committing.
"""

import os
from pathlib import Path

import pytest

from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs
from idemsim.views.timeline import plain

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("IDEMSIM_UPDATE_GOLDEN") == "1"
STORIES = [story for name in builtin_names() for story in runs(load(name))]


def golden_path(story) -> Path:
    return GOLDEN / (story.name + (f"__{story.variant}" if story.variant else "") + ".txt")


class TestGoldenTimelines:
    @pytest.mark.parametrize("story", STORIES, ids=[golden_path(s).stem for s in STORIES])
    def test_the_timeline_matches_its_golden_file(self, story):
        """The story's plain timeline under its own design is exactly its golden file."""
        text = plain(simulate(story).trace)
        path = golden_path(story)
        if UPDATE:
            path.write_text(text, encoding="utf-8")
        assert path.exists(), f"no golden file {path.name}; run with IDEMSIM_UPDATE_GOLDEN=1 to create it"
        assert text == path.read_text(encoding="utf-8")

    def test_every_golden_file_belongs_to_a_story(self):
        """No golden file is left over from a story that no longer exists."""
        expected = {golden_path(s).name for s in STORIES}
        assert sorted(p.name for p in GOLDEN.glob("*.txt") if p.name not in expected) == []
