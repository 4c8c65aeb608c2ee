"""The figures of a run: a time-space (Lamport) diagram a teacher can project, and one panel per design.

`run_figure` draws one run: a lane per party (the clients, the gateway, each API handler, the DB, the payment
processor, background processes), simulated time from left to right, each message a slanted arrow from its
sending to its arrival (or to a cross where it was lost), transactions as faint bands, a wait on the unique
index as a yellow bar labelled with its length, charges, captures, crashes and each attempt's outcome as
marks, and the verdict under the axes. `comparison_figure` stacks such panels, one per run, on one time axis.
`save` writes a figure as PNG, SVG or PDF.

Guarantees:

- matplotlib is imported inside the functions only: importing this module imports no matplotlib, and neither
  the model nor ``idemsim run`` imports this module. Figures are `matplotlib.figure.Figure` objects with an
  Agg canvas, built with the object-oriented API; nothing touches ``pyplot`` or changes the global
  ``rcParams`` (every text names its font).
- Every word drawn comes from `idemsim.base.i18n` in the language asked for; with ``lang="ja"`` the texts use the
  IPAexGothic font of ``matplotlib-fontja``, which has every glyph drawn.
- No two texts overlap: lane names, title, verdict and legend have space of their own, and the labels inside
  the axes are placed by `idemsim.views.placement`, which shortens or drops a label rather than let it cover
  another. The figure is 12.8 × 7.2 inches at 100 dpi (1280 × 720 pixels), taller only when the lanes need it.
- The same run gives the same figure, and `save` writes byte-identical SVG and PDF for it (no date, a fixed
  hash salt), as `idemsim.base.output.write_output` writes any file: atomically, a symbolic link followed, a
  device or FIFO written through.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import InputError, Message
from ..base.i18n import language, text
from ..base.output import check_output, write_output, writes_through
from . import placement
from .scene import Scene, status_words
from .scene import scene as make_scene
from .styles import design_style

WIDTH = 12.8
"""Inches; at `DPI`, 1280 pixels."""
HEIGHT = 7.2
"""Inches; at `DPI`, 720 pixels: the least height of a figure."""
NO_LINE_START = frozenset("。、，．）」』】〉》・ー々,.)!?:;")
"""Characters a wrapped line never starts with (Japanese line-breaking rules, kinsoku)."""
DPI = 100
FORMATS = ("png", "svg", "pdf")

FONTS = {"en": "DejaVu Sans", "ja": "IPAexGothic"}

# The Okabe–Ito palette, safe for the common colour-vision deficiencies; darker shades for text on white.
BLACK = "#000000"
ORANGE = "#E69F00"
SKY = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
GREY = "#8C8C8C"
LANE = "#C8C8C8"

OUTCOME_COLOR = {"ok": GREEN, "fail": VERMILLION, "info": PURPLE}
"""ok green, fail red, info magenta, as the terminal colours them, in colour-blind-safe hues."""
OUTCOME_TEXT = {"ok": "#007558", "fail": "#B34700", "info": "#A1487F"}
NEUTRAL = "#A6A6A6"
NEUTRAL_TEXT = "#3C3C3C"
GREY_TEXT = "#666666"
"""The client's ``ok`` (and everything else green) on a run whose design broke a property: nothing is green there
(`idemsim.views.verdicts.green`)."""
OUTCOME_MARKER = {"ok": "o", "fail": "s", "info": "D"}
HALO = YELLOW
HALO_ALPHA = 0.7
"""A compare panel's halo behind what its design does and most others do not."""
KEY_COLOR = {"in_progress": "#F3D7A6", "done": "#B9DDF2"}
"""The key record's states: in_progress light orange (hatched), done light sky."""
BELIEF_COLOR = {"paid": NEUTRAL, "not_paid": "#D9D9D9", "unknown": PURPLE}
"""What a client believes: paid neutral (green only on a run whose design holds), not paid light grey, unknown
the info colour; red (vermilion) wherever it differs from the truth."""
"""Each outcome has its own shape as well as its own colour."""

LABEL_SIZE = 10.5
LANE_SIZE = 12
TITLE_SIZE = 15
VERDICT_SIZE = 12
LEGEND_SIZE = 10.5
TICK_SIZE = 10.5

MIN_PITCH = 0.46
"""Inches between two lanes of a run's figure, at least: two rows of labels fit between them."""
COMPARE_PITCH = 0.32
"""Inches between two lanes of a comparison's panel: the same in every panel of one comparison."""
MIN_COMPARE_PITCH = 0.21
"""The pitch a comparison of many panels shrinks to, at most, to stay within `COMPARE_MAX_HEIGHT`."""
COMPARE_MARGIN = 0.55
"""Space above the top lane and below the bottom one of a comparison's panel, in lanes."""
COMPARE_MAX_HEIGHT = 14.4
"""A comparison's height at most, in inches: two 1280 × 720 screens."""
HEAD_SIZE = 10.5
"""Points of a comparison's panel titles."""
HEAD_LINE = 0.22
"""Inches per line of a panel's title."""
PANEL_GAP = 0.3
"""Inches between two panels (rows or columns) of a comparison."""
TICKS = 0.26
"""Inches below a panel's axes for its time ticks."""
LANE_MARGIN = 0.7
"""Space above the top lane and below the bottom one, in lanes."""


# -- public ---------------------------------------------------------------------------------------------------
def run_figure(run, lang: str | None = None, *, captioned: bool = True):
    """The time-space diagram of one `idemsim.runners.simulation.Run`, as a `matplotlib.figure.Figure`, in ``lang`` (by
    default `idemsim.base.i18n.language`: ``IDEMSIM_LANG``, else English). ``captioned=False`` leaves out the title
    and the verdict lines, for a page that says them itself (`idemsim.views.html`)."""
    lang = language(lang)
    canvas = _Canvas(lang)
    diagram = make_scene(run, lang)
    lanes = [lane.name for lane in diagram.lanes]
    left = canvas.left_margin(lanes)
    width = WIDTH - left - 0.3
    verdict = canvas.flow(_verdict_items(run, diagram, lang), width + left - 0.35) if captioned else []
    holds = diagram.verdicts.holds
    legend = _legend_keys([diagram])
    legend_height = canvas.legend_height(legend)
    below = 0.62 + len(verdict) * 0.3 + legend_height + 0.12
    top = 0.62 if captioned else 0.2
    rows = _lane_positions(diagram)[1] + 2 * LANE_MARGIN
    axes_height = max(HEIGHT - top - below, rows * MIN_PITCH)
    height = round(top + axes_height + below, 2)
    canvas.figure.set_size_inches(WIDTH, height)
    if captioned:
        canvas.text_at(0.35, height - 0.2, diagram.title, TITLE_SIZE, weight="bold", va="top")
    ax = canvas.axes(left, below, width, axes_height)
    xlim = _time_limits(diagram.end, _room(diagram, canvas, width * DPI))
    panel = _Panel(canvas, ax, diagram, lanes, xlim, holds=holds)
    panel.draw()
    canvas.time_axis(ax, xlim, labelled=True)
    y = below - 0.62 - 0.22
    for line in verdict:
        canvas.line_at(0.35, y, line)
        y -= 0.3
    canvas.legend(legend, 0.1, holds)
    panel.place_labels()
    return canvas.figure


