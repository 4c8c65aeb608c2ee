"""The invariants of an idempotent ``POST /charges``, judged on both ledgers: the money and the records.

A run has two ledgers. The payment processor's **captures** are the money the customer paid; nothing undoes
them. The API's **charges** table is what the API recorded. A design can keep one charge row while the card is
captured twice (a crash between the capture and the COMMIT), so every property that speaks of "charged" is
judged on the captures as well as on the rows, and a property of its own demands that the two agree.

Each property is a plain function of one finished `Run` returning its `Violation`s (empty when it holds). They
read the run's `idemsim.tally.Tally` (facts gathered from the trace as it was recorded), its final tables and
what each client concluded; nothing here chooses a run or imports Hypothesis: the same functions judge a named
scenario, a sweep, a Hypothesis example and an exhaustive schedule.

A *logical operation* is one purchase (``POST /charges``) the client wants done once:
``Run.operations[i].logical``; the scenarios' other requests (``/balance``, ``/items``) charge nothing and are
not judged here. Its copies (the original client process and any `Duplicate` of it) and all their attempts
count together; two logical operations with the same body are still two purchases. A committed charge row or a
capture belongs to the logical operation whose request the writing handler served (a background process's:
the operation that sent its key), so the attribution works with or without keys.

The properties, each with its name in `PROPERTIES`:

- ``at-most-one-charge``: no logical operation has two charge rows;
- ``at-most-one-capture``: no logical operation has money captured twice;
- ``exactly-one-on-success``: a logical operation some copy of which ended ``ok`` has exactly one charge row
  and exactly one capture;
- ``ledger-agrees``: once all work and recovery have ended, every capture has its charge row and every row its
  capture, operation by operation (each orphan named);
- ``replay-identical``: every replayed response equals the first answer stored for its key (the answer of
  the writer whose ``complete_key`` committed first);
- ``no-stuck-key``: no key record is left ``in_progress`` once all work and recovery have ended;
- ``client-view``: the client is never wrong: ``ok`` only if its operation was charged and captured, ``fail``
  only if neither happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Violation:
    """One way a run broke a property: its message in English, and the catalogue entry (``key``, ``fields``)
    it was written from, so that a view can say it in another language (`describe_violation`)."""

    property: str
    message: str
    key: str = ""
    fields: tuple = ()

    def __str__(self) -> str:
        return f"{self.property}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"property": self.property, "message": self.message, "key": self.key, "fields": dict(self.fields)}


def _violation(prop: str, message: str, /, **fields: Any) -> Violation:
    """A violation whose message is catalogue entry ``message`` (`idemsim.i18n`) with ``fields``."""
    from .i18n import text

    return Violation(prop, text(message, "en", **_said(fields, "en")), message, tuple(fields.items()))


def _said(fields: dict[str, Any], lang: str) -> dict[str, Any]:
    """Fields ready for the catalogue: a list of charges or captures (``ids``) said in ``lang``."""
    from .i18n import text

    if isinstance(fields.get("ids"), list):
        fields = dict(fields, ids=text("list.sep", lang).join(text("viol.by_at" if "t" in c else "viol.by", lang, **c)
                                            for c in fields["ids"]))
    return fields


def describe_violation(v: dict[str, Any], lang: str = "en") -> str:
    """A violation (as in a summary) in ``lang``: ``property: message``."""
    from .i18n import text

    if lang == "en" or not v.get("key"):
        return f"{v['property']}: {v['message']}"
    return f"{text('property.' + v['property'], lang)}: {text(v['key'], lang, **_said(v['fields'], lang))}"


# -- reading the run --------------------------------------------------------------------------------------------
def committed_charges(run) -> list[dict[str, Any]]:
    """Every committed charge, in id order: ``id``, ``amount``, ``key``, ``handler``, ``request``, ``op``,
    ``logical``. Raises `AssertionError` if the trace and the ``charges`` table disagree (a simulator bug)."""
    tally = run.tally
    logical = {r.op: r.logical for r in run.operations}
    committed = []
    for w in tally.committed:
        if w.op != "insert_charge":
            continue
        op = tally.op_of(w.conn, w.key)
        committed.append({"id": w.id, "handler": w.conn, "request": tally.handler_request.get(w.conn), "op": op,
                          "logical": logical.get(op)})
    committed.sort(key=lambda c: c["id"])
    table = run.tables["charges"]
    assert len(committed) == len(table), (
        f"the trace shows {len(committed)} committed charges, the charges table {len(table)}")
    for charge, row in zip(committed, table):
        charge.update(amount=row["amount"], key=row["key"])
    return committed


def captures(run) -> list[dict[str, Any]]:
    """The processor's ledger, in capture order: ``id``, ``amount``, ``key``, ``t``, ``request``, ``caller``,
    ``op``, ``logical``."""
    tally = run.tally
    logical = {r.op: r.logical for r in run.operations}
    out = []
    for d in tally.captures:
        op = tally.op_of_request(d["request"]) if d["request"] else tally.op_of(d["caller"], d["key"])
        out.append({"id": d["capture"], "amount": d["amount"], "key": d["key"], "t": d["t"],
                    "request": d["request"], "caller": d["caller"], "op": op, "logical": logical.get(op)})
    return out


def is_charge(run, result) -> bool:
    """Whether a client operation is a ``POST /charges`` (the others serve the article's other examples)."""
    operation = run.scenario.operations[result.logical - 1]
    return operation.method == "POST" and operation.path == "/charges"


def _by_operation(run, items: list[dict]) -> dict[int, list[dict]]:
    """Items by logical operation; every charging logical operation appears, with or without items."""
    out: dict[int, list[dict]] = {r.logical: [] for r in run.operations if is_charge(run, r)}
    for item in items:
        out.setdefault(item["logical"], []).append(item)
    return out


def charges_per_operation(run) -> dict[int, list[dict]]:
    """Committed charge rows by logical operation; every charging logical operation appears."""
    return _by_operation(run, committed_charges(run))


def captures_per_operation(run) -> dict[int, list[dict]]:
    """Captures by logical operation; every charging logical operation appears."""
    return _by_operation(run, captures(run))


def _ids(charges: list[dict]) -> list[dict[str, Any]]:
    return [{"id": f"ch_{c['id']}", "who": c["request"] or c["handler"]} for c in charges]


def _capture_ids(caps: list[dict]) -> list[dict[str, Any]]:
    return [{"id": c["id"], "who": c["request"] or c["caller"], "t": c["t"]} for c in caps]


def _who(r) -> dict[str, Any]:
    return {"op": r.op, "logical": r.logical}


# -- the properties ---------------------------------------------------------------------------------------------
def at_most_one_charge(run) -> list[Violation]:
    """No logical operation has more than one charge row."""
    return [_violation("at-most-one-charge", "viol.charged", op=op, n=len(charges), ids=_ids(charges))
            for op, charges in charges_per_operation(run).items() if len(charges) > 1]


def at_most_one_capture(run) -> list[Violation]:
    """No logical operation has money captured more than once."""
    return [_violation("at-most-one-capture", "viol.captured", op=op, n=len(caps), ids=_capture_ids(caps))
            for op, caps in captures_per_operation(run).items() if len(caps) > 1]


def exactly_one_on_success(run) -> list[Violation]:
    """A logical operation that some client copy saw succeed (``ok``) has exactly one charge row and exactly
    one capture."""
    charged, captured = charges_per_operation(run), captures_per_operation(run)
    out = []
    for op in sorted({r.logical for r in run.operations if r.outcome == "ok" and is_charge(run, r)}):
        rows, caps = len(charged[op]), len(captured.get(op, []))
        if rows != 1 or caps != 1:
            out.append(_violation("exactly-one-on-success", "viol.ok_counts", op=op, rows=rows, caps=caps,
                                  s="s" if rows != 1 else "", s2="s" if caps != 1 else ""))
    return out


def ledger_agrees(run) -> list[Violation]:
    """Every capture has its charge row and every charge row its capture, operation by operation. Rows and
    captures are paired by the request that made them first, then in order; what is left over is an orphan."""
    charged, captured = charges_per_operation(run), captures_per_operation(run)
    out = []
    for op in sorted(set(charged) | set(captured)):
        rows, caps = list(charged.get(op, [])), list(captured.get(op, []))
        for row in list(rows):
            match = next((c for c in caps if c["request"] is not None and c["request"] == row["request"]), None)
            if match is not None:
                rows.remove(row)
                caps.remove(match)
        pairs = min(len(rows), len(caps))
        rows, caps = rows[pairs:], caps[pairs:]
        for c in caps:
            out.append(_violation("ledger-agrees", "viol.orphan_capture", id=c["id"], op=op,
                                  who=c["request"] or c["caller"], t=c["t"]))
        for row in rows:
            out.append(_violation("ledger-agrees", "viol.orphan_row", id=row["id"], op=op,
                                  who=row["request"] or row["handler"]))
    return out


def replay_identical(run) -> list[Violation]:
    """Every replayed response equals the first answer stored for its key (`Tally.first_stored`)."""
    tally = run.tally
    first = tally.first_stored()
    out = []
    for request, status, body in tally.replays:
        key, answer = tally.request_key.get(request), (status, body)
        if first.get(key) != answer:
            from .i18n import text

            stored = text("viol.none_stored", "en") if key not in first else \
                text("viol.first_stored", "en", status=first[key][0], body=first[key][1])
            out.append(_violation("replay-identical", "viol.replay", request=request, status=status, body=body,
                                  key=key, stored=stored))
    return out


def no_stuck_key(run) -> list[Violation]:
    """No key record is left ``in_progress`` once all work and recovery have ended."""
    return [_violation("no-stuck-key", "viol.stuck", key=row["key"])
            for row in run.tables["idempotency_keys"] if row["status"] == "in_progress"]


def client_view(run) -> list[Violation]:
    """The client is never wrong: ``ok`` only if its operation was charged and captured, ``fail`` only if it
    was neither."""
    charged, captured = charges_per_operation(run), captures_per_operation(run)
    out = []
    for r in run.operations:
        if not is_charge(run, r):
            continue
        rows, caps = len(charged[r.logical]), len(captured.get(r.logical, []))
        from .i18n import text

        who = text("viol.who_copy", "en", op=r.op, logical=r.logical) if r.logical != r.op else \
            text("viol.who", "en", op=r.op)
        if r.outcome == "ok" and rows == 0:
            out.append(_violation("client-view", "viol.ok_no_charge", who=who, status=r.status))
        elif r.outcome == "ok" and caps == 0:
            out.append(_violation("client-view", "viol.ok_no_money", who=who, status=r.status))
        if r.outcome == "fail" and rows > 0:
            out.append(_violation("client-view", "viol.fail_charged", who=who, status=r.status, n=rows))
        elif r.outcome == "fail" and caps > 0:
            out.append(_violation("client-view", "viol.fail_captured", who=who, status=r.status, n=caps))
    return out


PROPERTIES: dict[str, Callable[[Any], list[Violation]]] = {
    "at-most-one-charge": at_most_one_charge,
    "at-most-one-capture": at_most_one_capture,
    "exactly-one-on-success": exactly_one_on_success,
    "ledger-agrees": ledger_agrees,
    "replay-identical": replay_identical,
    "no-stuck-key": no_stuck_key,
    "client-view": client_view,
}
"""Every property, by name, in the order reports list them."""

PLAIN_NAMES: dict[str, str] = {
    "at-most-one-charge": "one charge row at most",
    "at-most-one-capture": "one capture at most",
    "exactly-one-on-success": "exactly one on success",
    "ledger-agrees": "ledgers agree",
    "replay-identical": "replays identical",
    "no-stuck-key": "no stuck key",
    "client-view": "client never wrong",
}
"""Each property in a few words, for the text views."""


def check(run) -> list[Violation]:
    """Every violation of every property, in `PROPERTIES` order; empty when all hold."""
    return [v for prop in PROPERTIES.values() for v in prop(run)]
