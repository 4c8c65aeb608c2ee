"""The steps the shipped handlers share: the answers they give, the call to the processor, the answer from a
key's record, and the charge-and-store that ends a keyed design's transaction.

Every step runs on a `idemsim.model.api.Handler` ``h`` and goes through ``h.sql`` (the DB model) and
``h.capture`` (the processor); none keeps state of its own. Options (`idemsim.model.api.ApiConfig`) apply to
every design alike: a key found with another body's fingerprint gets 422 (``fingerprint_check``); a
payment-processor failure answers 500 and is either stored and replayed (``replay_errors``) or undone, so that a
retry starts afresh (the transaction rolls back; a key committed before it is deleted). A call the processor
refuses because its key was first used with other parameters (``refused``, Stripe's ``idempotency_error``) is
undone the same way, records no charge and answers 422 with that reason, which the client reads as ``fail``. A
database error the handler cannot resolve (40001, 55P03, 40P01) answers 503, which the client reads as ``info``.
"""

from __future__ import annotations

from ...base.http import Response

RETRYABLE_DB_ERRORS = {"40001": "serialization failure", "40P01": "deadlock detected",
                       "55P03": "lock timeout", "23505": "unique violation", "25P02": "transaction aborted"}


def charged(result, amount) -> Response:
    """The 201 of a recorded charge."""
    return Response(201, Charge(f"ch_{result.id}", amount, "succeeded").__dict__)


class Charge:
    """The body of a 201 as the attribute dict of an instance: ``{"id": …, "amount": …, "status": …}``, a plain
    dict whose keys CPython keeps in one table shared by every instance (a split table); a load keeps one per
    payment (its stored response)."""

    def __init__(self, id: str, amount, status: str) -> None:
        self.id = id
        self.amount = amount
        self.status = status


def db_error(error: str) -> Response:
    """A database error the handler cannot resolve: 503, which the client reads as ``info``."""
    return Response(503, {"error": RETRYABLE_DB_ERRORS.get(error, "database error"), "sqlstate": error})


def processor_failed() -> Response:
    return Response(500, {"error": "payment processor failed"})


def processor_refused() -> Response:
    """The processor refused the call (its key was first used with other parameters): nothing was captured; 422."""
    return Response(422, {"error": "idempotency_error: the processor refused a reused key with other parameters"})


def processor_unknown() -> Response:
    """The processor did not say (no answer in time, or its key in use): the money may have moved."""
    return Response(503, {"error": "payment processor outcome unknown"})


def pay(h, amount, key):
    """Ask the processor to capture ``amount`` (with the key ``api.processor_key`` says); a handler that got
    its answer reaches the crash point ``after_processor``, where money has moved and nothing else has."""
    paid = yield from h.capture(amount, key=h.processor_key(key))
    if paid.outcome == "captured":
        h.point("after_processor")
    return paid


def answer_from_record(h, key: str, fp: str, *, end_tx: bool):
    """The key exists: answer from its record (replay, 409 while in progress, 422 for another body)."""
    found = yield from h.sql("select_key", key=key)
    if end_tx:
        yield from h.sql("commit")
    if found.error:
        return db_error(found.error)
    return answer_from_row(h, found.row, fp)


def answer_from_row(h, row, fp: str) -> Response:
    """The answer a record gives: its stored response, 409 while in progress, 422 for another body."""
    if row is None:
        return Response(409, {"error": "the key's record changed meanwhile; retry"})
    if h.config.fingerprint_check and row["fingerprint"] != fp:
        return Response(422, {"error": "Idempotency-Key reused with a different request body"})
    if row["status"] != "done" or row["response"] is None:
        return Response(409, {"error": "a request with this Idempotency-Key is in progress"})
    return Response.from_stored(row["response"])


def charge_and_store(h, key: str, amount: int, *, key_committed: bool = False):
    """Inside an open transaction: call the processor, record the charge, store the answer, commit.

    A declined call is stored and replayed (``replay_errors``), or the key is released so that a retry
    starts afresh: the transaction rolls back and, where the key was committed before it, the key is deleted.
    A refused call (the processor's key was first used with other parameters) releases the key the same way
    and answers 422. A call whose outcome is unknown (no answer in time, key in use) always releases the key
    and answers 503: the handler cannot know whether the money moved.
    """
    paid = yield from pay(h, amount, key)
    if paid.outcome == "refused":
        yield from h.sql("rollback")
        if key_committed:
            yield from h.sql("delete_key", key=key)
        return processor_refused()
    if not paid.known or (paid.outcome == "declined" and not h.config.replay_errors):
        yield from h.sql("rollback")
        if key_committed:
            yield from h.sql("delete_key", key=key)
        return processor_failed() if paid.known else processor_unknown()
    if paid.outcome == "declined":
        response = processor_failed()
        yield from h.sql("complete_key", key=key, response=response.stored())
        yield from h.sql("commit")
        return response
    charge = yield from h.sql("insert_charge", amount=amount, key=key)
    if charge.error:
        yield from h.sql("rollback")
        return db_error(charge.error)
    h.point("after_charge")
    response = charged(charge, amount)
    h.point("before_response_stored")
    stored = yield from h.sql("complete_key", key=key, response=response.stored())
    if stored.error:
        yield from h.sql("rollback")
        return db_error(stored.error)
    h.point("before_commit")
    done = yield from h.sql("commit")
    if done.error:
        return db_error(done.error)
    return response
