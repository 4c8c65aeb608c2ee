"""The scene of a run: everything a picture of it shows, computed once, as plain data in one language.

`scene` reads a finished run (its trace, `Summary`, ledgers) and returns a `Scene`; the time-space figure
(`idemsim.views.figure`) draws it, and a browser page can draw the same scene from ``Scene.to_dict()``'s JSON.
Nothing in a scene needs recomputing: every word shown is in it, in the language asked for, and every thing has
one name (``api#1`` is ``API #1`` / ``決済 API #1`` everywhere). Times are simulated seconds, rounded to the
microsecond (as PostgreSQL's timestamps; 2.6, not 2.5999999999999996); ``event`` is the
index in the run's trace of the event a thing comes from (-1: none, e.g. a span still open when the run ended).

Fields of `Scene` (each a dataclass of str, float, int, bool, None, list and dict only):

- ``story``, ``design``, ``seed``, ``lang``, ``title``; ``end``: the last time anything happens.
- ``lanes``: top to bottom, each ``id`` (the trace's actor, or ``belief:<client>``, ``key:<key>``, ``ledger:charges``,
  ``ledger:captures``), ``role`` (client, belief, gateway, handler, db, key, processor, background, charges,
  captures) and ``name``. A client's belief row follows the client; the key records follow the DB; the ledgers
  are the last two rows.
- ``messages``: ``event`` (the sending), ``kind`` (request, response, dropped, processor.call, processor.lookup,
  processor.answer), ``src`` (from) and ``dst`` (to) lanes, ``sent``, ``arrived`` (None when lost) and
  ``lost_at``, ``what`` (its label; ``shorter``: shorter forms of it, longest first; empty: unlabelled),
  ``status`` (an answer's HTTP status, else None) and ``info`` (the trace's fields: request, attempt, key …).
- ``spans``: intervals on a lane: ``kind`` alive (a handler busy with its request), attempt (a client waiting
  for an answer; ``info.outcome``), transaction (BEGIN … COMMIT/ROLLBACK; ``info.end``), wait (a statement
  blocked on the unique index; ``label`` "waits for api#1's COMMIT", ``released_by`` the index of the COMMIT or
  ROLLBACK that released it, ``info.waited`` its length), processing (the processor at work) and down (the API
  process dead; ``lane`` None: every handler). ``event``: the event that ended it.
- ``marks``: points on a lane: ``kind`` statement, charge, capture, crash, died, restart, outcome, timeout,
  refused, state, finish, release, give_up; ``label`` and ``shorter`` as for messages.
- ``keys``: one `KeyTrack` per idempotency key the DB saw, each a list of `KeyRecord` (a row of
  ``idempotency_keys``, from its INSERT to its end): ``states`` over time (in_progress with its ``owner``, done
  with the stored ``status``), how it ``ended`` (expired: deleted by the reaper; deleted by a handler or the
  completer; rolled back), its ``retention`` (the TTL bracket: from the transaction's start to the expiry), and
  ``again`` when the key had a record before that ended: a request that found no record, a new purchase.
  Where a track has no record the key is absent.
- ``ledger``: one `Purchase` per logical charging operation: its ``charges`` (rows of ``charges``, ``ch_N``, at
  their COMMIT) and ``captures`` (the processor's ``cap_N``); the second and later of either ``duplicate``, with a
  `Pair` naming it ("ch_1 and ch_3: one purchase, charged twice"); an entry the other ledger lacks ``orphan``
  with its ``label`` ("cap_2: money taken, no charge row").
- ``beliefs``: per charging operation of a client, what the client believes from its first request on
  (``unknown`` until an answer, ``told`` False; then ``paid``, ``not_paid`` or ``unknown`` by the latest answer)
  against the truth (``captured``: captures of its purchase by then); ``differs`` when it believes paid and
  nothing was captured, or believes not paid and money was.
- ``verdicts``: the design's (``design_verdict`` holds/broken, ``design`` in words, ``holds``) and the
  story's (``story_check``, ``story`` in words, ``story_says``), as `idemsim.views.verdicts` words them; and
  the longer words a summary shows: ``design_named`` (with the properties' names), ``problems`` (what went wrong,
  one phrase a kind), ``broken`` (each violation, the first `MAX_BROKEN`), ``story_long`` (the check with what
  the file states) and ``story_reasons`` (why it does not reproduce the article, one line each).
- ``violations``: the summary's violations, as the JSON output has them.
- ``parties``: each party's display name by its trace id (every actor of the trace, and ``api``, ``db``,
  ``processor``, ``completer``): the name every view writes (`idemsim.views.names.party_name`).
- ``attempts``: each request's attempt in words by the request's id (``1.2`` → ``attempt 2``).
- ``endings``: one `Ending` per operation: its ``client`` (id and ``name``), what it saw (``seen``: each
  answer's status, ``timeout`` where none came), its ``outcome`` and final ``status``, and ``said``, the line
  that says both (``timeout, 201 → ok 201``).
- ``key``, ``key_steps``: the first operation's key (None: it sent none) and the steps its record took, in
  order (`KeyStep`: ``src`` and ``dst`` states None/InProgress/Done, ``why`` the catalogue's message for the
  step, ``label`` in words): the key record's state diagram.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from ..base.i18n import language, text
from ..judge.properties import captures_per_operation, charges_per_operation, describe_violation, is_charge
from ..model.db.sql import DEFAULT_TTL
from . import spacetime
from .names import attempt_name, party_name, seen_text
from .verdicts import design_words, green, problems, short_story_words, story_reasons, story_words

MAX_BROKEN = 5
"""The violations a scene words one by one (``verdicts.broken``); a summary says how many more there are."""


@dataclass
class Lane:
    id: str
    role: str
    name: str


@dataclass
class Message:
    event: int
    kind: str
    src: str
    dst: str
    sent: float
    arrived: float | None
    lost_at: float | None
    what: str
    shorter: list[str]
    status: int | None
    info: dict[str, Any]

    @property
    def end(self) -> float:
        return self.arrived if self.arrived is not None else self.lost_at  # type: ignore[return-value]


@dataclass
class Span:
    event: int
    kind: str
    lane: str | None
    start: float
    end: float
    label: str
    released_by: int | None
    info: dict[str, Any]


@dataclass
class Mark:
    event: int
    kind: str
    lane: str | None
    t: float
    label: str
    shorter: list[str]
    info: dict[str, Any]


@dataclass
class KeyState:
    state: str
    """in_progress or done."""
    start: float
    end: float
    owner: str | None
    """The handler (or process) whose transaction holds the record."""
    status: int | None
    """The stored response's status (done)."""
    event: int
    label: str


