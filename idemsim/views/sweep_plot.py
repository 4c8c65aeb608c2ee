"""Figures of many runs or many operations: a sweep's rate against the varied field, a heatmap for two fields,
attempts per second over time; and a load's figure: its connection pool over time and its attempts per second
(`load_figure`, and `load_comparison_figure` for one load under several designs).

`figure` draws a `idemsim.runners.sweep.SweepResult` the way its scenario's ``[sweep]`` table asks (``plot``):

- ``rate`` with one varied field: one panel per measure (the first in ``measures`` on top), the measure against
  the field, one line per design in the design's own style (`idemsim.views.styles`), its 95 % Wilson interval as
  a band (a number such as ``time_to_answer.p95`` is drawn without a band);
- ``rate`` with two varied fields: a heatmap per design of the first measure;
- ``series``: attempts per second over time, one line per point and design (the retry storm after an outage).

Axes are labelled in words from the catalogue (``sweep.vary.FIELD``, ``sweep.MEASURE``), the varied field's
path in small print under its words. Matplotlib is imported inside the functions; figures are built as
`matplotlib.figure.Figure` objects (no pyplot state) and saved deterministically by `idemsim.views.figure.save`.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

from ..base.i18n import MESSAGES, language
from ..base.i18n import text as t
from ..base.printable import point_text as _point_text
from ..judge.summary import is_load
from .figure import NEUTRAL, OUTCOME_COLOR, SKY, YELLOW, fonts, title_weight
from .figure import check_path as check
from .figure import comparison_figure as time_space_comparison
from .figure import save as save_figure
from .styles import DASH_DOT, DASHED, DOTTED, SOLID, design_style
from .verdicts import green, short_design_words, short_story_words

SIZE = (12.8, 7.2)
"""Inches: 1280×720 at 100 dpi, a projector's frame."""
POINT_DASHES = (SOLID, DASHED, DOTTED, DASH_DOT)
POINT_WIDTHS = (3.4, 2.6, 2.2, 1.8)
POINT_PALER = (0.0, 0.35, 0.15, 0.55)
"""A series' points under one design: its colour, each point with its own dashes, width and share of white (the
later ones thinner and drawn on top, so that a line under another still shows)."""
IDLE = "#E6E6E6"
"""A free connection of the pool."""
WAIT_EDGE = "#8A7B00"
"""The edge of a wait, as in a run's figure."""
ZERO = "#BBBBBB"
"""The one line drawn for every design that stays at 0."""
PATH = "#666666"
"""A field's path, in small print under its words."""


def check_path(path: str) -> None:
    """Refuse, before anything runs, a file name a figure cannot be saved as."""

    check(path)


def save(figure, path: str) -> None:

    save_figure(figure, path)


def _value(row: dict[str, Any], measure: str) -> tuple[float, float | None, float | None]:
    """A measure of a row: a rate with its interval, or a number (``time_to_answer.p95``) without one."""
    head, _, tail = measure.partition(".")
    value = row[head]
    if isinstance(value, dict) and "rate" in value:
        return value["rate"], value["low"], value["high"]
    if isinstance(value, dict):
        return value[tail or next(iter(value))], None, None
    return float(value), None, None


def _label(measure: str, lang: str) -> str:
    """A measure in words."""
    key = f"sweep.{measure}"
    return t(key, lang) if key in MESSAGES else measure.replace("_", " ")


def field_words(field: str, lang: str) -> str:
    """A varied field in words (``network.response.loss``: "response loss rate"); its path if the catalogue has
    no words for it (a field a user varies)."""
    key = f"sweep.vary.{field}"
    return t(key, lang) if key in MESSAGES else field


def _value_words(value: Any, lang: str) -> str:
    said = _point_text(value)
    key = f"sweep.value.{said}"
    return t(key, lang) if key in MESSAGES else said


def _field_label(panel, field: str, lang: str, axis: str = "x", size: float = 12) -> None:
    """Label ``panel``'s axis with the field in words and, when they are not the path itself, the path in small
    grey print beside them."""
    words = field_words(field, lang)
    if axis == "x":
        panel.set_xlabel(words, fontsize=size)
        if words != field:
            panel.annotate(field, (1.0, 0.0), xycoords="axes fraction", xytext=(0, -size * 2.6),
                           textcoords="offset points", ha="right", va="top", fontsize=8.5, color=PATH)
    else:
        panel.set_ylabel(words if words == field else f"{words}\n({field})", fontsize=size)