def comparison_figure(runs, lang: str | None = None):
    """One compact panel per run (one story under several designs), in ``lang`` as `run_figure`; at most two
    1280 × 720 screens (`COMPARE_MAX_HEIGHT`) for any shipped story.

    Each panel draws the parties only (clients, gateway, API handlers, DB, processor, background workers; not
    the key, ledger and belief rows of a run's figure), every lane at one pitch in every panel. Its title is the
    design's swatch (`idemsim.views.styles.design_style`), its name and its verdict, red with a red frame when
    the design broke a property; and its own time scale, said in the title (``time 0–11.0 s``), so that one slow
    panel does not squeeze the others. Many designs go in two columns. What one design does and most others do
    not (`differences`: a second charge row, a capture, an answer's status, a rollback, a wait …) is haloed in
    yellow, and the legend says so."""
    lang = language(lang)
    runs = list(runs)
    if not runs:
        raise InputError("err.figure.no_runs")
    canvas = _Canvas(lang)
    diagrams = [_without_tracks(make_scene(run, lang)) for run in runs]
    names = [[lane.name for lane in d.lanes] for d in diagrams]
    left = canvas.left_margin([n for lanes in names for n in lanes])
    differs = differences(diagrams)
    legend = _legend_keys(diagrams)
    if any(differs):  # (beside the second charge or capture: the legend's columns stay as wide)
        at = next((legend.index(key) + 1 for key in ("duplicate", "capture", "charge") if key in legend), len(legend))
        legend.insert(at, "differs_two" if len(diagrams) == 2 else "differs")
    top = 0.5
    below = canvas.legend_height(legend) + 0.2
    heads = {}

    def layout(columns: int, pitch: float):
        """(column width, [head lines per run], [axes height per run], [row height], total height)."""
        column = (WIDTH - 0.35 - 0.2 - PANEL_GAP * (columns - 1)) / columns
        if (columns, column) not in heads:
            heads[columns, column] = [canvas.flow(_panel_head(run, runs[0], d, lang), column - 0.45, HEAD_SIZE)
                                      for run, d in zip(runs, diagrams)]
        lines = heads[columns, column]
        axes = [(len(lanes) - 1 + 2 * COMPARE_MARGIN) * pitch for lanes in names]
        panels = [len(h) * HEAD_LINE + 0.1 + a + TICKS for h, a in zip(lines, axes)]
        rows = [max(panels[i:i + columns]) for i in range(0, len(runs), columns)]
        total = top + sum(rows) + PANEL_GAP * (len(rows) - 1) + below
        return column, lines, axes, rows, total

    columns, pitch = 1, COMPARE_PITCH  # one column at full pitch; else two, three, at a pitch shrunk to fit
    while layout(columns, pitch)[4] > COMPARE_MAX_HEIGHT:
        if columns > 1 and pitch > MIN_COMPARE_PITCH:
            pitch = round(pitch - 0.01, 2)  # the same (smaller) pitch in every panel
        elif columns < min(len(runs), 3):
            columns, pitch = columns + 1, COMPARE_PITCH
        else:
            break
    column, lines, axes_heights, rows, total = layout(columns, pitch)
    height = round(max(HEIGHT, total), 2)
    canvas.figure.set_size_inches(WIDTH, height)
    story = runs[0].name
    title = canvas.text_at(0.35, height - 0.15, text("figure.compare_title", lang, story=story, seed=runs[0].seed),
                           TITLE_SIZE, weight="bold", va="top")
    canvas.text_at(0.35 + canvas.measure(title.get_text(), TITLE_SIZE, "bold")[0] / DPI + 0.3, height - 0.15,
                   text("figure.own_scales", lang), HEAD_SIZE, color=GREY_TEXT, va="top")
    panels = []
    row_top = height - top
    for i, (run, diagram, lanes) in enumerate(zip(runs, diagrams, names)):
        row, col = divmod(i, columns)
        if col == 0 and row:
            row_top -= rows[row - 1] + PANEL_GAP
        x0 = 0.35 + col * (column + PANEL_GAP)
        holds = diagram.verdicts.holds
        head_height = len(lines[i]) * HEAD_LINE + 0.1
        y = row_top - 0.05
        for line in lines[i]:
            y -= HEAD_LINE
            canvas.line_at(x0 + 0.45, y + 0.05, line, HEAD_SIZE)
        canvas.swatch(x0, row_top - 0.05 - HEAD_LINE + 0.1, run.design)
        bottom = row_top - head_height - axes_heights[i]
        if not holds:  # a red frame round the panel of a design that broke a property
            canvas.frame(x0 - 0.12, bottom - TICKS + 0.02, column + 0.14, head_height + axes_heights[i] + TICKS - 0.02)
        ax = canvas.axes(x0 + left - 0.35, bottom, column - left + 0.25, axes_heights[i])
        xlim = _time_limits(diagram.end)
        panel = _Panel(canvas, ax, diagram, lanes, xlim, holds=holds, margin=COMPARE_MARGIN, differs=differs[i])
        panel.draw()
        canvas.time_axis(ax, xlim, labelled=False, numbered=True, bins=12 // columns)
        panels.append(panel)
    canvas.legend(legend, 0.1, all(panel.holds for panel in panels))
    for panel in panels:
        panel.place_labels()
    return canvas.figure


_STEPS = frozenset({"charge", "capture", "crash", "died", "restart", "timeout", "refused", "give_up", "finish",
                    "release", "outcome"})
"""The marks `differences` compares between designs (statements are the design itself: never compared)."""


def _step(kind: str, thing) -> tuple | None:
    """What a mark, message or span does, as `differences` compares it between designs (None: not compared)."""
    info = thing.info
    if kind == "mark":
        if thing.kind not in _STEPS or thing.kind == "charge" and not info.get("committed"):
            return None
        return (thing.kind, info.get("outcome"), info.get("status")) if thing.kind == "outcome" else (thing.kind,)
    if kind == "message":
        if thing.arrived is None:
            return ("lost", thing.kind)
        if thing.kind == "response":
            return ("response", thing.status, bool(info.get("replay")), bool(info.get("ignored")))
        if thing.kind in ("dropped", "processor.answer"):
            return (thing.kind, thing.status, info.get("outcome"))
        return None
    if thing.kind == "transaction" and info.get("end") == "rollback":
        return ("rollback",)
    return (thing.kind,) if thing.kind in ("wait", "down") else None


def differences(scenes: list[Scene]) -> list[set[tuple[str, int, str]]]:
    """For each scene of a comparison, what it does and most of the others do not: each step (`_step`: a
    committed charge row, a capture, a crash, an answer with its status, a rollback, a wait …) counted by its
    kind and its occurrence (a second charge row is not a first), kept when fewer than half of the scenes have
    it (of two, when the other lacks it); as ("mark" | "message" | "span", its event, its kind)."""
    counted: list[dict[tuple, tuple[str, int, str]]] = []
    for drawn in scenes:
        seen: dict[tuple, int] = {}
        steps: dict[tuple, tuple[str, int, str]] = {}
        things = [("mark", m) for m in drawn.marks] + [("message", m) for m in drawn.messages] + \
                 [("span", s) for s in drawn.spans]
        for kind, thing in sorted(things, key=lambda item: (getattr(item[1], "t", None) or getattr(
                item[1], "sent", None) or getattr(item[1], "start", 0.0), item[1].event)):
            step = _step(kind, thing)
            if step is None:
                continue
            seen[step] = seen.get(step, 0) + 1
            steps[(*step, seen[step])] = (kind, thing.event, thing.kind)
        counted.append(steps)
    n = len(scenes)
    having: dict[tuple, int] = {}
    for steps in counted:
        for step in steps:
            having[step] = having.get(step, 0) + 1
    rare = (lambda k: k < n) if n <= 2 else (lambda k: 2 * k < n)
    return [{where for step, where in steps.items() if rare(having[step])} if n > 1 else set() for steps in counted]


def check_path(path) -> None:
    """Refuse, before anything is simulated, a path a figure cannot be saved to: an extension other than
    ``.png``, ``.svg`` or ``.pdf``, and what `idemsim.base.output.check_output` refuses (an empty name, a
    directory, a folder that does not exist or where no file can be made, a name too long)."""
    if not str(path).strip():
        raise InputError("err.give_file_name", file=repr(str(path)))
    _format(Path(path))
    check_output(str(path))


def _format(path: Path) -> str:
    """The format a figure is saved in: its file's extension; PNG where the name has none of the three and
    the file is written through (``/dev/stdout``, a FIFO, a device)."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt in FORMATS:
        return fmt
    if writes_through(str(path)):
        return "png"
    raise _not_a_figure(path)


def _not_a_figure(path: Path) -> InputError:
    return InputError("err.figure.format", file=str(path), formats=", ".join(f".{f}" for f in FORMATS),
                      suffix=path.suffix or Message("err.figure.no_extension"))


def title_weight(lang: str) -> str:
    """The weight of a title: bold, except in Japanese, whose font (IPAexGothic) has one weight."""
    return "normal" if lang == "ja" else "bold"


class fonts:
    """A context in which figures built get the font of ``lang`` (IPAexGothic for Japanese), leaving the
    global rcParams as they were afterwards."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in FONTS else "en"

    def __enter__(self) -> None:
        import matplotlib

        if self.lang == "ja":
            _register_japanese_font()
        self._context = matplotlib.rc_context({"font.family": FONTS[self.lang]})
        self._context.__enter__()

    def __exit__(self, *exc) -> None:
        self._context.__exit__(*exc)


def save(figure, path) -> Path:
    """Write ``figure`` to ``path`` as PNG, SVG or PDF (by the extension), deterministically, as
    `idemsim.base.output.write_output` writes a file (atomically; a device or FIFO written through)."""
    path = Path(path)
    fmt = _format(path)
    import matplotlib

    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    drawn = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "idemsim", "svg.fonttype": "path", "pdf.fonttype": 42}):
        figure.savefig(drawn, format=fmt, dpi=DPI, metadata=metadata)
    write_output(str(path), drawn.getvalue())
    return path


