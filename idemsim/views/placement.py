"""Label placement for the figures: each label at the best free spot near its anchor, or not at all.

Pure geometry in display pixels, with no matplotlib: the caller measures each text (`Label.sizes`) and gives
the boxes labels must not cover (markers) and the segments they should rather not cover (message arrows).
`place` takes labels in order of importance (``priority``, then the order given) and gives each the
cheapest candidate position whose box stays inside ``bounds`` and overlaps no box placed before it: nearer
rings before farther ones, the full text before its shorter variants, and, at equal distance, a spot that
covers no arrow before one that does.

Guarantees: no two placed boxes overlap (boxes may touch), every placed box lies within ``bounds``; a label
that fits nowhere is dropped (its `Placement` is None), never drawn over another; the result depends only on
the arguments, so the same figure gets the same labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) in display pixels, y up."""
Segment = tuple[float, float, float, float]
"""(xa, ya, xb, yb) in display pixels."""

RING_COST = 10.0
VARIANT_COST = 7.0
SOFT_COST = 6.0
LINE_COST = 4.0
AMBIGUITY = 5.0
"""Pixels by which another marker must be farther from a label than the one it names."""
AMBIGUOUS_COST = 12.0
"""The cost of a message's label lying nearer to another arrow than to its own."""


@dataclass
class Label:
    """One label: its texts from longest to shortest, their measured (width, height) in pixels, the points it
    may be placed at (``anchors``, best first, in pixels), the radius of what is drawn at the anchor, and how
    to try it: ``point`` (a marker: all around it) or ``segment`` (a message: beside a point of the arrow)."""

    variants: list[str]
    sizes: list[tuple[float, float]]
    anchors: list[tuple[float, float]]
    priority: int
    shape: str = "point"
    radius: float = 4.0
    prefer: tuple[str, ...] = ()
    """Directions to try first (``above``, ``below``, ``right``, ``left``)."""
    rings: int = 3
    """How many successively farther rings of positions to try; beyond the first, a leader line is needed."""
    own: Box | Segment | None = None
    """What the label names (its marker's box, or its arrow); another marker nearer to the label than this
    would make it ambiguous. None: the anchor itself."""


@dataclass(frozen=True)
class Placement:
    """Where a label goes: ``text`` with its ``ha``/``va`` alignment at ``anchor`` + ``offset`` (pixels);
    ``leader`` when it sits away from its anchor and needs a line back to it."""

    text: str
    anchor: tuple[float, float]
    offset: tuple[float, float]
    ha: str
    va: str
    box: Box
    leader: bool
    anchor_index: int


_DIRECTIONS = {
    # name: (unit dx, unit dy, ha, va)
    "above": (0, 1, "center", "bottom"),
    "below": (0, -1, "center", "top"),
    "right": (1, 0, "left", "center"),
    "left": (-1, 0, "right", "center"),
    "above-right": (0.7, 1, "left", "bottom"),
    "above-left": (-0.7, 1, "right", "bottom"),
    "below-right": (0.7, -1, "left", "top"),
    "below-left": (-0.7, -1, "right", "top"),
}
_POINT_ORDER = ("above", "below", "right", "left", "above-right", "above-left", "below-right", "below-left")
_SEGMENT_ORDER = ("right", "left", "above", "below", "above-right", "above-left", "below-right", "below-left")


def box_at(x: float, y: float, w: float, h: float, ha: str, va: str) -> Box:
    x0 = x if ha == "left" else x - w if ha == "right" else x - w / 2
    y0 = y if va == "bottom" else y - h if va == "top" else y - h / 2
    return (x0, y0, x0 + w, y0 + h)


