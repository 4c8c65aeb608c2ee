"""One catalogue, two languages (`idemsim.i18n`): no message exists in one language only."""

from __future__ import annotations

import string

import pytest

from idemsim.i18n import LANGS, MESSAGES, language, text


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
        assert ja <= en and (en - ja) <= {"s"}  # English plurals need an "s" that Japanese does not

    def test_the_language_comes_from_the_call_the_environment_or_english(self, monkeypatch):
        """An explicit language wins, then IDEMSIM_LANG, then English; an unknown one falls back to English."""
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        assert (language(), language("en"), language("xx")) == ("ja", "en", "en")
        monkeypatch.delenv("IDEMSIM_LANG")
        assert language() == "en"
        assert text("state.in_progress", "ja") == "処理中"
