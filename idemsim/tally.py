"""The tally: what the checks of a run need, gathered from its events as they happen.

A `Tally` observes every event of a run once, in trace order (the simulation feeds it as events are recorded;
`Tally.of` replays a stored trace into a fresh one), and keeps only the facts the summary and the properties
read: which handler served which request, which writes of the API's connections committed, what each handler
answered, what was replayed, what the payment processor captured, the longest wait on the index. Nothing here
re-scans the trace, so a run may keep no trace at all and still be judged the same way.

Guarantees: the tally depends only on the events' order and contents, so a tally fed live and one replayed
from the stored trace are equal; connections of background processes (``reaper``, ``recovery``,
``completer``) count as the API's own, since their writes change the same ledgers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CommittedWrite:
    """An ``insert_charge`` or ``complete_key`` whose transaction committed."""

    op: str
    conn: str
    """The connection (handler ``api#N`` or a background process) that wrote it."""
    id: int | None
    rows: int | None
    key: str | None


@dataclass
class Tally:
    """Facts about one run, in the order they happened."""

    handler_request: dict[str, str] = field(default_factory=dict)
    """Handler name -> the request id it serves."""
    request_key: dict[str, str | None] = field(default_factory=dict)
    """Request id -> the idempotency key it carried."""
    key_op: dict[str, int] = field(default_factory=dict)
    """Key -> the client process (op number) that first sent it."""
    committed: list[CommittedWrite] = field(default_factory=list)
    """Committed charge inserts and key completions, in commit order."""
    sent: dict[tuple[str, str | None], tuple[int, Any]] = field(default_factory=dict)
    """(handler, key) -> the answer it made itself (not a replay), as (status, body); the completer's too."""
    replays: list[tuple[str, int, Any]] = field(default_factory=list)
    """Every replayed answer: (request id, status, body)."""
    captures: list[dict[str, Any]] = field(default_factory=list)
    """The processor's ledger, as its ``processor.capture`` events' data, in capture order."""
    longest_wait: float = 0.0
    """The longest time a statement of the API's handlers spent blocked."""
    arrivals: int = 0
    """Requests that reached a live API (each got a handler)."""
    pool_waits: list[float] = field(default_factory=list)
    """How long each request that had to queue for a database connection waited."""
    waiting_peak: int = 0
    """The most handlers blocked on the database at once, each holding its connection."""
    attempts: list[tuple[float, str]] = field(default_factory=list)
    """Every attempt: when it was sent, and how it ended (ok, fail, info)."""
    _waiting: set = field(default_factory=set)
    _sent: dict = field(default_factory=dict)
    _blocks: dict[str, list] = field(default_factory=dict)
    """Per connection with an open ``begin`` block: [failed, pending writes]."""
    _keys_of: dict[str, str | None] = field(default_factory=dict)
    """Per connection: the key of its last ``complete_key`` or ``insert_charge`` (from the statement)."""

    @classmethod
    def of(cls, events) -> "Tally":
        """A tally of a stored trace."""
        tally = cls()
        for event in events:
            tally.observe(event)
        return tally

    def observe(self, e) -> None:
        """Take one event into account."""
        kind, d = e.kind, e.data
        if kind == "db.result":
            self._db_result(e.actor, d)
        elif kind == "db.wait":
            if e.actor.startswith("api#"):
                self._waiting.add(e.actor)
                self.waiting_peak = max(self.waiting_peak, len(self._waiting))
        elif kind == "request.arrive":
            self.handler_request[d["handler"]] = d["request"]
            self.arrivals += 1
        elif kind == "pool.acquire":
            self.pool_waits.append(d["waited"])
        elif kind == "attempt.send":
            self.request_key[d["request"]] = d["key"]
            self._sent[d["request"]] = e.t
            if d["key"] is not None:
                self.key_op.setdefault(d["key"], d["op"])
        elif kind == "attempt.end":
            self.attempts.append((self._sent.pop(f"{d['op']}.{d['attempt']}", e.t), d["outcome"]))
        elif kind in ("response.send", "response.dropped"):
            if d["replay"]:
                self.replays.append((d["request"], d["status"], d["body"]))
            else:
                key = self.request_key.get(d["request"])
                self.sent[(e.actor, key)] = (d["status"], d["body"])
        elif kind == "completer.finish":
            self.sent[(e.actor, d["key"])] = (d["status"], d["body"])
        elif kind == "processor.capture":
            self.captures.append({**d, "t": round(e.t, 6)})

    def _db_result(self, conn: str, d: dict) -> None:
        op, error = d["op"], d["error"]
        self._waiting.discard(conn)
        if conn.startswith("api#") and d.get("waited"):
            self.longest_wait = max(self.longest_wait, d["waited"])
        block = self._blocks.get(conn)
        if op == "begin":
            if error is None and block is None:
                self._blocks[conn] = [False, []]
        elif op in ("commit", "rollback", "disconnect"):
            if block is not None and op == "commit" and error is None and not block[0]:
                self.committed.extend(block[1])
            self._blocks.pop(conn, None)
        elif error is not None:
            if block is not None:
                block[0] = True
        elif op in ("insert_charge", "complete_key"):
            write = CommittedWrite(op, conn, d["id"], d["rows"], d["fields"].get("key"))
            if block is not None:
                block[1].append(write)
            else:
                self.committed.append(write)

    # -- derived facts -------------------------------------------------------------------------------------
    def attempts_per_second(self, window: float = 1.0) -> dict:
        """Attempts sent in each window of ``window`` seconds from t=0, in all and by how each ended."""
        length = int(max((t for t, _ in self.attempts), default=-window) // window) + 1
        series = {"window": window, "counts": [0] * length,
                  "by_outcome": {"ok": [0] * length, "fail": [0] * length, "info": [0] * length}}
        for t, outcome in self.attempts:
            i = int(t // window)
            series["counts"][i] += 1
            series["by_outcome"][outcome][i] += 1
        return series

    def op_of_request(self, request: str | None) -> int | None:
        return int(request.split(".", 1)[0]) if request else None

    def op_of(self, conn: str, key: str | None) -> int | None:
        """The client process a write or capture is for: its handler's request, else its key's first sender."""
        request = self.handler_request.get(conn)
        if request is not None:
            return self.op_of_request(request)
        return self.key_op.get(key) if key is not None else None

    def first_stored(self) -> dict[str | None, tuple[int, Any]]:
        """The first answer stored for each key: what the writer of the first committed, row-changing
        ``complete_key`` answered itself."""
        first: dict[str | None, tuple[int, Any]] = {}
        for w in self.committed:
            if w.op != "complete_key" or not w.rows:
                continue
            key = w.key if w.key is not None else self.request_key.get(self.handler_request.get(w.conn, ""))
            answer = self.sent.get((w.conn, key))
            if answer is not None:
                first.setdefault(key, answer)
        return first