def _panel_name(run, first) -> str:
    """A panel's name: its design, and its story when it is not the comparison's (a design option's variant)."""
    return run.design if run.name == first.name else f"{run.design} ({run.scenario.variant or run.scenario.name})"


# -- words ------------------------------------------------------------------------------------------------------
_TRACKS = ("belief", "key", "charges", "captures")
"""The roles of the rows a scene adds under the parties: a comparison's panels leave them out."""


def _without_tracks(scene: Scene) -> Scene:
    """The scene of a comparison's panel: its parties' lanes only (a second charge or capture of one purchase
    is still red on them)."""
    from dataclasses import replace  # (lazy: only a comparison needs it)

    return replace(scene, lanes=[lane for lane in scene.lanes if lane.role not in _TRACKS])


def _status(status, lang: str) -> str:
    return status_words(status, lang)


def _verdict_items(run, scene: Scene, lang: str) -> list[tuple[str, str, str]]:
    """(text, colour, weight) of the verdict: charges, captures, what each client saw (the scene's endings), then
    the two verdicts (the scene's words): the design's (green only when it holds; what went wrong, in red, when it
    broke) and the story's check (neutral). On a broken run an ``ok`` is neutral too."""
    s = run.summary
    verdicts = scene.verdicts
    outcome_text = _outcome_palette(OUTCOME_TEXT, NEUTRAL_TEXT, verdicts.holds)
    items = [(text("money.charges", lang, n=s.charges), "#000000", "normal"),
             (text("money.captures", lang, n=s.captures), "#000000", "normal")]
    endings = scene.endings
    several = len(endings) > 1 and len({e.client for e in endings}) < len(endings)
    for ending in endings:
        seen = text("list.sep", lang).join(_status(x, lang) for x in ending.seen) or text("verdict.nothing", lang)
        outcome = text(f"outcome.{ending.outcome}", lang)
        if ending.status is not None:
            outcome += f" {ending.status}"
        message = "verdict.seen_op" if several else "verdict.seen"
        items.append((text(message, lang, op=ending.op, client=ending.name, seen=seen, outcome=outcome),
                      outcome_text[ending.outcome], "normal"))
    if any(e.kind == "state.change" and e.data["resource"] == "balance" for e in run.trace):
        items.append((text("verdict.balance", lang, n=s.balance), "#000000", "normal"))
    if verdicts.holds:
        items.append((text("design.line", lang, verdict=verdicts.design), OUTCOME_TEXT["ok"], "bold"))
    else:  # one item a problem, so that the line breaks between them
        said = verdicts.problems
        sep = text("problem.sep", lang).rstrip()
        for i, problem in enumerate(said):
            words = text("design.line", lang, verdict=text("design.broken", lang, problems=problem)) if i == 0 \
                else problem
            items.append((words + (sep if i < len(said) - 1 else ""), OUTCOME_TEXT["fail"], "bold"))
    items.append((text("story.line", lang, check=verdicts.story), BLACK, "normal"))
    return items


def _panel_head(run, first, scene: Scene, lang: str) -> list[tuple[str, str, str]]:
    """(text, colour, weight) of a comparison panel's title: the design (and its variant), its verdict (green
    ``holds``, or red ``broken — `` and what went wrong, the design's name red too), the story's check, and the
    panel's own time scale (the scene's words)."""
    holds = scene.verdicts.holds
    name = (_panel_name(run, first), BLACK if holds else OUTCOME_TEXT["fail"], "bold")
    if holds:
        verdict = [(text("design.short_holds", lang), OUTCOME_TEXT["ok"], "bold")]
    else:  # one item a problem, so that the title breaks between them
        said = scene.verdicts.problems
        sep = text("problem.sep", lang).rstrip()
        verdict = [((text("design.broken", lang, problems=p) if i == 0 else p) + (sep if i < len(said) - 1 else ""),
                    OUTCOME_TEXT["fail"], "bold") for i, p in enumerate(said)]
    return [name, *verdict,
            (text("story.line", lang, check=scene.verdicts.story), NEUTRAL_TEXT, "normal"),
            (text("figure.panel_time", lang, end=_time_limits(scene.end)[1]), GREY_TEXT, "normal")]


def _outcome_palette(palette: dict[str, str], neutral: str, holds: bool) -> dict[str, str]:
    """The outcomes' colours: ``ok`` in ``neutral`` on a run whose design broke a property."""
    return palette if holds else {**palette, "ok": neutral}


