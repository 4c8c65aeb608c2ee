"""The invariants of an idempotent ``POST /charges``, as plain functions of one finished `Run`.

Each property reads the run's trace and final tables and returns the list of its `Violation`s (empty when it
holds). Nothing here chooses a run or imports Hypothesis: the same functions judge a named scenario, a random
sweep, a Hypothesis example and an exhaustive schedule.

A *logical operation* is one purchase (``POST /charges``) the client wants done once: ``Run.operations[i].logical``;
the scenarios' other requests (``/balance``, ``/items``) charge nothing and are not judged here. Its copies
(the original client process and any `Duplicate` of it) and all their attempts count together; two logical
operations with the same body are still two purchases. A committed charge is attributed to the logical
operation whose request the inserting handler served, read from the trace (``request.arrive`` names the
handler; the handler's own statements say whether its transaction committed) and cross-checked against the
``charges`` table, so the attribution works with or without keys.

The properties, each with its name in `PROPERTIES`:

- ``at-most-one-charge``: no logical operation is charged twice;
- ``exactly-one-on-success``: a logical operation some copy of which ended ``ok`` is charged exactly once;
- ``replay-identical``: every replayed response equals the first answer stored for its key (the answer of
  the handler whose ``complete_key`` committed first);
- ``no-stuck-key``: no key record is left ``in_progress`` once all work and recovery have ended;
- ``client-view``: the client is never wrong: ``ok`` only if the charge exists, ``fail`` only if it does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Violation:
    """One way a run broke a property."""

    property: str
    message: str

    def __str__(self) -> str:
        return f"{self.property}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"property": self.property, "message": self.message}


# -- reading the run --------------------------------------------------------------------------------------------
def _request_op(request_id: str) -> int:
    return int(request_id.split(".", 1)[0])


def committed_writes(run) -> list:
    """The ``insert_charge`` and ``complete_key`` results of the API's handlers whose effect committed, in
    commit order. Read from each handler connection's own statements: in autocommit a statement without
    error commits at once; inside ``begin`` it commits with the block's error-free ``commit``, and a block
    in which any statement failed, a ``rollback`` or a ``disconnect`` (a crash) discards it."""
    in_block: dict[str, bool] = {}
    failed: dict[str, bool] = {}
    pending: dict[str, list] = {}
    committed: list = []
    for e in run.trace.of_kind("db.result"):
        conn, d = e.actor, e.data
        op, error = d["op"], d["error"]
        if op == "begin":
            if error is None and not in_block.get(conn):
                in_block[conn], failed[conn], pending[conn] = True, False, []
        elif op in ("commit", "rollback", "disconnect"):
            if in_block.get(conn) and op == "commit" and error is None and not failed[conn]:
                committed.extend(pending[conn])
            in_block[conn], pending[conn] = False, []
        elif error is not None:
            if in_block.get(conn):
                failed[conn] = True
        elif op in ("insert_charge", "complete_key"):
            if in_block.get(conn):
                pending[conn].append(e)
            else:
                committed.append(e)
    return committed


def committed_charges(run) -> list[dict[str, Any]]:
    """Every committed charge, in id order: ``id``, ``amount``, ``key``, ``handler``, ``request``, ``op``,
    ``logical``. Raises `AssertionError` if the trace and the ``charges`` table disagree (a simulator bug)."""
    handler_request = {e.data["handler"]: e.data["request"] for e in run.trace.of_kind("request.arrive")}
    logical = {r.op: r.logical for r in run.operations}
    committed = []
    for e in committed_writes(run):
        if e.data["op"] != "insert_charge":
            continue
        request = handler_request.get(e.actor)
        op = _request_op(request) if request else None
        committed.append({"id": e.data["id"], "handler": e.actor, "request": request, "op": op,
                          "logical": logical.get(op)})
    committed.sort(key=lambda c: c["id"])
    table = run.tables["charges"]
    assert len(committed) == len(table), (
        f"the trace shows {len(committed)} committed charges, the charges table {len(table)}")
    for charge, row in zip(committed, table):
        charge.update(amount=row["amount"], key=row["key"])
    return committed


def stored_answers(run) -> dict[str, tuple]:
    """The first answer stored for each key: what the handler whose ``complete_key`` committed first (and
    changed a row) sent, as ``(status, body)``."""
    handler_request = {e.data["handler"]: e.data["request"] for e in run.trace.of_kind("request.arrive")}
    keys = {e.data["request"]: e.data["key"] for e in run.trace.of_kind("attempt.send")}
    sent = {e.actor: (e.data["status"], e.data["body"]) for e in run.trace.of_kind("response.send", "response.dropped")
            if not e.data["replay"]}
    first: dict[str, tuple] = {}
    for e in committed_writes(run):
        if e.data["op"] == "complete_key" and e.data["rows"] and e.actor in sent:
            first.setdefault(keys.get(handler_request.get(e.actor)), sent[e.actor])
    return first


def is_charge(run, result) -> bool:
    """Whether a client operation is a ``POST /charges`` (the others serve the article's other examples)."""
    operation = run.scenario.operations[result.logical - 1]
    return operation.method == "POST" and operation.path == "/charges"


def charges_per_operation(run) -> dict[int, list[dict]]:
    """Committed charges by logical operation; every charging logical operation appears, charged or not."""
    out: dict[int, list[dict]] = {r.logical: [] for r in run.operations if is_charge(run, r)}
    for charge in committed_charges(run):
        out.setdefault(charge["logical"], []).append(charge)
    return out


def _ids(charges: list[dict]) -> str:
    return ", ".join(f"ch_{c['id']} by {c['request']}" for c in charges)


# -- the properties ---------------------------------------------------------------------------------------------
def at_most_one_charge(run) -> list[Violation]:
    """No logical operation is charged more than once."""
    return [Violation("at-most-one-charge", f"operation {op} was charged {len(charges)} times ({_ids(charges)})")
            for op, charges in charges_per_operation(run).items() if len(charges) > 1]


def exactly_one_on_success(run) -> list[Violation]:
    """A logical operation that some client copy saw succeed (``ok``) is charged exactly once."""
    charged = charges_per_operation(run)
    out = []
    for op in sorted({r.logical for r in run.operations if r.outcome == "ok" and is_charge(run, r)}):
        if len(charged[op]) != 1:
            out.append(Violation("exactly-one-on-success", f"operation {op} ended ok but was charged "
                                                           f"{len(charged[op])} times"))
    return out


def replay_identical(run) -> list[Violation]:
    """Every replayed response equals the first answer stored for its key (`stored_answers`)."""
    keys = {e.data["request"]: e.data["key"] for e in run.trace.of_kind("attempt.send")}
    first = stored_answers(run)
    out = []
    for e in run.trace.of_kind("response.send", "response.dropped"):
        if not e.data["replay"]:
            continue
        key, answer = keys.get(e.data["request"]), (e.data["status"], e.data["body"])
        if first.get(key) != answer:
            stored = "none was stored" if key not in first else f"the first stored was {first[key][0]} {first[key][1]}"
            out.append(Violation("replay-identical", f"{e.data['request']} got a replayed {answer[0]} {answer[1]} "
                                                     f"for key {key}; {stored}"))
    return out


def no_stuck_key(run) -> list[Violation]:
    """No key record is left ``in_progress`` once all work and recovery have ended."""
    return [Violation("no-stuck-key", f"key {row['key']} is left in_progress")
            for row in run.tables["idempotency_keys"] if row["status"] == "in_progress"]


def client_view(run) -> list[Violation]:
    """The client is never wrong: ``ok`` only if its operation's charge exists, ``fail`` only if it does not."""
    charged = charges_per_operation(run)
    out = []
    for r in run.operations:
        if not is_charge(run, r):
            continue
        n = len(charged[r.logical])
        who = f"operation {r.op}" + (f" (a copy of {r.logical})" if r.logical != r.op else "")
        if r.outcome == "ok" and n == 0:
            out.append(Violation("client-view", f"{who} ended ok ({r.status}) but no charge exists"))
        if r.outcome == "fail" and n > 0:
            out.append(Violation("client-view", f"{who} ended fail ({r.status}) but was charged {n} times"))
    return out


PROPERTIES: dict[str, Callable[[Any], list[Violation]]] = {
    "at-most-one-charge": at_most_one_charge,
    "exactly-one-on-success": exactly_one_on_success,
    "replay-identical": replay_identical,
    "no-stuck-key": no_stuck_key,
    "client-view": client_view,
}
"""Every property, by name, in the order reports list them."""


def check(run) -> list[Violation]:
    """Every violation of every property, in `PROPERTIES` order; empty when all hold."""
    return [v for prop in PROPERTIES.values() for v in prop(run)]
