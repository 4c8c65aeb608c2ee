"""A run's two verdicts as every view says them (`idemsim.views.verdicts`): the design's, green only when every
property holds and otherwise worded as what went wrong; and the story's check, in neutral words and colours."""

from __future__ import annotations

import functools
import io
import re
from pathlib import Path

from rich.console import Console

from idemsim.runners.compare import compare
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import load, runs
from idemsim.views import verdicts
from idemsim.views.mermaid import sequence, state
from idemsim.views.terminal import comparison_stack, comparison_table, print_run, summary_table

ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def story_run(name: str, variant: str | None = None, design: str | None = None):
    story = next(s for s in runs(load(name)) if s.variant == variant)
    return simulate(story, design)


def lines(renderable, width: int = 80) -> list[str]:
    """What ``renderable`` prints on a plain terminal ``width`` columns wide, each line without its padding."""
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def green_texts(draw, width: int = 80) -> list[str]:
    """The pieces of text a view prints in green (ANSI 32 or 92) on a colour terminal."""
    console = Console(file=io.StringIO(), width=width, color_system="standard", force_terminal=True)
    draw(console)
    return [piece.strip() for codes, piece in re.findall(r"\x1b\[([0-9;]*)m([^\x1b]*)", console.file.getvalue())
            if {"32", "92"} & set(codes.split(";")) and piece.strip()]


class TestTheDesignsVerdict:
    def test_a_broken_design_says_what_went_wrong(self):
        """A double charge reads as the problem (2 charge rows, the card captured twice), not as the names of the
        properties it broke; exactly-one-on-success is left out beside them."""
        s = story_run("lost-response", None, "naive").summary
        assert verdicts.design_words(s.design_verdict, s.violations) == (
            "broken — 2 charge rows for one purchase; the card captured 2 times for one purchase")

    def test_a_design_that_holds_says_every_property_holds(self):
        """same-tx on lost-response holds: all nine properties, named when asked."""
        s = story_run("lost-response").summary
        assert verdicts.design_words(s.design_verdict, s.violations) == "holds — all 9 properties hold"
        assert verdicts.design_words(s.design_verdict, s.violations, names=True).startswith(
            "holds — all 9 properties hold: one charge row at most, one capture at most, ")

    def test_the_new_properties_are_said_as_their_problems(self):
        """The give-up branch: the customer paid and cannot find out; the interleaved write: an update lost."""
        give_up = story_run("retry-or-give-up", "give-up-after-lost-response").summary
        assert verdicts.problems(give_up.violations) == ["the customer paid and no retry can find out"]
        interleaved = story_run("delta-vs-absolute", "interleaved-write").summary
        assert verdicts.problems(interleaved.violations) == [
            "an update was lost: the final state is not each operation applied once"]

    def test_a_client_misled_and_a_stuck_key_are_each_one_phrase(self):
        """crash-in-progress under split-tx: the stuck key and the client told ok for nothing charged."""
        s = story_run("crash-in-progress", None, "split-tx").summary
        assert verdicts.problems(s.violations) == ["a key record left in_progress",
                                                   "the client was told ok but nothing was charged"]

    def test_of_many_violations_of_one_kind_the_largest_count_is_said(self):
        """A load's double charges are one phrase, with the most charge rows any purchase got."""
        violations = [{"property": "at-most-one-charge", "key": "viol.charged", "fields": {"op": op, "n": n}}
                      for op, n in ((1, 2), (2, 3), (3, 2))]
        assert verdicts.problems(violations) == ["3 charge rows for one purchase"]

    def test_a_property_without_words_of_its_own_is_named(self):
        """A property the catalogue has no problem for is said as not holding, by its name."""
        assert verdicts.problems([{"property": "mine", "key": "", "fields": {}}]) == ["mine does not hold"]

    def test_japanese_says_it_in_the_articles_words(self):
        """正しくない, and the double charge as 課金の記録 and 売上確定."""
        s = story_run("lost-response", None, "naive").summary
        assert verdicts.design_words(s.design_verdict, s.violations, "ja") == (
            "正しくない — 1 件の購入に課金の記録が 2 件。1 件の購入に売上確定が 2 件")

    def test_green_is_for_a_design_that_holds_only(self):
        """`green` is true for holds and false for broken."""
        assert (verdicts.green("holds"), verdicts.green("broken")) == (True, False)


