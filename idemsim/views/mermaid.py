"""Mermaid diagrams of a run, in the article's style: a sequence diagram of each story, and the key record's
state diagram with the steps the run took.

Both read what the run's scene (`idemsim.views.scene`) says of the story: the parties' names, the attempts, the
ledgers' duplicates and orphans, what a wait waits for, how each client ended, the two verdicts and the key's
steps; the trace gives only the order of the steps and their words of SQL.

`sequence` draws one `sequenceDiagram` of a run: participants client (one per client process), API (one
lifeline per handler, ``API #1``, ``API #2``, when two are alive at once), DB and the payment processor (and the
completer, the reaper, the recovery job when they act); each message and note starts with the simulated time
(``t=0.250``); requests and answers as arrows with their status (solid for requests and calls, dotted for
answers); a lost message as Mermaid's lost-message arrow (``-x``, ``--x``); statements a handler sends at one
instant folded into one arrow; a ``Note`` for a wait on the unique index (naming the transaction it waits for),
a timeout, a crash (where, in the catalogue's words) and a restart; a ``rect`` in red around the second charge
row and the second capture of one purchase and around an orphan capture, each with a note naming it, and in the
article's darker beige around a crash; and a closing note with the charges recorded, the money captured, how
each client ended and the two verdicts (`idemsim.views.verdicts`: the design's, and the story's check), inside a
``rect`` tinted green only when the design holds; each retry of a lone client inside a ``rect``. A load
(`idemsim.judge.summary.is_load`) is summarised in one screen (`load_sequence`). `state` draws the key record's
``stateDiagram-v2`` from the run: each step the first operation's key took, in the design's words (same-tx inserts
the key and commits it with the charge; committed-first commits the registration first), rolled back, dropped by
a crash, released, reclaimed, taken over and expired steps when they happen, each with how many times; the states
it passed through marked (in green only when the design holds).

Guarantees: the text is raw Mermaid (no code fences, no front matter), starts with the article's ``%%{init}%%``
line and then the diagram's first line, names the story in a ``%%`` comment, and escapes everything taken from
the input (keys, bodies) so that no input can break the diagram; the same run gives the same text. A note's or a
label's lines are at most `NOTE_WIDTH` (`LABEL_WIDTH`) cells wide, broken at spaces and, in Japanese, between
phrases, never inside a word (a single word wider than that stays whole). No internal identifier (a crash point's
name) is shown. Words come from `idemsim.base.i18n` (``lang="ja"``: the article's own).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ..base.http import REASONS
from ..base.i18n import MESSAGES, wide
from ..base.i18n import text as t
from ..judge.summary import is_load
from .names import amount_text
from .scene import Scene, scene

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
    """The participants of a diagram and their aliases: a client lane per client process; one API lane, or one
    per handler (``A1`` as ``API #1``, …) when two handlers are alive at once (a duplicate waiting while the
    first goes on: one lane would read as one API that failed and then charged anyway); DB, processor, the
    completer, and the background jobs (reaper, recovery) when they act."""

    def __init__(self, events: list, drawn: Scene) -> None:
        self.drawn = drawn
        self.clients: dict[str, str] = {}
        spans: dict[str, list[float]] = {}
        self.handler_of: dict[str, str] = {}
        for e in events:
            if e.kind == "op.start" and e.actor not in self.clients:
                self.clients[e.actor] = "C" if not self.clients else f"C{len(self.clients) + 1}"
            if e.kind == "request.arrive":
                self.handler_of[e.data["request"]] = e.data["handler"]
            if e.actor.startswith("api#") and e.kind not in ("response.arrive",):
                span = spans.setdefault(e.actor, [e.t, e.t])
                span[1] = e.t
        ordered = sorted(spans.items(), key=lambda item: item[1][0])
        concurrent = any(later[0] < earlier[1] for i, (_, earlier) in enumerate(ordered)
                         for _, later in ordered[i + 1:])
        self.handlers: dict[str, str] = {}
        if concurrent:
            self.handlers = {name: f"A{_number(name)}" for name, _ in ordered}
        self.processor = any(e.kind.startswith("processor.") for e in events)
        self.completer = any(e.actor == "completer" for e in events)
        self.db = any(e.kind.startswith("db.") for e in events)
        self.jobs = {actor: alias for actor, alias in (("reaper", "R"), ("recovery", "V"))
                     if any(e.actor == actor and e.kind == "db.result" and e.data.get("rows") for e in events)}

    def of(self, actor: str) -> str:
        if actor in self.clients:
            return self.clients[actor]
        if actor == "processor":
            return "P"
        if actor == "completer":
            return "K"
        if actor == "db":
            return "D"
        if actor in self.jobs:
            return self.jobs[actor]
        return self.handlers.get(actor, "A1" if self.handlers else "A")

    def api(self) -> tuple[str, str]:
        """The first and the last API lane: a note about the whole API (it restarts) spans them."""
        if not self.handlers:
            return "A", "A"
        aliases = list(self.handlers.values())
        return aliases[0], aliases[-1]

    def name(self, actor: str) -> str:
        """A party in words, as the scene names it (``API #2`` for ``api#2``)."""
        return self.drawn.party(actor)

    def declarations(self) -> list[str]:
        lines = [f"participant {alias} as {escape(self.name(name))}" for name, alias in self.clients.items()]
        if self.handlers:
            lines += [f"participant {alias} as {escape(self.name(name))}"  # (API #35;1: Mermaid drops a bare #1)
                      for name, alias in self.handlers.items()]
        else:
            lines.append(f"participant A as {escape(self.name('api'))}")
        if self.db:
            lines.append(f"participant D as {escape(self.name('db'))}")
        if self.processor:
            lines.append(f"participant P as {escape(self.name('processor'))}")
        if self.completer:
            lines.append(f"participant K as {escape(self.name('completer'))}")
        lines += [f"participant {alias} as {escape(self.name(actor))}" for actor, alias in self.jobs.items()]
        return lines


def _number(handler: str) -> int:
    """The number of a handler: 2 for ``api#2``."""
    tail = handler.rpartition("#")[2]
    return int(tail) if tail.isdigit() else 0


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
        "insert_charge": lambda: t("mm.charge", lang, amount=escape(amount_text(f.get("amount"), lang))),
        "lock_key": lambda: t("mm.lock", lang, key=key),
        "claim_key": lambda: t("mm.claim", lang, key=key),
        "set_point": lambda: t("mm.point", lang, point=escape(f.get("point", ""))),
        "count_charges": lambda: "SELECT count(*)",
        "lock_timeout": lambda: "SET lock_timeout",
    }.get(op, lambda: escape(op))()
    return words + _result(d, lang)


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