@dataclass
class KeyEnd:
    how: str
    """expired (deleted by the reaper past its retention), deleted (by ``by``) or rolled_back."""
    t: float
    by: str
    event: int
    label: str


@dataclass
class Retention:
    start: float
    end: float
    ttl: float
    label: str


@dataclass
class KeyRecord:
    key: str
    created: float
    owner: str
    event: int
    states: list[KeyState]
    ended: KeyEnd | None
    retention: Retention
    again: bool
    """The key had a record before, which ended: this request found none and is a new purchase."""
    again_label: str


@dataclass
class KeyTrack:
    key: str
    lane: str
    records: list[KeyRecord]


@dataclass
class LedgerEntry:
    kind: str
    """charge (a row of ``charges``) or capture (the processor's)."""
    id: str
    t: float
    by: str
    event: int
    duplicate: bool
    orphan: bool
    label: str


@dataclass
class Pair:
    kind: str
    """charged_twice or captured_twice."""
    first: str
    second: str
    start: float
    end: float
    label: str


@dataclass
class Purchase:
    logical: int
    key: str | None
    charges: list[LedgerEntry]
    captures: list[LedgerEntry]
    pairs: list[Pair]


@dataclass
class BeliefSpan:
    start: float
    end: float
    believes: str
    """paid, not_paid or unknown."""
    captured: int
    """Captures of the operation's purchase by ``start``."""
    differs: bool
    told: bool
    """Whether an answer told the client so (False: it is still waiting for its first answer)."""
    label: str


