"""A run as one HTML fragment, for Jupyter: a title, the summary with its two verdicts, the figure, the timeline.

`run_html` is what `idemsim.runners.simulation.Run._repr_html_` returns, so that a `Run` left as the last expression of
a notebook cell shows itself (a bare matplotlib Figure shows only as text in a fresh kernel).

Guarantees:

- The summary and the timeline's names say what the run's scene says (`idemsim.views.scene`: how each client
  ended, the verdicts in words, the parties' names), as the figure draws it.
- One title and one summary: the figure is drawn without its own (``run_figure(..., captioned=False)``; a load's
  figure loses its title and verdict lines), so nothing is said twice.
- The summary says both verdicts as every other view does (`idemsim.views.verdicts`): the design's in green only when
  it holds, in red with what went wrong when it broke; the story's check in neutral words.
- Self-contained: the stylesheet is inside the fragment and every selector starts with ``.idemsim-run`` (the wrapper),
  so nothing leaks into the notebook's page; the figure is inline SVG with its glyphs drawn as paths (Japanese
  included) and its ids prefixed, so two runs on one page do not share them; no file or font beside the page is
  needed.
- No glyph that needs a font the page does not declare: the timeline's symbols (⏳, 💥, ✗) are drawn as small
  inline SVG icons, each labelled in words; the text is set in a system font stack that covers Japanese.
- Every text taken from the run is escaped; the tags balance.
"""

from __future__ import annotations

import hashlib
import html
import io
import re

from ..base.i18n import text as t
from ..judge.summary import is_load
from ..model.designs import DESIGNS
from .figure import OUTCOME_TEXT, run_figure
from .names import money_text
from .scene import scene
from .sweep_plot import attempts_figure
from .timeline import describe, who

WRAPPER = "idemsim-run"
"""The class of the fragment's outer ``<div>``: every rule of `STYLE` is scoped under it."""
MAX_VIOLATIONS_SHOWN = 5
OPEN_TIMELINE = 60
"""A timeline of at most this many events is shown open; a longer one is folded under its heading."""

STYLE = f"""
.{WRAPPER} {{
  font-family: system-ui, -apple-system, "Segoe UI", "Hiragino Sans", "Hiragino Kaku Gothic ProN",
    "Noto Sans CJK JP", "Noto Sans JP", "Yu Gothic", Meiryo, sans-serif;
  color: #1f1f1f; background: #ffffff; line-height: 1.45; font-size: 14px; max-width: 1280px;
}}
.{WRAPPER} h3.idemsim-title {{ font-size: 1.3em; font-weight: 700; margin: 0.2em 0 0.6em; }}
.{WRAPPER} table {{ border-collapse: collapse; margin: 0 0 1em; font-size: 1em; }}
.{WRAPPER} table th, .{WRAPPER} table td {{
  text-align: left; vertical-align: top; padding: 0.25em 0.8em 0.25em 0; border: none; background: none;
}}
.{WRAPPER} table.idemsim-summary th {{ font-weight: 600; white-space: nowrap; color: #3c3c3c; }}
.{WRAPPER} .idemsim-holds {{ color: {OUTCOME_TEXT["ok"]}; font-weight: 700; }}
.{WRAPPER} .idemsim-broken {{ color: {OUTCOME_TEXT["fail"]}; font-weight: 700; }}
.{WRAPPER} .idemsim-problem {{ color: {OUTCOME_TEXT["fail"]}; }}
.{WRAPPER} .idemsim-outcome-ok {{ color: {OUTCOME_TEXT["ok"]}; }}
.{WRAPPER} .idemsim-outcome-fail {{ color: {OUTCOME_TEXT["fail"]}; }}
.{WRAPPER} .idemsim-outcome-info {{ color: {OUTCOME_TEXT["info"]}; }}
.{WRAPPER} .idemsim-differs {{ background: #fff6cc; }}
.{WRAPPER} svg.idemsim-figure {{ display: block; width: 100%; height: auto; margin: 0 0 1em; }}
.{WRAPPER} svg.idemsim-figure * {{ stroke-linejoin: round; stroke-linecap: butt; }}
.{WRAPPER} details > summary {{ cursor: pointer; font-weight: 600; margin: 0 0 0.4em; }}
.{WRAPPER} table.idemsim-timeline {{ width: 100%; }}
.{WRAPPER} table.idemsim-timeline thead th {{ border-bottom: 2px solid #8c8c8c; padding-bottom: 0.3em; }}
.{WRAPPER} table.idemsim-timeline tbody tr td {{ border-bottom: 1px solid #e4e4e4; }}
.{WRAPPER} table.idemsim-timeline tbody tr:nth-child(even) td {{ background: #f7f7f7; }}
.{WRAPPER} table.idemsim-timeline td.idemsim-time {{
  text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap;
}}
.{WRAPPER} table.idemsim-timeline td.idemsim-who {{ white-space: nowrap; color: #3c3c3c; }}
.{WRAPPER} svg.idemsim-icon {{ width: 1em; height: 1em; vertical-align: -0.15em; }}
""".strip()
"""A small stylesheet, every selector under `WRAPPER`: system fonts that cover Japanese, the verdicts' colours
(Okabe–Ito, as the figures), a summary without borders and a timeline with a rule under its heading."""

