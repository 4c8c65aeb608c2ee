"""``split-tx``: key and charge in separate transactions, with no status on the key. A retry that finds the key
answers as if done (200), or replays the response if one was stored. ``api.order`` says which comes first:
``key-first`` (a crash before the charge: the retry answers "already processed" with nothing charged) or
``charge-first`` (a crash before the key: two charges); scenario ``split-transactions``.

Guarantees: it reaches each crash point it declares (`POINTS`) in either order; it has no ``before_commit``,
as no transaction spans its work (tests/test_designs.py holds every shipped design to its points).
"""

from __future__ import annotations

from ...base.http import Response
from .keyed import keyed
from .spec import KEY_OPTIONS, PROCESSOR_OPTIONS, Design
from .steps import charged, db_error, pay, processor_failed, processor_refused, processor_unknown


def _found(h, row, fp: str) -> Response:
    """split-tx found the key: replay what is stored, or, with no status to tell, answer as if done."""
    if h.config.fingerprint_check and row["fingerprint"] != fp:
        return Response(422, {"error": "Idempotency-Key reused with a different request body"})
    if row["response"] is not None:
        return Response.from_stored(row["response"])
    return Response(200, {"status": "already processed"})


@keyed
def split_tx(h, key: str, fp: str, amount: int):
    """Key and charge in separate transactions, no status: whatever finds the key answers as if done."""
    if h.config.order == "key-first":
        registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
        if registered.error:
            return db_error(registered.error)
        if registered.rows == 0:
            found = yield from h.sql("select_key", key=key)
            if found.row is None:
                return Response(409, {"error": "the key's record changed meanwhile; retry"})
            return _found(h, found.row, fp)
        h.point("after_key")
        paid = yield from pay(h, amount, key)
        if paid.outcome == "refused":
            yield from h.sql("delete_key", key=key)
            return processor_refused()
        if not paid.known or (paid.outcome == "declined" and not h.config.replay_errors):
            yield from h.sql("delete_key", key=key)
            return processor_failed() if paid.known else processor_unknown()
        if paid.outcome == "declined":
            response = processor_failed()
            yield from h.sql("complete_key", key=key, response=response.stored())
            return response
        charge = yield from h.sql("insert_charge", amount=amount, key=key)
        h.point("after_charge")
        response = charged(charge, amount)
        h.point("before_response_stored")
        yield from h.sql("complete_key", key=key, response=response.stored())
        return response
    # charge-first: look for the key, charge, then record the key with the answer in a second transaction.
    found = yield from h.sql("select_key", key=key)
    if found.row is not None:
        return _found(h, found.row, fp)
    paid = yield from pay(h, amount, key)
    if not paid.known:
        return processor_unknown()
    if paid.outcome == "refused":
        return processor_refused()
    if paid.outcome == "declined":
        return processor_failed()
    charge = yield from h.sql("insert_charge", amount=amount, key=key)
    h.point("after_charge")
    response = charged(charge, amount)
    h.point("before_response_stored")
    yield from h.sql("begin", isolation=h.config.isolation)
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    h.point("after_key")
    if registered.rows == 1:
        yield from h.sql("complete_key", key=key, response=response.stored())
    done = yield from h.sql("commit")
    if registered.error or done.error:
        return db_error(registered.error or done.error)
    return response


POINTS = ("after_key", "after_processor", "after_charge", "before_response_stored")
"""The crash points of split-tx: `SHIPPED_POINTS` but ``before_commit``. Key first, they come in this order;
charge first, ``after_key`` comes last (the key's insert, in the transaction that records the answer)."""

DESIGN = Design("split-tx", split_tx, "key and charge in separate transactions, no status", points=POINTS,
                options=KEY_OPTIONS | PROCESSOR_OPTIONS | {"isolation", "order"}, rank=5)
