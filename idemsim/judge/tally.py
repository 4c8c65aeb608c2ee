"""The tally: what the checks of a run need, gathered from its events as they happen.

A `Tally` takes every event of a run once, in trace order, and keeps only the facts the summary and the
properties read: which handler served which request (and which died before it answered), which writes of the
API's connections committed, what each handler answered, what was replayed, the longest wait on the index, the
attempts per second (what the payment processor captured is the run's own ledger,
`idemsim.runners.simulation.Run.ledger`, not kept twice). Nothing
here re-scans the trace, so a run may keep no trace at all and still be judged the same way: with a trace, the
simulation gives it each recorded `idemsim.model.trace.Event` (`observe`); without one, it gives it the same facts
directly, with no event made at all: the commonest events' (`arrived`, `attempt_sent`, `attempt_ended`,
`responded`, each a function of what its event says, which is what taking the event calls), each statement's
(`result`), and the others' (`takes`). `Tally.of` replays a stored trace into a fresh tally.

Guarantees: the tally depends only on the events' order and contents, so a tally fed live, one fed without a
trace and one replayed from the stored trace are equal; connections of background processes (``reaper``,
``recovery``, ``completer``) count as the API's own, since their writes change the same ledgers.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple

WINDOW = 1.0
"""Seconds of one window of `Tally.attempts_per_second`."""


@dataclass(slots=True)
class CommittedCharge:
    """An ``insert_charge`` whose transaction committed (or, while its block is open, pending in `Tally._blocks`):
    what the properties read of it. Once committed it is kept as its parts (`CommittedCharges`), and made again
    when read."""

    conn: str
    """The connection (handler ``api#N`` or a background process) that wrote it."""
    id: int
    key: str | None


class CommittedCharges:
    """The committed charges of a run, in id order (the order of the ``charges`` table): a sequence of
    `CommittedCharge`, each made as it is read.

    A load commits a charge a payment and the properties read them once, at the end; so each is kept as its
    parts, not as an object: its writer's name and its key (strings the run holds anyway) in two lists, its id
    as a machine integer in an array. 24 bytes a charge, where an object, its id and its list slot took 104."""

    __slots__ = ("conns", "ids", "keys")

    def __init__(self) -> None:
        self.conns: list[str] = []
        self.ids = array("q")
        self.keys: list[str | None] = []

    def add(self, conn: str, id: int, key: str | None) -> None:
        """Charge ``id``, written by ``conn`` for ``key``, committed: put in its place by id (at the end, or
        rarely a few places before it, where transactions committed out of the order their inserts ran)."""
        ids = self.ids
        if not ids or ids[-1] < id:
            ids.append(id)
            self.conns.append(conn)
            self.keys.append(key)
        else:
            i = bisect_right(ids, id)
            ids.insert(i, id)
            self.conns.insert(i, conn)
            self.keys.insert(i, key)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> CommittedCharge:
        return CommittedCharge(self.conns[i], self.ids[i], self.keys[i])

    def __iter__(self) -> Iterator[CommittedCharge]:
        return map(CommittedCharge, self.conns, self.ids, self.keys)

    def __eq__(self, other: object) -> bool:
        return type(other) is CommittedCharges and (self.ids, self.conns, self.keys) == (other.ids, other.conns,
                                                                                       other.keys)

    def __repr__(self) -> str:
        return f"CommittedCharges({list(self)!r})"


class _Ended(NamedTuple):
    """What a ``db.result`` event says of a statement's `idemsim.model.db.engine.Result` (what `Tally.result` reads)."""

    rows: int | None
    error: str | None
    id: int | None
    waited: float


@dataclass
class Tally:
    """Facts about one run, in the order they happened."""

    handler_requests: list[str | None] = field(default_factory=list)
    """The request id each handler serves: handler ``api#N``'s is item N - 1 (`idemsim.model.api.Api.receive` numbers
    the handlers from 1 in arrival order). A list, not a dict by name: a load has one or more per payment."""
    handler_keys: list[str | None] = field(default_factory=list)
    """The idempotency key of each handler's request, likewise."""
    op_keys: list = field(default_factory=list)
    """The key each client process (op N: item N - 1) sent with its first attempt (`_UNSENT` before it)."""
    request_key: dict[str, str | None] = field(default_factory=dict)
    """Request id -> the idempotency key it carried, for a request whose key is not its process's first
    (`op_keys`; a new key per attempt): with one key per operation, a load keeps no entry here."""
    key_op: dict[str, int] = field(default_factory=dict)
    """Key -> the client process (op number) that first sent it."""
    committed: CommittedCharges = field(default_factory=CommittedCharges)
    """Committed charge inserts, in id order."""
    stored: dict[str | None, tuple[str, int, Any]] = field(default_factory=dict)
    """Key -> the first answer stored for it, once known (`first_stored`): (its writer, status, body)."""
    completers: dict[str | None, list[str]] = field(default_factory=dict)
    """Key -> the writers of its committed, row-changing ``complete_key``, in commit order, while none of them
    has answered in a way that settles its `stored` answer."""
    sent: dict[tuple[str, str | None], tuple[int, Any]] = field(default_factory=dict)
    """(handler, key) -> the answer it made itself (not a replay), as (status, body), the completer's too; kept
    only while the key's first stored answer is not settled (once it is, no other answer can change it)."""
    replays: list[tuple[str, int, Any, str | None]] = field(default_factory=list)
    """Every replayed answer: (request id, status, body, the request's key)."""
    longest_wait: float = 0.0
    """The longest time a statement of the API's handlers spent blocked."""
    arrivals: int = 0
    """Requests that reached a live API (each got a handler)."""
    pool_waits: list[float] = field(default_factory=list)
    """How long each request that had to queue for a database connection waited."""
    waiting_peak: int = 0
    """The most handlers blocked on the database at once, each holding its connection."""
    attempt_counts: dict[str, list[int]] = field(default_factory=lambda: {"ok": [], "fail": [], "info": []})
    """Per outcome, the attempts sent in each `WINDOW` from t=0 that ended so."""
    balance_changed: bool = False
    """Whether any request changed the balance (``state.change`` of ``balance``)."""
    died: list[str] = field(default_factory=list)
    """The requests whose handler died before it answered (``api.died``: a crash's, rare), in order: with
    `handler_requests`, which operations the API served (`idemsim.judge.properties.intended_state`)."""
    _waiting: set = field(default_factory=set)
    _sent: dict = field(default_factory=dict)
    _blocks: dict[str, list] = field(default_factory=dict)
    """Per connection with an open ``begin`` block: [failed, its writes that count once it commits], each write
    a `CommittedCharge` (an ``insert_charge``) or the key of a row-changing ``complete_key``."""

    @classmethod
    def of(cls, events) -> "Tally":
        """A tally of a stored trace."""
        tally = cls()
        for event in events:
            tally.observe(event)
        return tally

    def observe(self, e) -> None:
        """Take one recorded event into account."""
        take = _TAKES.get(e.kind)
        if take is not None:
            take(self, e.t, e.actor, e.data)

    def takes(self) -> dict:
        """Event kind -> the function ``(t, actor, data)`` that takes such an event into account; kinds not here
        change nothing (a simulation without a trace records only these)."""
        return {kind: take.__get__(self) for kind, take in _TAKES.items()}

    # -- one kind of event each ----------------------------------------------------------------------------
    def _db_result_event(self, t: float, conn: str, d: dict) -> None:
        self.result(conn, d["op"], d["fields"], _Ended(d["rows"], d["error"], d["id"], d["waited"]))

    def _db_wait(self, t: float, conn: str, d: dict) -> None:
        if conn.startswith("api#"):
            self._waiting.add(conn)
            if len(self._waiting) > self.waiting_peak:
                self.waiting_peak = len(self._waiting)

    def _arrive(self, t: float, actor: str, d: dict) -> None:
        request = d["request"]
        self.arrived(request, _handler_index(d["handler"]), self.key_of_request(request))

    def arrived(self, request: str, i: int | None, key: str | None) -> None:
        """Request ``request``, carrying ``key``, reached the API and is served by handler ``i`` (its index
        in `handler_requests`; None for no handler)."""
        if i is not None:
            requests = self.handler_requests
            if i >= len(requests):
                grow = [None] * (i + 1 - len(requests))
                requests.extend(grow)
                self.handler_keys.extend(grow)
            requests[i] = request
            self.handler_keys[i] = key
        self.arrivals += 1

    def _pool_acquire(self, t: float, actor: str, d: dict) -> None:
        self.pool_waits.append(d["waited"])

    def _attempt_send(self, t: float, actor: str, d: dict) -> None:
        self._sent[d["request"]] = t
        self.attempt_sent(d["op"], d["request"], d["key"])

    def attempt_sent(self, op: int, request: str, key: str | None) -> None:
        """Operation ``op`` sent request ``request`` with ``key``."""
        op_keys = self.op_keys
        if op > len(op_keys):
            op_keys.extend([_UNSENT] * (op - len(op_keys)))
        first = op_keys[op - 1]
        if first is _UNSENT:
            op_keys[op - 1] = key
        elif key != first:
            self.request_key[request] = key
        if key is not None and key not in self.key_op:
            self.key_op[key] = op

    def _attempt_end(self, t: float, actor: str, d: dict) -> None:
        self.attempt_ended(self._sent.pop(f"{d['op']}.{d['attempt']}", t), d["outcome"])

    def attempt_ended(self, sent: float, outcome: str) -> None:
        """An attempt sent at ``sent`` ended with ``outcome``."""
        i = int(sent // WINDOW)
        counts = self.attempt_counts
        if i >= len(counts["ok"]):
            grow = [0] * (i + 1 - len(counts["ok"]))
            for series in counts.values():
                series.extend(grow)
        counts[outcome][i] += 1

    def _response(self, t: float, handler: str, d: dict) -> None:
        self.responded(handler, d["request"], self.key_of(handler), d["status"], d["body"], d["replay"])

    def responded(self, handler: str, request: str, key: str | None, status: int, body: Any, replay: bool) -> None:
        """Handler ``handler`` answered request ``request`` (for ``key``), or replayed an answer."""
        if replay:
            self.replays.append((request, status, body, key))
        else:
            self._answered(handler, key, status, body)

    def _completer_finish(self, t: float, actor: str, d: dict) -> None:
        self._answered(actor, d["key"], d["status"], d["body"])

    def _died(self, t: float, actor: str, d: dict) -> None:
        self.died.append(d["request"])

    def _state_change(self, t: float, actor: str, d: dict) -> None:
        if d["resource"] == "balance":
            self.balance_changed = True

    def result(self, conn: str, op: str, fields: dict | None, result) -> None:
        """A statement of ``conn`` ended with ``result`` (an `idemsim.model.db.engine.Result`, or what a ``db.result``
        event says of it): the database calls this directly in a run without a trace, which has no event."""
        if self._waiting:
            self._waiting.discard(conn)
        waited = result.waited
        if waited and conn.startswith("api#"):
            waited = round(waited, 6)  # (as the trace shows it)
            if waited > self.longest_wait:
                self.longest_wait = waited
        error = result.error
        block = self._blocks.get(conn)
        if op == "begin":
            if error is None and block is None:
                self._blocks[conn] = [False, []]
        elif op in ("commit", "rollback", "disconnect"):
            if block is not None:
                if op == "commit" and error is None and not block[0]:
                    for write in block[1]:
                        if type(write) is CommittedCharge:
                            self.committed.add(write.conn, write.id, write.key)
                        else:
                            self._completed(conn, write)
                del self._blocks[conn]
        elif error is not None:
            if block is not None:
                block[0] = True
        elif op == "insert_charge":
            if block is not None:
                block[1].append(CommittedCharge(conn, result.id, fields.get("key")))
            else:
                self.committed.add(conn, result.id, fields.get("key"))
        elif op == "complete_key" and result.rows:
            if block is not None:
                block[1].append(fields.get("key"))
            else:
                self._completed(conn, fields.get("key"))

    def _completed(self, conn: str, key: str | None) -> None:
        """A row-changing ``complete_key`` of ``conn`` committed: its writer's answer may be the key's first
        stored one."""
        if key is None:
            key = self.key_of(conn)
        if key not in self.stored:
            self.completers.setdefault(key, []).append(conn)
            self._settle(key)

    def _answered(self, handler: str, key: str | None, status: int, body: Any) -> None:
        """``handler`` answered a request for ``key`` itself (not a replay)."""
        stored = self.stored.get(key)
        if stored is not None:  # settled: only its writer's answering again changes it (its last answer counts)
            if stored[0] == handler:
                self.stored[key] = (handler, status, body)
            return
        self.sent[(handler, key)] = (status, body)
        if key in self.completers:
            self._settle(key)

    def _settle(self, key: str | None) -> None:
        """Once the first committed writer of ``key``'s completion has answered, that answer is its first
        stored one for good: the answers kept for it are let go."""
        writers = self.completers[key]
        answer = self.sent.get((writers[0], key))
        if answer is not None:
            self.stored[key] = (writers[0], *answer)
            del self.completers[key]
            for writer in writers:
                self.sent.pop((writer, key), None)

    # -- derived facts -------------------------------------------------------------------------------------
    def attempts_per_second(self) -> dict:
        """Attempts sent in each window of `WINDOW` seconds from t=0, in all and by how each ended."""
        by = self.attempt_counts
        return {"window": WINDOW, "counts": [a + b + c for a, b, c in zip(by["ok"], by["fail"], by["info"])],
                "by_outcome": {outcome: list(series) for outcome, series in by.items()}}

    def op_of_request(self, request: str | None) -> int | None:
        return int(request.split(".", 1)[0]) if request else None

    def key_of_request(self, request: str) -> str | None:
        """The idempotency key request ``request`` (``op.attempt``) carried; None if it was never sent."""
        key = self.request_key.get(request, _UNSENT)
        if key is _UNSENT:
            op = self.op_of_request(request)
            key = self.op_keys[op - 1] if op is not None and 1 <= op <= len(self.op_keys) else None
            if key is _UNSENT:
                key = None
        return key

    def request_of(self, conn: str) -> str | None:
        """The request a handler serves; None for a background process."""
        i = _handler_index(conn)
        return self.handler_requests[i] if i is not None and i < len(self.handler_requests) else None

    def key_of(self, conn: str) -> str | None:
        """The idempotency key of the request a handler serves; None for a background process."""
        i = _handler_index(conn)
        return self.handler_keys[i] if i is not None and i < len(self.handler_keys) else None

    def op_of(self, conn: str, key: str | None) -> int | None:
        """The client process a write or capture is for: its handler's request, else its key's first sender."""
        request = self.request_of(conn)
        if request is not None:
            return self.op_of_request(request)
        return self.key_op.get(key) if key is not None else None

    def first_stored(self) -> dict[str | None, tuple[int, Any]]:
        """The first answer stored for each key: what the writer of the first committed, row-changing
        ``complete_key`` answered itself."""
        first: dict[str | None, tuple[int, Any]] = {key: (status, body)
                                                    for key, (_, status, body) in self.stored.items()}
        for key, writers in self.completers.items():  # not settled: the first writer never answered
            for writer in writers:
                answer = self.sent.get((writer, key))
                if answer is not None:
                    first[key] = answer
                    break
        return first


_UNSENT = object()
"""In `Tally.op_keys`: the process has sent nothing yet."""


def _handler_index(name: str) -> int | None:
    """Handler ``api#N``'s index in `Tally.handler_requests` (N - 1); None for any other connection or actor."""
    if name.startswith("api#"):
        number = name[4:]
        if number.isdigit() and number[0] != "0":
            return int(number) - 1
    return None


_TAKES = {
    "db.result": Tally._db_result_event,
    "db.wait": Tally._db_wait,
    "request.arrive": Tally._arrive,
    "pool.acquire": Tally._pool_acquire,
    "attempt.send": Tally._attempt_send,
    "attempt.end": Tally._attempt_end,
    "response.send": Tally._response,
    "response.dropped": Tally._response,
    "completer.finish": Tally._completer_finish,
    "state.change": Tally._state_change,
    "api.died": Tally._died,
}
"""Event kind -> the `Tally` method that takes it into account (a table of the class, so that a tally holds no
reference to itself and is freed as soon as its run is)."""