@dataclass
class Belief:
    op: int
    logical: int
    client: str
    lane: str
    spans: list[BeliefSpan]


@dataclass
class Verdicts:
    design_verdict: str
    design: str
    holds: bool
    story_check: str
    story: str
    story_says: str
    design_named: str = ""
    problems: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    story_long: str = ""
    story_reasons: list[str] = field(default_factory=list)


@dataclass
class Ending:
    op: int
    client: str
    name: str
    seen: list[Any]
    outcome: str
    status: int | None
    said: str


@dataclass
class KeyStep:
    src: str
    dst: str
    why: str
    label: str


@dataclass
class Scene:
    story: str
    design: str
    seed: int
    lang: str
    title: str
    end: float
    lanes: list[Lane]
    messages: list[Message]
    spans: list[Span]
    marks: list[Mark]
    keys: list[KeyTrack]
    ledger: list[Purchase]
    beliefs: list[Belief]
    verdicts: Verdicts
    violations: list[dict[str, Any]] = field(default_factory=list)
    parties: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, str] = field(default_factory=dict)
    endings: list[Ending] = field(default_factory=list)
    key: str | None = None
    key_steps: list[KeyStep] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lane(self, lane_id: str) -> Lane:
        return next(lane for lane in self.lanes if lane.id == lane_id)

    def name(self, actor: str) -> str:
        """The display name of an actor (a lane's name; an actor without a lane keeps its own)."""
        return next((lane.name for lane in self.lanes if lane.id == actor), actor)

    def party(self, actor: str) -> str:
        """A party's display name (``parties``; one the run never saw, as `idemsim.views.names` says it)."""
        return self.parties.get(actor) or party_name(actor, self.lang)


# -- the scene ------------------------------------------------------------------------------------------------
def scene(run, lang: str | None = None) -> Scene:
    """What every picture of ``run`` shows, in ``lang`` (by default `idemsim.base.i18n.language`)."""
    lang = language(lang)
    events = list(run.trace)
    diagram = spacetime.diagram(events)
    names = {lane.actor: party_name(lane.actor, lang) for lane in diagram.lanes}
    s = run.summary
    keys = _key_tracks(events, names, lang)
    ledger = _ledger(run, diagram, lang)
    beliefs = _beliefs(run, events, diagram.end, names, lang)
    lanes: list[Lane] = []
    believers = {b.client for b in beliefs}
    for lane in diagram.lanes:
        lanes.append(Lane(lane.actor, lane.role, names[lane.actor]))
        if lane.role == "client" and lane.actor in believers:
            lanes.append(Lane(f"belief:{lane.actor}", "belief",
                              text("figure.belief_lane", lang, client=names[lane.actor])))
        if lane.role == "db":
            lanes += [Lane(track.lane, "key", text("figure.key", lang, key=track.key)) for track in keys]
    if any(p.charges or p.captures for p in ledger):
        lanes += [Lane("ledger:charges", "charges", text("figure.charges_lane", lang)),
                  Lane("ledger:captures", "captures", text("figure.captures_lane", lang))]
    messages = [_message(m, lang) for m in diagram.messages]
    spans = [_span(sp, names, lang) for sp in diagram.spans]
    marks = [_mark(m, lang) for m in diagram.marks]
    verdicts = _verdicts(run, lang)
    title = text("figure.title", lang, story=run.name, design=run.design, seed=run.seed)
    parties = {p: party_name(p, lang) for p in _parties(events)}
    attempts = {e.data["request"]: attempt_name(e.data["attempt"], lang) for e in events if e.kind == "attempt.send"}
    endings = [Ending(op["op"], op["client"], parties.get(op["client"]) or party_name(op["client"], lang),
                      list(op["seen"]), op["outcome"], op["status"],
                      seen_text(op["seen"], op["outcome"], op["status"], lang)) for op in s.operations]
    key, steps = key_steps(events)
    return _rounded(Scene(run.name, run.design, run.seed, lang, title, diagram.end, lanes, messages, spans, marks,
                          keys, ledger, beliefs, verdicts, [dict(v) for v in s.violations], parties, attempts,
                          endings, key, [KeyStep(a, b, why, text(why, lang)) for a, b, why in steps]))


