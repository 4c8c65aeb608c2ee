"""Mermaid diagrams of a run, in the article's style: a sequence diagram of each story, and the key record's
state diagram with the path the run took.

`sequence` draws one `sequenceDiagram` from a run's trace: participants client (one per client process), API,
DB and the payment processor (and the completer, when it acts); requests and answers as arrows with their
status (solid for requests and calls, dotted for answers); a lost message as Mermaid's lost-message arrow
(``-x``, ``--x``); statements a handler sends at one instant folded into one arrow; a ``Note`` for a wait on
the unique index with its length, a timeout, a crash and a restart, and a closing note with the charges
recorded, the money captured, how each client ended and the two verdicts (`idemsim.views.verdicts`: the design's,
and the story's check), inside a ``rect`` tinted green only when the design holds; each retry of a lone client
inside a ``rect``. `state` draws the key record's ``stateDiagram-v2`` (absent → in_progress → done → absent),
marking the states the first operation's key passed through (in green only when the design holds) and counting
each transition it took.

Guarantees: the text is raw Mermaid (no code fences, no front matter), starts with the article's ``%%{init}%%``
line and then the diagram's first line, names the story in a ``%%`` comment, and escapes everything taken from
the input (keys, bodies) so that no input can break the diagram; the same run gives the same text. Words come
from `idemsim.base.i18n` (``lang="ja"``: the article's own).
"""

from __future__ import annotations

from typing import Any, Iterable

from ..base.http import REASONS
from ..base.i18n import text as t
from .verdicts import design_words, green, problems, short_story_words

INIT = ('%%{init: {"theme":"base","themeVariables":{"primaryColor":"#eaf1f5","primaryTextColor":"#28343b",'
        '"primaryBorderColor":"#9cabb5","lineColor":"#596b76","textColor":"#28343b","actorBkg":"#eaf1f5",'
        '"actorBorder":"#9cabb5","actorTextColor":"#28343b","actorLineColor":"#9cabb5","signalColor":"#596b76",'
        '"signalTextColor":"#28343b","noteBkgColor":"#f7f1e5","noteBorderColor":"#c5b99b","noteTextColor":"#403c32",'
        '"activationBkgColor":"#edf3ef","activationBorderColor":"#9aafa1"}}}%%')
"""The article's theme, verbatim: every diagram it draws starts with this line."""

RETRY_FILL = "rgba(234, 241, 245, 0.6)"
"""The background of a retry's ``rect``."""
VERDICT_FILL = {True: "rgba(0, 158, 115, 0.12)", False: "rgba(213, 94, 0, 0.14)"}
"""The background of the closing note's ``rect``: green when the design holds, red when it broke a property."""
TAKEN = {True: "classDef taken fill:#edf3ef,stroke:#4f7a5c,stroke-width:3px,color:#1f3326",
         False: "classDef taken fill:#eaf1f5,stroke:#596b76,stroke-width:3px,color:#28343b"}
"""The states the key took, in the state diagram: green when the design holds, the theme's grey-blue when not."""


_ENTITIES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "%": "#37;", "{": "#123;", "}": "#125;"}


def escape(value: Any) -> str:
    """Text safe inside a Mermaid message, note or participant name: an entity code for each character Mermaid
    gives a meaning (``#`` ``;`` ``<`` ``>`` ``%`` ``{`` ``}``), and for every control character, so that no
    input (a key, a body) can end a line, start a comment or a directive, or open a tag."""
    return "".join(_ENTITIES.get(ch) or (ch if ch.isprintable() else f"#{ord(ch)};") for ch in str(value))


def _status(status: int | None, lang: str) -> str:
    if status is None:
        return t("event.timeout", lang)
    return f"{status} {REASONS.get(status, '')}".rstrip()


class _Lanes:
    """The participants of a diagram and their aliases."""

    def __init__(self, events: list, lang: str) -> None:
        self.lang = lang
        self.clients: dict[str, str] = {}
        for e in events:
            if e.kind == "op.start" and e.actor not in self.clients:
                self.clients[e.actor] = "C" if not self.clients else f"C{len(self.clients) + 1}"
        self.processor = any(e.kind.startswith("processor.") for e in events)
        self.completer = any(e.actor == "completer" for e in events)
        self.db = any(e.kind.startswith("db.") for e in events)

    def of(self, actor: str) -> str:
        if actor in self.clients:
            return self.clients[actor]
        if actor == "processor":
            return "P"
        if actor == "completer":
            return "K"
        if actor == "db":
            return "D"
        return "A"

    def declarations(self) -> list[str]:
        lines = [f"participant {alias} as {escape(client_name(name, self.lang))}"
                 for name, alias in self.clients.items()]
        lang = self.lang
        lines.append(f"participant A as {escape(t('party.api', lang))}")
        if self.db:
            lines.append(f"participant D as {escape(t('party.db', lang))}")
        if self.processor:
            lines.append(f"participant P as {escape(t('party.processor', lang))}")
        if self.completer:
            lines.append(f"participant K as {escape(t('party.completer', lang))}")
        return lines