NOTE_WIDTH = 36
"""The widest line of a note, in terminal cells (a Japanese character two): a note over two neighbouring lanes
is about that wide, and Mermaid does not wrap a note's text itself."""
VERDICT_WIDTH = 60
"""The widest line of a note over every lane (the closing note)."""
LABEL_WIDTH = 22
"""The widest line of a state diagram's label: Mermaid wraps a longer one itself, anywhere in a Japanese word."""


def _cells(text: str) -> int:
    return sum(2 if wide(ch) else 1 for ch in text)


def _hiragana(ch: str) -> bool:
    return "\u3041" <= ch <= "\u309f"


def _pieces(text: str) -> list[str]:
    """A line cut where a break may fall: after a space; in Japanese, after a phrase (a particle or okurigana,
    hiragana, before a kanji, katakana, letter or digit) and after 、 。 ） ： but never inside a word."""
    out, piece = [], ""
    for i, ch in enumerate(text):
        piece += ch
        after = text[i + 1] if i + 1 < len(text) else ""
        if not after:
            break
        number = piece.strip().replace(",", "").replace(".", "").isdigit()
        phrase = _hiragana(ch) and not _hiragana(after) and after not in "、。）ー・ " and (
            wide(after) or after.isalnum()) and not _bound(text[i + 1:])
        space = ch == " " and after != "·" and not number  # (never "2 | 件", "0.449 | s" nor "s | · p95")
        if space or ch in "、。）：" and after not in "、。）" or after == "（" or phrase:
            out.append(piece)
            piece = ""
    return out + ([piece] if piece else [])


def _bound(rest: str) -> bool:
    """Whether ``rest`` starts with one kanji bound to the particle before it (``の後、``, ``の前``): a word of
    one character, followed by punctuation or the end."""
    return len(rest) == 1 or len(rest) > 1 and rest[1] in "、。）：" and wide(rest[0])