class TestTheStorysCheck:
    def test_a_story_that_reproduces_says_what_the_file_states_in_words(self):
        """The stated figures in the reader's words: charges, what the client saw and how it ended, replays."""
        stated = {"charges": 1, "outcome": "ok", "status": 201, "seen": ["timeout", 201], "replays": 1,
                  "replay_identical": True, "breaks": []}
        assert verdicts.story_words("reproduces", stated) == (
            "reproduces the article: 1 charge · client saw timeout, 201 → ok 201 · 1 replay · replay identical")

    def test_every_stated_field_has_words(self):
        """Outcomes, statuses of each operation, balance, items, waits, keys and log lines, each said once."""
        stated = {"outcome": "info", "outcomes": ["ok", "info"], "seen_by_op": [["timeout", 200], []],
                  "client_believes": 1, "wait_seconds": 0.4, "keys_held": 2, "keys_in_progress": 1, "balance": 400,
                  "items": {"a": 1}, "log_lines": 1, "captures": 2}
        assert verdicts.said(stated).split(" · ") == [
            "client ends info", "operations end ok, info", "operations saw timeout, 200 / nothing",
            "client believes 1 done", "waited 0.400 s on the index", "2 key records left", "1 left in_progress",
            "balance 400", 'items {"a": 1}', "1 access-log line", "2 captures"]

    def test_the_other_checks_are_said_plainly(self):
        """differs, vacuous and no expectation, each in a sentence; in a table cell, no expectation is short."""
        assert [verdicts.story_words(c) for c in ("differs", "vacuous", "no expectation")] == [
            "does not reproduce the article", "proves nothing: its fault never happened",
            "not checked: the scenario states nothing for this design and these faults"]
        assert verdicts.short_story_words("no expectation") == "no expectation"

    def test_japanese_says_it_in_the_articles_words(self):
        """記事の通りに再現する, and what the client saw in the glossary's words."""
        assert verdicts.story_words("reproduces", {"charges": 2, "seen": ["timeout", 201]}, "ja") == (
            "記事の通りに再現する: 課金の記録 2 件 · クライアントが見た応答はタイムアウト、201")

    def test_a_failure_is_said_in_the_language_asked(self):
        """A summary keeps its failures in English; a view says them in Japanese."""
        assert verdicts.failure_words("charges: expected 2, got 1", "ja") == "charges: 期待 2、実際 1"
        assert verdicts.failure_words("charges: expected 2, got 1") == "charges: expected 2, got 1"


class TestRunSummary:
    def test_a_broken_design_and_a_story_that_reproduces(self):
        """`run lost-response --design naive`: the design's verdict in red words of the problem, each broken
        property beneath it, then the story's check; the old "expectation held" line is gone."""
        assert lines(summary_table(story_run("lost-response", None, "naive"))) == [
            "charges recorded  2",
            "money captured    2  (cap_1: 1000 at 0.250 s, cap_2: 1000 at 2.750 s)",
            "client saw        timeout, 201 → ok 201",
            "design            broken — 2 charge rows for one purchase; the card captured 2",
            "                  times for one purchase",
            "property broken   at-most-one-charge: operation 1 was charged 2 times (ch_1 by",
            "                  1.1, ch_2 by 1.2)",
            "property broken   at-most-one-capture: operation 1's card was captured 2 times",
            "                  (cap_1 by 1.1 at 0.250 s, cap_2 by 1.2 at 2.750 s)",
            "property broken   exactly-one-on-success: operation 1 ended ok but has 2 charge",
            "                  rows and 2 captures",
            "fault             lose the response of op 1 attempt 1 — happened",
            "story             reproduces the article: 2 charges · client saw timeout, 201 →",
            "                  ok 201 · 0 replays",
            "seed              1"]

    def test_a_design_that_holds(self):
        """`run lost-response`: same-tx holds, every property named; the story reproduces the article."""
        assert lines(summary_table(story_run("lost-response")))[5:] == [
            "design             holds — all 9 properties hold: one charge row at most, one",
            "                   capture at most, exactly one on success, ledgers agree,",
            "                   replays identical, no stuck key, client never wrong, customer",
            "                   can find out, state as if each write ran once",
            "fault              lose the response of op 1 attempt 1 — happened",
            "story              reproduces the article: 1 charge · client saw timeout, 201 →",
            "                   ok 201 · replay identical · 1 replay",
            "seed               1"]

    def test_a_story_that_differs_says_why(self, tmp_path):
        """A file that states 2 charges where the run records 1: the story does not reproduce it, and the line
        beneath says what differed."""
        text = (ROOT / "scenarios" / "lost-response.toml").read_text(encoding="utf-8")
        mine = tmp_path / "mine.toml"
        mine.write_text(text.replace("[expect.same-tx]\ncharges = 1", "[expect.same-tx]\ncharges = 2"),
                        encoding="utf-8")
        assert lines(summary_table(simulate(load(str(mine)))))[-3:] == [
            "story              does not reproduce the article",
            "                   charges: expected 2, got 1",
            "seed               1"]

    def test_a_story_whose_broken_properties_differ_from_its_file_says_both(self, tmp_path):
        """A file that declares a double charge under same-tx, which keeps every property: the story does not
        reproduce it, and the line beneath names what the file declared and what broke."""
        text = (ROOT / "scenarios" / "lost-response.toml").read_text(encoding="utf-8")
        mine = tmp_path / "mine.toml"
        mine.write_text(text.replace("breaks = []", 'breaks = ["at-most-one-charge"]'), encoding="utf-8")
        assert lines(summary_table(simulate(load(str(mine)))))[-3:] == [
            "story              does not reproduce the article",
            "                   expected at-most-one-charge broken, got nothing",
            "seed               1"]

    def test_japanese(self):
        """設計 and 筋書き, in the article's words."""
        assert lines(summary_table(story_run("lost-response", None, "naive"), lang="ja"))[4:6] == [
            "設計                    正しくない — 1 件の購入に課金の記録が 2 件。1 件の購入に",
            "                        売上確定が 2 件"]