# -- the canvas: a figure, its renderer, and text measured once ------------------------------------------------
class _Canvas:
    """A figure being built, with what measuring and placing text needs."""

    def __init__(self, lang: str) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.lang = "ja" if lang == "ja" else "en"
        if self.lang == "ja":
            _register_japanese_font()
        self.family = FONTS[self.lang]
        self.figure = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI)
        FigureCanvasAgg(self.figure)
        self.renderer = self.figure.canvas.get_renderer()
        self._sizes: dict[tuple, tuple[float, float]] = {}

    def font(self, size: float, weight: str = "normal"):
        from matplotlib.font_manager import FontProperties

        return FontProperties(family=self.family, size=size,
                              weight=title_weight(self.lang) if weight == "bold" else weight)

    def measure(self, s: str, size: float, weight: str = "normal") -> tuple[float, float]:
        """(width, height) of a text in pixels, as its window extent will be."""
        key = (s, size, weight)
        if key not in self._sizes:
            from matplotlib.text import Text

            probe = Text(0, 0, s, fontproperties=self.font(size, weight))
            probe.set_figure(self.figure)
            extent = probe.get_window_extent(self.renderer)
            self._sizes[key] = (extent.width, extent.height)
        return self._sizes[key]

    def left_margin(self, lane_names: list[str]) -> float:
        widest = max(self.measure(n, LANE_SIZE)[0] for n in lane_names)
        return max(1.1, widest / DPI + 0.45)

    def flow(self, items: list[tuple[str, str, str]], width: float, size: float = VERDICT_SIZE
             ) -> list[list[tuple[str, str, str, float]]]:
        """Items (of ``size`` points) laid out left to right in lines no wider than ``width`` inches: (text,
        colour, weight, x)."""
        gap = 0.32 * size / VERDICT_SIZE
        lines: list[list[tuple[str, str, str, float]]] = [[]]
        x = 0.0
        for whole, color, weight in items:
            for s in self._wrap(whole, width, size, weight):
                w = self.measure(s, size, weight)[0] / DPI
                if lines[-1] and x + w > width:
                    lines.append([])
                    x = 0.0
                lines[-1].append((s, color, weight, x))
                x += w + gap
        return lines

    def _wrap(self, s: str, width: float, size: float, weight: str) -> list[str]:
        """``s`` in pieces no wider than ``width`` inches, broken between words (one piece where it fits); a word
        wider than that alone (Japanese has no spaces) is broken between characters, never before a closing
        mark (``。、）」``)."""

        def fits(piece: str) -> bool:
            return self.measure(piece, size, weight)[0] / DPI <= width

        if fits(s):
            return [s]
        pieces: list[str] = []
        for word in s.split(" "):
            if pieces and fits(pieces[-1] + " " + word):
                pieces[-1] += " " + word
            elif fits(word):
                pieces.append(word)
            else:
                piece = ""
                for ch in word:
                    if piece and ch not in NO_LINE_START and not fits(piece + ch):
                        pieces.append(piece)
                        piece = ""
                    piece += ch
                pieces.append(piece)
        return pieces

    def text_at(self, x: float, y: float, s: str, size: float, *, weight="normal", color="#000000", va="baseline",
                ha="left"):
        """A text at (x, y) inches from the figure's lower left corner."""
        fig = self.figure
        w, h = fig.get_size_inches()
        return fig.text(x / w, y / h, s, fontproperties=self.font(size, weight), color=color, va=va, ha=ha)

    def line_at(self, x: float, y: float, line, size: float = VERDICT_SIZE) -> None:
        for s, color, weight, dx in line:
            self.text_at(x + dx, y, s, size, weight=weight, color=color)

    def swatch(self, x: float, y: float, design: str) -> None:
        """Design ``design``'s line and marker (`idemsim.views.styles.design_style`), 0.35 in wide, at (x, y)."""
        from matplotlib.lines import Line2D

        style = design_style(design).line()
        style.update(markersize=6, linewidth=min(style["linewidth"], 2.0), markevery=[1])
        self.figure.add_artist(Line2D([x, x + 0.17, x + 0.34], [y, y, y], transform=self.figure.dpi_scale_trans,
                                      **style))

    def frame(self, x: float, y: float, width: float, height: float) -> None:
        """A red frame, ``width`` × ``height`` inches from (x, y): round the panel of a design that broke."""
        from matplotlib.patches import Rectangle

        self.figure.add_artist(Rectangle((x, y), width, height, transform=self.figure.dpi_scale_trans,
                                         facecolor="none", edgecolor=VERMILLION, lw=1.6, zorder=0))

    def axes(self, left: float, bottom: float, width: float, height: float):
        w, h = self.figure.get_size_inches()
        return self.figure.add_axes((left / w, bottom / h, width / w, height / h))

    def time_axis(self, ax, xlim: tuple[float, float], *, labelled: bool, numbered: bool = False,
                  bins: int = 12) -> None:
        """Ticks on ``ax``'s time axis, numbered (``labelled``: and named) or not."""
        from matplotlib.ticker import MaxNLocator

        ticks = [t for t in MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]).tick_values(*xlim)
                 if xlim[0] <= t <= xlim[1]]
        labels = [f"{t:g}" for t in ticks] if labelled or numbered else [""] * len(ticks)
        ax.set_xticks(ticks, labels, fontproperties=self.font(TICK_SIZE))
        ax.tick_params(axis="x", length=4, color=GREY)
        ax.set_xlim(*xlim)
        if labelled:
            ax.set_xlabel(text("figure.time", self.lang), fontproperties=self.font(TICK_SIZE + 0.5), labelpad=3)

    def legend_height(self, keys: list[str]) -> float:
        if not keys:
            return 0.0
        return self._legend_rows(keys) * 0.26 + 0.08

    def _legend_rows(self, keys: list[str]) -> int:
        """The fewest rows in which the legend's columns (each as wide as its widest entry) fit the figure."""
        widths = [self.measure(_legend_label(k, self.lang), LEGEND_SIZE)[0] / DPI + 0.75 for k in keys]
        for rows in range(1, len(keys) + 1):
            columns = math.ceil(len(keys) / rows)
            if sum(max(widths[c * rows:(c + 1) * rows]) for c in range(columns)) + 0.2 * columns <= WIDTH - 0.6:
                return rows
        return len(keys)

    def legend(self, keys: list[str], bottom: float, holds: bool = True) -> None:
        """The legend of ``keys``; its ``ok`` green only when every run drawn ``holds``."""
        if not keys:
            return
        rows = self._legend_rows(keys)
        handles = [_legend_handle(k, holds) for k in keys]
        w, h = self.figure.get_size_inches()
        self.figure.legend(handles, [_legend_label(k, self.lang) for k in keys], loc="lower center",
                           bbox_to_anchor=(0.5, bottom / h), ncol=math.ceil(len(keys) / rows), frameon=False,
                           prop=self.font(LEGEND_SIZE), handlelength=2.0, columnspacing=1.4, handletextpad=0.5,
                           borderaxespad=0.0, borderpad=0.2)


def _register_japanese_font() -> None:
    """Register IPAexGothic (``matplotlib-fontja``), leaving the global rcParams as they were: importing the
    package sets ``font.family`` globally, which the ``rc_context`` undoes."""
    import matplotlib

    with matplotlib.rc_context():
        import matplotlib_fontja  # noqa: F401  (registers the font)


# -- the legend -----------------------------------------------------------------------------------------------
_LEGEND_ORDER = ("request", "response", "processor", "lost", "statement", "transaction", "wait", "processing",
                 "charge", "capture", "key", "duplicate", "belief_wrong", "down", "ok", "fail", "info")


def _legend_keys(diagrams) -> list[str]:
    present: set[str] = set()
    for d in diagrams:
        for m in d.messages:
            present.add("processor" if m.kind.startswith("processor.") else
                        "request" if m.kind == "request" else "response")
            if m.arrived is None:
                present.add("lost")
        for s in d.spans:
            present.add({"alive": "", "attempt": s.info.get("outcome", ""), "transaction": "transaction",
                         "wait": "wait", "processing": "processing", "down": "down"}[s.kind])
        for mark in d.marks:
            if mark.kind in ("statement", "charge", "capture"):
                present.add(mark.kind)
        roles = {lane.role for lane in d.lanes}
        if "key" in roles:
            present.add("key")
        if any(p.pairs for p in d.ledger):
            present.add("duplicate")
        if "belief" in roles and any(s.differs for b in d.beliefs for s in b.spans):
            present.add("belief_wrong")
    return [k for k in _LEGEND_ORDER if k in present]


def _legend_label(key: str, lang: str) -> str:
    if key in ("ok", "fail", "info"):
        return text(f"outcome.{key}", lang)
    return text(f"legend.{key}", lang)


def _legend_handle(key: str, holds: bool = True):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if key == "request":
        return Line2D([], [], color=BLUE, lw=2)
    if key == "response":
        return Line2D([], [], color=BLACK, lw=2)
    if key == "processor":
        return Line2D([], [], color=ORANGE, lw=2)
    if key == "lost":
        return Line2D([], [], color=GREY, lw=1.5, ls=(0, (4, 2)), marker="x", markersize=9, markeredgewidth=2.4,
                      markeredgecolor=BLACK, markevery=[1])
    if key == "statement":
        return Line2D([], [], color=GREY, lw=0, marker="|", markersize=10, markeredgewidth=1.4)
    if key == "transaction":
        return Patch(facecolor=SKY, alpha=0.3, edgecolor="none")
    if key == "wait":
        return Patch(facecolor=YELLOW, edgecolor="#8A7B00")
    if key == "processing":
        return Patch(facecolor=ORANGE, alpha=0.25, edgecolor="none")
    if key == "down":
        return Patch(facecolor="none", edgecolor=VERMILLION, hatch="////", alpha=0.6)
    if key == "charge":
        return Line2D([], [], lw=0, marker="s", markersize=9, color=BLUE, markeredgecolor=BLACK)
    if key == "capture":
        return Line2D([], [], lw=0, marker="o", markersize=10, color=ORANGE, markeredgecolor=BLACK)
    if key == "key":
        return Patch(facecolor=KEY_COLOR["done"], edgecolor="#555555")
    if key == "duplicate":
        return Line2D([], [], lw=0, marker="s", markersize=9, color=VERMILLION, markeredgecolor=BLACK)
    if key in ("differs", "differs_two"):
        return Line2D([], [], lw=0, marker="o", markersize=16, color=HALO, alpha=HALO_ALPHA, markeredgecolor="none")
    if key == "belief_wrong":
        return Patch(facecolor=VERMILLION, alpha=0.7, edgecolor="none")
    return Line2D([], [], lw=0, marker=OUTCOME_MARKER[key], markersize=9,
                  color=_outcome_palette(OUTCOME_COLOR, NEUTRAL, holds)[key], markeredgecolor=BLACK)