def _wrap(text: str, width: int) -> list[str]:
    """A line of prose as lines at most ``width`` cells wide, broken only between `_pieces` (a piece wider than
    that stays whole on its own line), as even as the fewest lines allow (no word left alone on the last)."""
    lines = _fill(text, width)
    while width > 8 and len(_fill(text, width - 1)) == len(lines):
        width -= 1
        lines = _fill(text, width)
    return lines


def _fill(text: str, width: int) -> list[str]:
    lines = [""]
    for piece in _pieces(text):
        if lines[-1] and _cells(lines[-1] + piece.rstrip(" ")) > width:
            lines[-1] = lines[-1].rstrip(" ")
            lines.append("")
        lines[-1] += piece
    return [line.rstrip(" ") for line in lines]


def _text(parts: Iterable[str], width: int = NOTE_WIDTH) -> str:
    """Raw lines as the text of a note or label: each wrapped to ``width``, escaped, joined by ``<br/>``."""
    return "<br/>".join(escape(line) for part in parts for line in _wrap(part, width))


EMPHASIS = {"broken": "rgba(213, 94, 0, 0.32)", "crash": "rgba(197, 185, 155, 0.6)"}
"""The backgrounds of the ``rect`` around a step that matters: a second charge row or capture of one purchase,
or an orphan capture, in the red of a broken verdict; a crash in the darker beige of the article's note border."""


