"""One look per design, the same in every figure of several designs (a sweep's lines, a load's comparison): a
colour, a marker and a dash pattern, chosen by the design's place in the article's order (`Design.rank`).

The colours are Okabe and Ito's without the three that mean an outcome in a run's figure (green: an ``ok`` on a
design that holds, vermillion: broken, reddish purple: unknown), plus a dark grey and Paul Tol's wine. Two
designs whose colours are close in lightness, in greyscale or under a colour-vision deficiency, differ in their
dash pattern (tests/test_styles.py holds every pair to it), and every design has its own marker. A design a user
registers (rank 0) is drawn in a neutral grey with a thin line; its marker and dashes follow its place among the
user's designs, so that two of them still differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.designs import DESIGNS

SOLID = "-"
DASHED = (0, (6, 2))
DOTTED = (0, (1, 1.6))
DASH_DOT = (0, (6, 2, 1.2, 2))
LONG_DASH_DOTS = (0, (9, 2, 1.2, 2, 1.2, 2))


@dataclass(frozen=True)
class Style:
    """How one design is drawn: a line's colour, its dash pattern (a matplotlib linestyle) and a marker."""

    colour: str
    dashes: str | tuple
    marker: str
    width: float = 2.2

    def line(self) -> dict:
        """Keyword arguments of ``Axes.plot`` for this design's line and markers."""
        return {"color": self.colour, "linestyle": self.dashes, "marker": self.marker, "linewidth": self.width,
                "markersize": 7, "markeredgecolor": "#000000", "markeredgewidth": 0.6}


BY_RANK: dict[int, Style] = {
    1: Style("#000000", SOLID, "X"),            # naive: black
    2: Style("#56B4E9", DASH_DOT, "v"),         # check-then-insert: sky blue
    3: Style("#0072B2", SOLID, "^"),            # same-tx: blue
    4: Style("#E69F00", DASHED, "P"),           # committed-first: orange
    5: Style("#666666", DOTTED, "h"),           # split-tx: dark grey
    6: Style("#882255", LONG_DASH_DOTS, "*"),   # recovery-points: wine
}
"""A shipped design's style by its `Design.rank` (1 naive … 6 recovery-points, the article's order)."""
NEUTRAL = "#A6A6A6"
"""The colour of a user's design."""
USER_MARKERS = ("d", "p", "8", "H", "<", ">")
USER_DASHES = (DASHED, DOTTED, DASH_DOT, SOLID)


def design_style(name: str) -> Style:
    """The style of design ``name``: its rank's, or a neutral one for a design a user registered (or one idemsim
    does not know)."""
    design = DESIGNS.get(name)
    if design is not None and design.rank in BY_RANK:
        return BY_RANK[design.rank]
    users = [n for n, d in DESIGNS.items() if d.rank not in BY_RANK]
    i = users.index(name) if name in users else len(users)
    return Style(NEUTRAL, USER_DASHES[i % len(USER_DASHES)], USER_MARKERS[i % len(USER_MARKERS)], width=1.6)
