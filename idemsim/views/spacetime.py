"""What a time-space (Lamport) diagram of a run shows, read from its trace: lanes, messages, spans and marks.

This module is plain data and knows nothing of matplotlib or of words; `idemsim.views.figure` draws what it
returns. `diagram` reads the trace once, in order, and pairs each message's sending with its arrival (or its
loss), each ``BEGIN`` with its ``COMMIT``/``ROLLBACK``/disconnect, each blocked statement with its result.

Guarantees: the result depends only on the trace; every time in it is a time of the trace, or a send time plus
the processor's ``latency`` (when the processor's call or answer arrives); a charge mark is a committed
``insert_charge`` (the same rule as `idemsim.judge.tally.Tally`) unless its ``committed`` is False.

Lanes, top to bottom: the client processes (``op.start``'s actor, in the order they start), the gateway if it
answered, the API's handlers (``api#1``, ``api#2`` … in order of arrival; one ``api`` lane if no request reached
a handler), the DB if any statement ran, the payment processor if anyone called it, and the background
processes (``completer``, ``recovery``, ``reaper``) that touched the DB or the processor.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from typing import Any

API = "api"
"""The lane a message goes to when no handler took it (a lost or refused request): the topmost API lane."""
DB = "db"
PROCESSOR = "processor"


@dataclass(frozen=True)
class Lane:
    """One party: ``actor`` as the trace names it, and its ``role`` (client, gateway, handler, db, processor,
    background)."""

    actor: str
    role: str


@dataclass(frozen=True)
class Message:
    """A message from lane ``src`` at ``sent`` to lane ``dst``: it arrives at ``arrived``, or is lost at
    ``lost_at`` (then ``arrived`` is None). ``kind``: request, response, dropped, processor.call,
    processor.lookup, processor.answer. ``info`` holds what a label needs (status, replay, attempt …)."""

    kind: str
    src: str
    dst: str
    sent: float
    arrived: float | None
    lost_at: float | None = None
    info: dict[str, Any] = field(default_factory=dict)
    event: int = -1
    """The index in the trace of the event that sent it."""

    @property
    def end(self) -> float:
        return self.arrived if self.arrived is not None else self.lost_at  # type: ignore[return-value]


@dataclass(frozen=True)
class Span:
    """An interval on one lane (``lane`` None: every API lane). ``kind``: alive (a handler serving its
    request), attempt (a client waiting for an answer), transaction, wait (a statement blocked on the unique
    index), processing (the processor working on a call), down (the API process is dead)."""

    kind: str
    lane: str | None
    start: float
    end: float
    info: dict[str, Any] = field(default_factory=dict)
    event: int = -1
    """The index in the trace of the event that opened it."""


@dataclass(frozen=True)
class Mark:
    """A point on one lane. ``kind``: statement, charge, capture, crash, died, restart, outcome, timeout,
    state, finish, release, give_up, refused."""

    kind: str
    lane: str | None
    t: float
    info: dict[str, Any] = field(default_factory=dict)
    event: int = -1
    """The index in the trace of its event."""


@dataclass
class Diagram:
    lanes: list[Lane]
    messages: list[Message]
    spans: list[Span]
    marks: list[Mark]
    end: float
    """The last time anything happens (an event, or a processor message's arrival)."""

    def lane(self, actor: str) -> Lane:
        return next(lane for lane in self.lanes if lane.actor == actor)


_BACKGROUND_ORDER = ("completer", "recovery", "reaper")


def diagram(events) -> Diagram:
    """The lanes, messages, spans and marks of one run's trace (a `idemsim.model.trace.Trace` or a list of events)."""
    events = list(events)
    clients: list[str] = []
    handlers: list[str] = []
    background: set[str] = set()
    gateway = False
    messages: list[Message] = []
    spans: list[Span] = []
    marks: list[Mark] = []
    end = max((e.t for e in events), default=0.0)

    sends: dict[str, Any] = {}  # request id -> its attempt.send event
    request_handler: dict[str, str] = {}
    pending_response: dict[tuple[str, str], Any] = {}  # (src, request) -> response.send / gateway.timeout
    pending_calls: dict[tuple[str | None, str], deque] = defaultdict(deque)  # (request, caller) -> message index
    alive_since: dict[str, float] = {}
    attempts: dict[tuple[int, int], float] = {}
    blocks: dict[str, list] = {}  # connection -> [begin time, failed, pending charge inserts, begin event]
    waits: dict[str, float] = {}
    closed: dict[str, tuple[float, int, str]] = {}  # connection -> (time, event, how) of its last COMMIT/ROLLBACK
    indexes: dict[int, int] = {}  # id(event) -> its index in the trace
    down_since: float | None = None
    processing: dict[tuple[str | None, str], deque] = defaultdict(deque)

    def background_lane(actor: str) -> None:
        if actor not in clients and not actor.startswith("api#") and actor not in (DB, PROCESSOR, "gateway",
                                                                                    "api", "net"):
            background.add(actor)

    def close_block(conn: str, t: float, how: str, error: Any) -> None:
        block = blocks.pop(conn, None)
        if block is None:
            return
        begun, failed, inserts, begin_event = block
        committed = how == "commit" and error is None and not failed
        spans.append(Span("transaction", conn, begun, t, {"end": how if error is None else "rollback",
                                                          "begin_event": begin_event}))
        for insert in inserts:
            marks.append(Mark("charge", DB, t if committed else insert.t,
                              {"id": insert.data["id"], "writer": conn, "committed": committed},
                              indexes[id(insert)]))

    for i, e in enumerate(events):
        k, d = e.kind, e.data
        indexes[id(e)] = i
        counts = (len(messages), len(spans), len(marks))
        if k == "op.start":
            if e.actor not in clients:
                clients.append(e.actor)
        elif k == "attempt.send":
            sends[d["request"]] = e
            attempts[(d["op"], d["attempt"])] = e.t
        elif k == "request.arrive":
            request_handler[d["request"]] = d["handler"]
            handlers.append(d["handler"])
            alive_since[d["handler"]] = e.t
            send = sends[d["request"]]
            messages.append(Message("request", send.actor, d["handler"], send.t, e.t, info=_request_info(send),
                                    event=indexes[id(send)]))
        elif k == "request.lost":
            send = sends[d["request"]]
            messages.append(Message("request", send.actor, API, send.t, None, e.t, _request_info(send),
                                    indexes[id(send)]))
        elif k == "request.refused":
            send = sends[d["request"]]
            messages.append(Message("request", send.actor, API, send.t, e.t, info=_request_info(send),
                                    event=indexes[id(send)]))
            marks.append(Mark("refused", API, e.t, {"request": d["request"]}))
        elif k in ("response.send", "gateway.timeout", "gateway.unavailable"):
            if k != "response.send":
                gateway = True
            if k == "gateway.unavailable":  # an outage's gateway took the request, and answers it
                send = sends[d["request"]]
                messages.append(Message("request", send.actor, "gateway", send.t, e.t, info=_request_info(send),
                                        event=indexes[id(send)]))
            pending_response[(e.actor, d["request"])] = e
            if k == "response.send":
                _end_alive(spans, alive_since, e.actor, e.t)
        elif k == "response.dropped":
            _end_alive(spans, alive_since, e.actor, e.t)
            messages.append(Message("dropped", e.actor, "gateway", e.t, e.t,
                                    info={"status": d["status"], "request": d["request"]}))
        elif k in ("response.arrive", "response.lost"):
            src = e.actor if k == "response.arrive" else d["src"]
            sent = pending_response.pop((src, d["request"]))
            info = {"status": sent.data["status"], "replay": sent.data.get("replay", False),
                    "request": d["request"], "ignored": d.get("ignored", False)}
            dst = sent.target
            if k == "response.arrive":
                messages.append(Message("response", src, dst, sent.t, e.t, info=info, event=indexes[id(sent)]))
            else:
                messages.append(Message("response", src, dst, sent.t, None, e.t, info, indexes[id(sent)]))
        elif k in ("processor.call", "processor.lookup"):
            background_lane(e.actor)
            arrival = e.t + d["latency"]
            end = max(end, arrival)
            messages.append(Message(k, e.actor, PROCESSOR, e.t, arrival,
                                    info={"request": d["request"], "amount": d["amount"], "key": d["key"]}))
            processing[(d["request"], e.actor)].append(arrival)
        elif k == "processor.answer":
            caller = e.target
            arrival = e.t + d["latency"]
            queue = processing[(d["request"], caller)]
            started = queue.popleft() if queue else e.t
            if e.t > started:
                spans.append(Span("processing", PROCESSOR, started, e.t, {"caller": caller}))
            info = {"outcome": d["outcome"], "capture": d["capture"], "replayed": d["replayed"],
                    "request": d["request"]}
            end = max(end, arrival)
            pending_calls[(d["request"], caller)].append(len(messages))
            messages.append(Message("processor.answer", PROCESSOR, caller, e.t, arrival, info=info))
        elif k in ("processor.lost", "processor.ignored"):
            caller = d["dst"] if k == "processor.lost" else e.target
            queue = pending_calls[(d["request"], caller)]
            while messages[queue[0]].arrived < e.t:  # answers that arrived before this event: not this one
                queue.popleft()
            j = queue.popleft()
            m = messages[j]
            if k == "processor.lost":
                messages[j] = replace(m, arrived=None, lost_at=e.t)
            else:
                messages[j] = replace(m, lost_at=None, info={**m.info, "ignored": True})
        elif k == "processor.capture":
            marks.append(Mark("capture", PROCESSOR, e.t, {"id": d["capture"], "caller": d["caller"]}))
        elif k == "processor.timeout":
            marks.append(Mark("timeout", e.actor, e.t, {"after": d["after"]}))
        elif k == "db.wait":
            background_lane(e.actor)
            waits[e.actor] = e.t
        elif k == "db.result":
            background_lane(e.actor)
            conn, op, error = e.actor, d["op"], d["error"]
            if conn in waits:
                started = waits.pop(conn)
                holders = d.get("blocked_by", [])
                release = max((closed[h] + (h,) for h in holders if h in closed), default=None)
                spans.append(Span("wait", conn, started, e.t, {
                    "waited": d.get("waited") or e.t - started, "blocked_by": holders,
                    "released_by": release[1] if release else None, "released_how": release[2] if release else None,
                    "holder": release[3] if release else (holders[0] if holders else None)}))
            if op != "disconnect":
                marks.append(Mark("statement", conn, e.t, {"op": op, "error": error}))
            block = blocks.get(conn)
            if op == "begin":
                if error is None and block is None:
                    blocks[conn] = [e.t, False, [], i]
            elif op in ("commit", "rollback", "disconnect"):
                closed[conn] = (e.t, i, "commit" if op == "commit" and error is None and not (block and block[1])
                                else "rollback")
                close_block(conn, e.t, op, error)
            elif error is not None:
                if block is not None:
                    block[1] = True
            elif op == "insert_charge" and d.get("rows"):
                if block is not None:
                    block[2].append(e)
                else:
                    marks.append(Mark("charge", DB, e.t, {"id": d["id"], "writer": conn, "committed": True}))
        elif k == "api.crash":
            marks.append(Mark("crash", e.actor, e.t, {"point": d["point"]}))
            down_since = e.t
        elif k == "api.died":
            _end_alive(spans, alive_since, e.actor, e.t)
            if not any(m.kind == "crash" and m.lane == e.actor and m.t == e.t for m in marks):
                marks.append(Mark("died", e.actor, e.t))
        elif k == "api.restart":
            if down_since is not None:
                spans.append(Span("down", None, down_since, e.t))
                down_since = None
            marks.append(Mark("restart", None, e.t))
        elif k == "attempt.end":
            started = attempts.pop((d["op"], d["attempt"]), e.t)
            info = {"outcome": d["outcome"], "status": d["status"], "attempt": d["attempt"]}
            spans.append(Span("attempt", e.actor, started, e.t, info))
            marks.append(Mark("outcome", e.actor, e.t, info))
        elif k == "state.change":
            marks.append(Mark("state", e.actor, e.t, {"resource": d["resource"], "after": d["after"]}))
        elif k in ("completer.finish", "completer.release"):
            background_lane(e.actor)
            marks.append(Mark("finish" if k == "completer.finish" else "release", e.actor, e.t,
                              {"key": d["key"], "status": d.get("status")}))
        elif k == "client.give_up":
            marks.append(Mark("give_up", e.actor, e.t))
        # what this event began or ended, unless it already names its event: this one
        messages[counts[0]:] = [m if m.event >= 0 else replace(m, event=i) for m in messages[counts[0]:]]
        spans[counts[1]:] = [s if s.event >= 0 else replace(s, event=i) for s in spans[counts[1]:]]
        marks[counts[2]:] = [m if m.event >= 0 else replace(m, event=i) for m in marks[counts[2]:]]

    for conn in list(blocks):
        close_block(conn, end, "open", None)
    for conn, started in waits.items():
        spans.append(Span("wait", conn, started, end, {"waited": end - started, "blocked_by": [],
                                                      "released_by": None, "released_how": None, "holder": None},
                          len(events) - 1))
    for handler in list(alive_since):
        _end_alive(spans, alive_since, handler, end)
    if down_since is not None:
        spans.append(Span("down", None, down_since, end))

    lanes = [Lane(c, "client") for c in clients]
    if gateway:
        lanes.append(Lane("gateway", "gateway"))
    lanes += [Lane(h, "handler") for h in handlers]
    if not handlers:
        lanes.append(Lane(API, "handler"))
    touched = {m.lane for m in marks} | {m.src for m in messages} | {m.dst for m in messages}
    lanes += [Lane(actor, actor) for actor in (DB, PROCESSOR) if actor in touched or any(
        m.kind == "statement" for m in marks) and actor == DB]
    lanes += [Lane(b, "background") for b in sorted(background, key=_background_rank)]
    api_lane = lanes[len(clients) + (1 if gateway else 0)].actor
    if api_lane != API:
        messages = [m if m.dst != API else replace(m, dst=api_lane) for m in messages]
        marks = [m if m.lane != API else replace(m, lane=api_lane) for m in marks]
    return Diagram(lanes, messages, spans, marks, end)


def _background_rank(actor: str) -> tuple[int, str]:
    return (_BACKGROUND_ORDER.index(actor) if actor in _BACKGROUND_ORDER else len(_BACKGROUND_ORDER), actor)


def _request_info(send) -> dict[str, Any]:
    d = send.data
    return {"request": d["request"], "attempt": d["attempt"], "method": d["method"], "path": d["path"],
            "key": d["key"], "op": d["op"], "body": d.get("body")}


def _end_alive(spans: list[Span], alive_since: dict[str, float], handler: str, t: float) -> None:
    started = alive_since.pop(handler, None)
    if started is not None:
        spans.append(Span("alive", handler, started, t))