def figure(result, config=None, lang: str | None = None):
    """The sweep's figure, as ``config.plot`` asks (rates by default), in ``lang`` (by default
    `idemsim.base.i18n.language`: ``IDEMSIM_LANG``, else English)."""
    lang = language(lang)
    from matplotlib.figure import Figure

    plot = config.plot if config is not None else "rate"
    measures = list(config.measures) if config is not None else ["double_charge"]
    with fonts(lang):
        fig = Figure(figsize=SIZE, layout="constrained")

        title = result.titles.get(lang) or result.title or result.scenario
        fig.suptitle(textwrap.fill(title, 95 if lang == "en" else 48), fontsize=15, fontweight=title_weight(lang),
                     x=0.01, ha="left")
        marks = [dict(m.model_dump(), label=m.text(lang)) for m in config.marks] if config else []
        if plot == "series":
            _series(fig, result, lang, marks)
        elif len(result.axes) == 1:
            _rates(fig, result, measures, lang, marks)
        else:
            _heatmaps(fig, result, measures[0], lang)
        fig.canvas.draw()  # lay out, and make every text, inside the font context
    return fig


def _rates(fig, result, measures: list[str], lang: str, marks: list | None = None) -> None:
    marks = marks or []
    axis = result.axes[0]
    panels = fig.subplots(len(measures), 1, sharex=True, squeeze=False)[:, 0]
    banded = False
    for panel, measure in zip(panels, measures):
        flat = []
        for design in result.designs:
            rows = [r for r in result.rows if r["design"] == design]
            xs = [r[axis.field] for r in rows]
            values = [_value(r, measure) for r in rows]
            style = design_style(design)
            if values and all(v[0] == 0 for v in values) and values[0][1] is not None and len(result.designs) > 1:
                flat.append(design)  # drawn once below: five lines on top of each other hide each other
                continue
            panel.plot(xs, [v[0] for v in values], label=design, clip_on=False, **style.line())  # (0 on the axis)
            if values and values[0][1] is not None:
                banded = True
                panel.fill_between(xs, [v[1] for v in values], [v[2] for v in values], color=style.colour,
                                   alpha=0.15, linewidth=0)
        if flat:
            xs = [r[axis.field] for r in result.rows if r["design"] == flat[0]]
            panel.plot(xs, [0] * len(xs), "-", color=ZERO, linewidth=6, solid_capstyle="butt", zorder=1,
                       label=textwrap.fill(t("sweep.zero", lang, designs=", ".join(flat)), 24,
                                           break_on_hyphens=False, break_long_words=False))
        panel.set_ylabel(balanced(_label(measure, lang), 26 if lang == "en" else 14), fontsize=12)
        if _is_rate(result, measure):
            panel.set_ylim(-0.02, 1.02)
        else:
            panel.set_ylim(bottom=0)
        panel.grid(True, color="#dddddd")
        for mark in marks:
            _mark(panel, mark)
        panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11, frameon=False, handlelength=3.2)
    _field_label(panels[-1], axis.field, lang)
    panels[0].set_title(t("sweep.subtitle" if banded else "sweep.subtitle_no_bands", lang, seeds=result.seeds),
                        loc="left", fontsize=11)


def balanced(words: str, width: int) -> str:
    """``words`` wrapped within ``width`` characters into as few lines as `textwrap` needs, as even as those
    lines allow (``key records`` / ``held at the end``, never a last line of one short word)."""
    lines = textwrap.wrap(words, width, break_on_hyphens=False)
    while width > 4 and len(textwrap.wrap(words, width - 1, break_on_hyphens=False)) == len(lines):
        width -= 1
        lines = textwrap.wrap(words, width, break_on_hyphens=False)
    return "\n".join(lines)


def _closed(values: list[float]) -> list[float]:
    """A step series' values with the last repeated, so that its last window is drawn as wide as the others."""
    return values + values[-1:]


