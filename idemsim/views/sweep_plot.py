"""Figures of many runs or many operations: a sweep's rate against the varied field, a heatmap for two fields,
attempts per second over time; and a load's attempts per second by how they ended (`attempts_figure`).

`figure` draws a `idemsim.runners.sweep.SweepResult` the way its scenario's ``[sweep]`` table asks (``plot``):

- ``rate`` with one varied field: one panel per measure (the first in ``measures`` on top), the measure against
  the field, one line per design, its 95 % Wilson interval as a band (a number such as
  ``time_to_answer.p95`` is drawn without a band);
- ``rate`` with two varied fields: a heatmap per design of the first measure;
- ``series``: attempts per second over time, one line per point and design (the retry storm after an outage).

Matplotlib is imported inside the functions; figures are built as `matplotlib.figure.Figure` objects (no pyplot
state) and saved deterministically by `idemsim.views.figure.save`.
"""

from __future__ import annotations

import textwrap
from typing import Any

from ..base.i18n import MESSAGES, language
from ..base.i18n import text as t
from ..base.printable import point_text as _point_text
from .figure import NEUTRAL, OUTCOME_COLOR, fonts, title_weight
from .figure import check_path as check
from .figure import save as save_figure
from .verdicts import green, short_design_words, short_story_words

SIZE = (12.8, 7.2)
"""Inches: 1280×720 at 100 dpi, a projector's frame."""
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
"""Okabe and Ito's colour-blind-safe palette, one per line."""
STYLES = ("-", "--", "-.", ":")


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
    key = f"sweep.{measure}"

    return t(key, lang) if key in MESSAGES else measure.replace("_", " ")


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
    for panel, measure in zip(panels, measures):
        flat = []
        for i, design in enumerate(result.designs):
            rows = [r for r in result.rows if r["design"] == design]
            xs = [r[axis.field] for r in rows]
            values = [_value(r, measure) for r in rows]
            colour, style = COLOURS[i % len(COLOURS)], STYLES[(i // len(COLOURS)) % len(STYLES)]
            if values and all(v[0] == 0 for v in values) and values[0][1] is not None:
                flat.append(design)  # drawn once below: five lines on top of each other hide each other
                continue
            panel.plot(xs, [v[0] for v in values], style, color=colour, marker="o", markersize=4, linewidth=2,
                       label=design)
            if values and values[0][1] is not None:
                panel.fill_between(xs, [v[1] for v in values], [v[2] for v in values], color=colour, alpha=0.15,
                                   linewidth=0)
        if flat:
            xs = [r[axis.field] for r in result.rows if r["design"] == flat[0]]
            panel.plot(xs, [0] * len(xs), "-", color="#444444", linewidth=3, marker="s", markersize=4,
                       label=t("sweep.zero", lang, designs=", ".join(flat)))

        panel.set_ylabel(textwrap.fill(_label(measure, lang), 26 if lang == "en" else 14), fontsize=12)
        if _is_rate(result, measure):
            panel.set_ylim(-0.02, 1.02)
        panel.grid(True, color="#dddddd")
        for mark in marks:
            _mark(panel, mark)
        panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11, frameon=False)
    panels[-1].set_xlabel(axis.field, fontsize=12)
    panels[0].set_title(t("sweep.subtitle", lang, seeds=result.seeds), loc="left", fontsize=11)


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
        panel.set_xlabel(second.field, fontsize=10)
    panels[0].set_ylabel(first.field, fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(panels), label=_label(measure, lang))


def _series(fig, result, lang: str, marks: list | None = None) -> None:
    marks = marks or []
    panel = fig.subplots()
    names = [a.field for a in result.axes]
    for i, row in enumerate(result.rows):
        series = row["attempts_per_second"]
        xs = [k * series["window"] for k in range(len(series["per_second"]) + 1)]
        point = ", ".join(f"{n.rsplit('.', 1)[-1]}={_point_text(row[n])}" for n in names)
        colour, style = COLOURS[i % len(COLOURS)], STYLES[(i // len(COLOURS)) % len(STYLES)]
        label = f"{row['design']}: {point}" if len(result.designs) > 1 else point
        if "peak_after_outage" in row:
            label = t("sweep.peak_after", lang, label=label, peak=round(row["peak_after_outage"]["p50"]))
        panel.step(xs, _closed(series["per_second"]), style, where="post", color=colour, linewidth=2, label=label)
    for mark in marks:
        _mark(panel, mark)
    panel.set_xlabel(t("sweep.time", lang), fontsize=12)
    panel.set_ylabel(t("sweep.attempts_per_second", lang), fontsize=12)
    panel.set_title(t("sweep.series_subtitle", lang, seeds=result.seeds), loc="left", fontsize=11)
    panel.grid(True, color="#dddddd")
    panel.legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), fontsize=11, frameon=False, ncols=1)


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


def attempts_figure(run, lang: str = "en"):
    """A load's attempts per second over time, a line per outcome of the attempt (ok, fail, info), with the
    outages shaded: the retry storm of one run, where a time-space diagram would have thousands of lanes; under it,
    the figures and the two verdicts (`idemsim.views.verdicts`); the ``ok`` line is neutral when the design broke."""
    from matplotlib.figure import Figure


    series = run.summary.attempts_per_second
    window = series["window"]
    with fonts(lang):
        fig = Figure(figsize=SIZE, layout="constrained")
        fig.suptitle(t("load.title", lang, name=run.name, design=run.design, seed=run.seed,
                       n=len(run.operations)), fontsize=15, fontweight=title_weight(lang), x=0.01, ha="left")
        panel = fig.subplots()
        xs = [i * window for i in range(len(series["counts"]) + 1)]
        panel.step(xs, _closed([c / window for c in series["counts"]]), "-", where="post", color="#000000",
                   linewidth=2, label=t("load.all", lang))
        colours = OUTCOME_COLOR if green(run.summary.design_verdict) else {**OUTCOME_COLOR, "ok": NEUTRAL}
        for outcome in ("ok", "fail", "info"):
            counts = series["by_outcome"][outcome]
            if any(counts):
                panel.step(xs, _closed([c / window for c in counts]), "--", where="post", color=colours[outcome],
                           linewidth=2,
                           label=t("load.outcome", lang, outcome=t("outcome." + outcome, lang)))
        for fault in run.scenario.faults:
            if fault.kind == "outage":
                _mark(panel, {"at": fault.start, "until": fault.until, "label": t("load.outage", lang)})
        panel.set_xlabel(t("sweep.time", lang), fontsize=12)
        panel.set_ylabel(t("sweep.attempts_per_second", lang), fontsize=12)
        panel.grid(True, color="#dddddd")
        panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11, frameon=False)
        s = run.summary
        fig.supxlabel(t("load.verdict", lang, charges=s.charges, captures=s.captures, broken=len(s.violations))
                      + "\n" + t("design.line", lang, verdict=short_design_words(s.design_verdict, s.violations, lang))
                      + "\n" + t("story.line", lang, check=short_story_words(s.story_check, lang)),
                      fontsize=12, x=0.01, ha="left")
        fig.canvas.draw()
    return fig