# -- one panel: the lanes of one run and everything on them ----------------------------------------------------
ROOM = 0.14
"""Time after the run's end on its axis, a fraction of the run's length: room for the last labels."""
MAX_ROOM = 0.3


def _time_limits(end: float, room: float = ROOM) -> tuple[float, float]:
    span = end if end > 0 else 1.0
    return (-0.035 * span, end + room * span)


def _room(scene: Scene, canvas: _Canvas, width_px: float) -> float:
    """The room after the run's end (`ROOM`, at most `MAX_ROOM`) that the label of a client's last belief
    needs to its right (``believes paid`` at the final answer): else it is put over the answer's arrow."""
    lasts = [b.spans[-1] for b in scene.beliefs if b.spans and b.spans[-1].told]
    span = scene.end if scene.end > 0 else 1.0
    room = ROOM
    while room < MAX_ROOM:
        per_second = width_px / (span * (1.035 + room))
        if all((scene.end + room * span - s.start) * per_second >= canvas.measure(s.label, LABEL_SIZE)[0] + 12
               for s in lasts):
            break
        room = round(room + 0.02, 2)
    return room


PAIR_ROOM = 0.55
"""Lanes of room below a ledger row whose duplicates are bracketed and named."""


KEY_ROOM = 0.35
"""Lanes of room above a key's row whose retention is bracketed: the bracket, its words, and the words of the
record below."""


def _bracketed(scene: Scene) -> set[str]:
    """The key rows with a retention bracket (one that ends within the axis: see `_Panel.draw_keys`)."""
    end = max(scene.end, 1.0)
    return {track.lane for track in scene.keys for r in track.records
            if r.retention.end <= scene.end * (1 + MAX_ROOM) and r.retention.ttl < 10 * end}


def _lane_positions(scene: Scene) -> tuple[dict[str, float], float]:
    """Each lane's y (0 at the top, one unit a lane, downwards) and the lowest one's depth: a ledger row with a
    bracketed pair gets `PAIR_ROOM` below it for the bracket and its words, a key's row with a retention bracket
    `KEY_ROOM` above it."""
    pairs = {"charges" if p.kind == "charged_twice" else "captures" for purchase in scene.ledger
             for p in purchase.pairs}
    bracketed = _bracketed(scene)
    y, depth = {}, 0.0
    for i, lane in enumerate(scene.lanes):
        if i:
            depth += 1.0 + (KEY_ROOM if lane.id in bracketed else 0.0)
        y[lane.id] = -depth
        if lane.role in pairs:
            depth += PAIR_ROOM
    return y, depth + (PAIR_ROOM if scene.lanes and scene.lanes[-1].role in pairs else 0.0)


@dataclass
class _Label:
    variants: list[str]
    anchors: list[tuple[float, float]]
    """In data coordinates (time, lane), before any nudge."""
    priority: int
    shape: str = "point"
    radius: float = 5.0
    color: str = "#000000"
    weight: str = "normal"
    prefer: tuple[str, ...] = ()
    nudge: float = 0.0
    """Pixels the thing labelled was moved right so as not to hide another."""
    own: tuple | None = None
    """The box of the marker it names, or the segment of its arrow, in pixels."""
    rings: int = 3