def sequence(run, lang: str = "en") -> str:
    """The run as one Mermaid sequence diagram (a load: its summary, `load_sequence`)."""
    if is_load(run):
        return load_sequence(run, lang)
    events = list(run.trace)
    drawn = scene(run, lang)
    lanes = _Lanes(events, drawn)
    waits = {(sp.lane, sp.start): sp for sp in drawn.spans if sp.kind == "wait"}
    lost = {(e.kind, e.data.get("request"), e.data.get("dst")) for e in events
            if e.kind in ("request.lost", "response.lost", "processor.lost")}
    extra_charges, extra_captures, orphans = _marked(drawn)
    lone = len(lanes.clients) == 1
    lines = [INIT, "sequenceDiagram", f"%% {_comment(_title(run))}"]
    lines += lanes.declarations()
    pending_db: list[tuple[str, str | None]] = []
    db_actor: str | None = None
    db_time = 0.0
    in_rect = False

    def at(seconds: float) -> str:
        return _at(seconds, lang) + " "

    def note(over: str, parts: list[str], fill: str | None = None) -> None:
        if fill:
            lines.append(f"rect {fill}")
        lines.append(f"Note over {over}: {_text(parts)}")
        if fill:
            lines.append("end")

    def flush() -> None:
        nonlocal pending_db, db_actor
        if pending_db:
            doubled = [extra_charges[c] for _, c in pending_db if c in extra_charges]
            if doubled:
                lines.append(f"rect {EMPHASIS['broken']}")
            lines.append(f"{lanes.of(db_actor)}->>D: {at(db_time)}" + "<br/>".join(text for text, _ in pending_db))
            if doubled:
                ids = doubled[0]
                note(f"{lanes.of(db_actor)},D", [t("mm.double_charge", lang, ids=_and(ids, lang), n=len(ids))])
                lines.append("end")
        pending_db, db_actor = [], None

    for e in events:
        k, d = e.kind, e.data
        if k == "db.result" and e.actor in ("reaper",) and not d.get("rows"):
            continue
        if k == "db.result" and not d.get("waited"):
            if db_actor is not None and (db_actor != e.actor or e.t != db_time):
                flush()
            if db_actor is None:
                db_actor, db_time = e.actor, e.t
            charge = f"ch_{d['id']}" if d["op"] == "insert_charge" and d.get("rows") and d.get("id") is not None \
                else None
            pending_db.append((statement(d, lang), charge))
            continue
        flush()
        a = lanes.of(e.actor)
        if k == "attempt.send":
            if lone and d["attempt"] > 1 and not in_rect:
                lines.append(f"rect {RETRY_FILL}")
                in_rect = True
            handler = lanes.of(lanes.handler_of.get(d["request"], ""))
            arrow = "-x" if ("request.lost", d["request"], "api") in lost else "->>"
            key = f"<br/>key: {escape(d['key'])}" if d.get("key") else ""
            retry = t("mm.attempt_suffix", lang, attempt=drawn.attempts[d["request"]]) if d["attempt"] > 1 else ""
            lines.append(f"{a}{arrow}{handler}: {at(e.t)}{escape(d['method'])} {escape(d['path'])}{retry}{key}")
            if arrow == "-x":
                note(f"{a},{handler}", [t("mm.request_lost", lang)])
        elif k in ("response.send", "gateway.timeout"):
            client = lanes.of(e.target) if e.target in lanes.clients else "C"
            source = a if k == "response.send" else lanes.of(lanes.handler_of.get(d["request"], ""))
            arrow = "--x" if ("response.lost", d["request"], e.target) in lost else "-->>"
            what = _status(d["status"], lang)
            if k == "gateway.timeout":
                what += t("mm.from_gateway", lang)
            elif d.get("replay"):
                what += t("mm.replayed", lang)
            lines.append(f"{source}{arrow}{client}: {at(e.t)}{escape(what)}")
            if arrow == "--x":
                note(f"{source},{client}", [t("mm.response_lost", lang)])
        elif k == "attempt.timeout":
            note(a, [at(e.t) + t("mm.no_answer", lang, seconds=_seconds(d["after"], lang))])
        elif k == "client.give_up":
            note(a, [at(e.t) + t("mm.give_up", lang)])
        elif k == "db.wait":
            lines.append(f"{a}->>D: {at(e.t)}{statement({**d, 'rows': None}, lang)}")
            wait = waits.get((e.actor, round(e.t, 6)))
            holder = wait.info.get("holder") if wait is not None and wait.info.get("holder") else d["blocked_by"]
            note(f"{a},D", [t("mm.waits", lang, who=lanes.name(e.actor), holder=lanes.name(holder))])
        elif k == "db.result":  # a statement that waited
            lines.append(f"D-->>{a}: {at(e.t)}{t('mm.after_wait', lang, seconds=_seconds(d['waited'], lang))}"
                         f"{_result(d, lang)}")
        elif k in ("processor.call", "processor.lookup"):
            key = f"<br/>key: {escape(d['key'])}" if d.get("key") else ""
            what = (t("mm.capture", lang, amount=escape(amount_text(d["amount"], lang))) if k == "processor.call"
                    else t("mm.lookup", lang))
            lines.append(f"{a}->>P: {at(e.t)}{what}{key}")
        elif k == "processor.answer":
            caller = lanes.of(e.target)
            arrow = "--x" if ("processor.lost", d["request"], e.target) in lost else "-->>"
            what = {"captured": t("mm.captured", lang, capture=escape(d.get("capture"))),
                    "declined": t("mm.declined", lang), "refused": t("mm.key_refused", lang),
                    "in_use": t("mm.in_use", lang),
                    "not_found": t("mm.not_found", lang)}[d["outcome"]]
            if d.get("replayed"):
                what += t("mm.replayed_capture", lang)
            lines.append(f"P{arrow}{caller}: {at(e.t)}{what}")
        elif k == "processor.timeout":
            note(f"{a},P", [at(e.t) + t("mm.processor_timeout", lang, seconds=_seconds(d["after"], lang))])
        elif k == "processor.capture":
            capture = d["capture"]
            parts = [at(e.t) + t("mm.capture_note", lang, capture=capture, amount=amount_text(d["amount"], lang))]
            if capture in extra_captures:
                ids = extra_captures[capture]
                parts.append(t("mm.double_capture", lang, ids=_and(ids, lang), n=len(ids)))
            if capture in orphans:
                parts.append(t("mm.orphan_capture", lang, id=capture))
            note("P", parts, EMPHASIS["broken"] if len(parts) > 1 else None)
        elif k == "api.crash":
            note(a, [at(e.t) + t("mm.crash", lang, point=crash_point(d["point"], lang))], EMPHASIS["crash"])
        elif k == "api.restart":
            first, last = lanes.api()
            note(first if first == last else f"{first},{last}", [at(e.t) + t("mm.restart", lang)])
        elif k == "completer.finish":
            note("K", [at(e.t) + t("mm.completer_finish", lang, key=d["key"])])
        elif k == "completer.release":
            note("K", [at(e.t) + t("mm.completer_release", lang, key=d["key"])])
    flush()
    if in_rect:
        lines.append("end")
    first, last = _span(lanes)
    lines.append(f"rect {VERDICT_FILL[drawn.verdicts.holds]}")
    lines.append(f"Note over {first},{last}: {_text(_verdict(run, drawn, lang), VERDICT_WIDTH)}")
    lines.append("end")
    return "\n".join(lines) + "\n"