ICONS = {
    "⏳": ("html.icon.wait", '<path d="M4 2h8M4 14h8M5 2c0 4 6 4 6 6s-6 2-6 6M11 2c0 4-6 4-6 6s6 2 6 6" fill="none" '
                            'stroke="#0072B2" stroke-width="1.5"/>'),
    "💥": ("html.icon.crash", f'<path d="M8 1l1.6 4.2L14 4l-2.6 3.6L15 10l-4.4.2L11 15 8 11.6 5 15l.4-4.8L1 10l3.6-2.4'
                             f'L2 4l4.4 1.2z" fill="{OUTCOME_TEXT["fail"]}"/>'),
    "✗": ("html.icon.lost", f'<path d="M3.5 3.5l9 9M12.5 3.5l-9 9" stroke="{OUTCOME_TEXT["fail"]}" '
                           f'stroke-width="2.2" stroke-linecap="round"/>'),
}
"""The symbols the catalogue's timeline messages use, each as (the word that labels it, an SVG drawing on a 16 × 16
grid): drawn inline, so that no emoji font is needed."""


def run_html(run, lang: str = "en", max_rows: int = 400) -> str:
    """The run as an HTML fragment: its title, its summary (with the two verdicts), its figure as inline SVG (for a
    load, its attempts per second) and its timeline (cut at ``max_rows`` events, saying so)."""
    return page(run, figure_svg(run, lang), lang, max_rows)


