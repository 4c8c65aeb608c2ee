"""The invariants of an idempotent ``POST /charges``, judged on both ledgers: the money and the records.

A run has two ledgers. The payment processor's **captures** are the money the customer paid; nothing undoes
them. The API's **charges** table is what the API recorded. A design can keep one charge row while the card is
captured twice (a crash between the capture and the COMMIT), so every property that speaks of "charged" is
judged on the captures as well as on the rows, and a property of its own demands that the two agree.

Each property is a plain function of one finished `Run` returning its `Violation`s (empty when it holds). They
read the run's `idemsim.judge.tally.Tally` (facts gathered from the trace as it was recorded), its final tables and
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
  only if neither happened;
- ``customer-can-find-out``: an operation whose every copy ended ``info`` and whose card was captured has, at the
  end, a key record holding a final answer (one the client reads ``ok`` or ``fail``) that a retry with one of its
  keys would be given: otherwise the customer paid and has no way to learn it (the article's give-up branch);
- ``no-lost-update``: the final state (the balance, the items) is what applying each logical operation that took
  effect once, in the order of its first attempt, gives (`intended_state`): a write repeated after another
  writer's, or a difference applied twice, breaks it (the article's delta-vs-absolute).

The last two judge what the article judges beyond the ledgers: whether the customer can still learn what
happened, and whether the other examples' state is what each request meant.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from ..base.http import classify
from ..base.i18n import text
from ..scenario.schema import shapes
from .tally import CommittedCharges


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
    """A violation whose message is catalogue entry ``message`` (`idemsim.base.i18n`) with ``fields``."""

    return Violation(prop, text(message, "en", **_said(fields, "en")), message, tuple(fields.items()))


def _said(fields: dict[str, Any], lang: str) -> dict[str, Any]:
    """Fields ready for the catalogue: a list of charges or captures (``ids``) said in ``lang``."""

    if isinstance(fields.get("ids"), list):
        fields = dict(fields, ids=text("list.sep", lang).join(text("viol.by_at" if "t" in c else "viol.by", lang, **c)
                                            for c in fields["ids"]))
    return fields


def describe_violation(v: dict[str, Any], lang: str = "en") -> str:
    """A violation (as in a summary) in ``lang``: ``property: message``."""

    if lang == "en" or not v.get("key"):
        return f"{v['property']}: {v['message']}"
    return f"{text('property.' + v['property'], lang)}: {text(v['key'], lang, **_said(v['fields'], lang))}"


# -- reading the run --------------------------------------------------------------------------------------------
# The properties read compact facts (tuples), derived once per run and kept in ``run.facts`` (the properties, the
# summary and the sweep's measures share them); the public readings below give the same facts as dicts, made
# when asked.
class _Charge(NamedTuple):
    id: int
    handler: str
    request: str | None
    op: int | None
    logical: int | None


class _Capture(NamedTuple):
    id: str
    amount: Any
    key: str | None
    t: float
    request: str | None
    caller: str
    op: int | None
    logical: int | None


def _once(run, name: str, derive: Callable[[Any], Any]) -> Any:
    facts = run.facts
    if name not in facts:
        facts[name] = derive(run)
    return facts[name]


PER_ITEM_FACTS = ("charges", "captures", "charged", "captured")
"""The facts that hold an item per charge or capture (the others are a function and a small set)."""


def forget_facts(run) -> None:
    """Let the per-item facts go (a load's take as much memory as its summary); a property or a reading that
    needs them again derives them again, the same."""
    for name in PER_ITEM_FACTS:
        run.facts.pop(name, None)


def committed_charges(run) -> list[dict[str, Any]]:
    """Every committed charge, in id order: ``id``, ``amount``, ``key``, ``handler``, ``request``, ``op``,
    ``logical``. Raises `AssertionError` if the trace and the ``charges`` table disagree (a simulator bug)."""
    return [{"id": c.id, "handler": c.handler, "request": c.request, "op": c.op, "logical": c.logical,
             "amount": row["amount"], "key": row["key"]} for c, row in zip(_charges(run), run.tables["charges"])]


def _charges(run) -> list[_Charge]:
    return _once(run, "charges", _derive_charges)


def _derive_charges(run) -> list[_Charge]:
    tally = run.tally
    logical = _logical(run)
    out = []
    for w in _committed_in_id_order(run):
        op = tally.op_of(w.conn, w.key)
        out.append(_Charge(w.id, w.conn, tally.request_of(w.conn), op, logical(op)))
    return out


def _committed_in_id_order(run) -> CommittedCharges:
    """The tally's committed charges (`idemsim.judge.tally.CommittedCharges`), in id order. Raises `AssertionError` if
    they and the ``charges`` table disagree (a simulator bug)."""
    committed = run.tally.committed
    table = run.tables["charges"]
    assert len(committed) == len(table), (
        f"the trace shows {len(committed)} committed charges, the charges table {len(table)}")
    return committed


def _logical(run) -> Callable[[int | None], int | None]:
    """op -> the logical operation it performs (None for no operation of the run)."""
    def derive(run):
        results = run.operations  # client process N's is item N - 1
        count = len(results)
        # (the result's own number: the groups a load makes hold no int of their own, one or two per payment)
        return lambda op: results[op - 1].logical if op is not None and 1 <= op <= count else None

    return _once(run, "logical", derive)


def captures(run) -> list[dict[str, Any]]:
    """The processor's ledger, in capture order: ``id``, ``amount``, ``key``, ``t``, ``request``, ``caller``,
    ``op``, ``logical``."""
    return [c._asdict() for c in _captures(run)]


def _captures(run) -> list[_Capture]:
    return _once(run, "captures", _derive_captures)


def _derive_captures(run) -> list[_Capture]:
    tally = run.tally
    logical = _logical(run)
    out = []
    for c in run.ledger:
        request, caller, key = c.request, c.caller, c.key
        op = tally.op_of_request(request) if request else tally.op_of(caller, key)
        out.append(_Capture(c.id, c.amount, key, round(c.t, 6), request, caller, op, logical(op)))
    return out


def is_charge(run, result) -> bool:
    """Whether a client operation is a ``POST /charges`` (the others serve the article's other examples)."""
    return result.logical not in _not_charging(run)


def _not_charging(run) -> frozenset[int]:
    """The logical operations that are not ``POST /charges`` (few: a load's are all charges)."""

    return _once(run, "not_charging", lambda run: frozenset(
        i for i, operation in enumerate(shapes(run.scenario.operations), start=1)
        if not (operation.method == "POST" and operation.path == "/charges")))


def _grouped(run, items: Sequence, logical_of: Callable[[Any], int | None], read: Iterable | None = None
             ) -> "_Groups":
    """Items by logical operation, in order; only operations with items appear. ``logical_of`` is given each
    item, or each of what ``read`` gives (what it needs of each item, item by item, read without making it)."""
    out = _Groups(items, len(run.operations))
    held, order, sizes, more, none = out._held, out._order, out.sizes, out._more, len(out._held) - 1
    for position, item in enumerate(items if read is None else read):
        op = logical_of(item)
        i = none if op is None else op
        before = held[i]
        if not before:
            held[i] = position + 1
            order.append(op)
            sizes[i] = 1
        else:
            if before > 0:
                held[i] = -1
                more[op] = [before - 1, position]
            else:
                more[op].append(position)
            sizes[i] = 2
    return out


class _Groups:
    """Items by logical operation (1 to ``count``, or None): a read-only mapping of each operation with items to
    its items (a tuple), in the order of their first items, as a dict built item by item would be.

    A load groups an item or two per payment, nearly all alone: each operation's item is kept as its position in
    the sequence grouped (a machine integer in an array; the positions of an operation with several in a dict),
    and read from it when asked. The groups then hold no object per item, and items that are made when read
    (the committed charges, `idemsim.judge.tally.CommittedCharges`) are made only for the few operations a property
    reports: 17 bytes an operation (with its `sizes` byte) instead of about 100 for a dict entry and a tuple."""

    __slots__ = ("_items", "_held", "_more", "_order", "sizes", "_several")

    def __init__(self, items: Sequence, count: int) -> None:
        self._items = items
        self._held = array("q", (0,)) * (count + 2)
        """Per operation (its number; None's at the end), 0 for no item, its item's position + 1, or -1 for
        several (their positions are in `_more`)."""
        self._more: dict[int | None, list[int]] = {}
        """The positions of the items of each operation with more than one."""
        self._order: list[int | None] = []
        """The operations with items, in the order of their first items."""
        self.sizes = bytearray(count + 2)
        """Per operation number, 0, 1 or 2: no item, one, or more than one (what a property reads of every
        operation, without a call for each)."""
        self._several: dict[int | None, tuple] | None = None
        """`several`, once asked (the groups are complete before any property reads them)."""

    def _positions(self, op: int | None) -> tuple | list:
        """The positions of ``op``'s items."""
        held = self._held
        i = len(held) - 1 if op is None else op if 0 < op < len(held) - 1 else None
        at = 0 if i is None else held[i]
        return () if at == 0 else (at - 1,) if at > 0 else self._more[op]

    def get(self, op: int | None, default: tuple = ()) -> tuple:
        positions = self._positions(op)
        items = self._items
        return tuple(items[p] for p in positions) if positions else default

    def count(self, op: int | None) -> int:
        """How many items ``op`` has."""
        return len(self._positions(op))

    def several(self) -> dict[int | None, tuple]:
        """The operations with more than one item (few: the others are not looked at again), with their items,
        in order (found once: four properties ask)."""
        if self._several is None:
            more = self._more  # (an operation's first item's position orders it as `_order` does)
            self._several = {op: self.get(op) for op in sorted(more, key=lambda op: more[op][0])}
        return self._several

    def missing_from(self, other: "_Groups") -> list[int | None]:
        """The operations with items here and none in ``other``, in order."""
        sizes = other.sizes
        return [op for op in self._order if not sizes[-1 if op is None else op]]

    def __getitem__(self, op: int | None) -> tuple:
        return self.get(op)

    def __iter__(self):
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def items(self):
        return ((op, self.get(op)) for op in self._order)


# The properties group the run's own records, not the tuples of `_charges` and `_captures` (the public readings):
# a load's facts are then its groups alone. A charge is the tally's `CommittedCharge`, made when read (its handler
# ``conn``, its request `Tally.request_of`), a capture the ledger's `idemsim.model.processor.Capture` (its ``t``
# unrounded).
def _charged(run) -> "_Groups":
    return _once(run, "charged", _derive_charged)


def _derive_charged(run) -> "_Groups":
    tally = run.tally
    logical = _logical(run)
    committed = _committed_in_id_order(run)
    return _grouped(run, committed, lambda conn_key: logical(tally.op_of(*conn_key)),
                    zip(committed.conns, committed.keys))


def _captured(run) -> "_Groups":
    return _once(run, "captured", _derive_captured)


def _derive_captured(run) -> "_Groups":
    tally = run.tally
    logical = _logical(run)
    return _grouped(run, run.ledger, lambda c: logical(tally.op_of_request(c.request) if c.request
                                                  else tally.op_of(c.caller, c.key)))


def _every_charging_operation(run, items: list[dict]) -> dict[int, list[dict]]:
    """Every charging logical operation with its items (dicts), in order; an empty list for one without."""
    not_charging = _not_charging(run)
    out: dict[int, list[dict]] = {r.logical: [] for r in run.operations if r.logical not in not_charging}
    for item in items:
        out.setdefault(item["logical"], []).append(item)
    return out


def charges_per_operation(run) -> dict[int, list[dict]]:
    """Committed charge rows by logical operation; every charging logical operation appears."""
    return _every_charging_operation(run, committed_charges(run))


def captures_per_operation(run) -> dict[int, list[dict]]:
    """Captures by logical operation; every charging logical operation appears."""
    return _every_charging_operation(run, captures(run))


def charged_operations(run) -> set[int]:
    """The logical operations with at least one committed charge row."""
    return set(_charged(run))


def _ids(run, charges: list) -> list[dict[str, Any]]:
    request_of = run.tally.request_of
    return [{"id": f"ch_{c.id}", "who": request_of(c.conn) or c.conn} for c in charges]


def _capture_ids(caps: list) -> list[dict[str, Any]]:
    return [{"id": c.id, "who": c.request or c.caller, "t": round(c.t, 6)} for c in caps]


def _who(r) -> dict[str, Any]:
    return {"op": r.op, "logical": r.logical}


def _in_report_order(run, grouped: dict[int | None, tuple]) -> list[tuple[int | None, tuple]]:
    """The operations with items, charging ones first in ascending order (as the run's operations number them),
    then any other, in the order their first item came."""
    not_charging = _not_charging(run)
    charging = sorted(op for op in grouped if op is not None and op not in not_charging)
    others = [op for op in grouped if op is None or op in not_charging]
    return [(op, grouped[op]) for op in charging + others]


# -- the properties ---------------------------------------------------------------------------------------------
def at_most_one_charge(run) -> list[Violation]:
    """No logical operation has more than one charge row."""
    return [_violation("at-most-one-charge", "viol.charged", op=op, n=len(charges), ids=_ids(run, charges))
            for op, charges in _in_report_order(run, _charged(run).several())]


def at_most_one_capture(run) -> list[Violation]:
    """No logical operation has money captured more than once."""
    return [_violation("at-most-one-capture", "viol.captured", op=op, n=len(caps), ids=_capture_ids(caps))
            for op, caps in _in_report_order(run, _captured(run).several())]


def exactly_one_on_success(run) -> list[Violation]:
    """A logical operation that some client copy saw succeed (``ok``) has exactly one charge row and exactly
    one capture."""
    charged, captured = _charged(run), _captured(run)
    out = []
    not_charging = _not_charging(run)
    rows_of, caps_of = charged.sizes, captured.sizes
    for op in sorted({r.logical for r in run.operations if r.outcome == "ok" and r.logical not in not_charging
                      and (rows_of[r.logical] != 1 or caps_of[r.logical] != 1)}):
        rows, caps = charged.count(op), captured.count(op)
        out.append(_violation("exactly-one-on-success", "viol.ok_counts", op=op, rows=rows, caps=caps,
                              s="s" if rows != 1 else "", s2="s" if caps != 1 else ""))
    return out


def ledger_agrees(run) -> list[Violation]:
    """Every capture has its charge row and every charge row its capture, operation by operation. Rows and
    captures are paired by the request that made them first, then in order; what is left over is an orphan."""
    charged, captured = _charged(run), _captured(run)
    out = []
    # none, or one of each: they pair (by request, else in order), nothing is left over; the others are
    # the operations with several of either, or with one of one and none of the other
    unpaired = {*charged.several(), *captured.several(), *charged.missing_from(captured),
                *captured.missing_from(charged)}
    for op in sorted(unpaired):
        rows, caps = charged.get(op, ()), captured.get(op, ())
        rows, caps = list(rows), list(caps)
        for row in list(rows):
            request = run.tally.request_of(row.conn)
            match = next((c for c in caps if c.request is not None and c.request == request), None)
            if match is not None:
                rows.remove(row)
                caps.remove(match)
        pairs = min(len(rows), len(caps))
        rows, caps = rows[pairs:], caps[pairs:]
        for c in caps:
            out.append(_violation("ledger-agrees", "viol.orphan_capture", id=c.id, op=op,
                                  who=c.request or c.caller, t=round(c.t, 6)))
        for row in rows:
            out.append(_violation("ledger-agrees", "viol.orphan_row", id=row.id, op=op,
                                  who=run.tally.request_of(row.conn) or row.conn))
    return out


def replay_identical(run) -> list[Violation]:
    """Every replayed response equals the first answer stored for its key (`Tally.first_stored`)."""
    tally = run.tally
    first = tally.first_stored()
    out = []
    for request, status, body, key in tally.replays:
        answer = (status, body)
        if first.get(key) != answer:

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
    charged, captured = _charged(run), _captured(run)
    out = []
    not_charging = _not_charging(run)
    rows_of, caps_of = charged.sizes, captured.sizes
    for r in run.operations:
        if r.logical in not_charging or r.outcome not in ("ok", "fail"):
            continue
        if (rows_of[r.logical] and caps_of[r.logical]) if r.outcome == "ok" else \
                not (rows_of[r.logical] or caps_of[r.logical]):
            continue
        rows, caps = charged.count(r.logical), captured.count(r.logical)

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


def customer_can_find_out(run) -> list[Violation]:
    """An operation whose every copy ended ``info`` and whose card was captured has, at the end, a key record
    holding a final answer (a stored response the client reads ``ok`` or ``fail``) under one of the keys its
    attempts carried: the answer a retry with that key would be given. Otherwise the customer paid and cannot
    find out (the give-up branch of the article's flowchart; no key at all, or a key left in progress, deleted
    or holding an answer that says nothing, is the same)."""
    captured = _captured(run)
    caps_of = captured.sizes
    not_charging = _not_charging(run)
    unknowing: dict[int, list] = {}
    knowing: set[int] = set()
    for r in run.operations:
        logical = r.logical
        if logical in not_charging or not caps_of[logical]:
            continue
        if r.outcome != "info":
            knowing.add(logical)
        else:
            unknowing.setdefault(logical, []).append(r)
    out = []
    answering = None
    for op in sorted(unknowing.keys() - knowing):
        if answering is None:
            answering = _keys_with_a_final_answer(run)
        if any(key in answering for r in unknowing[op] for key in r.keys if key is not None):
            continue
        out.append(_violation("customer-can-find-out", "viol.cannot_find_out", op=op,
                              ids=_capture_ids(captured.get(op))))
    return out


def _keys_with_a_final_answer(run) -> set[str]:
    """The keys whose committed record is ``done`` with a stored response the client would read as ``ok`` or
    ``fail`` (`idemsim.base.http.classify`): what a retry with the key is answered, once and for all."""
    return {row["key"] for row in run.tables["idempotency_keys"]
            if row.get("status") == "done" and isinstance(row.get("response"), dict)
            and classify(row["response"].get("status"), "POST") != "info"}


def no_lost_update(run) -> list[Violation]:
    """The final balance and items are what applying each logical operation that took effect once, in the order
    of its first attempt, gives (`intended_state`): a difference applied twice, or a copy of an old write landing
    after another writer's, breaks it."""
    if not _not_charging(run):
        return []  # only charges: no state of the article's other examples to judge
    intended = intended_state(run)
    out = []
    if run.state["balance"] != intended["balance"]:
        out.append(_violation("no-lost-update", "viol.state_balance", got=run.state["balance"],
                              expected=intended["balance"]))
    if run.state["items"] != intended["items"]:
        out.append(_violation("no-lost-update", "viol.state_items", got=run.state["items"],
                              expected=intended["items"]))
    return out


def intended_state(run) -> dict[str, Any]:
    """The state (``balance``, ``items``) that each logical operation that took effect gives, applied once, in the
    order of its first attempt (its earliest copy's start; ties by number), from the API's starting state.

    An operation took effect when one of its requests was served by a handler that did not die
    (`Tally.died`): the client's ``info`` or ``fail`` for an operation that never reached the API takes nothing
    away, as a linearizability checker would read it. Each method's intended effect is RFC 9110's, on the
    routes of `idemsim.model.api.Api`: ``PUT /balance`` sets it, ``POST /balance/decrement`` subtracts,
    ``PUT /items/ID`` sets the item, ``DELETE /items/ID`` removes it; the others change nothing."""
    config = run.scenario.api
    state = {"balance": config.balance, "items": dict(config.items)}
    not_charging = _not_charging(run)
    if not not_charging:
        return state
    first: dict[int, tuple[float, int]] = {}
    for r in run.operations:
        if r.logical in not_charging:
            started = (r.started if r.started is not None else math.inf, r.op)
            if r.logical not in first or started < first[r.logical]:
                first[r.logical] = started
    tally, logical = run.tally, _logical(run)
    died = set(tally.died)
    took_effect = {logical(tally.op_of_request(request)) for request in tally.handler_requests
                   if request is not None and request not in died}
    operations = run.scenario.operations
    for op in sorted(first, key=first.__getitem__):
        if op in took_effect:
            _apply(operations[op - 1], state)
    return state


def _apply(operation, state: dict[str, Any]) -> None:
    """One operation's intended effect on ``state`` (as `idemsim.model.api.Api` serves it, once)."""
    method, path, body = operation.method, operation.path, operation.body or {}
    if path == "/balance" and method == "PUT":
        state["balance"] = body["value"]
    elif path == "/balance/decrement" and method == "POST":
        state["balance"] -= body["amount"]
    elif (item := re.fullmatch(r"/items/([^/]+)", path)) is not None:
        if method == "PUT":
            state["items"][item[1]] = body
        elif method == "DELETE":
            state["items"].pop(item[1], None)


PROPERTIES: dict[str, Callable[[Any], list[Violation]]] = {
    "at-most-one-charge": at_most_one_charge,
    "at-most-one-capture": at_most_one_capture,
    "exactly-one-on-success": exactly_one_on_success,
    "ledger-agrees": ledger_agrees,
    "replay-identical": replay_identical,
    "no-stuck-key": no_stuck_key,
    "client-view": client_view,
    "customer-can-find-out": customer_can_find_out,
    "no-lost-update": no_lost_update,
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
    "customer-can-find-out": "customer can find out",
    "no-lost-update": "state as if each write ran once",
}
"""Each property in a few words, for the text views."""


def check(run) -> list[Violation]:
    """Every violation of every property, in `PROPERTIES` order; empty when all hold."""
    return [v for prop in PROPERTIES.values() for v in prop(run)]