def _at(seconds: float, lang: str) -> str:
    """The simulated time of a step, as its label's first word: ``t=0.250``."""
    return t("mm.at", lang, t=seconds)


def _and(ids: list[str], lang: str) -> str:
    """``ch_1 and ch_2``; of three or more, ``ch_1, ch_2 and ch_3``."""
    return (t("list.sep", lang).join(ids[:-1]) + t("mm.and", lang) + ids[-1]) if len(ids) > 1 else "".join(ids)


def _marked(drawn: Scene) -> tuple[dict[str, list[str]], dict[str, list[str]], set[str]]:
    """The steps a diagram emphasises, from the scene's ledgers: each charge row and each capture after a
    purchase's first (with every id of that purchase), and each orphan capture."""
    charges: dict[str, list[str]] = {}
    captures: dict[str, list[str]] = {}
    orphans: set[str] = set()
    for purchase in drawn.ledger:
        for entries, marked in ((purchase.charges, charges), (purchase.captures, captures)):
            ids = [entry.id for entry in entries]
            marked.update({entry.id: ids for entry in entries if entry.duplicate})
        orphans |= {entry.id for entry in purchase.captures if entry.orphan}
    return charges, captures, orphans


def crash_point(point: str, lang: str = "en") -> str:
    """Where the API dies, in words: ``after the processor's capture, before the charge row``; a registered
    design's own point by its name."""
    message = f"mm.crash_at.{point}"
    return t(message, lang) if message in MESSAGES else t("mm.crash_at.other", lang, point=point)


def _span(lanes: _Lanes) -> tuple[str, str]:
    last = "K" if lanes.completer else "P" if lanes.processor else "D" if lanes.db else "A"
    return next(iter(lanes.clients.values()), "A"), last


def _verdict(run, drawn: Scene, lang: str) -> list[str]:
    """The closing note's lines, raw: the ledgers, how each client ended, the design's verdict (a line a problem
    when it broke) and the story's check, as the scene says them."""
    s = run.summary
    parts = [t("mm.charges", lang, n=s.charges), t("mm.captures", lang, n=s.captures)]
    if not is_load(run):
        for ending in drawn.endings:
            parts.append(t("mm.client_ended", lang, client=ending.name, outcome=t("outcome." + ending.outcome, lang),
                           status=ending.status or ""))
    return parts + _verdict_lines(drawn, lang)


def _verdict_lines(drawn: Scene, lang: str) -> list[str]:
    verdicts = drawn.verdicts
    parts = []
    if verdicts.holds:
        parts.append(t("design.line", lang, verdict=verdicts.design))
    else:  # a line a problem
        said = verdicts.problems
        sep = t("problem.sep", lang).rstrip()
        for i, problem in enumerate(said):
            words = t("design.line", lang, verdict=t("design.broken", lang, problems=problem)) if i == 0 else problem
            parts.append(words + (sep if i < len(said) - 1 else ""))
    parts.append(t("story.line", lang, check=verdicts.story))
    return parts


def _title(run) -> str:
    return f"{run.name} — design {run.design}, seed {run.seed}"


def _comment(text: str) -> str:
    """A ``%%`` comment's text: one line, no ``}%%`` that could close a directive."""
    return "".join(ch if ch.isprintable() else " " for ch in text).replace("%%", "% %")


