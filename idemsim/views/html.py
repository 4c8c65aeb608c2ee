"""A run as HTML, for Jupyter: the figure embedded as an image, the summary, and the timeline as a table.

`run_html` is what `idemsim.runners.simulation.Run._repr_html_` returns, so that a `Run` left as the last expression of
a notebook cell shows itself (a bare matplotlib Figure shows only as text in a fresh kernel). Every text taken
from the run is escaped; the figure is a PNG inlined as base64, so the page needs no file beside it.
"""

from __future__ import annotations

import base64
import html
import io

from ..base.i18n import text as t
from ..judge.properties import describe_violation
from ..judge.summary import is_load
from .figure import OUTCOME_TEXT, run_figure
from .sweep_plot import attempts_figure
from .timeline import describe, endpoints
from .verdicts import design_words, green, story_reasons, story_words


def figure_png(figure) -> bytes:
    """A figure as PNG bytes."""
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=100, metadata={"Software": None})
    return out.getvalue()


def run_html(run, lang: str = "en", max_rows: int = 400) -> str:
    """The figure (or, for a load, its attempts per second), the summary with the two verdicts (the design's in
    green only when it holds, in red with what went wrong when it broke; the story's check in plain text) and the
    timeline (cut at ``max_rows`` events, saying so)."""

    if is_load(run):

        figure = attempts_figure(run, lang)
    else:
        figure = run_figure(run, lang)
    image = base64.b64encode(figure_png(figure)).decode("ascii")
    s = run.summary
    e = html.escape
    design = s.design_verdict
    expectation = run.scenario.expect.get(run.design)
    colour = OUTCOME_TEXT["ok"] if green(design) else OUTCOME_TEXT["fail"]
    summary = [(t("term.charges", lang), s.charges, ""), (t("term.captures", lang), s.captures, ""),
               (t("term.design", lang), design_words(design, s.violations, lang, names=True),
                f"color:{colour};font-weight:bold"),
               *((t("term.broken", lang), describe_violation(v, lang), f"color:{colour}") for v in s.violations),
               (t("term.story", lang), story_words(s.story_check, expectation.stated() if expectation else None,
                                                   lang), ""),
               *(("", reason, "") for reason in
                 story_reasons(s.story_check, s.failures, s.violations, s.expected_breaks, lang)),
               (t("term.seed", lang), run.seed, "")]
    rows = []
    for event in list(run.trace)[:max_rows]:
        src, dst = endpoints(event)
        who = f"{src} → {dst}" if dst else src
        rows.append(f"<tr><td style='text-align:right'>{event.t:.3f}</td><td>{e(who)}</td>"
                    f"<td style='text-align:left'>{e(describe(event, short=True, lang=lang))}</td></tr>")
    more = len(run.trace) - max_rows
    if more > 0:
        rows.append(f"<tr><td></td><td></td><td style='text-align:left'>{e(t('html.more', lang, n=more))}</td></tr>")
    title = t("html.title", lang, name=run.name, design=run.design, seed=run.seed)
    return (f"<div class='idemsim-run'><h4>{e(title)}</h4>"
            f"<img alt='{e(run.name)}' style='max-width:100%' src='data:image/png;base64,{image}'/>"
            "<table>" + "".join(f"<tr><th style='text-align:left'>{e(str(k))}</th>"
                                f"<td style='text-align:left;{style}'>{e(str(v))}</td></tr>"
                                for k, v, style in summary) +
            f"</table><details><summary>{e(t('html.timeline', lang))}</summary><table><tr>"
            + "".join(f"<th>{e(t(h, lang))}</th>" for h in ("term.time", "term.from_to", "term.what")) + "</tr>"
            + "".join(rows) + "</table></details></div>")