class TestNothingGreenOnABrokenRun:
    def test_a_double_charge_prints_no_green(self):
        """naive-double-charge: the 201s the API sends and the verdict are not green (timeline and summary)."""
        run = story_run("naive-double-charge")
        assert green_texts(lambda console: print_run(console, run)) == []

    def test_nor_does_its_brief_view(self):
        """`run --brief` of the double charge: no green either."""
        run = story_run("naive-double-charge")
        assert green_texts(lambda console: print_run(console, run, brief=True)) == []

    def test_a_design_that_holds_prints_its_verdict_and_answers_green(self):
        """lost-response under same-tx: the design's verdict is green, and so are the answers the API sends; the
        story's check is not."""
        texts = green_texts(lambda console: print_run(console, story_run("lost-response")))
        assert "holds — all 9 properties hold: one charge row at most, one" in texts
        assert not any("reproduces" in text for text in texts)
        assert any(text.startswith("201 Created") for text in texts)


class TestCompare:
    def test_a_card_says_both_verdicts(self):
        """On a narrow terminal each design is a card: its numbers, the design's verdict, the story's check."""
        stack = comparison_stack(compare(load("lost-response")))
        assert [line for item in stack[2:6] for line in lines(item)] == [
            "naive  charges 2  captures 2",
            "  design: broken — 2 charge rows for one purchase; the card captured 2 times for",
            "  one purchase",
            "  story: reproduces the article",
            "  client saw timeout, 201 → ok 201"]

    def test_the_table_has_a_column_for_each_verdict(self):
        """The wide table's last two columns: the design's verdict and the story's check."""
        table = lines(comparison_table(compare(load("crash-in-progress"), designs=["same-tx", "split-tx"])),
                      width=250)
        assert re.split(r"\s{2,}", table[2].strip())[-2:] == ["design verdict", "story check"]
        assert [re.split(r"\s{2,}", row.strip())[-2:] for row in table[4:6]] == [
            ["holds", "reproduces the article"],
            ["broken — a key record left in_progress; the client was told ok but nothing was charged",
             "no expectation"]]

    def test_the_rows_carry_both_verdicts(self):
        """Each row of `compare --format json` has the design's verdict and the story's check."""
        rows = compare(load("lost-response")).rows
        assert [(row["design_verdict"], row["story_check"]) for row in rows[:2]] == [
            ("broken", "reproduces"), ("holds", "reproduces")]


class TestMermaid:
    def test_the_closing_note_says_both_verdicts_on_a_red_ground(self):
        """A broken run's closing note says what went wrong, a problem a line, and the story's check, in a rect
        tinted red."""
        text = sequence(story_run("naive-double-charge"))
        assert text.splitlines()[-3:] == [
            "rect rgba(213, 94, 0, 0.14)",
            "Note over C,P: charges recorded 2<br/>money captured 2<br/>client ends ok 201<br/>"
            "design: broken — 2 charge rows for one purchase#59;<br/>the card captured 2 times for one purchase"
            "<br/>story: reproduces the article",
            "end"]

    def test_a_design_that_holds_is_on_a_green_ground(self):
        """same-tx on lost-response: the note says every property holds, in a rect tinted green."""
        text = sequence(story_run("lost-response"))
        assert text.splitlines()[-3] == "rect rgba(0, 158, 115, 0.12)"
        assert "<br/>design: holds — all 9 properties hold<br/>story: reproduces the article" in text

    def test_the_state_diagram_marks_the_path_without_green_on_a_broken_run(self):
        """The key's path is green only when the design holds."""
        assert "classDef taken fill:#edf3ef,stroke:#4f7a5c" in state(story_run("lost-response"))
        assert "classDef taken fill:#eaf1f5,stroke:#596b76" in state(story_run("crash-in-progress", None, "split-tx"))