def _parties(events) -> list[str]:
    """Every party of a trace, in the order they first appear, then the API, the DB, the processor, the completer."""
    seen: dict[str, None] = {}
    for e in events:
        for p in (e.actor, e.target, e.data.get("src"), e.data.get("dst"), e.data.get("handler"),
                  e.data.get("blocked_by")):
            if isinstance(p, str) and p:
                seen.setdefault(p)
    for p in ("api", "db", "processor", "completer"):
        seen.setdefault(p)
    return list(seen)


def _verdicts(run, lang: str) -> Verdicts:
    s = run.summary
    expectation = run.scenario.expect.get(run.design)
    stated = expectation.stated() if expectation is not None else None
    return Verdicts(s.design_verdict, design_words(s.design_verdict, s.violations, lang), green(s.design_verdict),
                    s.story_check, short_story_words(s.story_check, lang), s.story_says,
                    design_words(s.design_verdict, s.violations, lang, names=True), problems(s.violations, lang),
                    [describe_violation(v, lang) for v in s.violations[:MAX_BROKEN]],
                    story_words(s.story_check, stated, lang),
                    story_reasons(s.story_check, s.failures, s.violations, s.expected_breaks, lang))


_TIMES = frozenset({"end", "sent", "arrived", "lost_at", "start", "t", "created"})


def _rounded(thing):
    """``thing`` with every time in it (a field named in `_TIMES`) rounded to the microsecond, in place."""
    if isinstance(thing, list):
        for item in thing:
            _rounded(item)
    elif is_dataclass(thing):
        for f in fields(thing):
            value = getattr(thing, f.name)
            if f.name in _TIMES and isinstance(value, (int, float)) and not isinstance(value, bool):
                setattr(thing, f.name, round(float(value), 6))
            else:
                _rounded(value)
    return thing


# -- names and words ------------------------------------------------------------------------------------------
def status_words(status, lang: str) -> str:
    return text("event.timeout", lang) if status in (None, "timeout") else str(status)


def _unique(variants: list[str]) -> list[str]:
    return [v for i, v in enumerate(variants) if v and v not in variants[:i]]


def _message(m: spacetime.Message, lang: str) -> Message:
    variants = _unique(message_words(m, lang))
    status = m.info.get("status") if m.kind in ("response", "dropped") else None
    return Message(m.event, m.kind, m.src, m.dst, m.sent, m.arrived, m.lost_at, variants[0] if variants else "",
                   variants[1:], status if isinstance(status, int) else None, dict(m.info))


def message_words(m: spacetime.Message, lang: str) -> list[str]:
    """A message's label, longest first; empty for a message left unlabelled."""
    info = m.info
    if m.kind == "request":
        key = text("figure.key", lang, key=info["key"]) if info["key"] else text("figure.no_key", lang)
        body = f"  {json.dumps(info['body'], ensure_ascii=False)}" if info.get("body") is not None else ""
        if info["attempt"] == 1:
            head = f"{info['method']} {info['path']}"
            return [f"{head}{body}  {key}", f"{head}  {key}", head, info["method"]]
        head = attempt_name(info["attempt"], lang)
        return [f"{head}  {key}", head]
    if m.kind == "response":
        status = status_words(info["status"], lang)
        if info.get("ignored"):
            return [text("figure.ignored", lang, status=status), status]
        if info.get("replay"):
            return [f"{status} {text('event.replay', lang)}", status]
        return [status]
    if m.kind == "dropped":
        status = status_words(info["status"], lang)
        return [text("figure.dropped", lang, status=status), status]
    if m.kind == "processor.lookup":
        return [text("figure.lookup", lang)]
    if m.kind == "processor.answer":
        outcome = info["outcome"]
        if outcome == "captured":
            if info["replayed"]:
                return [f"{text('event.replay', lang)} {info['capture']}", info["capture"]]
            return []
        word = {"declined": "figure.declined", "refused": "figure.key_refused", "in_use": "figure.in_use",
                "not_found": "figure.not_found", "timeout": "event.timeout"}[outcome]
        return [text(word, lang)]
    return []


