"""One catalogue per language (`idemsim.base.i18n`): a file each, the same messages in every one, no message
exists in one language only, and a language is added by adding a file."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from idemsim.base.i18n import LANGS, MESSAGES, MESSAGES_DIR, language, languages_in, messages_in, text

LANGUAGE_FILES = sorted(Path(MESSAGES_DIR).glob("*.json"))

PLURAL_ENDING = re.compile(r"s\d*")
"""The fields English fills with a plural ending (``diagram{s}``, ``{s2}``); a language without plurals leaves them
out."""


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def catalogue(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


class TestTheLanguageFiles:
    def test_english_and_japanese_are_shipped(self):
        """idemsim/base/messages holds en.json and ja.json."""
        assert {path.name for path in LANGUAGE_FILES} >= {"en.json", "ja.json"}

    @pytest.mark.parametrize("path", LANGUAGE_FILES, ids=lambda path: path.name)
    def test_a_file_maps_message_ids_to_texts(self, path):
        """A language file is one JSON object whose every value is a text (a format string)."""
        messages = catalogue(path)
        assert isinstance(messages, dict) and messages
        assert [message for message, template in messages.items() if not isinstance(template, str)] == []

    @pytest.mark.parametrize("path", LANGUAGE_FILES, ids=lambda path: path.name)
    def test_every_file_holds_exactly_the_messages_of_english(self, path):
        """Every language file has the same message ids as en.json: none missing, none extra."""
        english, messages = set(catalogue(Path(MESSAGES_DIR) / "en.json")), set(catalogue(path))
        assert (sorted(english - messages), sorted(messages - english)) == ([], [])

    @pytest.mark.parametrize("path", LANGUAGE_FILES, ids=lambda path: path.name)
    def test_every_message_takes_the_fields_of_its_english(self, path):
        """Each message of a file fills the same ``{name}`` fields as its English (none lost, none invented), but
        for English's plural endings (``s``, ``s2``), which a language without plurals may leave out."""
        english = catalogue(Path(MESSAGES_DIR) / "en.json")
        differ = {}
        for message, template in catalogue(path).items():
            if message not in english:
                continue  # an extra message is the test above's to report
            lost, invented = fields(english[message]) - fields(template), fields(template) - fields(english[message])
            if invented or not all(PLURAL_ENDING.fullmatch(name) for name in lost):
                differ[message] = (sorted(lost), sorted(invented))
        assert differ == {}

    @pytest.mark.parametrize("path", LANGUAGE_FILES, ids=lambda path: path.name)
    def test_a_file_is_written_one_message_a_line_in_the_order_of_english(self, path):
        """A file lists its messages in the order of en.json, one a line, as written by ``json.dumps(messages,
        ensure_ascii=False, indent=2)``: the files read side by side, and a change is a one-line diff."""
        messages = catalogue(path)
        assert list(messages) == list(catalogue(Path(MESSAGES_DIR) / "en.json"))
        assert path.read_text(encoding="utf-8") == json.dumps(messages, ensure_ascii=False, indent=2) + "\n"


class TestTheLoader:
    def test_the_languages_are_the_files_present_english_first(self, tmp_path):
        """Each ``<lang>.json`` of a folder is a language, English first and the others by name; other files are
        not languages."""
        for name in ("ja.json", "de.json", "en.json", "README.md"):
            (tmp_path / name).write_text("{}", encoding="utf-8")
        assert languages_in(str(tmp_path)) == ("en", "de", "ja")

    def test_adding_a_file_adds_a_language(self, tmp_path):
        """A folder with one more file has one more language, whose texts the catalogue reads beside the others."""
        (tmp_path / "en.json").write_text(json.dumps({"greeting": "hello {name}"}), encoding="utf-8")
        (tmp_path / "fr.json").write_text(json.dumps({"greeting": "bonjour {name}"}), encoding="utf-8")
        assert languages_in(str(tmp_path)) == ("en", "fr")
        assert messages_in(str(tmp_path), ("en", "fr")) == {"greeting": {"en": "hello {name}", "fr": "bonjour {name}"}}

    def test_the_shipped_languages_are_english_then_japanese(self):
        """`LANGS` is the languages of idemsim/base/messages: en, then ja."""
        assert LANGS == languages_in(MESSAGES_DIR) == ("en", "ja")

    def test_the_catalogue_is_the_files_read_together(self):
        """`MESSAGES` holds, for each message id in the order of en.json, its text in every language file."""
        assert MESSAGES == messages_in(MESSAGES_DIR, LANGS)
        assert list(MESSAGES) == list(catalogue(Path(MESSAGES_DIR) / "en.json"))
        assert MESSAGES["state.in_progress"] == {"en": "in_progress", "ja": "処理中"}


class TestTheCatalogue:
    @pytest.mark.parametrize("message", sorted(MESSAGES))
    def test_every_message_exists_in_every_language(self, message):
        """Each message has a non-empty text in English and in Japanese, and nothing else."""
        assert set(MESSAGES[message]) == set(LANGS)
        assert all(MESSAGES[message][lang].strip() or MESSAGES[message]["en"] == "" for lang in LANGS)

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
    pytest.param(("list",), marks=pytest.mark.slow),
    ("show", "lost-response"),
    ("compare", "crash-after-processor"),
    pytest.param(("explore", "naive", "--max-examples", "20"), marks=pytest.mark.slow),
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
        client saw, in the article's terms (a line that Japanese wrapping broke, joined again)."""
        out = re.sub(r"\n +", "", cli("run", "lost-response", "--lang", "ja").output)
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