def client_name(name: str, lang: str) -> str:
    """A client process's name in ``lang``: ``client`` and ``client-dup`` are translated, others kept."""
    if name == "client" or name.startswith("client-"):
        return t("party.client", lang) + name.removeprefix("client")
    return name


def statement(d: dict, lang: str) -> str:
    """One statement and its result in a few words: ``register k-8f3a → 1 row``."""
    op, f = d["op"], d.get("fields") or {}
    key = escape(f.get("key", ""))
    words = {
        "begin": lambda: "BEGIN" + ("" if (f.get("isolation") or "read committed") == "read committed"
                                    else f" {f['isolation'].upper()}"),
        "commit": lambda: "COMMIT",
        "rollback": lambda: "ROLLBACK",
        "disconnect": lambda: t("mm.disconnect", lang),
        "register_key": lambda: t("mm.register", lang, key=key),
        "insert_key": lambda: t("mm.insert_key", lang, key=key),
        "select_key": lambda: t("mm.select", lang, key=key),
        "complete_key": lambda: t("mm.store", lang, status=escape((f.get("response") or {}).get("status", "")),
                                  key=key),
        "delete_key": lambda: t("mm.delete", lang, key=key),
        "delete_expired": lambda: t("mm.delete_expired", lang),
        "insert_charge": lambda: t("mm.charge", lang, amount=escape(_amount(f.get("amount"), lang))),
        "lock_key": lambda: t("mm.lock", lang, key=key),
        "claim_key": lambda: t("mm.claim", lang, key=key),
        "set_point": lambda: t("mm.point", lang, point=escape(f.get("point", ""))),
        "count_charges": lambda: "SELECT count(*)",
        "lock_timeout": lambda: "SET lock_timeout",
    }.get(op, lambda: escape(op))()
    return words + _result(d, lang)


def _amount(amount: Any, lang: str) -> str:
    if isinstance(amount, int) and not isinstance(amount, bool):
        return f"{amount:,}"
    return str(amount)


def _result(d: dict, lang: str) -> str:
    if d.get("error"):
        return f" → ERROR {escape(d['error'])}"
    op = d["op"]
    if op in ("begin", "commit", "rollback", "disconnect", "lock_timeout"):
        return ""
    if op == "select_key":
        row = d.get("row")
        if row is None:
            return f" → {t('mm.no_row', lang)}"
        response = (row.get("response") or {}).get("status")
        state = t("state." + row["status"], lang) if row["status"] in ("done", "in_progress") else row["status"]
        return f" → {escape(state)}" + (
            f", {escape(response)}" if response else "")
    if op in ("lock_key", "claim_key") and d.get("row"):
        return f" → {escape(d['row'].get('recovery_point', ''))}"
    if op == "insert_charge" and d.get("rows") and d.get("id") is not None:
        return f" → ch_{d['id']}"
    if d.get("rows") is not None:
        return " → " + (t("mm.row", lang) if d["rows"] == 1 else t("mm.rows", lang, n=d["rows"]))
    return ""


def _seconds(seconds: float, lang: str) -> str:
    return t("seconds", lang, s=seconds)


