"""Every word idemsim shows a reader, in English and in Japanese: one catalogue per language, each a file.

The catalogue of a language is ``idemsim/base/messages/<lang>.json``: one JSON object, message id -> a Python format
string whose fields `text` fills. The languages are the files present (`LANGS`: English first, it is the default,
then the others by name), so adding a language is adding a file. Plain JSON rather than gettext: idemsim's texts are
written by the same people as the code, the files need no build step or binary catalogue, a browser page can read
the very same files, and a test can check that every file holds the same messages with the same fields.
`MESSAGES` is the files read together (message id -> {language -> text}), read on first use: importing this module
reads no catalogue, only which files there are.

A message id's prefix names what shows it, e.g. ``party.``, ``state.``, ``money.``, ``event.`` (the words of the
story), ``tl.`` (`idemsim.views.timeline`), ``term.``, ``show.``, ``cmp.``, ``sw.`` (`idemsim.views.terminal`),
``viol.`` (`idemsim.judge.properties`), ``fault.`` (`idemsim.model.faults`), ``ex.`` (`idemsim.runners.explore`),
``mm.`` (`idemsim.views.mermaid`), ``figure.``, ``legend.`` (`idemsim.views.figure`), ``err.`` (every line
`idemsim.base.errors.InputError` prints), ``usage.`` (`idemsim.cli.common`), ``db.`` (``idemsim db …``). Some English
texts are not idemsim's to word: ``os.`` is the system's own (C's strerror), ``toml.`` tomllib's and ``json.`` the
json module's, ``pyd.`` the gist of pydantic's message (idemsim shows pydantic's own in English); the Japanese of
each says the same. The Japanese texts use the article's own terms (冪等キー, 一意制約, 処理中, 完了, 課金, 再送 …);
where the article has none, the glossary ``docs/ja/glossary.md`` fixes one.

The language is chosen per call (``lang``), by ``--lang`` on the command line, or by ``IDEMSIM_LANG``;
English is the default.
"""

from __future__ import annotations

import json
import os
import string
import unicodedata
from functools import cache

MESSAGES_DIR = os.path.join(os.path.dirname(__file__), "messages")
"""The folder of the catalogues, one ``<lang>.json`` per language (package data, beside this file)."""


def languages_in(folder: str) -> tuple[str, ...]:
    """The languages a folder holds a catalogue of (``<lang>.json``): English first, then the others by name."""
    langs = sorted(name[: -len(".json")] for name in os.listdir(folder) if name.endswith(".json"))
    return tuple(sorted(langs, key=lambda lang: lang != "en"))


def messages_in(folder: str, langs: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """The catalogues of ``langs`` in ``folder`` read together: message id -> {language -> text}, in the order of
    the first language's file; a language lacking a message lacks its entry."""
    messages: dict[str, dict[str, str]] = {}
    for lang in langs:
        with open(os.path.join(folder, f"{lang}.json"), "rb") as file:  # JSON is UTF-8; json.loads decodes it
            for message, template in json.loads(file.read()).items():
                messages.setdefault(message, {})[lang] = template
    return messages


LANGS = languages_in(MESSAGES_DIR)
"""The languages every message exists in: one per catalogue file, English first."""

MESSAGES: dict[str, dict[str, str]]
"""message id -> {language -> format string}: read from the files on first use (see `__getattr__`)."""


@cache
def _messages() -> dict[str, dict[str, str]]:
    return messages_in(MESSAGES_DIR, LANGS)


def __getattr__(name: str) -> dict[str, dict[str, str]]:
    """`MESSAGES`, read from the catalogue files the first time a module asks for it (PEP 562)."""
    if name == "MESSAGES":
        return _messages()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def language(lang: str | None = None) -> str:
    """The language to use: ``lang`` if given, else ``IDEMSIM_LANG``, else English."""
    chosen = lang or os.environ.get("IDEMSIM_LANG") or "en"
    return chosen if chosen in LANGS else "en"


def text(message: str, lang: str | None = None, /, **fields) -> str:
    """The message ``message`` in ``lang``, its fields filled in. In Japanese, the half-width space a message
    puts between a field and a Japanese word (``{client} が``: needed when the field is ``client-a``) is dropped
    when the field itself is Japanese (``クライアントが``), as the glossary's spacing rule asks."""
    lang = language(lang)
    template = _messages()[message][lang]
    return template.format(**fields) if lang != "ja" else _japanese(template, fields)


_FORMATTER = string.Formatter()


def _japanese(template: str, fields: dict) -> str:
    out = ""
    for literal, name, spec, conversion in _FORMATTER.parse(template):
        if literal[:1] == " " and literal[1:2] not in ("", " ") and wide(literal[1]) and out and wide(out[-1]):
            literal = literal[1:]
        out += literal
        if name is None:
            continue
        value = _FORMATTER.convert_field(_FORMATTER.get_field(name, (), fields)[0], conversion)
        value = _FORMATTER.format_field(value, _FORMATTER.vformat(spec, (), fields))
        if value and wide(value[0]) and out[-1:] == " " and out[-2:-1] not in ("", " ") and wide(out[-2]):
            out = out[:-1]
        out += value
    return out


def wide(ch: str) -> bool:
    """Whether a character is East Asian wide (Japanese): two terminal cells, and no space beside another."""
    return unicodedata.east_asian_width(ch) in "WF"
