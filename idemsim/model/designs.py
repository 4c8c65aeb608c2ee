"""The API designs for ``POST /charges``: how a handler uses the idempotency key and the database.

Each design is a handler: a generator that runs on a `Handler` (its connection, options and crash points)
and returns the `Response`. Every database statement goes through the DB model (`idemsim.model.db.engine`), whose
waits and results follow PostgreSQL's, so a duplicate under ``same-tx`` really blocks on the unique index.

=====================  ===================================================================================
``naive``              no key: every request that arrives records a charge.
``check-then-insert``  look for the key, insert it if absent, in one transaction, without a unique
                       constraint: two concurrent first attempts both see "absent".
``same-tx``            the article's: register the key (``INSERT … ON CONFLICT DO NOTHING``), charge,
                       store the response, all in one transaction; a duplicate waits on the index, then
                       replays the stored response.
``committed-first``    commit the key as ``in_progress`` first, charge in a second transaction; a duplicate
                       that finds ``in_progress`` gets ``409`` at once; with a lease, an ``in_progress``
                       record older than the lease is returned to absent.
``split-tx``           key and charge in separate transactions with no status; a retry that finds the key
                       answers as if done (200), or replays the response if one was stored. ``order``:
                       ``key-first`` or ``charge-first``.
=====================  ===================================================================================

Options (`idemsim.model.api.ApiConfig`) apply to every keyed design alike: a request without a key gets 400 or is
processed as ``naive`` (``missing_key``); a key found with another body's fingerprint gets 422
(``fingerprint_check``); a payment-processor failure answers 500 and is either stored and replayed
(``replay_errors``) or undone, so that a retry starts afresh (the transaction rolls back; a key committed
before it is deleted). A database error the handler cannot resolve (40001, 55P03, 40P01) answers 503, which the
client reads as ``info``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ..base.errors import InputError
from ..base.http import Response, fingerprint

RETRYABLE_DB_ERRORS = {"40001": "serialization failure", "40P01": "deadlock detected",
                       "55P03": "lock timeout", "23505": "unique violation", "25P02": "transaction aborted"}


def _charged(result, amount) -> Response:
    return Response(201, _Charge(f"ch_{result.id}", amount, "succeeded").__dict__)


class _Charge:
    """The body of a 201 as the attribute dict of an instance: ``{"id": …, "amount": …, "status": …}``, a plain
    dict whose keys CPython keeps in one table shared by every instance (a split table); a load keeps one per
    payment (its stored response)."""

    def __init__(self, id: str, amount, status: str) -> None:
        self.id = id
        self.amount = amount
        self.status = status


def _db_error(error: str) -> Response:
    """A database error the handler cannot resolve: 503, which the client reads as ``info``."""
    return Response(503, {"error": RETRYABLE_DB_ERRORS.get(error, "database error"), "sqlstate": error})


def _processor_failed() -> Response:
    return Response(500, {"error": "payment processor failed"})


def _processor_unknown() -> Response:
    """The processor did not say (no answer in time, or its key in use): the money may have moved."""
    return Response(503, {"error": "payment processor outcome unknown"})


def _pay(h, amount, key):
    """Ask the processor to capture ``amount`` (with the key ``api.processor_key`` says); a handler that got
    its answer reaches the crash point ``after_processor``, where money has moved and nothing else has."""
    paid = yield from h.capture(amount, key=h.processor_key(key))
    if paid.outcome == "captured":
        h.point("after_processor")
    return paid


def _missing_key(h):
    """The request carries no key: reject it (400), or process it without protection."""
    if h.config.missing_key == "reject":
        return Response(400, {"error": "Idempotency-Key header is required"})
    return (yield from naive(h))


def _keyed(design):
    """A keyed design: a request without a key follows the missing-key policy; the design itself gets the
    key, the body's fingerprint and the amount."""

    @functools.wraps(design)
    def handler(h):  # (not a generator itself: it hands over the design's, one layer less for every request)
        key = h.request.key
        if key is None:
            return _missing_key(h)
        body = h.request.body or {}
        return design(h, key, h.fingerprint, body.get("amount", 0))

    return handler