def sequence(run, lang: str = "en") -> str:
    """The run as one Mermaid sequence diagram."""
    events = list(run.trace)
    lanes = _Lanes(events, lang)
    lost = {(e.kind, e.data.get("request"), e.data.get("dst")) for e in events
            if e.kind in ("request.lost", "response.lost", "processor.lost")}
    lone = len(lanes.clients) == 1
    lines = [INIT, "sequenceDiagram", f"%% {_comment(_title(run))}"]
    lines += lanes.declarations()
    pending_db: list[str] = []
    db_actor: str | None = None
    in_rect = False

    def flush() -> None:
        nonlocal pending_db, db_actor
        if pending_db:
            lines.append(f"{lanes.of(db_actor)}->>D: " + "<br/>".join(pending_db))
        pending_db, db_actor = [], None

    for e in events:
        k, d = e.kind, e.data
        if k == "db.result" and e.actor in ("reaper",) and not d.get("rows"):
            continue
        if k == "db.result" and not d.get("waited"):
            if db_actor is not None and db_actor != e.actor:
                flush()
            db_actor = e.actor
            pending_db.append(statement(d, lang))
            continue
        flush()
        a = lanes.of(e.actor)
        if k == "attempt.send":
            if lone and d["attempt"] > 1 and not in_rect:
                lines.append(f"rect {RETRY_FILL}")
                in_rect = True
            arrow = "-x" if ("request.lost", d["request"], "api") in lost else "->>"
            key = f"<br/>key: {escape(d['key'])}" if d.get("key") else ""
            retry = t("mm.retry_suffix", lang) if d["attempt"] > 1 else ""
            lines.append(f"{a}{arrow}A: {escape(d['method'])} {escape(d['path'])}{retry}{key}")
            if arrow == "-x":
                lines.append(f"Note over {a},A: {t('mm.request_lost', lang)}")
        elif k in ("response.send", "gateway.timeout"):
            client = lanes.of(e.target) if e.target in lanes.clients else "C"
            arrow = "--x" if ("response.lost", d["request"], e.target) in lost else "-->>"
            what = _status(d["status"], lang)
            if k == "gateway.timeout":
                what += t("mm.from_gateway", lang)
            elif d.get("replay"):
                what += t("mm.replayed", lang)
            lines.append(f"A{arrow}{client}: {escape(what)}")
            if arrow == "--x":
                lines.append(f"Note over A,{client}: {t('mm.response_lost', lang)}")
        elif k == "attempt.timeout":
            lines.append(f"Note over {a}: {t('mm.no_answer', lang, seconds=_seconds(d['after'], lang))}")
        elif k == "client.give_up":
            lines.append(f"Note over {a}: {t('mm.give_up', lang)}")
        elif k == "db.wait":
            lines.append(f"{a}->>D: {statement({**d, 'rows': None}, lang)}")
            lines.append(f"Note over A,D: {t('mm.waits', lang, who=escape(e.actor), holder=escape(d['blocked_by']))}")
        elif k == "db.result":  # a statement that waited
            lines.append(f"D-->>{a}: {t('mm.after_wait', lang, seconds=_seconds(d['waited'], lang))}"
                         f"{_result(d, lang)}")
        elif k in ("processor.call", "processor.lookup"):
            key = f"<br/>key: {escape(d['key'])}" if d.get("key") else ""
            what = (t("mm.capture", lang, amount=escape(_amount(d["amount"], lang))) if k == "processor.call"
                    else t("mm.lookup", lang))
            lines.append(f"{a}->>P: {what}{key}")
        elif k == "processor.answer":
            caller = lanes.of(e.target)
            arrow = "--x" if ("processor.lost", d["request"], e.target) in lost else "-->>"
            what = {"captured": t("mm.captured", lang, capture=escape(d.get("capture"))),
                    "declined": t("mm.declined", lang), "refused": t("mm.key_refused", lang),
                    "in_use": t("mm.in_use", lang),
                    "not_found": t("mm.not_found", lang)}[d["outcome"]]
            if d.get("replayed"):
                what += t("mm.replayed_capture", lang)
            lines.append(f"P{arrow}{caller}: {what}")
        elif k == "processor.timeout":
            lines.append(f"Note over {a},P: {t('mm.processor_timeout', lang, seconds=_seconds(d['after'], lang))}")
        elif k == "processor.capture":
            note = t("mm.capture_note", lang, capture=escape(d["capture"]), amount=escape(_amount(d["amount"], lang)))
            lines.append(f"Note over P: {note}")
        elif k == "api.crash":
            lines.append(f"Note over A: {t('mm.crash', lang, point=escape(d['point']))}")
        elif k == "api.restart":
            lines.append(f"Note over A: {t('mm.restart', lang)}")
        elif k == "completer.finish":
            lines.append(f"Note over K: {t('mm.completer_finish', lang, key=escape(d['key']))}")
        elif k == "completer.release":
            lines.append(f"Note over K: {t('mm.completer_release', lang, key=escape(d['key']))}")
    flush()
    if in_rect:
        lines.append("end")
    first, last = _span(lanes)
    lines.append(f"rect {VERDICT_FILL[green(run.summary.design_verdict)]}")
    lines.append(f"Note over {first},{last}: {_verdict(run, lang)}")
    lines.append("end")
    return "\n".join(lines) + "\n"


def _span(lanes: _Lanes) -> tuple[str, str]:
    last = "K" if lanes.completer else "P" if lanes.processor else "D" if lanes.db else "A"
    return next(iter(lanes.clients.values()), "A"), last