def _span(sp: spacetime.Span, names: dict[str, str], lang: str) -> Span:
    label, released = "", None
    if sp.kind == "wait":
        released = sp.info.get("released_by")
        holder = sp.info.get("holder")
        if holder is not None:
            how = "figure.waits_rollback" if sp.info.get("released_how") == "rollback" else "figure.waits_commit"
            label = text(how, lang, holder=names.get(holder, holder))
    elif sp.kind == "transaction" and sp.info["end"] == "rollback":
        label = text("event.rollback", lang)
    return Span(sp.event, sp.kind, sp.lane, sp.start, sp.end, label, released, dict(sp.info))


def _mark(m: spacetime.Mark, lang: str) -> Mark:
    variants = _unique(mark_words(m, lang))
    return Mark(m.event, m.kind, m.lane, m.t, variants[0] if variants else "", variants[1:], dict(m.info))


def mark_words(m: spacetime.Mark, lang: str) -> list[str]:
    """A mark's label, longest first; empty for a mark left unlabelled."""
    info = m.info
    if m.kind == "charge":
        name = f"ch_{info['id']}"
        return [text("figure.charge" if info["committed"] else "figure.rolled_back", lang, id=name), name]
    if m.kind == "capture":
        return [text("money.capture", lang, id=info["id"]), info["id"]]
    if m.kind in ("crash", "restart", "timeout"):
        return [text(f"event.{m.kind}", lang)]
    if m.kind == "outcome":
        word = text(f"outcome.{info['outcome']}", lang)
        return [f"{word} ({text('event.timeout', lang)})", word] if info["status"] is None else [word]
    if m.kind == "refused":
        return [text("figure.refused", lang)]
    if m.kind == "state":
        resource = _resource(info["resource"], lang)
        after = info["after"]
        if after is None:
            return [text("figure.deleted", lang, resource=resource)]
        return [text("figure.state", lang, resource=resource, value="{…}" if isinstance(after, dict) else str(after))]
    if m.kind == "finish":
        return [text("figure.finish", lang, status=status_words(info["status"], lang))]
    if m.kind == "release":
        return [text("figure.release", lang)]
    if m.kind == "give_up":
        return [text("figure.give_up", lang)]
    return []


def _resource(resource: str, lang: str) -> str:
    if resource == "balance":
        return text("figure.balance", lang)
    if resource.startswith("items/"):
        return text("figure.item", lang, name=resource[len("items/"):])
    return resource


# -- the key record -------------------------------------------------------------------------------------------
class _Record:
    def __init__(self, key: str, t: float, owner: str, event: int, expires: float, begun: float, ttl: float):
        self.key, self.created, self.owner, self.event = key, t, owner, event
        self.expires, self.begun, self.ttl = expires, begun, ttl
        self.states: list[list] = [["in_progress", t, owner, None, event]]  # state, start, owner, status, event
        self.ended: tuple | None = None  # how, t, by, event

    @property
    def live(self) -> bool:
        return self.ended is None


