"""One name per thing: a party, an attempt and an amount are each written one way in every text view of every
shipped story, in English and in Japanese (`idemsim.views.names`)."""

from __future__ import annotations

import html
import re

import pytest
from typer.testing import CliRunner

from idemsim.cli.app import app
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs
from idemsim.views import mermaid
from idemsim.views.html import page
from idemsim.views.names import amount_text, attempt_name, party_name
from idemsim.views.prose import cells
from idemsim.views.scene import scene

runner = CliRunner()

OTHER_FORMS = {
    "en": [r"client-dup", r"api#\d", r"\bhandler api", r"\bretry \d", r"\(retry\)", r"\d,\d{3}"],
    "ja": [r"client-dup", r"クライアント-dup", r"api#\d", r"再送 \d", r"（再送）", r"\d,\d{3}", r"\d+ 回目の送信"],
}
PICTURE_FORMS = {"en": [*OTHER_FORMS["en"], r"\bapi\b", r"\bdb\b"], "ja": [*OTHER_FORMS["ja"], r"\bapi\b", r"\bdb\b"]}
"""The pictures write no party by its trace id either (``api``, ``db``: a lane, a participant, a from → to cell)."""

SHOWN = {"title", "name", "what", "shorter", "label", "again_label"}
"""The fields of a scene a picture shows as text (the rest are ids: a lane's, a message's ends, an owner)."""

PARTY_LANES = {"client", "gateway", "handler", "db", "processor", "background"}
"""The roles of the lanes that are parties (the rest are a client's belief, a key's record, the ledgers)."""
"""The ways the views wrote a party, an attempt or an amount before each had one name: none may come back."""


class TestTheNames:
    def test_parties_are_named_from_the_catalogue(self):
        """A trace's party id is shown by its display name, one per language; an unknown id as written."""
        ids = ["client", "client-dup", "api", "api#1", "db", "processor", "completer", "gateway", "reaper",
               "teller", "teller-dup"]
        assert [party_name(p) for p in ids] == [
            "client", "client (duplicate)", "API", "API #1", "DB", "processor", "completer", "gateway", "reaper",
            "teller", "teller (duplicate)"]
        assert [party_name(p, "ja") for p in ids] == [
            "クライアント", "クライアント（重複）", "決済 API", "決済 API #1", "DB", "決済代行", "完了処理",
            "ゲートウェイ", "期限切れ削除", "teller", "teller（重複）"]

    def test_an_attempt_and_an_amount(self):
        """``attempt 2`` (「2 回目」), and ``1000`` as the request's JSON writes it."""
        assert (attempt_name(2), attempt_name(2, "ja")) == ("attempt 2", "2 回目")
        assert (amount_text(1000), amount_text(1000, "ja"), amount_text(100000)) == ("1000", "1000", "100000")


def _brief_names(out: str) -> set[str]:
    """The who column of `run --brief`: each row starts with the time, then the names, padded to the column."""
    names = set()
    for line in out.splitlines():
        match = re.match(r" *\d+\.\d{3}  (.+?)(?:  |$)", line)
        if match:
            names.add(match.group(1).strip())
    return names


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("name", builtin_names())
def test_every_text_view_writes_each_thing_one_way(name, lang):
    """In `run`, `run --brief` and `compare` a party is its display name (the who column holds only names of the
    run's parties, never an id), an attempt is `attempt_name`'s, an amount `amount_text`'s."""
    parties = {p for story in runs(load(name)) for e in simulate(story).trace
               for p in (e.actor, e.target, e.data.get("src"), e.data.get("dst")) if isinstance(p, str) and p}
    shown = {party_name(p, lang) for p in parties}
    outs = [runner.invoke(app, [*command, name, "--lang", lang], env={"COLUMNS": "80"}).stdout
            for command in (["run"], ["run", "--brief"], ["compare"])]
    names = {part for who in _brief_names(outs[1]) for part in who.split(" → ")}
    assert names - shown == set()
    text = re.sub(r"\n +", " ", "\n".join(outs))
    assert [(form, re.search(form, text).group(0)) for form in OTHER_FORMS[lang] if re.search(form, text)] == []
    assert all(cells(w) for w in names)


def _shown(thing, key: str = "") -> list[str]:
    """The texts of a scene's dictionary that a picture shows: its `SHOWN` fields and its verdicts' words."""
    if isinstance(thing, dict):
        return [text for k, v in thing.items() for text in _shown(v, k if key != "verdicts" else "label")]
    if isinstance(thing, list):
        return [text for v in thing for text in _shown(v, key)]
    return [thing] if isinstance(thing, str) and key in SHOWN else []


def _page_text(markup: str) -> str:
    """An HTML fragment's text: its stylesheet and tags dropped, its entities read."""
    return html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<style.*?</style>", " ", markup)))


def _mermaid_text(diagram: str) -> str:
    """A sequence diagram's words: its participants' names and its messages' and notes' text, entities read."""
    words = []
    for line in diagram.splitlines()[1:]:
        line = line.strip()
        if line.startswith("participant "):
            words.append(line.split(" as ", 1)[1])
        elif ": " in line and not line.startswith("%%"):
            words.append(line.split(": ", 1)[1])
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))),
                  re.sub(r"#(lt|gt);", lambda m: {"lt": "<", "gt": ">"}[m.group(1)], " ".join(words)))


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("name", builtin_names())
def test_every_picture_writes_each_thing_one_way(name, lang):
    """The scene the figure draws (its lanes and labels), Mermaid's sequence diagram and the HTML page name a party,
    an attempt and an amount as the text views do: each party lane by `party_name`, Mermaid's participants by it
    too, the page's from → to column by it, and no other form of any of the three anywhere."""
    texts = []
    for story in runs(load(name)):
        run = simulate(story)
        drawn = scene(run, lang).to_dict()
        assert [lane["name"] for lane in drawn["lanes"] if lane["role"] in PARTY_LANES] == [
            party_name(lane["id"], lang) for lane in drawn["lanes"] if lane["role"] in PARTY_LANES]
        diagram = mermaid.sequence(run, lang)
        shown = {party_name(e, lang) for e in (*[x.actor for x in run.trace], "api", "db", "processor",
                                               "completer")}
        participants = [_mermaid_text("\n" + line) for line in diagram.splitlines() if line.strip().startswith(
            "participant ")]
        assert set(participants) - shown == set()
        texts += [*_shown(drawn), _mermaid_text(diagram), _page_text(page(run, "", lang))]
    text = re.sub(r"<br/>", " ", "\n".join(texts))
    assert [(form, re.search(form, text).group(0)) for form in PICTURE_FORMS[lang] if re.search(form, text)] == []