def _verdict(run, lang: str) -> str:
    s = run.summary
    parts = [t("mm.charges", lang, n=s.charges), t("mm.captures", lang, n=s.captures)]
    for op in s.operations:
        parts.append(t("mm.client_ended", lang, client=escape(client_name(op["client"], lang)),
                       outcome=t("outcome." + op["outcome"], lang), status=escape(op["status"] or "")))
    design = s.design_verdict
    if green(design):
        parts.append(escape(t("design.line", lang, verdict=design_words(design, s.violations, lang))))
    else:  # a line a problem
        said = problems(s.violations, lang)
        sep = t("problem.sep", lang).rstrip()
        for i, problem in enumerate(said):
            words = t("design.line", lang, verdict=t("design.broken", lang, problems=problem)) if i == 0 else problem
            parts.append(escape(words + (sep if i < len(said) - 1 else "")))
    parts.append(escape(t("story.line", lang, check=short_story_words(s.story_check, lang))))
    return "<br/>".join(parts)


def _title(run) -> str:
    return f"{run.name} — design {run.design}, seed {run.seed}"


def _comment(text: str) -> str:
    """A ``%%`` comment's text: one line, no ``}%%`` that could close a directive."""
    return "".join(ch if ch.isprintable() else " " for ch in text).replace("%%", "% %")


# -- the key record's states ---------------------------------------------------------------------------------
STATES = ("None", "InProgress", "Done")


def key_transitions(run) -> tuple[str | None, list[tuple[str, str, str]]]:
    """The first operation's key and the committed transitions of its record, in order: (from, to, why)."""
    events = list(run.trace)
    key = next((e.data["key"] for e in events if e.kind == "attempt.send" and e.data.get("key")), None)
    if key is None:
        return None, []
    out: list[tuple[str, str, str]] = []
    state = "None"
    blocks: dict[str, list[tuple[str, str]]] = {}
    in_block: set[str] = set()

    def apply(change: tuple[str, str]) -> None:
        nonlocal state
        to, why = change
        if to != state:
            out.append((state, to, why))
            state = to

    for e in events:
        if e.kind != "db.result":
            continue
        d, conn = e.data, e.actor
        op = d["op"]
        if op == "begin" and not d["error"]:
            in_block.add(conn)
            blocks[conn] = []
            continue
        if op in ("commit", "rollback", "disconnect"):
            if conn in in_block:
                changes = blocks.pop(conn, [])
                in_block.discard(conn)
                if op == "commit" and not d["error"]:
                    for change in changes:
                        apply(change)
            continue
        if d["error"] or (d.get("fields") or {}).get("key") != key and op != "delete_expired":
            if d["error"] and conn in blocks:
                blocks[conn] = []
            continue
        change = None
        if op in ("register_key", "insert_key") and d["rows"]:
            change = ("InProgress", "registered")
        elif op == "complete_key" and d["rows"]:
            change = ("Done", "completed")
        elif op in ("delete_key", "delete_expired") and d["rows"]:
            change = ("None", "deleted_by_reaper" if conn == "reaper" else "released")
        if change is None:
            continue
        if conn in in_block:
            blocks[conn].append(change)
        else:
            apply(change)
    return key, out


def state(run, lang: str = "en") -> str:
    """The key record's state diagram, with the states and transitions the run's first key took marked."""
    key, taken = key_transitions(run)
    counts: dict[tuple[str, str], int] = {}
    for a, b, _ in taken:
        counts[(a, b)] = counts.get((a, b), 0) + 1
    visited = {"None"} | {b for _, b, _ in taken} if key else set()
    lines = [INIT, "stateDiagram-v2", f"%% {_comment(_title(run))}" + (f" — key {_comment(key)}" if key
                                                                        else " — no key record")]
    lines += ["[*] --> None", f"None: {escape(t('state.absent', lang))}",
              f"InProgress: {escape(t('state.in_progress', lang))}", f"Done: {escape(t('state.done', lang))}"]
    edges = [("None", "InProgress", "st.registered"), ("InProgress", "Done", "st.completed"),
             ("InProgress", "None", "st.rolled_back"), ("Done", "None", "st.expired")]
    for a, b, message in edges:
        label = t(message, lang)
        n = counts.get((a, b), 0)
        if n:
            label += t("st.taken", lang, n=n)
        lines.append(f"{a} --> {b}: {label}")
    lines.append(TAKEN[green(run.summary.design_verdict)])
    if visited:
        lines.append(f"class {','.join(s for s in STATES if s in visited)} taken")
    if not key:
        lines.append(f"note right of None: {t('st.no_key', lang)}")
    return "\n".join(lines) + "\n"


def diagrams(texts: Iterable[str]) -> str:
    """Several diagrams as one output: each ends with a newline, a blank line between two."""
    return "\n".join(texts)