def _key_tracks(events, names: dict[str, str], lang: str) -> list[KeyTrack]:
    """Each key's records over time, replayed from the statements on ``idempotency_keys``."""
    records: list[_Record] = []
    begun: dict[str, float] = {}  # connection -> its open transaction's start
    undo: dict[str, list] = {}  # connection -> what its open transaction did to key records, to undo on rollback

    def live(key: str) -> _Record | None:
        return next((r for r in reversed(records) if r.key == key and r.live), None)

    def remember(conn: str, what: str, record: _Record) -> None:
        """What a statement did to ``record``, undone if its transaction rolls back (autocommit: nothing to undo)."""
        if conn in begun:
            undo[conn].append((what, record, list(record.states[-1])))

    def change(record: _Record, conn: str, t: float, i: int, state: str, owner: str | None, status) -> None:
        remember(conn, "state", record)
        record.states.append([state, t, owner, status, i])

    for i, e in enumerate(events):
        if e.kind != "db.result":
            continue
        d, conn, t = e.data, e.actor, e.t
        op, rows, f = d["op"], d.get("rows") or 0, d.get("fields") or {}
        if d.get("error") is not None:
            if op in ("commit", "rollback"):
                op = "rollback"
            else:
                continue
        if op == "begin":
            begun[conn], undo[conn] = t, []
        elif op == "commit":
            begun.pop(conn, None)
            undo.pop(conn, None)
        elif op in ("rollback", "disconnect"):
            begun.pop(conn, None)
            for what, record, before in reversed(undo.pop(conn, [])):
                if what == "insert":
                    record.ended = ("rolled_back", t, conn, i)
                elif what == "delete":
                    record.ended = None
                    record.states.append([before[0], t, before[2], before[3], i])
                elif record.live:
                    record.states.append([before[0], t, before[2], before[3], i])
        elif op in ("register_key", "insert_key") and rows:
            ttl = float(f.get("ttl") or DEFAULT_TTL)
            start = begun.get(conn, t)
            record = _Record(f["key"], t, conn, i, start + ttl, start, ttl)
            records.append(record)
            remember(conn, "insert", record)
        elif op == "complete_key" and rows:
            record = live(f["key"])
            if record is not None:
                response = f.get("response") or {}
                status = response.get("status") if isinstance(response, dict) else None
                change(record, conn, t, i, f.get("status") or "done", record.states[-1][2], status)
        elif op == "claim_key" and rows:
            record = live(f["key"])
            if record is not None:
                change(record, conn, t, i, record.states[-1][0], conn, record.states[-1][3])
        elif op == "delete_key" and rows:
            record = live(f["key"])
            if record is not None:
                record.ended = ("deleted", t, conn, i)
                remember(conn, "delete", record)
        elif op == "delete_expired" and rows:
            now = begun.get(conn, t)
            expired = sorted((r for r in records if r.live and r.expires <= now), key=lambda r: r.expires)
            for record in expired[:rows]:
                record.ended = ("expired", t, conn, i)
                remember(conn, "delete", record)

    end = max((e.t for e in events), default=0.0)
    tracks: dict[str, KeyTrack] = {}
    for record in records:
        track = tracks.setdefault(record.key, KeyTrack(record.key, f"key:{record.key}", []))
        again = any(r.ended is not None for r in track.records)
        track.records.append(_key_record(record, again, end, names, lang))
    return list(tracks.values())


def _key_record(record: _Record, again: bool, end: float, names: dict[str, str], lang: str) -> KeyRecord:
    finish = record.ended[1] if record.ended else end
    states = []
    for n, (state, start, owner, status, event) in enumerate(record.states):
        stop = record.states[n + 1][1] if n + 1 < len(record.states) else finish
        if state == "in_progress":
            label = text("key.in_progress", lang, owner=names.get(owner, owner))
        else:
            label = text("key.done", lang, status=status_words(status, lang)) if state == "done" else state
        states.append(KeyState(state, start, stop, owner, status, event, label))
    ended = None
    if record.ended:
        how, t, by, event = record.ended
        label = {"expired": lambda: text("key.expired", lang),
                 "deleted": lambda: text("key.deleted", lang, by=names.get(by, party_name(by, lang))),
                 "rolled_back": lambda: text("key.rolled_back", lang)}[how]()
        ended = KeyEnd(how, t, by, event, label)
    retention = Retention(record.begun, record.expires, record.ttl, text("key.ttl", lang, s=record.ttl))
    return KeyRecord(record.key, record.created, record.owner, record.event, states, ended, retention, again,
                     text("key.again", lang, key=record.key) if again else "")


