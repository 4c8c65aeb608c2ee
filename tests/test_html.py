"""A run as HTML, for Jupyter (`idemsim.views.html`): one title, one summary with both verdicts, a scoped stylesheet,
the figure as inline SVG, the timeline as a table; no glyph that needs a font the page does not declare."""

from __future__ import annotations

import functools
import re
from html.parser import HTMLParser

import pytest

from idemsim.judge.summary import is_load
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs
from idemsim.views.html import WRAPPER, page, run_html

STUB = "<svg class=\"idemsim-figure\"></svg>"
"""A stand-in for the figure, so that the page around it is tested without drawing (`TestFigure` draws)."""


@functools.lru_cache(maxsize=None)
def story_run(name: str, variant: str | None = None, design: str | None = None):
    story = next(s for s in runs(load(name)) if s.variant == variant)
    return simulate(story, design)


class Outline(HTMLParser):
    """A page read back: whether its tags balance, its summary as rows of (header, text, class), its headings,
    its stylesheets and its timeline's rows."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []
        self.summary: list[tuple] = []
        self.timeline: list[tuple[str, ...]] = []
        self.headings: list[str] = []
        self.styles: list[str] = []
        self.svgs: list[dict[str, str | None]] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._row: list | None = None
        self.feed(text)
        self.close()
        self.problems += [f"<{tag}> never closed" for tag in self.open]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in self.VOID:
            self.open.append(tag)
        if tag == "table":
            self._table = a.get("class")
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td"):
            self._cell = ["", a.get("class") or ""]
        elif tag in ("h1", "h2", "h3", "h4", "style"):
            self._cell = ["", tag]
        elif tag == "svg":
            self.svgs.append(a)

    def handle_startendtag(self, tag, attrs):
        if tag == "svg":
            self.svgs.append(dict(attrs))

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.open[-1] if self.open else 'nothing'}>")
        else:
            self.open.pop()
        if tag in ("th", "td") and self._cell is not None and self._row is not None:
            text, cls = self._cell
            self._row.append((text, cls) if cls else text)
            self._cell = None
        elif tag in ("h1", "h2", "h3", "h4"):
            self.headings.append(self._cell[0])
            self._cell = None
        elif tag == "style":
            self.styles.append(self._cell[0])
            self._cell = None
        elif tag == "tr" and self._row is not None:
            (self.summary if self._table == "idemsim-summary" else self.timeline).append(tuple(self._row))
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data


def emoji(text: str) -> list[str]:
    """The characters of ``text`` that need an emoji or symbol font: outside the BMP, or in the blocks of
    technical symbols, dingbats, miscellaneous symbols and arrows, or a variation selector."""
    ranges = [(0x2300, 0x23FF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0xFE00, 0xFE0F), (0x10000, 0x10FFFF)]
    return sorted({c for c in text if any(lo <= ord(c) <= hi for lo, hi in ranges)})


class TestPage:
    def test_one_title(self):
        """The page has one heading, the run's title; the figure under it has none of its own."""
        outline = Outline(page(story_run("naive-double-charge"), STUB))
        assert outline.headings == ["naive-double-charge — design naive — seed 1"]

    def test_a_double_charge_says_both_verdicts(self):
        """On a double charge the design is broken (in red, with what went wrong and each property broken) and the
        story reproduces the article (neutral); the client's ok is not green."""
        outline = Outline(page(story_run("naive-double-charge"), STUB))
        assert outline.summary == [
            ("charges recorded", "2"),
            ("money captured", "2  (cap_1: 1000 at 0.250 s, cap_2: 1000 at 2.750 s)"),
            ("client saw", "timeout, 201 → ok 201"),
            ("design", ("broken — 2 charge rows for one purchase; the card captured 2 times for one purchase",
                        "idemsim-broken")),
            ("property broken", ("at-most-one-charge: operation 1 was charged 2 times (ch_1 by 1.1, ch_2 by 1.2)",
                                 "idemsim-problem")),
            ("property broken", ("at-most-one-capture: operation 1's card was captured 2 times (cap_1 by 1.1 at "
                                 "0.250 s, cap_2 by 1.2 at 2.750 s)", "idemsim-problem")),
            ("property broken", ("exactly-one-on-success: operation 1 ended ok but has 2 charge rows and 2 captures",
                                 "idemsim-problem")),
            ("fault", "lose the response of op 1 attempt 1 — happened"),
            ("story", "reproduces the article: 2 charges · client saw timeout, 201 → ok 201"),
            ("seed", "1")]

    def test_a_double_charge_in_japanese(self):
        """The same summary in the article's words."""
        outline = Outline(page(story_run("naive-double-charge"), STUB, "ja"))
        assert outline.headings == ["naive-double-charge — 設計 naive — シード 1"]
        assert outline.summary == [
            ("課金の記録", "2"),
            ("売上確定", "2  (cap_1: 1000 円（0.250 秒）、cap_2: 1000 円（2.750 秒）)"),
            ("クライアントが見た応答", "タイムアウト、201 → 成功 201"),
            ("設計", ("正しくない — 1 件の購入に課金の記録が 2 件。1 件の購入に売上確定が 2 件", "idemsim-broken")),
            ("破れた性質", ("課金の記録は高々 1 件: 操作 1 が 2 回課金された（1.1 の ch_1、1.2 の ch_2）",
                       "idemsim-problem")),
            ("破れた性質", ("売上確定は高々 1 件: 操作 1 のカードが 2 回売上確定された"
                       "（0.250 秒に 1.1 の cap_1、2.750 秒に 1.2 の cap_2）", "idemsim-problem")),
            ("破れた性質", ("成功なら課金の記録も売上確定もちょうど 1 件: "
                       "操作 1 は成功で終わったが、課金の記録 2 件、売上確定 2 件", "idemsim-problem")),
            ("障害", "操作 1 の 1 回目への応答を失う — 起きた"),
            ("筋書き", "記事の通りに再現する: 課金の記録 2 件 · クライアントが見た応答はタイムアウト、201 → 成功 201"),
            ("シード", "1")]

    def test_a_design_that_holds_is_green(self):
        """same-tx on lost-response: the design holds (green, naming the properties), the client's ok is green."""
        outline = Outline(page(story_run("lost-response"), STUB))
        assert outline.summary == [
            ("charges recorded", "1"),
            ("money captured", "1  (cap_1: 1000 at 0.250 s)"),
            ("client saw", ("timeout, 201 → ok 201", "idemsim-outcome-ok")),
            ("replayed response", "identical to the first"),
            ("key records held", "1 (0 in_progress)"),
            ("design", ("holds — all 9 properties hold: one charge row at most, one capture at most, exactly one on "
                        "success, ledgers agree, replays identical, no stuck key, client never wrong, customer can "
                        "find out, state as if each write ran once", "idemsim-holds")),
            ("fault", "lose the response of op 1 attempt 1 — happened"),
            ("story", "reproduces the article: 1 charge · client saw timeout, 201 → ok 201 · replay identical · "
                      "1 replay"),
            ("seed", "1")]

    def test_the_timeline_is_a_table(self):
        """Time, from → to, what happened: one row an event, every text escaped."""
        text = page(story_run("lost-response"), STUB)
        outline = Outline(text)
        assert outline.timeline[:3] == [
            ("time (s)", "from → to", "what happened"),
            (("0.000", "idemsim-time"), ("client", "idemsim-who"),
             "operation 1 begins: POST /charges {\"amount\": 1000}"),
            (("0.000", "idemsim-time"), ("client → API", "idemsim-who"),
             "POST /charges  Idempotency-Key: k-8f3a  [attempt 1, request 1.1]")]
        assert len(outline.timeline) == 1 + len(story_run("lost-response").trace)
        assert "201 Created {&quot;id&quot;: &quot;ch_1&quot;" in text

    def test_a_long_timeline_is_cut_and_says_so(self):
        """At ``max_rows`` events the table stops and says how many it left out."""
        run = story_run("lost-response")
        outline = Outline(page(run, STUB, max_rows=5))
        assert len(outline.timeline) == 1 + 5 + 1
        assert outline.timeline[-1] == ("", "", f"… {len(run.trace) - 5} more events (run.trace has them all)")

    @pytest.mark.parametrize(("name", "lang", "icons"), [("same-tx-wait", "ja", ["待つ"]),
                                                          ("crash-after-processor", "en", ["crash"]),
                                                          ("lost-response", "en", ["lost"])])
    def test_the_symbols_are_drawn_labelled(self, name, lang, icons):
        """A wait, a crash and a lost message are small inline SVG icons, each labelled in words: no character of
        the page needs an emoji or symbol font."""
        text = page(story_run(name), STUB, lang)
        assert [s["aria-label"] for s in Outline(text).svgs if s.get("class") == "idemsim-icon"] == icons
        assert emoji(text) == []

    @pytest.mark.slow
    @pytest.mark.parametrize("lang", ["en", "ja"])
    def test_every_story_needs_no_emoji_font_and_its_tags_balance(self, lang):
        """Every shipped story and variant, in both languages: no character that needs an emoji or symbol font,
        the tags balance, one heading."""
        for name in builtin_names():
            for story in runs(load(name)):
                run = simulate(story)
                if is_load(run):
                    continue  # a load: its story is its figure (TestFigure)
                text = page(run, STUB, lang)
                outline = Outline(text)
                assert (name, story.variant, emoji(text), outline.problems, len(outline.headings)) == \
                       (name, story.variant, [], [], 1)

    def test_the_stylesheet_is_scoped(self):
        """One stylesheet, inside the page, every selector under the wrapper: nothing leaks into the notebook's page;
        no file or font is fetched."""
        text = page(story_run("lost-response"), STUB)
        outline = Outline(text)
        assert text.startswith(f"<div class='{WRAPPER}' lang='en'><style>")
        assert len(outline.styles) == 1
        rules = re.findall(r"([^{}]+)\{[^{}]*\}", outline.styles[0])
        selectors = [s.strip() for rule in rules for s in rule.split(",")]
        assert len(selectors) > 10
        assert [s for s in selectors if not s.startswith(f".{WRAPPER}")] == []
        assert "@import" not in text and "url(" not in outline.styles[0] and "@font-face" not in text
        assert '"Hiragino Sans"' in outline.styles[0] and '"Noto Sans CJK JP"' in outline.styles[0]


