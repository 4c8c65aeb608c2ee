"""One catalogue, two languages (`idemsim.base.i18n`): no message exists in one language only."""

from __future__ import annotations

import re

import string

import pytest

from idemsim.base.i18n import LANGS, MESSAGES, language, text


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


class TestTheCatalogue:
    @pytest.mark.parametrize("message", sorted(MESSAGES))
    def test_every_message_exists_in_every_language(self, message):
        """Each message has a non-empty text in English and in Japanese, and nothing else."""
        assert set(MESSAGES[message]) == set(LANGS)
        assert all(MESSAGES[message][lang].strip() or MESSAGES[message]["en"] == "" for lang in LANGS)

    @pytest.mark.parametrize("message", sorted(MESSAGES))
    def test_both_languages_take_the_same_fields(self, message):
        """A message's Japanese fills the same fields as its English (none lost, none invented)."""
        en, ja = (fields(MESSAGES[message][lang]) for lang in ("en", "ja"))
        assert ja <= en and all(re.fullmatch(r"s\d*", f) for f in en - ja)  # English plurals ("s", "s2") have no Japanese

    def test_the_language_comes_from_the_call_the_environment_or_english(self, monkeypatch):
        """An explicit language wins, then IDEMSIM_LANG, then English; an unknown one falls back to English."""
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        assert (language(), language("en"), language("xx")) == ("ja", "en", "en")
        monkeypatch.delenv("IDEMSIM_LANG")
        assert language() == "en"
        assert text("state.in_progress", "ja") == "処理中"


def _english_fragments() -> list[str]:
    """The fixed words of every English message (between its fields) that are English prose: two words or more,
    and not words the Japanese keeps as they are (SQL, header names)."""
    out = set()
    for message in MESSAGES.values():
        for piece in re.split(r"\{[^}]*\}", message["en"]):
            piece = piece.strip(" ,;:()[]—·.")
            if re.search(r"[A-Za-z]+ [A-Za-z]+", piece) and piece not in message["ja"]:
                out.add(piece)
    return sorted(out)


COMMANDS = [
    ("run", "lost-response"),
    ("run", "crash-after-processor", "--design", "same-tx"),
    ("run", "pool"),
    ("list",),
    ("show", "lost-response"),
    ("compare", "crash-after-processor"),
    ("explore", "naive", "--max-examples", "20"),
    ("sweep", "loss", "--vary", "network.response.loss=0,0.3", "--design", "naive", "--seeds", "2", "--workers",
     "1", "--quiet"),
]


class TestEveryCommandSpeaksJapanese:
    @pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
    def test_no_english_sentence_of_the_catalogue_is_left_under_lang_ja(self, cli, args):
        """Whatever English words of the catalogue a command prints in English, it prints none of them under
        --lang ja: every message it shows is the Japanese one."""
        english, japanese = cli(*args), cli(*args, "--lang", "ja")
        assert japanese.exit_code == english.exit_code, japanese.output
        shown = [f for f in _english_fragments() if f in english.output]
        assert shown, "the English output uses the catalogue"
        assert [f for f in shown if f in japanese.output] == []

    def test_idemsim_lang_chooses_japanese_and_lang_en_overrides_it(self, cli, monkeypatch):
        """IDEMSIM_LANG=ja is the same as --lang ja, and --lang en wins over it."""
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        assert cli("run", "lost-response").output == cli("run", "lost-response", "--lang", "ja").output
        assert "charges recorded" in cli("run", "lost-response", "--lang", "en").output

    def test_run_lost_response_reads_in_the_articles_words(self, cli):
        """The summary of the article's first story names the charge record, the stored response and what the
        client saw, in the article's terms."""
        out = cli("run", "lost-response", "--lang", "ja").output
        for words in ("課金の記録", "売上確定", "クライアントが見た応答", "保存済みの応答", "最初の応答と同一",
                      "要求 1.1 への応答が失われる", "不明（タイムアウト）"):
            assert words in out


class TestJapaneseSpacing:
    def test_a_space_stands_between_a_latin_field_and_japanese_only(self):
        """`{client} が…` keeps its space after client-a and drops it after クライアント (the glossary's rule)."""
        seen = dict(seen="201", outcome="成功")
        assert text("verdict.seen", "ja", client="client-a", **seen) == "client-a が受け取った応答: 201 → 成功"
        assert text("verdict.seen", "ja", client="クライアント", **seen) == "クライアントが受け取った応答: 201 → 成功"

    def test_a_field_ending_in_japanese_joins_the_word_after_it(self):
        """The space after a field is dropped when both sides are Japanese, kept beside a number or a name."""
        assert text("event.wait", "ja", seconds="4 秒") == "4 秒待たされる"
        assert text("viol.by", "ja", id="ch_1", who="1.1") == "1.1 の ch_1"

    def test_english_is_formatted_as_written(self):
        """English messages are Python format strings and nothing more."""
        assert text("viol.by", "en", id="ch_1", who="1.1") == "ch_1 by 1.1"