def key_steps(events) -> tuple[str | None, list[tuple[str, str, str]]]:
    """The first operation's key and the steps its record took (the key record's state diagram), in order:
    (from, to, the catalogue's message for the step). A transaction's steps are counted when it ends: committed,
    a registration alone is ``st.registered``, a registration with the charge and the stored answer (same-tx)
    is ``st.inserted`` then ``st.together``; rolled back (or dropped by a crash), a registration is ``st.inserted`` then
    ``st.rolled_back`` (``st.dropped``). Outside a transaction each step counts at once: ``st.completed``,
    ``st.released`` (a failure deletes the key), ``st.reclaimed`` (a record older than the lease deleted),
    ``st.claimed`` (taken over in place), ``st.expired`` (the reaper)."""
    key = next((e.data["key"] for e in events if e.kind == "attempt.send" and e.data.get("key")), None)
    if key is None:
        return None, []
    out: list[tuple[str, str, str]] = []
    state = "None"
    blocks: dict[str, list[tuple[str, str]]] = {}

    def apply(to: str, why: str) -> None:
        nonlocal state
        if to != state or why == "st.claimed":
            out.append((state, to, why))
            state = to

    def step(what: str, why: str, together: bool) -> None:
        if what == "registered":
            apply("InProgress", "st.inserted" if together else "st.registered")
        elif what == "completed":
            apply("Done", "st.together" if together else "st.completed")
        elif what == "deleted":
            apply("None", why)
        elif what == "claimed":
            apply("InProgress", why)

    for e in events:
        if e.kind != "db.result":
            continue
        d, conn = e.data, e.actor
        op, f = d["op"], d.get("fields") or {}
        if op == "begin" and not d["error"]:
            blocks[conn] = []
            continue
        if op in ("commit", "rollback", "disconnect"):
            block = blocks.pop(conn, None)
            if block is None:
                continue
            if op == "commit" and not d["error"]:
                whats = {what for what, _ in block}
                for what, why in block:
                    step(what, why, {"registered", "completed"} <= whats)
            elif any(what == "registered" for what, _ in block):
                apply("InProgress", "st.inserted")
                apply("None", "st.dropped" if op == "disconnect" else "st.rolled_back")
            continue
        if d["error"]:
            if conn in blocks:
                blocks[conn] = []
            continue
        if op != "delete_expired" and f.get("key") != key or not (d.get("rows") or d.get("row")):
            continue
        if op in ("register_key", "insert_key"):
            change = ("registered", "")
        elif op == "complete_key":
            change = ("completed", "")
        elif op == "delete_key":
            stale = f.get("status") == "in_progress" and "created_before" in f or conn == "recovery"
            change = ("deleted", "st.reclaimed" if stale else "st.released")
        elif op == "delete_expired":
            change = ("deleted", "st.expired")
        elif op == "claim_key":
            change = ("claimed", "st.claimed")
        else:
            continue
        if conn in blocks:
            blocks[conn].append(change)
        else:
            step(*change, False)
    return key, out