def _is_rate(result, measure: str) -> bool:
    value = result.rows[0][measure.partition(".")[0]] if result.rows else None
    return isinstance(value, dict) and "rate" in value


def _heatmaps(fig, result, measure: str, lang: str) -> None:
    first, second = result.axes[0], result.axes[1]
    panels = fig.subplots(1, len(result.designs), squeeze=False)[0]
    image = None
    for panel, design in zip(panels, result.designs):
        rows = [r for r in result.rows if r["design"] == design]
        grid = [[_value(r, measure)[0] for r in rows[i * len(second.texts):(i + 1) * len(second.texts)]]
                for i in range(len(first.texts))]
        image = panel.imshow(grid, vmin=0, vmax=1, cmap="viridis", origin="lower", aspect="auto")
        panel.set_title(design, fontsize=12)
        panel.set_xticks(range(len(second.texts)), second.texts, fontsize=9, rotation=45)
        panel.set_yticks(range(len(first.texts)), first.texts, fontsize=9)
        _field_label(panel, second.field, lang, size=10)
    _field_label(panels[0], first.field, lang, axis="y", size=10)
    if image is not None:
        fig.colorbar(image, ax=list(panels), label=_label(measure, lang))


def _series(fig, result, lang: str, marks: list | None = None) -> None:
    marks = marks or []
    panel = fig.subplots()
    names = [a.field for a in result.axes]
    points = {d: 0 for d in result.designs}
    steps: list[tuple[list[float], list[float], dict[str, Any]]] = []
    for row in result.rows:
        series = row["attempts_per_second"]
        xs = [k * series["window"] for k in range(len(series["per_second"]) + 1)]
        point = ", ".join(f"{field_words(n, lang)} {_value_words(row[n], lang)}" for n in names)
        style = design_style(row["design"])
        k = points[row["design"]]
        points[row["design"]] += 1
        label = f"{row['design']}: {point}" if len(result.designs) > 1 else point
        if "peak_after_outage" in row:
            label = t("sweep.peak_after", lang, label=label, peak=round(row["peak_after_outage"]["p50"]))
        drawn = dict(where="post", color=_paler(style.colour, POINT_PALER[k % 4]), linestyle=POINT_DASHES[k % 4],
                     linewidth=POINT_WIDTHS[k % 4], zorder=3 + k)
        panel.step(xs, _closed(series["per_second"]), label=label, clip_on=False, **drawn)  # (0 drawn whole)
        steps.append((xs, _closed(series["per_second"]), drawn))
    for mark in marks:
        _mark(panel, mark)
    _enlarged(panel, steps, lang)
    panel.set_xlabel(t("sweep.time", lang), fontsize=12)
    panel.set_ylabel(t("sweep.attempts_per_second", lang), fontsize=12)
    panel.set_xlim(left=0)
    panel.set_ylim(bottom=0)
    panel.set_title(t("sweep.series_subtitle", lang, seeds=result.seeds), loc="left", fontsize=11)
    panel.grid(True, color="#dddddd")
    panel.legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), fontsize=11, frameon=False, ncols=1,
                 handlelength=3.2)


SHORT = 0.25
"""A series that ends within this share of the longest one's time is drawn again, enlarged, in an inset."""
INSET = (0.52, 0.28, 0.28, 0.52)
"""Where the inset goes, in the panel's fractions (left, bottom, width, height): after the outage, above the
slow tail of the jittered retries."""


def _enlarged(panel, steps: list, lang: str) -> None:
    """The first seconds of every series, enlarged in an inset, when some series end early (a retry budget:
    every client gave up within seconds): drawn at the full scale they lie on top of one another by the axis."""
    ends = [xs[-1] for xs, _, _ in steps if xs]
    if not ends or not any(end <= SHORT * max(ends) for end in ends) or all(end <= SHORT * max(ends)
                                                                             for end in ends):
        return
    until = max(end for end in ends if end <= SHORT * max(ends)) + 1
    inset = panel.inset_axes(INSET)
    for xs, ys, drawn in steps:
        inset.step(xs, ys, clip_on=True, **drawn)
    inset.set_xlim(0, until)
    inset.set_ylim(-0.02 * panel.get_ylim()[1], panel.get_ylim()[1] * 1.02)
    inset.set_title(t("sweep.enlarged", lang, s=until), fontsize=10, loc="left")
    inset.tick_params(labelsize=9)
    inset.grid(True, color="#dddddd")
    inset.set_facecolor("white")
    indicator = panel.indicate_inset_zoom(inset, edgecolor="#888888")
    for line in getattr(indicator, "connectors", None) or (indicator[1] if isinstance(indicator, tuple) else []):
        line.set_visible(False)  # (the frame on the first seconds says where the inset is from)