def page(run, svg: str, lang: str = "en", max_rows: int = 400) -> str:
    """The fragment around an inline ``svg`` (what `figure_svg` returns): the stylesheet, the title, the summary,
    the figure and the timeline, in ``lang``."""
    e = html.escape
    title = t("html.title", lang, name=run.name, design=run.design, seed=run.seed)
    names = scene(run, lang).parties
    rows = []
    for event in list(run.trace)[:max_rows]:
        rows.append(f"<tr><td class='idemsim-time'>{event.t:.3f}</td>"
                    f"<td class='idemsim-who'>{e(who(event, lang, names))}</td>"
                    f"<td>{with_icons(describe(event, short=True, lang=lang), lang)}</td></tr>")
    more = len(run.trace) - max_rows
    if more > 0:
        rows.append(f"<tr><td></td><td></td><td>{e(t('html.more', lang, n=more))}</td></tr>")
    heads = "".join(f"<th>{e(t(h, lang))}</th>" for h in ("term.time", "term.from_to", "term.what"))
    opened = " open" if len(run.trace) <= OPEN_TIMELINE else ""
    return (f"<div class='{WRAPPER}' lang='{e(lang)}'><style>{STYLE}</style>"
            f"<h3 class='idemsim-title'>{e(title)}</h3>"
            f"<table class='idemsim-summary'><tbody>{summary_rows(run, lang)}</tbody></table>"
            f"{svg}"
            f"<details{opened}><summary>{e(t('html.timeline', lang, n=len(run.trace)))}</summary>"
            f"<table class='idemsim-timeline'><thead><tr>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            "</details></div>")


def summary_rows(run, lang: str = "en") -> str:
    """The summary as table rows, as the terminal's: what was recorded and captured, what each client saw, the
    replays, the longest wait, the key records, what was left open, the design's verdict (and the properties it
    broke), the faults, the story's check (and why it differs), the seed."""
    e = html.escape
    s = run.summary
    drawn = scene(run, lang)
    verdicts = drawn.verdicts
    holds = verdicts.holds
    out: list[str] = []

    def row(name: str, value: str, cls: str = "") -> None:
        attr = f" class='{cls}'" if cls else ""
        out.append(f"<tr><th>{e(name)}</th><td{attr}>{e(value)}</td></tr>")

    row(t("term.charges", lang), str(s.charges))
    row(t("term.captures", lang), money_text(s.ledger, lang))
    if not is_load(run):
        for ending in drawn.endings:
            name = (t("term.client_saw", lang) if len(drawn.endings) == 1
                    else t("term.op_saw", lang, op=ending.op, client=ending.client))
            outcome = ending.outcome if holds or ending.outcome != "ok" else ""
            row(name, ending.said, f"idemsim-outcome-{outcome}" if outcome else "")
    if s.replays:
        row(t("term.replayed", lang), t("term.identical" if s.replay_identical else "term.different", lang))
    if s.wait_seconds:
        row(t("term.wait", lang), t("term.wait_value", lang, seconds=s.wait_seconds))
    if DESIGNS[run.design].stores_keys:
        row(t("term.keys", lang), t("term.keys_value", lang, held=s.keys_held, in_progress=s.keys_in_progress))
    for i, item in enumerate(getattr(run, "stuck", None) or []):
        row("" if i else t("term.left_open", lang), item.said(lang) if hasattr(item, "said") else str(item))
    if any(ev.kind == "state.change" and ev.data["resource"] == "balance" for ev in run.trace):
        row(t("term.balance", lang), str(s.balance))
    row(t("term.design", lang), verdicts.design_named, "idemsim-holds" if holds else "idemsim-broken")
    for said in verdicts.broken[:MAX_VIOLATIONS_SHOWN]:
        row(t("term.broken", lang), said, "idemsim-problem")
    if len(s.violations) > MAX_VIOLATIONS_SHOWN:
        row("", t("term.more_broken", lang, n=len(s.violations) - MAX_VIOLATIONS_SHOWN), "idemsim-problem")
    for f, fault in zip(s.faults, run.scenario.faults):
        said = fault.describe(lang) if hasattr(fault, "describe") else f["fault"]
        row(t("term.fault", lang), f"{said} — " + t("term.happened" if f["fired"] else "term.never", lang))
    check = verdicts.story_check
    differs = "idemsim-differs" if check in ("differs", "vacuous") else ""
    row(t("term.story", lang), verdicts.story_long, differs)
    for reason in verdicts.story_reasons:
        row("", reason, differs)
    row(t("term.seed", lang), str(run.seed))
    return "".join(out)


def with_icons(words: str, lang: str = "en") -> str:
    """``words`` escaped, each symbol of `ICONS` replaced by its inline SVG icon, labelled in ``lang``."""
    out = html.escape(words)
    for symbol, (label, drawing) in ICONS.items():
        if symbol in out:
            word = html.escape(t(label, lang))
            icon = (f"<svg class='idemsim-icon' viewBox='0 0 16 16' role='img' aria-label='{word}'>"
                    f"<title>{word}</title>{drawing}</svg>")
            out = out.replace(symbol, icon)
    return out


def figure_svg(run, lang: str = "en") -> str:
    """The run's figure (a load's attempts per second) without its title and verdict lines, as an inline ``<svg>``:
    matplotlib's SVG with the glyphs as paths, no date, a fixed hash salt, its ids prefixed by a hash of itself."""
    import matplotlib  # (lazy: matplotlib loads only when a run is drawn)

    if is_load(run):
        figure = attempts_figure(run, lang)
        figure.suptitle("")
        figure.supxlabel("")
    else:
        figure = run_figure(run, lang, captioned=False)
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "idemsim", "svg.fonttype": "path"}):
        figure.savefig(out, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.1)
    title = t("html.title", lang, name=run.name, design=run.design, seed=run.seed)
    return inline_svg(out.getvalue(), title)


def inline_svg(document: str, label: str) -> str:
    """A standalone SVG document made fit to sit inside HTML: no XML declaration, doctype, metadata or stylesheet
    (the fragment's scoped `STYLE` says what matplotlib's did), the root sized by CSS and labelled ``label``, every id
    prefixed so that two figures on one page never share one."""
    svg = document[document.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<defs>\s*<style[^>]*>.*?</style>\s*</defs>\s*", "", svg, count=1, flags=re.S)
    prefix = "idemsim-" + hashlib.sha1(svg.encode()).hexdigest()[:8] + "-"
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}\1)", svg)
    root_end = svg.index(">")
    attributes = re.sub(r'\s(width|height)="[^"]*"', "", svg[len("<svg"):root_end])
    return (f'<svg class="idemsim-figure" role="img" aria-label="{html.escape(label)}"{attributes}'
            + svg[root_end:].rstrip())