def _answer_from_record(h, key: str, fp: str, *, end_tx: bool):
    """The key exists: answer from its record (replay, 409 while in progress, 422 for another body)."""
    found = yield from h.sql("select_key", key=key)
    if end_tx:
        yield from h.sql("commit")
    if found.error:
        return _db_error(found.error)
    return _answer_from_row(h, found.row, fp)


def _answer_from_row(h, row, fp: str) -> Response:
    """The answer a record gives: its stored response, 409 while in progress, 422 for another body."""
    if row is None:
        return Response(409, {"error": "the key's record changed meanwhile; retry"})
    if h.config.fingerprint_check and row["fingerprint"] != fp:
        return Response(422, {"error": "Idempotency-Key reused with a different request body"})
    if row["status"] != "done" or row["response"] is None:
        return Response(409, {"error": "a request with this Idempotency-Key is in progress"})
    return Response.from_stored(row["response"])


def _charge_and_store(h, key: str, amount: int, *, key_committed: bool = False):
    """Inside an open transaction: call the processor, record the charge, store the answer, commit.

    A declined call is stored and replayed (``replay_errors``), or the key is released so that a retry
    starts afresh: the transaction rolls back and, where the key was committed before it, the key is deleted.
    A call whose outcome is unknown (no answer in time, key in use) always releases the key and answers 503:
    the handler cannot know whether the money moved.
    """
    paid = yield from _pay(h, amount, key)
    if not paid.known or (paid.outcome == "declined" and not h.config.replay_errors):
        yield from h.sql("rollback")
        if key_committed:
            yield from h.sql("delete_key", key=key)
        return _processor_failed() if paid.known else _processor_unknown()
    if paid.outcome == "declined":
        response = _processor_failed()
        yield from h.sql("complete_key", key=key, response=response.stored())
        yield from h.sql("commit")
        return response
    charge = yield from h.sql("insert_charge", amount=amount, key=key)
    if charge.error:
        yield from h.sql("rollback")
        return _db_error(charge.error)
    h.point("after_charge")
    response = _charged(charge, amount)
    h.point("before_response_stored")
    stored = yield from h.sql("complete_key", key=key, response=response.stored())
    if stored.error:
        yield from h.sql("rollback")
        return _db_error(stored.error)
    h.point("before_commit")
    done = yield from h.sql("commit")
    if done.error:
        return _db_error(done.error)
    return response


def naive(h):
    """Capture and record a charge for every request that arrives."""
    amount = (h.request.body or {}).get("amount", 0)
    paid = yield from _pay(h, amount, h.request.key)
    if not paid.known:
        return _processor_unknown()
    if paid.outcome == "declined":
        return _processor_failed()
    charge = yield from h.sql("insert_charge", amount=amount, key=h.request.key)
    h.point("after_charge")
    return _charged(charge, amount)


@_keyed
def same_tx(h, key: str, fp: str, amount: int):
    """Key, charge and stored response in one transaction; a duplicate waits on the unique index."""
    yield from h.sql("begin", isolation=h.config.isolation)
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if registered.error:
        yield from h.sql("rollback")
        return _db_error(registered.error)
    if registered.rows == 0:
        return (yield from _answer_from_record(h, key, fp, end_tx=True))
    h.point("after_key")
    return (yield from _charge_and_store(h, key, amount))


