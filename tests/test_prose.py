"""Prose laid out for a terminal, in English and Japanese (`idemsim.views.prose`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text

from idemsim.views.prose import NO_LINE_END, NO_LINE_START, reflow, unwrap_japanese, wrap


def test_english_wraps_at_spaces():
    """English breaks only at spaces, and the spaces a break falls on disappear."""
    assert wrap("the retry waits on the index", 12) == ["the retry", "waits on the", "index"]


def test_japanese_wraps_between_characters_by_display_width():
    """Japanese breaks between any two characters, each two cells wide; a number stays whole."""
    assert wrap("課金は 1000 件です", 8) == ["課金は", "1000 件", "です"]


def test_a_line_never_starts_with_a_closing_mark():
    """A full stop that would start a line takes the character before it along (kinsoku)."""
    assert wrap("再送します。次", 10) == ["再送しま", "す。次"]


def test_a_line_never_ends_with_an_opening_bracket():
    """An opening bracket that would end a line moves to the next one with what it opens."""
    assert wrap("設計（naive）", 10) == ["設計", "（naive）"]


def test_reflow_joins_japanese_lines_without_a_space_and_english_ones_with_one():
    """A paragraph's hard breaks become a space in English and nothing between two Japanese characters."""
    assert reflow("one\ntwo\n\n課金\nは\n1 件") == "one two\n課金は 1 件"


def test_an_article_passage_is_rejoined_only_where_the_file_broke_a_sentence():
    """Mid-sentence breaks are rejoined (a number spaced off, as the article writes); a full stop, a list
    item and psql's output keep their lines."""
    passage = "要求が\n2 通届けば\n課金が\n増えます。\nid\n----\n適さないケース\n- 操作"
    assert unwrap_japanese(passage) == "要求が 2 通届けば課金が増えます。\nid\n----\n適さないケース\n- 操作"


@given(st.lists(st.sampled_from(["a", "bc", " ", "課", "金", "。", "（", "）", "、", "123"]), max_size=40).map("".join),
       st.integers(min_value=2, max_value=30))
def test_no_wrapped_line_is_wider_than_asked_and_no_text_is_lost(line, width):
    """Whatever the text and width, every line fits, and only spaces are dropped."""
    lines = wrap(line, width)
    assert all(Text(piece).cell_len <= width for piece in lines)
    assert "".join(lines).replace(" ", "") == line.replace(" ", "")


@given(st.lists(st.sampled_from(["課", "金", "理", "課。", "金、", "（課）", "（金理）"]), min_size=3,
                max_size=30).map("".join),
       st.integers(min_value=6, max_value=30))
def test_kinsoku_holds_wherever_the_text_allows_it(line, width):
    """No line after the first starts with a closing mark, and no line but the last ends with an opening
    one (where the marks are never adjacent, so that a break exists)."""
    lines = wrap(line, width)
    for before, after in zip(lines, lines[1:]):
        if len(before) > 1:
            assert after[0] not in NO_LINE_START and before[-1] not in NO_LINE_END
