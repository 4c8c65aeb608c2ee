"""The Japanese texts: every shipped scenario and sweep, and every variant of each, tells its story in Japanese too.

A story's reader-facing fields (title, summary, group, story, teaches) each have a translation in its ``[ja]``
table, a variant's own fields in ``[variants.NAME.ja]``; the Japanese is written in the article's terms, fixed
by ``docs/ja/glossary.md``, which these tests also check.
"""

import re
import tomllib
from pathlib import Path

import pytest

from idemsim.scenario.schema import builtin_dir, load, variant

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "ja" / "glossary.md"
ARTICLE = ROOT.parent / "shared" / "article" / "idempotency-keys.ja.txt"
FIELDS = ("title", "summary", "group", "story", "teaches")

FILES = sorted(builtin_dir().glob("*.toml")) + sorted((builtin_dir() / "sweeps").glob("*.toml"))
STORIES = [(path, None) for path in FILES] + [
    (path, name) for path in FILES for name in tomllib.loads(path.read_text(encoding="utf-8")).get("variants", {})]
IDS = [f"{path.stem}{'/' + name if name else ''}" for path, name in STORIES]
VARIANTS = [(path, name) for path, name in STORIES if name is not None]

ENGLISH_RUN = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*(?:[ ,;:]+[A-Za-z]+(?:['’-][A-Za-z]+)*){5,}")
"""Six or more plain English words in a row: a sentence left untranslated."""

KANA = re.compile(r"[\u3040-\u30ff]")


def raw(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def english_and_japanese(path: Path, name: str | None) -> list[tuple[str, str, str | None]]:
    """``(field, English, Japanese)`` for every reader-facing field the story (or the variant itself) defines in
    English, the Japanese from its own ``[ja]`` table (a variant's from ``[variants.NAME.ja]``, not inherited)."""
    doc = raw(path)
    own = doc if name is None else doc["variants"][name]
    ja = own.get("ja", {})
    return [(f, own[f], ja.get(f)) for f in FIELDS if own.get(f, "").strip()]


def translated(path: Path, name: str | None) -> list[tuple[str, str, str]]:
    """The fields of `english_and_japanese` that have their Japanese (a missing one fails a test of its own)."""
    return [(f, en, ja) for f, en, ja in english_and_japanese(path, name) if ja]


def story(path: Path, name: str | None):
    return load(str(path)) if name is None else variant(load(str(path)), name)


def prose(text: str) -> str:
    """The text without its `code spans`, whose English is an identifier, not a sentence."""
    return re.sub(r"`[^`]*`", "", text)


@pytest.mark.parametrize("path,name", STORIES, ids=IDS)
class TestEveryStory:
    def test_every_english_field_has_its_japanese(self, path, name):
        """Every field the story or variant writes in English has its own Japanese text, not empty."""
        pairs = english_and_japanese(path, name)
        assert pairs, "a story has a title and a summary at least"
        assert [f for f, _, ja in pairs if not (ja and ja.strip())] == []

    def test_the_japanese_is_what_the_story_shows_in_japanese(self, path, name):
        """`Scenario.text(field, "ja")` gives the Japanese text, for a variant its own over the main story's."""
        told = story(path, name)
        for field, en, ja in translated(path, name):
            assert (told.text(field, "ja"), told.text(field)) == (ja, en), field

    def test_the_japanese_leaves_no_english_sentence(self, path, name):
        """No Japanese text holds six English words in a row outside a code span, and every one has kana."""
        for field, _, ja in translated(path, name):
            assert ENGLISH_RUN.findall(prose(ja)) == [], field
            assert KANA.search(ja), field

    def test_the_japanese_has_no_hard_line_break(self, path, name):
        """A Japanese text (the summary too) has no line break inside it, so no view joins its lines with spaces."""
        for field, _, ja in translated(path, name):
            assert "\n" not in ja.strip(), field

    def test_idemsims_own_marks_are_kept(self, path, name):
        """The "(idemsim)" mark of a title or summary and the "idemsim's addition" opening stay in the Japanese."""
        for field, en, ja in translated(path, name):
            if en.startswith("(idemsim)"):
                assert ja.startswith("（idemsim）"), field
            if en.strip().startswith("idemsim's addition, beyond the article."):
                assert ja.startswith("記事の範囲を越えた idemsim の追加です。"), field

    def test_a_numbered_group_keeps_its_number(self, path, name):
        """A numbered group ("4. …") keeps its number in Japanese, so `idemsim list` orders both alike."""
        for field, en, ja in translated(path, name):
            number = re.match(r"\d+\. ", en)
            if field == "group" and number:
                assert ja.startswith(number.group(0)), ja


@pytest.mark.parametrize("path,name", VARIANTS, ids=[f"{p.stem}/{n}" for p, n in VARIANTS])
def test_a_variants_own_fields_are_its_own_translation(path, name):
    """A variant that retells a field in English retells it in Japanese too, not inheriting the main story's."""
    main = raw(path)["ja"]
    for field, _, ja in translated(path, name):
        assert ja != main.get(field), field


@pytest.mark.skipif(not ARTICLE.exists(), reason="the article is not beside the repository")
def test_the_groups_of_the_articles_sections_are_its_headings():
    """Groups 1 to 6 are named, in Japanese, by the article's own section headings."""
    headings = set(ARTICLE.read_text(encoding="utf-8").splitlines())
    groups = {raw(path)["ja"]["group"] for path in FILES}
    numbered = {g for g in groups if re.match(r"[1-6]\. ", g)}
    assert len(numbered) == 6
    assert {g.split(" ", 1)[1] for g in numbered} <= headings


class TestGlossary:
    def test_the_glossary_names_the_articles_core_terms(self):
        """docs/ja/glossary.md exists and names 冪等キー, 一意制約, 処理中, 完了 and 課金 with their code names."""
        text = GLOSSARY.read_text(encoding="utf-8")
        for term in ("冪等キー", "一意制約", "処理中", "完了", "未登録", "課金", "指紋", "保持期限"):
            assert term in text, term
        for code in ("`in_progress`", "`done`", "`absent`", "`fingerprint`", "`api.ttl`"):
            assert code in text, code

    def test_the_glossary_fixes_the_terms_idemsim_adds(self):
        """The glossary fixes a Japanese word for each term idemsim adds beyond the article."""
        text = GLOSSARY.read_text(encoding="utf-8")
        for term in ("決済代行", "売上確定", "売上台帳", "完了処理", "回復地点", "リース", "記録のない売上確定"):
            assert term in text, term