@pytest.mark.slow
class TestFigure:
    def test_the_figure_is_inline_svg_without_its_own_title_or_verdict(self):
        """The figure is matplotlib's SVG inline: sized by CSS, labelled, its glyphs drawn as paths, its ids
        prefixed, no stylesheet of its own; the title and verdict lines are the page's, not the figure's."""
        text = run_html(story_run("naive-double-charge"), "ja")
        outline = Outline(text)
        figure = next(s for s in outline.svgs if s.get("class") == "idemsim-figure")
        assert figure["aria-label"] == "naive-double-charge — 設計 naive — シード 1" and "width" not in figure
        assert (outline.problems, emoji(text), len(outline.styles), len(outline.headings)) == ([], [], 1, 1)
        assert "<text" not in text and "<?xml" not in text and "<!DOCTYPE" not in text
        ids = re.findall(r'\bid="([^"]+)"', text)
        assert ids and all(i.startswith("idemsim-") for i in ids)
        assert "<!-- naive-double-charge" not in text and "<!-- 設計: " not in text

    def test_two_figures_share_no_id(self):
        """Two runs on one page: their figures' ids differ."""
        def ids(run):
            return set(re.findall(r'\bid="([^"]+)"', run_html(run)))
        assert not ids(story_run("lost-response")) & ids(story_run("naive-double-charge"))

    def test_a_load_shows_its_attempts_per_second(self):
        """A load's figure is its attempts per second, without its own title or verdict lines."""
        text = run_html(story_run("herd"), max_rows=10)
        outline = Outline(text)
        assert (outline.problems, emoji(text), outline.headings) == ([], [], ["herd — design same-tx — seed 1"])
        assert "<!-- herd — design" not in text and "<!-- design: " not in text

    def test_a_run_shows_itself_in_jupyter(self):
        """`Run._repr_html_` is the page."""
        run = story_run("lost-response")
        assert run._repr_html_() == run_html(run)
