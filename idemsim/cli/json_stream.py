"""``idemsim run --format json`` written as the runs go: the memory it needs does not grow with the trace.

The document is the one ``json.dumps(document, indent=1)`` writes for ``{"version": …, **main.to_dict(),
"variants": [run.to_dict() …]}`` (see `idemsim.runners.simulation.Run.to_dict`), byte for byte: each event of a trace is
written as it is recorded (`idemsim.runners.simulation.simulate`'s ``stream``), indented as it would be inside the whole
document, and is not kept. The text is gathered in a spooled temporary file (in memory while small, on disk
beyond `SPOOL_BYTES`) and copied to standard output once every run has ended, so that a run that fails (an input
error, a bound reached) prints nothing but its error, as before. The same escaping as `idemsim.cli.app.json_text`
applies: every character a terminal could act on is escaped; if standard output cannot encode some character,
the whole document must be ASCII-escaped, which only the document kept whole can give: `write` then returns
False and the caller writes it the old way.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from typing import Any, Callable

from ..judge.run_summary import Summary

SPOOL_BYTES = 8 << 20
"""Output kept in memory before the spool moves to a temporary file."""


def _dump(value: Any, level: int) -> str:
    """``value`` as ``json.dumps(…, indent=1)`` writes it nested ``level`` deep."""
    text = json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)
    return text.replace("\n", "\n" + " " * level) if level else text


def _write_value(write: Callable[[str], None], value: Any, level: int) -> None:
    """``value`` as `_dump` gives it, written piece by piece: a table member by member, a long list item by item,
    so that no text of the whole (a load's summary) is ever held at once."""
    if isinstance(value, dict) and value and all(isinstance(key, str) for key in value):
        pad = " " * (level + 1)
        for i, (key, item) in enumerate(value.items()):
            write(("{\n" if i == 0 else ",\n") + pad + json.dumps(key, ensure_ascii=False) + ": ")
            _write_value(write, item, level + 1)
        write("\n" + " " * level + "}")
    elif isinstance(value, list) and len(value) > LONG_LIST:
        pad = " " * (level + 1)
        for i, item in enumerate(value):
            write(("[\n" if i == 0 else ",\n") + pad + _dump(item, level + 1))
        write("\n" + " " * level + "]")
    else:
        write(_dump(value, level))


LONG_LIST = 64
"""A list longer than this is written item by item."""


class _Unencodable(Exception):
    """Standard output cannot encode a character of the document."""


class _Writer:
    def __init__(self, spool, encoding: str, escape: Callable[[str], str]) -> None:
        self.spool = spool
        self.encoding = encoding
        self.escape = escape

    def __call__(self, text: str) -> None:
        try:
            text.encode(self.encoding)
        except UnicodeEncodeError:
            raise _Unencodable from None
        if not all(line.isprintable() for line in text.split("\n")):
            text = "".join(ch if ch.isprintable() or ch == "\n" else self.escape(ch) for ch in text)
        self.spool.write(text)


def _run(write: Callable[[str], str], story, design: str | None, seed: int | None, level: int, simulate,
         event_json) -> Summary:
    """One run as the object ``Run.to_dict`` gives, keys at indent ``level`` (the caller wrote its ``{`` or
    the keys before); returns its summary."""
    pad = " " * level
    head = {"scenario": story.name, "variant": story.variant, "design": design or story.design,
            "seed": story.seed if seed is None else seed}
    for key, value in head.items():
        write(f",\n{pad}{json.dumps(key)}: {_dump(value, level)}")
    write(f",\n{pad}\"trace\": [")
    inner = " " * (level + 1)
    state = {"first": True}

    def event(e) -> None:
        write(("\n" if state["first"] else ",\n") + inner + _dump(event_json(e), level + 1))
        state["first"] = False

    run = simulate(story, design, seed, stream=event)
    write("]" if state["first"] else f"\n{pad}]")
    write(f",\n{pad}\"summary\": ")
    _write_value(write, run.summary.to_dict(), level)
    return run.summary


def write(stories: list, design: str | None, seed: int | None, version: int,
          escape: Callable[[str], str]) -> list[Summary] | None:
    """Run ``stories`` (the main story, then its variants) and write the document to standard output; the
    runs' summaries, or None (nothing written) when standard output cannot encode the document."""
    from ..runners.simulation import event_json, simulate

    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    summaries = []
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+", encoding="utf-8", newline="") as spool:
        out = _Writer(spool, encoding, escape)
        try:
            out(f"{{\n \"version\": {_dump(version, 1)}")
            main, *others = stories
            summaries.append(_run(out, main, design, seed, 1, simulate, event_json))
            out(",\n \"variants\": [")
            for i, story in enumerate(others):
                out(("\n" if i == 0 else ",\n") + "  {")
                # the object's first key has no comma before it: write it without the leading ","
                summaries.append(_run(_first_key(out), story, design, seed, 3, simulate, event_json))
                out("\n  }")
            out("\n ]\n}\n" if others else "]\n}\n")
        except _Unencodable:
            return None
        spool.seek(0)
        shutil.copyfileobj(spool, sys.stdout, 1 << 20)
    return summaries


def _first_key(write: Callable[[str], None]) -> Callable[[str], None]:
    """``write``, with the comma before the first key of an object left out."""
    state = {"first": True}

    def first(text: str) -> None:
        if state["first"]:
            state["first"] = False
            text = text[1:]
        write(text)

    return first