@_keyed
def check_then_insert(h, key: str, fp: str, amount: int):
    """Look for the key and insert it if absent, in one transaction; no ON CONFLICT."""
    yield from h.sql("begin", isolation=h.config.isolation)
    found = yield from h.sql("select_key", key=key)
    if found.error:
        yield from h.sql("rollback")
        return _db_error(found.error)
    if found.row is not None:
        yield from h.sql("rollback")
        return _answer_from_row(h, found.row, fp)
    inserted = yield from h.sql("insert_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if inserted.error == "23505":
        # The unique constraint caught the race: the other copy committed first.
        yield from h.sql("rollback")
        return (yield from _answer_from_record(h, key, fp, end_tx=False))
    if inserted.error:
        yield from h.sql("rollback")
        return _db_error(inserted.error)
    h.point("after_key")
    return (yield from _charge_and_store(h, key, amount))


@_keyed
def committed_first(h, key: str, fp: str, amount: int):
    """Commit the key as in_progress, then charge in a second transaction; duplicates get 409."""
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if registered.error:
        return _db_error(registered.error)
    if registered.rows == 0:
        answer = yield from _answer_from_record(h, key, fp, end_tx=False)
        if answer.status != 409 or h.config.lease is None:
            return answer
        # Lease recovery: an in_progress record older than the lease is taken over.
        released = yield from h.sql("delete_key", key=key, status="in_progress",
                                    created_before=h.env.now - h.config.lease)
        if released.rows != 1:
            return answer
        registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
        if registered.rows != 1:
            return (yield from _answer_from_record(h, key, fp, end_tx=False))
    h.point("after_key")
    yield from h.sql("begin", isolation=h.config.isolation)
    return (yield from _charge_and_store(h, key, amount, key_committed=True))


def _split_tx_found(h, row, fp: str) -> Response:
    """split-tx found the key: replay what is stored, or, with no status to tell, answer as if done."""
    if h.config.fingerprint_check and row["fingerprint"] != fp:
        return Response(422, {"error": "Idempotency-Key reused with a different request body"})
    if row["response"] is not None:
        return Response.from_stored(row["response"])
    return Response(200, {"status": "already processed"})


@_keyed
def split_tx(h, key: str, fp: str, amount: int):
    """Key and charge in separate transactions, no status: whatever finds the key answers as if done."""
    if h.config.order == "key-first":
        registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
        if registered.error:
            return _db_error(registered.error)
        if registered.rows == 0:
            found = yield from h.sql("select_key", key=key)
            if found.row is None:
                return Response(409, {"error": "the key's record changed meanwhile; retry"})
            return _split_tx_found(h, found.row, fp)
        h.point("after_key")
        paid = yield from _pay(h, amount, key)
        if not paid.known or (paid.outcome == "declined" and not h.config.replay_errors):
            yield from h.sql("delete_key", key=key)
            return _processor_failed() if paid.known else _processor_unknown()
        if paid.outcome == "declined":
            response = _processor_failed()
            yield from h.sql("complete_key", key=key, response=response.stored())
            return response
        charge = yield from h.sql("insert_charge", amount=amount, key=key)
        h.point("after_charge")
        response = _charged(charge, amount)
        h.point("before_response_stored")
        yield from h.sql("complete_key", key=key, response=response.stored())
        return response
    # charge-first: look for the key, charge, then record the key with the answer in a second transaction.
    found = yield from h.sql("select_key", key=key)
    if found.row is not None:
        return _split_tx_found(h, found.row, fp)
    paid = yield from _pay(h, amount, key)
    if not paid.known:
        return _processor_unknown()
    if paid.outcome == "declined":
        return _processor_failed()
    charge = yield from h.sql("insert_charge", amount=amount, key=key)
    h.point("after_charge")
    response = _charged(charge, amount)
    h.point("before_response_stored")
    yield from h.sql("begin", isolation=h.config.isolation)
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if registered.rows == 1:
        yield from h.sql("complete_key", key=key, response=response.stored())
    h.point("before_commit")
    done = yield from h.sql("commit")
    if registered.error or done.error:
        return _db_error(registered.error or done.error)
    return response


# -- recovery-points: Stripe-style atomic phases ----------------------------------------------------------------
RECOVERY_LEASE = 10.0
"""recovery-points' lease when ``api.lease`` is unset: how long a claim on a key holds before another may take
the key over (longer than the longest handler, processor timeout included)."""
COMPLETER_EVERY = 1.0
"""How often recovery-points' completer looks for abandoned keys when ``api.completer_every`` is unset."""


def recovery_lease(config) -> float:
    return config.lease if config.lease is not None else RECOVERY_LEASE


def completer_period(config) -> float | None:
    """The completer's period under ``config``, or None when it is off."""
    every = config.completer_every
    return None if every == "off" else (COMPLETER_EVERY if every is None else every)


@_keyed
def recovery_points(h, key: str, fp: str, amount: int):
    """Atomic phases with recovery points: register and claim the key, note the intent to pay, pay with the
    key as the processor's key, then record the charge and the answer; a retry or the completer resumes an
    abandoned key from its recovery point instead of starting over."""
    lease = recovery_lease(h.config)
    yield from h.sql("begin", isolation=h.config.isolation)
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if registered.rows == 1:
        claimed = yield from h.sql("claim_key", key=key, lease=lease)
        done = yield from h.sql("commit")
        if claimed.error or done.error:
            return _db_error(claimed.error or done.error)
        point = "started"
    else:
        yield from h.sql("rollback")
        if registered.error:
            return _db_error(registered.error)
        found = yield from h.sql("select_key", key=key)
        if found.error:
            return _db_error(found.error)
        if found.row is None or found.row["status"] == "done" or (
                h.config.fingerprint_check and found.row["fingerprint"] != fp):
            return _answer_from_row(h, found.row, fp)
        claimed = yield from h.sql("claim_key", key=key, lease=lease)
        if claimed.error:
            return _db_error(claimed.error)
        if claimed.rows == 0:
            return Response(409, {"error": "a request with this Idempotency-Key is in progress"})
        point = claimed.row["recovery_point"]
    h.point("after_key")
    return (yield from _resume(h, key, amount, point))


def _resume(h, key: str, amount: int, point: str):
    """Go on from ``point`` while holding the key's claim: a fresh request from ``started``, a retry that took
    over an abandoned key from wherever it was left."""
    if point == "started":
        noted = yield from h.sql("set_point", key=key, point="payment_requested")
        if noted.error or noted.rows == 0:  # the claim was lost: someone else has the key now
            return _db_error(noted.error) if noted.error else Response(409, {"error": "the key's record changed "
                                                                                      "meanwhile; retry"})
    paid = yield from h.capture(amount, key=key)  # the request's key, always: a resumed call captures nothing new
    if paid.outcome == "captured":
        h.point("after_processor")
    if not paid.known:
        yield from h.sql("set_point", key=key, point="payment_requested", release=True)
        return _processor_unknown()
    if paid.outcome == "declined" and not h.config.replay_errors:
        yield from h.sql("delete_key", key=key)
        return _processor_failed()
    return (yield from _finish(h, key, amount, paid))


def _finish(w, key: str, amount, paid):
    """The last phase, in one transaction: lock the key row, and unless someone finished it meanwhile, record
    the charge (or the declined answer), store the answer, mark the key finished and release it."""
    yield from w.sql("begin", isolation=w.config.isolation)
    guard = yield from w.sql("lock_key", key=key)
    if guard.error or guard.row is None or guard.row["recovery_point"] == "finished":
        yield from w.sql("rollback")
        if guard.error:
            return _db_error(guard.error)
        found = yield from w.sql("select_key", key=key)  # finished meanwhile by another: its answer
        if found.row is not None and found.row["status"] == "done" and found.row["response"] is not None:
            return Response.from_stored(found.row["response"])
        return Response(409, {"error": "the key's record changed meanwhile; retry"})
    if paid.outcome == "declined":
        response = _processor_failed()
    else:
        charge = yield from w.sql("insert_charge", amount=amount, key=key)
        if charge.error:
            yield from w.sql("rollback")
            return _db_error(charge.error)
        w.point("after_charge")
        response = _charged(charge, amount)
    w.point("before_response_stored")
    yield from w.sql("complete_key", key=key, response=response.stored())
    yield from w.sql("set_point", key=key, point="finished", release=True)
    w.point("before_commit")
    done = yield from w.sql("commit")
    if done.error:
        return _db_error(done.error)
    return response


def complete_abandoned(w, key: str):
    """The completer's work on one key that looks abandoned (in progress, its claim older than the lease).

    It claims the key; a key at ``started`` never reached the processor, so it is released (deleted: a retry
    starts afresh); at ``payment_requested`` it asks the processor what became of the key: a capture is
    finished (the charge recorded, the answer stored), anything else released. The key table keeps no request
    body, so the completer can finish a payment the processor took but never start one. Returns the answer it
    stored, or None.
    """
    claimed = yield from w.sql("claim_key", key=key, lease=recovery_lease(w.config))
    if claimed.error or not claimed.rows:
        return None
    if claimed.row["recovery_point"] == "finished":
        yield from w.sql("set_point", key=key, point="finished", release=True)
        return None
    if claimed.row["recovery_point"] == "payment_requested":
        paid = yield from w.lookup(key)
        if paid.outcome == "captured":
            response = yield from _finish(w, key, paid.amount, paid)
            if response.status < 500:
                w.finished(key, response)
            return response
        if not paid.known:
            yield from w.sql("set_point", key=key, point="payment_requested", release=True)
            return None
    released = yield from w.sql("delete_key", key=key, status="in_progress")
    if released.rows:
        w.released(key, claimed.row["recovery_point"])
    return None


@dataclass(frozen=True)
class Design:
    """A design: its name, its handler for ``POST /charges``, and what else the simulation needs of it.

    ``handler(h)`` is a generator function run on a `idemsim.model.api.Handler` that returns the `Response`;
    ``keyed`` designs get the missing-key policy for a request without a key; ``points`` are the crash points
    it declares (``crash`` faults may name them); ``completer(w, key)``, if any, is run by a background
    process on every key ``abandoned(row, now, config)`` says was left behind (see `register_design`).
    """

    name: str
    handler: Callable
    summary: str
    keyed: bool = True
    points: tuple[str, ...] = ()
    completer: Callable | None = None
    abandoned: Callable | None = None
    custom: bool = False
    """True for a design registered by a user: its misbehaviour is reported as bad input, not a bug."""


def _recovery_abandoned(row: dict, now: float, config) -> bool:
    """recovery-points: a key is abandoned when in progress and its claim is older than the lease."""
    return row["status"] == "in_progress" and (row.get("locked_at") is None
                                               or row["locked_at"] < now - recovery_lease(config))


def _older_than_the_lease(row: dict, now: float, config) -> bool:
    """A custom design's default: a key in progress for longer than the lease (10 s unless ``api.lease``)."""
    return row["status"] == "in_progress" and row["created_at"] < now - recovery_lease(config)


SHIPPED_POINTS = ("after_key", "after_processor", "after_charge", "before_response_stored", "before_commit")

DESIGNS: dict[str, Design] = {d.name: d for d in (
    Design("naive", naive, "no key, no duplicate detection", keyed=False,
           points=("after_processor", "after_charge")),
    Design("check-then-insert", check_then_insert, "look for the key, insert if absent, no unique constraint",
           points=SHIPPED_POINTS),
    Design("same-tx", same_tx, "unique key + charge + stored response in one transaction (the article's)",
           points=SHIPPED_POINTS),
    Design("committed-first", committed_first, "key committed as in_progress first; duplicates get 409",
           points=SHIPPED_POINTS),
    Design("split-tx", split_tx, "key and charge in separate transactions, no status", points=SHIPPED_POINTS),
    Design("recovery-points", recovery_points, "atomic phases with recovery points, the processor's own key "
                                               "and a completer (Stripe's)", points=SHIPPED_POINTS,
           completer=complete_abandoned, abandoned=_recovery_abandoned),
)}
"""Every design by name: the six shipped ones, then any registered with `register_design` or named by file."""

SHIPPED = tuple(DESIGNS)


def register_design(name: str, handler: Callable, *, summary: str = "", keyed: bool = True,
                    points: tuple[str, ...] = SHIPPED_POINTS, completer: Callable | None = None,
                    abandoned: Callable | None = None) -> Design:
    """Make ``handler`` a design named ``name``, for `idemsim.simulate`, ``--design`` and ``[expect.NAME]``.

    ``handler(h)`` receives the `idemsim.model.api.Handler` of one ``POST /charges`` and returns its
    `idemsim.base.http.Response`; it may ``yield from h.sql(statement, **fields)`` (the statements of
    ``docs/designs.md``), ``yield from h.capture(amount, key)`` (the payment processor), ``h.point(name)`` at the
    crash points it declares in ``points``, and read ``h.request``, ``h.key``, ``h.fingerprint``, ``h.amount``
    and ``h.config``. A ``completer(w, key)`` generator, if given, is run every ``api.completer_every`` seconds
    (1 s) on each key ``abandoned(row, now, config)`` says was left (default: in progress for longer than the
    lease, 10 s unless ``api.lease``); ``w`` offers ``w.sql``, ``w.lookup(key)`` (what the processor did with
    the key) and ``w.finished(key, response)`` / ``w.released(key, point)`` for the trace. Registering a
    shipped design's name is refused; registering a name again replaces it.
    """
    if name in SHIPPED:
        raise InputError("err.design.shipped_name", name=repr(name))
    if not callable(handler):
        raise InputError("err.design.not_function", name=repr(name), type=type(handler).__name__)
    design = Design(name, handler, summary or (handler.__doc__ or "").strip().split("\n")[0] or name, keyed,
                    tuple(points), completer, abandoned or (_older_than_the_lease if completer else None),
                    custom=True)
    DESIGNS[name] = design
    return design


def resolve_design(name: str) -> str:
    """The registered name of ``name``: a known design, or ``path/to/file.py:function``, which is imported
    (once) and registered under that very text, so that it reproduces. Anything else is an `InputError`."""
    if name in DESIGNS:
        return name
    path, sep, function = name.rpartition(":")
    if not sep or not path.endswith(".py") or not function:
        raise InputError("err.design.unknown", name=repr(name), designs=", ".join(DESIGNS))
    import importlib.util
    from pathlib import Path

    source = Path(path)
    if not source.is_file():
        raise InputError("err.design.no_file", name=name, path=repr(path))
    module_name = f"idemsim_design_{abs(hash(str(source.resolve()))):x}"
    spec = importlib.util.spec_from_file_location(module_name, source)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file: report it, never a traceback from inside idemsim
        raise InputError("err.design.import", name=name, path=path, error_type=type(error).__name__,
                         error=str(error)) from None
    handler = getattr(module, function, None)
    if handler is None or not callable(handler):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module_name)
        raise InputError("err.design.no_function", name=name, path=path, function=repr(function),
                         names=", ".join(names))
    register_design(name, handler, summary=getattr(handler, "summary", ""), keyed=getattr(handler, "keyed", True),
                    points=tuple(getattr(handler, "points", SHIPPED_POINTS)),
                    completer=getattr(handler, "completer", None), abandoned=getattr(handler, "abandoned", None))
    return name


def design(*, summary: str = "", keyed: bool = True, points: tuple[str, ...] = SHIPPED_POINTS,
           completer: Callable | None = None, abandoned: Callable | None = None) -> Callable:
    """A decorator that tells ``--design file.py:function`` how to register the function it names."""

    def mark(handler: Callable) -> Callable:
        handler.summary, handler.keyed, handler.points = summary, keyed, tuple(points)
        handler.completer, handler.abandoned = completer, abandoned
        return handler

    return mark


def known_points() -> set[str]:
    """Every crash point some design declares."""
    return {p for d in DESIGNS.values() for p in d.points}
