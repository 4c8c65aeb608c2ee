"""The API designs for ``POST /charges``: how a handler uses the idempotency key and the database.

Each design is a handler: a generator that runs on a `Handler` (its connection, options and crash points)
and returns the `Response`. Every database statement goes through the DB model (`idemsim.db.engine`), whose
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

Options (`idemsim.api.ApiConfig`) apply to every keyed design alike: a request without a key gets 400 or is
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

from .http import Response, fingerprint

RETRYABLE_DB_ERRORS = {"40001": "serialization failure", "40P01": "deadlock detected",
                       "55P03": "lock timeout", "23505": "unique violation", "25P02": "transaction aborted"}


def _charged(result, amount) -> Response:
    return Response(201, {"id": f"ch_{result.id}", "amount": amount, "status": "succeeded"})


def _db_error(error: str) -> Response:
    """A database error the handler cannot resolve: 503, which the client reads as ``info``."""
    return Response(503, {"error": RETRYABLE_DB_ERRORS.get(error, "database error"), "sqlstate": error})


def _processor_failed() -> Response:
    return Response(500, {"error": "payment processor failed"})


def _missing_key(h):
    """The request carries no key: reject it (400), or process it without protection."""
    if h.config.missing_key == "reject":
        return Response(400, {"error": "Idempotency-Key header is required"})
    return (yield from naive(h))


def _keyed(design):
    """A keyed design: a request without a key follows the missing-key policy; the design itself gets the
    key, the body's fingerprint and the amount."""

    @functools.wraps(design)
    def handler(h):
        key = h.request.key
        if key is None:
            return (yield from _missing_key(h))
        body = h.request.body or {}
        return (yield from design(h, key, fingerprint(h.request.body), body.get("amount", 0)))

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

    A processor error is stored and replayed (``replay_errors``), or the key is released so that a retry
    starts afresh: the transaction rolls back and, where the key was committed before it, the key is deleted.
    """
    yield from h.work(h.config.charge_seconds)
    if h.processor_fails():
        response = _processor_failed()
        if h.config.replay_errors:
            yield from h.sql("complete_key", key=key, response=response.stored())
            yield from h.sql("commit")
        else:
            yield from h.sql("rollback")
            if key_committed:
                yield from h.sql("delete_key", key=key)
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
    """Record a charge for every request that arrives."""
    amount = (h.request.body or {}).get("amount", 0)
    yield from h.work(h.config.charge_seconds)
    if h.processor_fails():
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
        yield from h.work(h.config.charge_seconds)
        if h.processor_fails():
            response = _processor_failed()
            if h.config.replay_errors:
                yield from h.sql("complete_key", key=key, response=response.stored())
            else:
                yield from h.sql("delete_key", key=key)
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
    yield from h.work(h.config.charge_seconds)
    if h.processor_fails():
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


@dataclass(frozen=True)
class Design:
    """A design: its name, its handler for ``POST /charges``, and whether it uses the key at all."""

    name: str
    handler: Callable
    summary: str
    keyed: bool = True


DESIGNS: dict[str, Design] = {d.name: d for d in (
    Design("naive", naive, "no key, no duplicate detection", keyed=False),
    Design("check-then-insert", check_then_insert, "look for the key, insert if absent, no unique constraint"),
    Design("same-tx", same_tx, "unique key + charge + stored response in one transaction (the article's)"),
    Design("committed-first", committed_first, "key committed as in_progress first; duplicates get 409"),
    Design("split-tx", split_tx, "key and charge in separate transactions, no status"),
)}