def overlaps(a: Box, b: Box) -> bool:
    """Whether two boxes share interior (touching is not overlapping)."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(a: Box, bounds: Box) -> bool:
    return a[0] >= bounds[0] and a[1] >= bounds[1] and a[2] <= bounds[2] and a[3] <= bounds[3]


def crosses(box: Box, seg: Segment) -> bool:
    """Whether the segment passes through the box (Liang–Barsky clipping)."""
    xa, ya, xb, yb = seg
    dx, dy = xb - xa, yb - ya
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, xa - box[0]), (dx, box[2] - xa), (-dy, ya - box[1]), (dy, box[3] - ya)):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return False
    return True


def _point_box_distance(x: float, y: float, b: Box) -> float:
    return math.hypot(max(b[0] - x, 0.0, x - b[2]), max(b[1] - y, 0.0, y - b[3]))


def box_distance(a: Box, b: Box) -> float:
    """The shortest distance between two boxes (0 when they touch or overlap)."""
    return math.hypot(max(b[0] - a[2], 0.0, a[0] - b[2]), max(b[1] - a[3], 0.0, a[1] - b[3]))


def segment_distance(box: Box, seg: Segment) -> float:
    """The shortest distance between a box and a segment."""
    if crosses(box, seg):
        return 0.0
    xa, ya, xb, yb = seg
    best = min(_point_box_distance(xa, ya, box), _point_box_distance(xb, yb, box))
    dx, dy = xb - xa, yb - ya
    length = dx * dx + dy * dy
    if length:
        for cx, cy in ((box[0], box[1]), (box[0], box[3]), (box[2], box[1]), (box[2], box[3])):
            t = min(max(((cx - xa) * dx + (cy - ya) * dy) / length, 0.0), 1.0)
            best = min(best, math.hypot(xa + t * dx - cx, ya + t * dy - cy))
    return best


def _own_distance(label: Label, anchor: tuple[float, float], box: Box) -> float:
    own = label.own
    if own is None:
        return _point_box_distance(anchor[0], anchor[1], box)
    if label.shape == "segment":
        return segment_distance(box, own)
    return box_distance(box, own)


def _candidates(label: Label, gap: float, rings: int):
    """(base cost, variant, anchor index, direction, ring), cheapest first."""
    order = list(label.prefer) + [d for d in (_POINT_ORDER if label.shape == "point" else _SEGMENT_ORDER)
                                  if d not in label.prefer]
    out = []
    for ring in range(rings):
        for v in range(len(label.variants)):
            for a in range(len(label.anchors)):
                for rank, direction in enumerate(order):
                    cost = ring * RING_COST + v * VARIANT_COST + a * 1.5 + rank * 0.4
                    out.append((cost, v, a, direction, ring))
    out.sort(key=lambda c: c[0])
    return out


def place(labels: list[Label], markers: list[Box], arrows: list[Segment], bounds: Box, *,
          lines: list[Segment] = (), areas: list[Box] = (), gap: float = 3.0,
          pad: float = 1.5) -> list[Placement | None]:
    """A placement for each label (None: dropped), in the order given; see the module's guarantees.

    ``markers``: boxes no label may cover, and none may sit nearer to than to what it names; ``arrows``:
    segments a label should rather not cover; ``lines``: segments (lanes) it should cover still less gladly
    than nothing, but rather than an arrow. ``areas``: boxes no label may cover either (a band of a row), which
    a label may sit next to without seeming to name them. ``gap``: pixels between a label and its anchor's
    mark; ``pad``: pixels kept free around each label."""
    taken: list[Box] = [tuple(o) for o in markers] + [tuple(a) for a in areas]
    result: list[Placement | None] = [None] * len(labels)
    order = sorted(range(len(labels)), key=lambda i: (labels[i].priority, i))
    for i in order:
        label = labels[i]
        best: tuple[float, Placement] | None = None
        for cost, v, a, direction, ring in _candidates(label, gap, label.rings):
            if best is not None and best[0] <= cost:
                break
            w, h = label.sizes[v]
            ux, uy, ha, va = _DIRECTIONS[direction]
            reach = label.radius + gap + ring * (h + 2 * pad)
            if label.shape == "segment" and direction in ("above", "below"):
                reach = gap + ring * (h + 2 * pad)
            dx, dy = ux * reach, uy * reach
            ax_, ay_ = label.anchors[a]
            box = box_at(ax_ + dx, ay_ + dy, w, h, ha, va)
            padded = (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)
            if not inside(box, bounds) or any(overlaps(padded, t) for t in taken):
                continue
            own = _own_distance(label, (ax_, ay_), box)
            if any(box_distance(box, m) < own + AMBIGUITY for m in markers
                   if not (m[0] <= ax_ <= m[2] and m[1] <= ay_ <= m[3])):
                continue  # nearer to another marker than to its own: it would seem to name that one
            soft = sum(1 for s in arrows if crosses(box, s))
            total = cost + soft * SOFT_COST + sum(1 for s in lines if crosses(box, s)) * LINE_COST
            if label.shape == "segment" and any(s != label.own and segment_distance(box, s) < own for s in arrows):
                total += AMBIGUOUS_COST  # another arrow runs nearer to it than its own
            if best is None or total < best[0]:
                best = (total, Placement(label.variants[v], (ax_, ay_), (dx, dy), ha, va, box, ring > 0, a))
        if best is not None:
            placement = best[1]
            result[i] = placement
            b = placement.box
            taken.append((b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad))
    return result