@dataclass
class _Panel:
    canvas: _Canvas
    ax: Any
    diagram: Scene
    lane_names: list[str]
    xlim: tuple[float, float]
    holds: bool = True
    """Whether the run's design holds: if not, nothing on the panel is green (the client's ``ok`` is neutral)."""
    margin: float = LANE_MARGIN
    """Space above the top lane and below the bottom one, in lanes."""
    labels: list[_Label] = field(default_factory=list)
    obstacles: list[placement.Box] = field(default_factory=list)
    arrows: list[placement.Segment] = field(default_factory=list)
    _vertical: list[tuple[float, float, float, float]] = field(default_factory=list)
    areas: list[placement.Box] = field(default_factory=list)
    """Bands no label may cover (a client's belief: a label on it would hide what it says)."""
    differs: set[tuple[str, int, str]] = field(default_factory=set)
    """What this panel's design does and most others do not (`differences`): haloed."""

    def __post_init__(self) -> None:
        self.y, self.depth = _lane_positions(self.diagram)
        self.api_lanes = [lane.id for lane in self.diagram.lanes if lane.role == "handler"]
        self.has_ledger = "ledger:charges" in self.y
        self.duplicates = {(entry.kind, entry.id): entry.duplicate for purchase in self.diagram.ledger
                           for entry in purchase.charges + purchase.captures}
        self.px = DPI / 72  # pixels per point
        self.outcome_color = _outcome_palette(OUTCOME_COLOR, NEUTRAL, self.holds)
        self.outcome_text = _outcome_palette(OUTCOME_TEXT, NEUTRAL_TEXT, self.holds)

    # geometry ----------------------------------------------------------------------------------------------
    def to_px(self, t: float, y: float, nudge: float = 0.0) -> tuple[float, float]:
        x, y = self.ax.transData.transform((t, y))
        return (float(x) + nudge, float(y))

    def shifted(self, nudge: float):
        from matplotlib.transforms import ScaledTranslation

        if not nudge:
            return self.ax.transData
        return self.ax.transData + ScaledTranslation(nudge / DPI, 0, self.canvas.figure.dpi_scale_trans)

    def pitch_px(self) -> float:
        return abs(self.to_px(0, 0)[1] - self.to_px(0, -1)[1])

    def obstacle(self, t: float, y: float, size_pt: float, nudge: float = 0.0) -> tuple:
        """Reserve the box of a marker ``size_pt`` points wide at (t, y): no label covers it."""
        x, yy = self.to_px(t, y, nudge)
        r = size_pt * self.px / 2
        box = (x - r, yy - r, x + r, yy + r)
        self.obstacles.append(box)
        return box

    def mark_label(self, variants, at, priority, box, **style) -> None:
        """A label naming the marker whose reserved box is ``box``."""
        radius = (box[2] - box[0]) / 2 if box else 3.0
        self.labels.append(_Label(variants, [at], priority, radius=radius, own=box,
                                  rings=3 if priority < 3 else 1, **style))

    # drawing -------------------------------------------------------------------------------------------------
    def draw(self) -> None:
        ax = self.ax
        n = len(self.diagram.lanes)
        ax.set_xlim(*self.xlim)
        ax.set_ylim(-self.depth - self.margin, self.margin)
        ax.set_yticks([self.y[lane.id] for lane in self.diagram.lanes[:n]], self.lane_names,
                      fontproperties=self.canvas.font(LANE_SIZE))
        ax.tick_params(axis="y", length=0, pad=8)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        ax.spines["bottom"].set_color(GREY)
        ax.set_facecolor("white")
        for lane in self.diagram.lanes:
            ax.axhline(self.y[lane.id], color=LANE if lane.role not in _TRACKS else "#E6E6E6", lw=1.0, zorder=1)
        for span in self.diagram.spans:
            self.draw_span(span)
            if ("span", span.event, span.kind) in self.differs and span.lane in self.y:
                self.halo(span.end, self.y[span.lane])
        for message in sorted(self.diagram.messages, key=lambda m: (m.sent, m.end)):
            self.draw_message(message)
        for mark in self.diagram.marks:
            self.draw_mark(mark)
            if ("mark", mark.event, mark.kind) in self.differs and mark.lane in self.y:
                self.halo(mark.t, self.y[mark.lane])
        self.draw_keys()
        self.draw_ledger()
        self.draw_beliefs()

    def halo(self, t: float, y: float, transform=None) -> None:
        """A yellow disc behind a step most other designs do not take."""
        self.ax.plot([t], [y], marker="o", markersize=20, ls="none", color=HALO, alpha=HALO_ALPHA,
                     markeredgecolor="none", zorder=1.8, transform=transform or self.ax.transData)

    def band(self, start: float, end: float, y: float, half: float, **style) -> None:
        from matplotlib.patches import Rectangle

        self.ax.add_patch(Rectangle((start, y - half), max(end - start, 0.0), 2 * half, **style))

    def draw_span(self, span) -> None:
        lang = self.canvas.lang
        ax = self.ax
        if span.kind == "down":
            if not self.api_lanes:
                return
            top, bottom = self.y[self.api_lanes[0]] + 0.38, self.y[self.api_lanes[-1]] - 0.38
            self.band(span.start, span.end, (top + bottom) / 2, (top - bottom) / 2, facecolor="none",
                      edgecolor=VERMILLION, hatch="////", lw=0, alpha=0.45, zorder=1.5)
            return
        y = self.y.get(span.lane)
        if y is None:
            return
        if span.kind == "alive":
            ax.plot([span.start, span.end], [y, y], color="#555555", lw=2.2, solid_capstyle="butt", zorder=2)
        elif span.kind == "attempt":
            ax.plot([span.start, span.end], [y, y], color=self.outcome_color[span.info["outcome"]], lw=5, alpha=0.45,
                    solid_capstyle="butt", zorder=2)
        elif span.kind == "transaction":
            self.band(span.start, span.end, y, 0.2, facecolor=SKY, alpha=0.28, edgecolor="none", zorder=1.2)
            if span.info["end"] == "rollback":
                self.mark_label([text("event.rollback", lang)], (span.end, y), 3, None, color="#1F5F8B",
                                prefer=("above-right", "below-right"))
        elif span.kind == "processing":
            self.band(span.start, span.end, y, 0.14, facecolor=ORANGE, alpha=0.25, edgecolor="none", zorder=1.2)
        elif span.kind == "wait":
            self.band(span.start, span.end, y, 0.13, facecolor=YELLOW, edgecolor="#8A7B00", lw=1.0, zorder=3.5)
            x0, y0 = self.to_px(span.start, y - 0.13)
            x1, y1 = self.to_px(span.end, y + 0.13)
            bar = (x0, y0, max(x1, x0 + 1), y1)
            self.obstacles.append(bar)
            seconds = text("seconds", lang, s=span.info["waited"])
            variants = [f"{seconds}: {span.label}", seconds] if span.label else [seconds]
            self.labels.append(_Label(variants, [((span.start + span.end) / 2, y)], 0, weight="bold",
                                      radius=(y1 - y0) / 2, prefer=("above", "below"), own=bar))
            release = next((s for s in self.diagram.spans if s.kind == "transaction" and span.released_by is not None
                            and s.event == span.released_by), None)
            if release is not None and release.lane in self.y:
                from matplotlib.patches import FancyArrowPatch

                target = self.y[release.lane]
                a, b = self.to_px(span.end, y), self.to_px(release.end, target)
                upright = abs(a[0] - b[0]) < 0.5 * abs(a[1] - b[1])  # released at once: the answers leave there too
                rad = (-0.9 if b[1] > a[1] else 0.9) if upright else 0.35  # upright: bulging left, off the answers
                ax.add_patch(FancyArrowPatch((span.end, y), (release.end, target), arrowstyle="<|-",
                                             mutation_scale=12, lw=1.6, color="#8A7B00", shrinkA=0, shrinkB=0,
                                             connectionstyle=f"arc3,rad={rad}", zorder=4.5 if upright else 3.6))
                self.arrows.append((*self.to_px(span.end, y), *self.to_px(release.end, target)))

    def draw_message(self, m) -> None:
        from matplotlib.patches import FancyArrowPatch

        lang = self.canvas.lang
        y0, y1 = self.y[m.src], self.y[m.dst]
        lost = m.arrived is None
        end = m.end
        if lost:  # lost halfway: where the message was when it was lost, off any lane it does not belong to
            y_end = (y0 + y1) / 2
            if abs(y_end - round(y_end)) < 0.2:
                y_end += 0.5 if y1 > y0 else -0.5
        else:
            y_end = y1
        nudge = self.nudge_for(m.sent, y0, end, y_end)
        color, width, dashed = {"request": (BLUE, 1.7, False), "response": (BLACK, 1.7, False),
                                "dropped": (GREY, 1.3, True)}.get(m.kind, (ORANGE, 1.6, False))
        if m.info.get("ignored"):
            color = GREY
        transform = self.shifted(nudge)
        if ("message", m.event, m.kind) in self.differs:
            self.ax.plot([m.sent, end], [y0, y_end], color=HALO, alpha=HALO_ALPHA, lw=8, solid_capstyle="round",
                         transform=transform, zorder=1.8)
        if lost:
            self.ax.plot([m.sent, end], [y0, y_end], color=GREY, lw=1.4, ls=(0, (4, 2)), transform=transform,
                         zorder=4)
            self.ax.plot([end], [y_end], marker="x", markersize=11, markeredgewidth=2.6, color=BLACK,
                         transform=transform, zorder=5, ls="none")
            cross = self.obstacle(end, y_end, 12, nudge)
        else:
            arrow = FancyArrowPatch((m.sent, y0), (end, y_end), arrowstyle="-|>", mutation_scale=13, lw=width,
                                    color=color, shrinkA=0, shrinkB=1, transform=transform, zorder=4,
                                    linestyle="--" if dashed else "-")
            self.ax.add_patch(arrow)
        a, b = self.to_px(m.sent, y0, nudge), self.to_px(end, y_end, nudge)
        segment = (a[0], a[1], b[0], b[1])
        self.arrows.append(segment)
        along = [0.5, 0.3, 0.7, 0.15, 0.85]
        points = [(m.sent + (end - m.sent) * f, y0 + (y_end - y0) * f) for f in along]
        if lost:
            self.labels.append(_Label([text("event.lost", lang)], [(end, y_end)], 0, color=VERMILLION,
                                      weight="bold", radius=(cross[2] - cross[0]) / 2, nudge=nudge,
                                      prefer=("right", "left"), own=cross))
        words = self.message_words(m)
        if words:
            priority, variants, text_color = words
            self.labels.append(_Label(variants, points if not lost else points[1:], priority, shape="segment",
                                      color=text_color, radius=3, nudge=nudge, own=segment))

    def message_words(self, m):
        """(priority, variants, colour) of a message's label (the scene's words), or None for one unlabelled."""
        if not m.what:
            return None
        priority, color = {"request": (2, "#00466E"), "processor.lookup": (2, "#8A5A00"),
                           "processor.answer": (1, "#8A5A00"), "dropped": (1, "#555555")}.get(m.kind, (0, "#000000"))
        if m.kind == "response" and (m.info.get("ignored") or m.info.get("replay")):
            priority, color = (1, "#555555") if m.info.get("ignored") else (0, "#000000")
        return priority, [m.what] + m.shorter, color

    def nudge_for(self, t0: float, y0: float, t1: float, y1: float) -> float:
        """Pixels to move a message right so that it does not lie on top of an earlier one: two messages that
        leave and arrive within a few pixels of each other, over common lanes, would look like one."""
        a, b = self.to_px(t0, y0), self.to_px(t1, y1)
        lo, hi = min(a[1], b[1]), max(a[1], b[1])
        nudge = 0.0
        while any(abs(a[0] + nudge - v[0]) < 4 and abs(b[0] + nudge - v[1]) < 4 and min(hi, v[3]) - max(lo, v[2]) > 2
                  for v in self._vertical):
            nudge += 6.0
        self._vertical.append((a[0] + nudge, b[0] + nudge, lo, hi))
        return nudge

    def draw_mark(self, mark) -> None:
        ax = self.ax
        words = [mark.label] + mark.shorter if mark.label else []
        if mark.kind == "restart":
            if not self.api_lanes:
                return
            top, bottom = self.y[self.api_lanes[0]] + 0.38, self.y[self.api_lanes[-1]] - 0.38
            ax.plot([mark.t, mark.t], [bottom, top], color=GREEN if self.holds else NEUTRAL, lw=2, zorder=3)
            self.labels.append(_Label(words, [(mark.t, top), (mark.t, bottom)], 1,
                                      color=self.outcome_text["ok"], weight="bold", radius=2,
                                      prefer=("above-right", "below-right", "right"),
                                      own=(*self.to_px(mark.t, bottom), *self.to_px(mark.t, top))))
            return
        y = self.y.get(mark.lane)
        if y is None:
            return
        at = (mark.t, y)
        strip = self.has_ledger  # the ledger strip names each charge and capture; the lanes need not
        if mark.kind == "statement":
            error = mark.info["error"] is not None
            ax.plot(*zip(at), marker="|", markersize=9, markeredgewidth=1.3 if not error else 2,
                    color=GREY if not error else VERMILLION, ls="none", zorder=3)
        elif mark.kind == "charge":
            committed = mark.info["committed"]
            writer = self.y.get(mark.info["writer"])
            if writer is not None:
                ax.plot([mark.t, mark.t], [writer, y], color=BLUE, lw=0.9, ls=":", zorder=2.5)
            red = self.duplicates.get(("charge", f"ch_{mark.info['id']}"), False)
            ax.plot(*zip(at), marker="s", markersize=10, ls="none", zorder=5, markeredgecolor=BLACK,
                    color=(VERMILLION if red else BLUE) if committed else "white", markeredgewidth=1.2)
            box = self.obstacle(mark.t, y, 11)
            if not (strip and committed):
                self.mark_label(words, at, 1 if committed else 3, box, color="#00466E", weight="bold",
                                prefer=("above-right", "below-right", "above", "below"))
        elif mark.kind == "capture":
            red = self.duplicates.get(("capture", mark.info["id"]), False)
            ax.plot(*zip(at), marker="o", markersize=11, ls="none", zorder=5, color=VERMILLION if red else ORANGE,
                    markeredgecolor=BLACK, markeredgewidth=1.2)
            box = self.obstacle(mark.t, y, 12)
            if not strip:
                self.mark_label(words, at, 1, box, color="#8A5A00", weight="bold",
                                prefer=("below-right", "above-right", "below", "above"))
        elif mark.kind == "crash":
            ax.plot(*zip(at), marker="*", markersize=20, ls="none", zorder=6, color=VERMILLION,
                    markeredgecolor=BLACK, markeredgewidth=0.8)
            box = self.obstacle(mark.t, y, 18)
            self.mark_label(words, at, 0, box, color=OUTCOME_TEXT["fail"], weight="bold",
                            prefer=("above-right", "right", "above"))
        elif mark.kind == "died":
            ax.plot(*zip(at), marker="|", markersize=14, markeredgewidth=3, color=VERMILLION, ls="none", zorder=5)
            self.obstacle(mark.t, y, 12)
        elif mark.kind == "outcome":
            outcome = mark.info["outcome"]
            ax.plot(*zip(at), marker=OUTCOME_MARKER[outcome], markersize=10, ls="none", zorder=6,
                    color=self.outcome_color[outcome], markeredgecolor=BLACK, markeredgewidth=1.0)
            box = self.obstacle(mark.t, y, 11)
            self.mark_label(words, at, 0, box, color=self.outcome_text[outcome], weight="bold",
                            prefer=("above", "above-right", "above-left"))
        elif mark.kind == "timeout":
            ax.plot(*zip(at), marker="D", markersize=7, ls="none", zorder=5, color="white", markeredgecolor=ORANGE,
                    markeredgewidth=1.6)
            box = self.obstacle(mark.t, y, 8)
            self.mark_label(words, at, 1, box, color="#8A5A00")
        elif mark.kind == "refused":
            self.mark_label(words, at, 1, None, color="#555555")
        elif mark.kind == "state":
            ax.plot(*zip(at), marker="o", markersize=5, ls="none", color="#555555", zorder=4)
            self.mark_label(words, at, 3, None, color="#555555", prefer=("below-right", "above-right"))
        elif mark.kind in ("finish", "release"):
            ax.plot(*zip(at), marker="P", markersize=9, ls="none", color=GREEN if self.holds else NEUTRAL,
                    markeredgecolor=BLACK, zorder=5)
            box = self.obstacle(mark.t, y, 10)
            self.mark_label(words, at, 1, box, color="#005F46" if self.holds else NEUTRAL_TEXT)
        elif mark.kind == "give_up":
            self.mark_label(words, at, 3, None, color=OUTCOME_TEXT["fail"], prefer=("below-right", "below"))

    # the scene's tracks: key records, ledgers, beliefs --------------------------------------------------------
    def draw_keys(self) -> None:
        """A band per key record: in_progress (owner), done (status); its end marked and named; its retention a
        bracket above it; a record on a key whose earlier record ended named as a new purchase."""
        ax = self.ax
        right = self.xlim[1]
        for track in self.diagram.keys:
            y = self.y.get(track.lane)
            if y is None:
                continue
            for record in track.records:
                bands = []
                for state in record.states:
                    color = KEY_COLOR.get(state.state, "#DDDDDD")
                    stop = right if record.ended is None and state is record.states[-1] else state.end  # kept on
                    self.band(state.start, stop, y, 0.16, facecolor=color, edgecolor="#555555", lw=0.6,
                              zorder=2.2, hatch="///" if state.state == "in_progress" else None)
                    x0, y0 = self.to_px(state.start, y - 0.16)
                    x1, y1 = self.to_px(stop, y + 0.16)
                    self.arrows.append((x0, (y0 + y1) / 2, max(x1, x0 + 1), (y0 + y1) / 2))  # rather not covered
                    bands.append((state, (x0, y0, max(x1, x0 + 1), y1)))
                retained = record.retention.end <= right and record.retention.ttl < 10 * max(self.diagram.end, 1.0)
                self.key_labels(bands, y, retained)
                r = record.retention
                if retained:
                    top = y + 0.3
                    ax.plot([r.start, r.start, r.end, r.end], [top - 0.07, top, top, top - 0.07], color="#555555",
                            lw=1.0, zorder=2.4)
                    self.arrows.append((*self.to_px(r.start, top), *self.to_px(r.end, top)))
                    along = [r.start + (r.end - r.start) * f for f in (0.5, 0.35, 0.65)]
                    self.labels.append(_Label([r.label], [(x, top) for x in along], 1, color="#333333",
                                              radius=2, prefer=("above", "below"), rings=1))
                if record.ended is not None:
                    end = record.ended
                    ax.plot([end.t], [y], marker="X", markersize=12, color=VERMILLION if end.how == "expired"
                            else BLACK, markeredgecolor=BLACK, markeredgewidth=0.8, ls="none", zorder=5)
                    box = self.obstacle(end.t, y, 12)
                    self.mark_label([end.label], (end.t, y), 1, box, color=OUTCOME_TEXT["fail"]
                                    if end.how == "expired" else NEUTRAL_TEXT, weight="bold",
                                    prefer=("below-right", "above-right", "right"))
                if record.again:
                    ax.plot([record.created], [y], marker=">", markersize=10, color=VERMILLION,
                            markeredgecolor=BLACK, ls="none", zorder=5)
                    box = self.obstacle(record.created, y, 11)
                    self.mark_label([record.again_label], (record.created, y), 0, box, color=OUTCOME_TEXT["fail"],
                                    weight="bold", prefer=("below-left", "above-left", "left"))

    def key_labels(self, bands: list, y: float, retained: bool) -> None:
        """Each state of a key record named beside its band; when one band is narrower than its name (a
        registration committed at once), the record's states in one name under it (``in_progress (API #1) →
        done 201``), so that the space above stays free for its retention bracket."""
        prefer = ("below-right", "below", "above-right") if retained else ("above-right", "below-right")
        if any(box[2] - box[0] < self.canvas.measure(state.label, LABEL_SIZE)[0] for state, box in bands[:-1]):
            first, box = bands[0]
            whole = (box[0], box[1], bands[-1][1][2], box[3])
            words = " → ".join(state.label for state, _ in bands)
            self.labels.append(_Label([words] + [state.label for state, _ in bands[-1:]], [(first.start, y)], 2,
                                      color="#333333", radius=(box[3] - box[1]) / 2, prefer=prefer, own=whole,
                                      rings=1))
            return
        for state, box in bands:
            self.labels.append(_Label([state.label], [(state.start, y)], 2, color="#333333",
                                      radius=(box[3] - box[1]) / 2, prefer=prefer, own=box, rings=1))

    def draw_ledger(self) -> None:
        """The charge rows and the captures, per purchase: a duplicate red, its pair bracketed and named; an orphan
        hollow and named."""
        ax = self.ax
        rows = {"charge": self.y.get("ledger:charges"), "capture": self.y.get("ledger:captures")}
        if None in rows.values():
            return
        for purchase in self.diagram.ledger:
            for entry in purchase.charges + purchase.captures:
                y = rows[entry.kind]
                base = BLUE if entry.kind == "charge" else ORANGE
                face = "white" if entry.orphan else VERMILLION if entry.duplicate else base
                ax.plot([entry.t], [y], marker="s" if entry.kind == "charge" else "o", markersize=10, ls="none",
                        color=face, markeredgecolor=VERMILLION if entry.orphan else BLACK,
                        markeredgewidth=2.2 if entry.orphan else 1.2, zorder=5)
                box = self.obstacle(entry.t, y, 11)
                red = entry.duplicate or entry.orphan
                self.mark_label([entry.label] + ([entry.id] if entry.orphan else []), (entry.t, y), 1, box,
                                color=OUTCOME_TEXT["fail"] if red else "#00466E" if entry.kind == "charge"
                                else "#8A5A00", weight="bold", prefer=("above", "above-right", "above-left"))
            for pair in purchase.pairs:
                y = rows["charge" if pair.kind == "charged_twice" else "capture"] - 0.3
                ax.plot([pair.start, pair.start, pair.end, pair.end], [y + 0.1, y, y, y + 0.1], color=VERMILLION,
                        lw=1.6, zorder=4)
                self.arrows.append((*self.to_px(pair.start, y), *self.to_px(pair.end, y)))
                along = [pair.start + (pair.end - pair.start) * f for f in (0.5, 0.35, 0.65, 0.2, 0.8)]
                self.labels.append(_Label([pair.label], [(x, y) for x in along], 0,
                                          color=OUTCOME_TEXT["fail"], weight="bold", radius=2,
                                          prefer=("below", "below-right", "below-left")))

    def draw_beliefs(self) -> None:
        """What each client believes of each operation (paid, not paid, unknown) as a band under the client, red
        where it differs from the truth (money captured or not); overlapping operations share the row: an
        operation whose belief has settled (its last answer came) gives its sub-row to the next one, its band
        drawn up to that one's start (else to the figure's end: believed after the run too)."""
        by_lane: dict[str, list] = {}
        for belief in self.diagram.beliefs:
            by_lane.setdefault(belief.lane, []).append(belief)
        for lane, beliefs in by_lane.items():
            y = self.y.get(lane)
            if y is None:
                continue
            slots: list[float] = []  # when the last belief in each sub-row settled
            placed: list[tuple[Any, int, float]] = []  # belief, its sub-row, its first time
            for belief in beliefs:
                start = belief.spans[0].start if belief.spans else 0.0
                slot = next((n for n, busy in enumerate(slots) if busy <= start), len(slots))
                if slot == len(slots):
                    slots.append(0.0)
                last = belief.spans[-1] if belief.spans else None
                slots[slot] = (last.start if last.told else self.xlim[1]) if last else start
                placed.append((belief, slot, start))
            for n, (belief, belief_slot, _) in enumerate(placed):
                after = next((s for b, k, s in placed[n + 1:] if k == belief_slot), self.xlim[1])
                offset = 0.12 - 0.2 * belief_slot
                bands: dict[int, tuple] = {}
                stops: dict[int, float] = {}
                for span in belief.spans:
                    color = VERMILLION if span.differs else BELIEF_COLOR[span.believes]
                    if span.believes == "paid" and not span.differs and self.holds:
                        color = GREEN
                    stop = max(after, span.start) if span is belief.spans[-1] else span.end
                    self.band(span.start, stop, y + offset, 0.09, facecolor=color,
                              alpha=0.7 if span.told else 0.3, edgecolor="none", zorder=2.2)
                    if stop > span.start:  # no label covers it
                        x0, y0 = self.to_px(span.start, y + offset - 0.09)
                        x1, y1 = self.to_px(stop, y + offset + 0.09)
                        self.areas.append((x0, y0, x1, y1))
                        bands[id(span)] = (x0, y0, x1, y1)
                        stops[id(span)] = stop
                previous = None
                for span in belief.spans:
                    if (span.believes, span.differs) == previous or not span.told:
                        continue
                    previous = (span.believes, span.differs)
                    band = bands.get(id(span))  # (it names the band, not a point; and sits clear of it)
                    middle = (span.start + stops.get(id(span), span.start)) / 2  # (else: off an arrow at its start)
                    self.labels.append(_Label([span.label], [(span.start, y + offset), (middle, y + offset)], 3,
                                              color=OUTCOME_TEXT["fail"] if span.differs else "#333333",
                                              radius=max(3.0, (band[3] - band[1]) / 2) if band else 3.0,
                                              prefer=("above-right", "below-right", "right"), rings=2, own=band))

    # labels --------------------------------------------------------------------------------------------------
    def place_labels(self) -> None:
        """Place every label (see `idemsim.views.placement`) and draw those that fit."""
        from matplotlib.lines import Line2D
        from matplotlib.text import Text

        canvas = self.canvas
        bbox = self.ax.get_window_extent(canvas.renderer)
        bounds = (bbox.x0 + 2, bbox.y0 + 2, bbox.x1 - 2, bbox.y1 - 2)
        requests = []
        for label in self.labels:
            sizes = [canvas.measure(v, LABEL_SIZE, label.weight) for v in label.variants]
            anchors = [self.to_px(t, y, label.nudge) for t, y in label.anchors]
            requests.append(placement.Label(label.variants, sizes, anchors, label.priority, label.shape,
                                            label.radius, label.prefer, label.rings, label.own))
        lines = [(bbox.x0, y, bbox.x1, y) for y in (self.to_px(0, self.y[lane.id])[1]
                                                     for lane in self.diagram.lanes)]
        placed = placement.place(requests, self.obstacles, self.arrows, bounds, lines=lines, areas=self.areas)
        inverse = self.ax.transData.inverted()
        for label, p in zip(self.labels, placed):
            if p is None:
                continue
            x, y = inverse.transform((p.anchor[0] + p.offset[0], p.anchor[1] + p.offset[1]))
            self.ax.add_artist(Text(x, y, p.text, fontproperties=canvas.font(LABEL_SIZE, label.weight),
                                    color=label.color, ha=p.ha, va=p.va, zorder=7, clip_on=False,
                                    bbox=dict(boxstyle="square,pad=0.08", facecolor="white", edgecolor="none",
                                              alpha=0.82)))
            if p.leader:
                box = p.box
                tx = min(max(p.anchor[0], box[0]), box[2])
                ty = min(max(p.anchor[1], box[1]), box[3])
                a = inverse.transform(p.anchor)
                b = inverse.transform((tx, ty))
                self.ax.add_line(Line2D([a[0], b[0]], [a[1], b[1]], color=GREY, lw=0.8, zorder=6.5))