# -- a load ---------------------------------------------------------------------------------------------------
def load_sequence(run, lang: str = "en") -> str:
    """A load (more than `idemsim.judge.summary.LOAD_OPERATIONS` operations) summarised in one screen: its
    clients, the API with its pool, DB and processor as lanes, one arrow for all the attempts, the charge rows,
    the captures and the answers with their counts, a note on the pool and the waits on the unique index, and
    the closing note with the operations' outcomes and the two verdicts. Its thousands of messages are not drawn."""
    s = run.summary
    ops = s.operations
    end = max((e.t for e in run.trace), default=0.0)
    clients = len({op["client"] for op in ops})
    pool = run.scenario.api.pool_size
    outcomes = Counter(op["outcome"] for op in ops)
    by_attempt = {k: sum(v) for k, v in s.attempts_per_second["by_outcome"].items()}
    statuses = Counter(t("tl.timeout", lang) if x in (None, "timeout") else str(x) for op in ops for x in op["seen"])
    lines = [INIT, "sequenceDiagram", f"%% {_comment(_title(run))} — {len(ops)} operations, summarised",
             f"participant C as {escape(t('mm.load_clients', lang, n=clients))}",
             f"participant A as {escape(t('mm.load_api', lang, size=pool) if pool else t('party.api', lang))}",
             f"participant D as {escape(t('party.db', lang))}",
             f"participant P as {escape(t('party.processor', lang))}",
             f"Note over C,P: {_text([t('mm.load_title', lang, n=len(ops), end=end)], VERDICT_WIDTH)}",
             f"C->>A: {_text([t('mm.load_attempts', lang, n=sum(by_attempt.values()), **by_attempt)], VERDICT_WIDTH)}",
             f"A->>D: {_text([t('mm.load_charges', lang, n=s.charges)], VERDICT_WIDTH)}",
             f"A->>P: {_text([t('mm.load_captures', lang, n=s.captures)], VERDICT_WIDTH)}",
             "A-->>C: " + _text([t("mm.load_answers", lang, statuses=t("list.sep", lang).join(
                 f"{k} ×{v}" for k, v in statuses.most_common()))], VERDICT_WIDTH)]
    db = []
    if s.pool_wait is not None:
        db.append(t("mm.load_pool", lang, size=pool, **s.pool_wait))
    if s.wait_seconds:
        db.append(t("mm.load_index", lang, n=s.waiting_peak, seconds=s.wait_seconds))
    db.append(t("mm.load_keys", lang, held=s.keys_held, in_progress=s.keys_in_progress))
    lines.append(f"Note over A,D: {_text(db)}")
    drawn = scene(run, lang)
    lines.append(f"rect {VERDICT_FILL[drawn.verdicts.holds]}")
    closing = [t("mm.load_operations", lang, n=len(ops), ok=outcomes["ok"], fail=outcomes["fail"],
                 info=outcomes["info"]), *_verdict(run, drawn, lang)]
    lines.append(f"Note over C,P: {_text(closing, VERDICT_WIDTH)}")
    lines.append("end")
    return "\n".join(lines) + "\n"


# -- the key record's states ---------------------------------------------------------------------------------
STATES = ("None", "InProgress", "Done")


def key_transitions(run) -> tuple[str | None, list[tuple[str, str, str]]]:
    """The first operation's key and the steps its record took, in order: (from, to, the catalogue's message
    for the step), as the run's scene has them (`idemsim.views.scene.key_steps`)."""
    drawn = scene(run)
    return drawn.key, [(step.src, step.dst, step.why) for step in drawn.key_steps]


def state(run, lang: str = "en") -> str:
    """The key record's state diagram as the run's first key went (the scene's ``key_steps``): each step it took,
    once, with how many times (in the order it first took them), in the design's own words (under same-tx the
    registration commits with the charge); the states it passed through marked (green only when the design
    holds)."""
    drawn = scene(run, lang)
    key = drawn.key
    counts: dict[tuple[str, str, str], int] = {}
    for step in drawn.key_steps:
        counts[(step.src, step.dst, step.label)] = counts.get((step.src, step.dst, step.label), 0) + 1
    visited = {"None"} | {step.dst for step in drawn.key_steps}
    lines = [INIT, "stateDiagram-v2", f"%% {_comment(_title(run))}" + (f" — key {_comment(key)}" if key
                                                                        else " — no key record")]
    lines += ["[*] --> None"] + [f"{name}: {escape(t(word, lang))}" for name, word in
                                 (("None", "state.absent"), ("InProgress", "state.in_progress"),
                                  ("Done", "state.done")) if name in visited]
    for (a, b, words), n in counts.items():
        label = _wrap(words, LABEL_WIDTH)
        more = t("st.taken", lang, n=n)
        if _cells(label[-1] + more) <= LABEL_WIDTH:
            label[-1] += more
        else:
            label.append(more.strip())
        lines.append(f"{a} --> {b}: " + "<br/>".join(escape(line) for line in label))
    lines.append(TAKEN[drawn.verdicts.holds])
    if key:
        lines.append(f"class {','.join(s for s in STATES if s in visited)} taken")
    else:
        lines.append(f"note right of None: {_text([t('st.no_key', lang)], LABEL_WIDTH)}")
    return "\n".join(lines) + "\n"


def diagrams(texts: Iterable[str]) -> str:
    """Several diagrams as one output: each ends with a newline, a blank line between two."""
    return "\n".join(texts)