def _paler(colour: str, white: float) -> str:
    """``colour`` mixed with a share ``white`` of white."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * white):02X}" for c in rgb)


def _mark(panel, mark: dict) -> None:
    """A vertical line at ``at`` (or a band from ``at`` to ``until``), labelled."""
    if mark.get("until") is not None:
        panel.axvspan(mark["at"], mark["until"], color="#999999", alpha=0.15, linewidth=0)
        panel.annotate(mark["label"], (mark["until"], 0.97), xycoords=("data", "axes fraction"), fontsize=11,
                       color="#444444", ha="right", va="top", xytext=(-6, 0), textcoords="offset points",
                       bbox={"boxstyle": "square,pad=0.2", "facecolor": "white", "edgecolor": "none"})
        return
    panel.axvline(mark["at"], color="#444444", linestyle=":", linewidth=1.5)
    panel.annotate(mark["label"], (mark["at"], 0.5), xycoords=("data", "axes fraction"), rotation=90,
                   fontsize=10, color="#444444", ha="left", va="center", xytext=(4, 0), textcoords="offset points")


# -- a load: its pool over time and its attempts per second ---------------------------------------------------
@dataclass
class PoolSeries:
    """A load's connection pool over time, as steps: from ``times[i]`` to ``times[i + 1]`` (the last to the
    run's end) ``busy[i]`` connections run a handler, ``waiting[i]`` more are held by a handler whose statement
    waits on the unique index or a row lock, ``idle[i]`` are free (busy + waiting + idle == ``size``), and
    ``queued[i]`` requests wait for a connection."""

    size: int
    times: list[float]
    busy: list[int]
    waiting: list[int]
    idle: list[int]
    queued: list[int]


def pool_series(trace, size: int) -> PoolSeries:
    """The pool of ``size`` connections over a run's ``trace``: a handler holds a connection from its arrival
    (or, when it had to queue, its ``pool.acquire``) until it answers (``response.send``, ``response.dropped``)
    or dies (``api.died``); it waits on the database from a ``db.wait`` to its connection's next ``db.result``;
    a request queues from its ``pool.wait`` to its ``pool.acquire``."""
    held: set[str] = set()
    waiting: set[str] = set()
    queued: set[str] = set()
    arrived: dict[str, float] = {}  # handler -> its arrival, until we know whether it queued
    out = PoolSeries(size, [], [], [], [], [])

    def step(now: float) -> None:
        if out.times and out.times[-1] == now:  # one step an instant: the state after its last event
            for values in (out.times, out.busy, out.waiting, out.idle, out.queued):
                values.pop()
        out.times.append(now)
        out.busy.append(len(held) - len(waiting))
        out.waiting.append(len(waiting))
        out.idle.append(size - len(held))
        out.queued.append(len(queued))

    def took(handler: str) -> None:
        """A handler that did not queue at its arrival took a free connection then."""
        since = arrived.pop(handler)
        held.add(handler)
        step(since)

    end = 0.0
    for event in trace:
        end = event.t
        kind, actor, data = event.kind, event.actor, event.data or {}
        for handler, since in list(arrived.items()):
            if since < event.t or (handler == actor and kind != "pool.wait"):
                took(handler)
        if kind == "request.arrive" and data.get("handler"):
            arrived[data["handler"]] = event.t
            continue
        if kind == "pool.wait":
            arrived.pop(actor, None)
            queued.add(actor)
        elif kind == "pool.acquire":
            queued.discard(actor)
            held.add(actor)
        elif kind in ("response.send", "response.dropped", "api.died"):
            held.discard(actor)
            waiting.discard(actor)
            queued.discard(actor)
        elif kind == "db.wait" and actor in held:
            waiting.add(actor)
        elif kind == "db.result" and actor in waiting:
            waiting.discard(actor)
        else:
            continue
        step(event.t)
    for handler in list(arrived):
        took(handler)
    step(end)
    return out


def _pool_of(run) -> int | None:
    return run.scenario.api.pool_size


def _outages(panel, run, lang: str, labelled: bool = True) -> None:
    for fault in run.scenario.faults:
        if fault.kind == "outage":
            if labelled:
                _mark(panel, {"at": fault.start, "until": fault.until, "label": t("load.outage", lang)})
            else:
                panel.axvspan(fault.start, fault.until, color="#999999", alpha=0.15, linewidth=0)


def _draw_pool(panel, series: PoolSeries, lang: str, legend: bool = True) -> None:
    """The pool's connections as stacked steps (busy, waiting on the database, idle) and the requests queued for
    one as a line, from 0."""
    xs = series.times
    layers = [(series.busy, SKY, None, "load.busy"), (series.waiting, YELLOW, "////", "load.waiting"),
              (series.idle, IDLE, None, "load.idle")]
    bottom = [0] * len(xs)
    for values, colour, hatch, key in layers:
        top = [b + v for b, v in zip(bottom, values)]
        panel.fill_between(xs, bottom, top, step="post", facecolor=colour, hatch=hatch,
                           edgecolor=WAIT_EDGE if hatch else colour, linewidth=0, label=t(key, lang))
        bottom = top
    panel.step(xs, series.queued, where="post", color="#000000", linewidth=1.8, label=t("load.queued", lang))
    panel.axhline(series.size, color="#444444", linewidth=1, linestyle=(0, (4, 2)))
    panel.set_xlim(left=0, right=max(xs[-1], 1e-9))
    panel.set_ylim(0, max([series.size] + series.queued) * 1.08)
    panel.grid(True, color="#dddddd")
    if legend:
        panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=10.5, frameon=False)


def _verdict_lines(run, lang: str) -> str:
    s = run.summary
    return (t("load.verdict", lang, charges=s.charges, captures=s.captures, broken=len(s.violations))
            + "\n" + t("design.line", lang, verdict=short_design_words(s.design_verdict, s.violations, lang))
            + "\n" + t("story.line", lang, check=short_story_words(s.story_check, lang)))


def _pool_words(run, lang: str) -> str:
    wait = run.summary.pool_wait
    said = t("load.pool", lang, size=_pool_of(run))
    if wait:
        said += " · " + t("load.pool_wait", lang, p95=wait["p95"], max=wait["max"])
    return said


def load_figure(run, lang: str = "en"):
    """A load's figure: with a connection pool, the pool over time on top (connections busy, waiting on the
    database, idle; requests queued for one); the attempts per second below, a line per outcome of the attempt
    (ok, fail, info), the ``ok`` line neutral when the design broke; the outages shaded; under it, the figures
    and the two verdicts (`idemsim.views.verdicts`). Every axis starts at 0."""
    from matplotlib.figure import Figure

    series = run.summary.attempts_per_second
    window = series["window"]
    size = _pool_of(run)
    with fonts(lang):
        fig = Figure(figsize=SIZE, layout="constrained")
        fig.suptitle(t("load.title", lang, name=run.name, design=run.design, seed=run.seed,
                       n=len(run.operations)), fontsize=15, fontweight=title_weight(lang), x=0.01, ha="left")
        if size is not None:
            top, panel = fig.subplots(2, 1, sharex=True, height_ratios=[1.1, 1])
            _draw_pool(top, pool_series(run.trace, size), lang)
            top.set_ylabel(textwrap.fill(t("load.connections", lang), 18 if lang == "en" else 10), fontsize=12)
            top.set_title(_pool_words(run, lang), loc="left", fontsize=11)
            _outages(top, run, lang)
        else:
            panel = fig.subplots()
        xs = [i * window for i in range(len(series["counts"]) + 1)]
        panel.step(xs, _closed([c / window for c in series["counts"]]), "-", where="post", color="#000000",
                   linewidth=2, label=t("load.all", lang))
        colours = OUTCOME_COLOR if green(run.summary.design_verdict) else {**OUTCOME_COLOR, "ok": NEUTRAL}
        for outcome, dashes in (("ok", DASHED), ("fail", DOTTED), ("info", DASH_DOT)):
            counts = series["by_outcome"][outcome]
            if any(counts):
                panel.step(xs, _closed([c / window for c in counts]), where="post", color=colours[outcome],
                           linestyle=dashes, linewidth=2,
                           label=t("load.outcome", lang, outcome=t("outcome." + outcome, lang)))
        _outages(panel, run, lang, labelled=size is None)
        panel.set_xlabel(t("sweep.time", lang), fontsize=12)
        said = t("sweep.attempts_per_second", lang)
        panel.set_ylabel(textwrap.fill(said, 18 if lang == "en" else 10) if size is not None else said, fontsize=12)
        panel.set_xlim(left=0)
        panel.set_ylim(bottom=0)
        panel.grid(True, color="#dddddd")
        panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=10.5, frameon=False)
        fig.supxlabel(_verdict_lines(run, lang), fontsize=12, x=0.01, ha="left")
        fig.canvas.draw()
    return fig


attempts_figure = load_figure
"""The name `load_figure` had when it drew only the attempts."""


def load_comparison_figure(runs, lang: str = "en"):
    """One load under several designs: a panel per design of its pool over time (as `load_figure`'s top panel;
    the attempts per second when the API has no pool), on one time axis and one scale, each titled by its design
    and its verdict; at most two 1280×720 screens high."""
    from matplotlib.figure import Figure

    runs = list(runs)
    first = runs[0]
    size = _pool_of(first)
    pools = [pool_series(run.trace, size) for run in runs] if size is not None else None
    height = min(14.4, max(7.2, 1.4 + 1.9 * len(runs)))
    with fonts(lang):
        fig = Figure(figsize=(12.8, height), layout="constrained")
        fig.suptitle(t("load.compare_title", lang, name=first.name, seed=first.seed, n=len(first.operations)),
                     fontsize=15, fontweight=title_weight(lang), x=0.01, ha="left")
        panels = fig.subplots(len(runs), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
        for i, (panel, run) in enumerate(zip(panels, runs)):
            s = run.summary
            if pools is not None:
                _draw_pool(panel, pools[i], lang, legend=False)
                wait = s.pool_wait
                if wait:
                    panel.set_title(t("load.pool_wait", lang, p95=wait["p95"], max=wait["max"]), loc="right",
                                    fontsize=10, color=PATH)
            else:
                style = design_style(run.design)
                series = s.attempts_per_second
                xs = [k * series["window"] for k in range(len(series["counts"]) + 1)]
                panel.step(xs, _closed([c / series["window"] for c in series["counts"]]), where="post",
                           color=style.colour, linestyle=style.dashes, linewidth=2)
                panel.grid(True, color="#dddddd")
            _outages(panel, run, lang, labelled=False)
            verdict = short_design_words(s.design_verdict, s.violations, lang)
            panel.set_title(textwrap.shorten(f"{run.design} — {verdict}", 100 if lang == "en" else 60,
                                             placeholder=" …"), loc="left", fontsize=11)
        if pools is not None:
            panels[0].set_xlim(0, max(max(p.times[-1] for p in pools), 1e-9))
            panels[0].set_ylim(0, max(max([p.size] + p.queued) for p in pools) * 1.08)
            handles, labels = panels[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="outside lower left", ncols=len(labels), fontsize=10.5, frameon=False)
            fig.supylabel(t("load.connections", lang), fontsize=12)
        else:
            panels[0].set_xlim(left=0)
            panels[0].set_ylim(bottom=0)
            fig.supylabel(t("sweep.attempts_per_second", lang), fontsize=12)
        panels[-1].set_xlabel(t("sweep.time", lang), fontsize=12)
        fig.canvas.draw()
    return fig


def comparison_figure(runs, lang: str | None = None):
    """A comparison's figure: a load's pool under each design (`load_comparison_figure`), where a time-space
    diagram would draw thousands of lanes; else `idemsim.views.figure.comparison_figure`."""
    runs = list(runs)
    if runs and is_load(runs[0]):
        return load_comparison_figure(runs, language(lang))
    return time_space_comparison(runs, lang)
