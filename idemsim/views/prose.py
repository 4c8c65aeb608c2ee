"""Prose in English and Japanese, laid out for a terminal: paragraphs reflowed, lines wrapped by display width.

Guarantees:

- `reflow` joins a paragraph's hard-broken lines with a space, except where both sides are Japanese (a space
  between two Japanese characters would be a stray gap);
- `unwrap_japanese` rejoins only the lines a file broke inside a Japanese sentence;
- `wrap` never makes a line wider than ``width`` terminal cells (a single word wider than that is folded); it
  breaks at spaces, and between any two Japanese characters, but never inside a Latin word or number, never
  before a closing mark (、。）」 …) and never after an opening one (（「 …), as Japanese typesetting asks;
- widths are terminal cells as rich counts them (`cells`, through rich's public API only).
"""

from __future__ import annotations

import re

from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

from ..base.i18n import wide

NO_LINE_START = set("、。，．・：；？！）」』】〕〉》ー～…‥々ゝゞヽヾぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ"
                    ")]},.:;!?%")
"""Marks that must not begin a line (kinsoku): closing brackets, punctuation, small kana, the long vowel."""

NO_LINE_END = set("（「『【〔〈《([{")
"""Marks that must not end a line: opening brackets."""

_RUNS = re.compile(" +|[^ ]+")


def cells(text: str) -> int:
    """The terminal cells ``text`` takes, as rich counts them when it lays text out (a wide character two, a
    combining one none): rich's public `Segment.cell_length`."""
    return Segment(text).cell_length


def reflow(text: str) -> str:
    """Prose written with hard line breaks, as paragraphs: the lines of each paragraph joined (by a space,
    unless the join falls between two Japanese characters), paragraphs separated by one newline."""
    paragraphs = []
    for block in text.strip().split("\n\n"):
        joined = ""
        for line in (line.strip() for line in block.splitlines()):
            if not line:
                continue
            if joined and not (wide(joined[-1]) and wide(line[0])):
                joined += " "
            joined += line
        if joined:
            paragraphs.append(joined)
    return "\n".join(paragraphs)


def unwrap_japanese(text: str) -> str:
    """A Japanese passage hard-wrapped in a file, its lines rejoined where the file broke mid-sentence (a line
    that ends with a Japanese character other than a full stop, and a next line that starts with one, or with a
    letter or digit); every other line
    break (a list, a psql output, a new paragraph) is kept."""
    lines = text.strip().splitlines()
    out = lines[:1]
    for line in lines[1:]:
        if out[-1] and line and wide(out[-1][-1]) and out[-1][-1] != "。" and (wide(line[0]) or line[0].isalnum()):
            out[-1] += line if wide(line[0]) else " " + line  # the article spaces a number off Japanese
        else:
            out.append(line)
    return "\n".join(out)


def _cut(line: str) -> list[str]:
    """A line cut into the pieces a break may fall between: runs of spaces, Latin words, single wide
    characters."""
    out: list[str] = []
    for run in _RUNS.findall(line):
        if run[0] == " " or run.isascii():  # (no ASCII character is wide: the run is one piece)
            out.append(run)
            continue
        start = len(out)
        for ch in run:
            if len(out) > start and not wide(ch) and not wide(out[-1][-1]):
                out[-1] += ch
            else:
                out.append(ch)
    return out


def breaks(line: str, width: int) -> list[int]:
    """Where a line of prose breaks to fit ``width`` cells: the offsets at which its second, third, … lines
    start (each past the spaces the break falls on, which stay at the end of the line before)."""
    width = max(width, 2)
    rows: list[list[tuple[int, str]]] = [[]]
    used = start = 0
    for token in _cut(line):
        at, start = start, start + len(token)
        if token.startswith(" ") and not rows[-1] and len(rows) > 1:
            continue  # a break swallows the spaces it falls on
        size = cells(token)
        if used + size <= width or not rows[-1] or token.startswith(" "):
            rows[-1].append((at, token))
            used += size
            continue
        # kinsoku: carry the old line's last piece along rather than start the new line with a closing mark,
        # and never end the old line with an opening mark (but never empty the old line)
        current, carried = rows[-1], []
        if token[0] in NO_LINE_START and len(current) > 1 and not current[-1][1].startswith(" "):
            carried.insert(0, current.pop())
        while len(current) > 1 and current[-1][1][-1] in NO_LINE_END:
            carried.insert(0, current.pop())
        rows.append(carried + [(at, token)])
        used = sum(cells(t) for _, t in rows[-1])
    offsets = []
    for row in rows:
        if not row:
            continue
        if offsets or row is not rows[0]:
            offsets.append(row[0][0])
        at, text = row[0][0], "".join(t for _, t in row).rstrip(" ")
        if cells(text) > width:  # one word wider than the line: fold it, in one pass over its characters
            used = 0
            for i, ch in enumerate(text):
                size = cells(ch)
                if used and used + size > width:
                    offsets.append(at + i)
                    used = 0
                used += size
    return [o for o in offsets if 0 < o < len(line)]


def wrap(line: str, width: int) -> list[str]:
    """One line of prose as lines at most ``width`` cells wide (see the module's guarantees)."""
    edges = [0, *breaks(line, width), len(line)]
    return [line[a:b].rstrip(" ") for a, b in zip(edges, edges[1:])]


class ProseText(Text):
    """A rich `Text` that wraps as `wrap` does (Japanese between characters, kinsoku), for table cells and
    other places where rich lays text out itself; its narrowest width is its widest unbreakable piece."""

    def wrap(self, console, width, *, justify=None, overflow=None, tab_size=8, no_wrap=None):
        if no_wrap or self.no_wrap or overflow == "ignore":
            return super().wrap(console, width, justify=justify, overflow=overflow, tab_size=tab_size,
                                no_wrap=no_wrap)
        divided = [line.divide(breaks(line.plain, width)) for line in self.split(allow_blank=True)]
        lines = divided[0]  # rich's own container of lines, as `Text.divide` makes it (a text has one line or more)
        for more in divided[1:]:
            lines.extend(more)
        for piece in lines:
            piece.rstrip()
        return lines

    def __rich_measure__(self, console, options) -> Measurement:
        widest = max((cells(token) for line in self.plain.splitlines() for token in _cut(line)
                      if not token.startswith(" ")), default=0)
        return Measurement(min(widest, options.max_width),
                           max((cells(line) for line in self.plain.splitlines()), default=0))