# -- the ledgers ----------------------------------------------------------------------------------------------
def _ledger(run, diagram: spacetime.Diagram, lang: str) -> list[Purchase]:
    """Each charging purchase's charge rows and captures, duplicates and orphans named."""
    charge_marks = {m.info["id"]: m for m in diagram.marks if m.kind == "charge" and m.info["committed"]}
    capture_marks = {m.info["id"]: m for m in diagram.marks if m.kind == "capture"}
    orphans = {(v.get("key"), str(v["fields"].get("id"))) for v in run.summary.violations
               if v.get("key") in ("viol.orphan_capture", "viol.orphan_row")}
    keys = {r.logical: (r.keys[0] if r.keys else None) for r in run.operations}
    charges, captures = charges_per_operation(run), captures_per_operation(run)
    out = []
    for logical in sorted(set(charges) | set(captures), key=lambda op: (op is None, op or 0)):
        rows = []
        for c in charges.get(logical, []):
            mark = charge_marks.get(c["id"])
            name = f"ch_{c['id']}"
            orphan = ("viol.orphan_row", str(c["id"])) in orphans
            rows.append(LedgerEntry("charge", name, mark.t if mark else 0.0, c["handler"] or "",
                                    mark.event if mark else -1, False, orphan,
                                    text("ledger.orphan_row", lang, id=name) if orphan else name))
        caps = []
        for c in captures.get(logical, []):
            mark = capture_marks.get(c["id"])
            orphan = ("viol.orphan_capture", c["id"]) in orphans
            caps.append(LedgerEntry("capture", c["id"], c["t"], c["caller"] or "", mark.event if mark else -1, False,
                                    orphan, text("ledger.orphan_capture", lang, id=c["id"]) if orphan else c["id"]))
        pairs = []
        if logical is not None:
            for entries, kind in ((rows, "charged_twice"), (caps, "captured_twice")):
                for entry in entries[1:]:
                    entry.duplicate = True
                    first = entries[0]
                    pairs.append(Pair(kind, first.id, entry.id, first.t, entry.t,
                                      text(f"ledger.{kind}", lang, first=first.id, second=entry.id)))
        out.append(Purchase(logical if logical is not None else -1, keys.get(logical), rows, caps, pairs))
    return out


# -- what the client believes -----------------------------------------------------------------------------------
_BELIEF = {"ok": "paid", "fail": "not_paid", "info": "unknown"}


def _beliefs(run, events, end: float, names: dict[str, str], lang: str) -> list[Belief]:
    """What each client believes of each charging operation after each answer, against the money captured."""
    captured = {op: sorted(c["t"] for c in caps) for op, caps in captures_per_operation(run).items()}
    charging = {r.op: r for r in run.operations if is_charge(run, r)}
    answers: dict[int, list[tuple[float, str]]] = {}
    clients: dict[int, str] = {}
    for e in events:
        if e.kind == "attempt.send" and e.data["op"] in charging and e.data["op"] not in answers:
            answers[e.data["op"]] = [(e.t, "unknown")]  # waiting for its first answer, the client cannot know
            clients[e.data["op"]] = e.actor
        elif e.kind == "attempt.end" and e.data["op"] in charging:
            answers.setdefault(e.data["op"], []).append((e.t, _BELIEF[e.data["outcome"]]))
            clients[e.data["op"]] = e.actor
    out = []
    for op, said in sorted(answers.items()):
        result = charging[op]
        times = sorted({t for t, _ in said} | {t for t in captured.get(result.logical, []) if t > said[0][0]})
        spans: list[BeliefSpan] = []
        for n, t in enumerate(times):
            told = [(n, b) for n, (at, b) in enumerate(said) if at <= t][-1]  # the latest answer by then
            believes, answered = told[1], told[0] > 0
            caps = sum(1 for c in captured.get(result.logical, []) if c <= t)
            differs = (believes == "paid" and caps == 0) or (believes == "not_paid" and caps > 0)
            stop = times[n + 1] if n + 1 < len(times) else max(end, t)
            if spans and (spans[-1].believes, spans[-1].differs, spans[-1].captured, spans[-1].told) == (
                    believes, differs, caps, answered):
                spans[-1].end = stop
                continue
            spans.append(BeliefSpan(t, stop, believes, caps, differs, answered, text(f"belief.{believes}", lang)))
        client = clients[op]
        out.append(Belief(op, result.logical, client, f"belief:{client}", spans))
    return out
