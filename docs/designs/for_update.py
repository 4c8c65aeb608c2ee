"""SELECT … FOR UPDATE: register the key on its own, then do the work while holding a lock on its row.

A design an engineer might write after reading the article: the key's registration commits at once, so a
duplicate sees it; the work runs in a transaction that first locks the key row (``lock_key``, ``SELECT … FOR
UPDATE``), so two copies never work on one key at the same time; a copy that finds the key done replays the
stored answer. It keeps the database right. It does not keep the money right: the payment processor is called
without a key of its own, so when the handler dies after the capture (or the processor's answer is lost) its
transaction rolls back, the key row is still ``in_progress``, and the retry that locks it next captures again.

    idemsim run lost-response --design docs/designs/for_update.py:handler
    idemsim explore docs/designs/for_update.py:handler      # finds the double capture: exit 1
"""

from idemsim import Response


def handler(h):
    key, fp, amount = h.key, h.fingerprint, h.amount
    yield from h.sql("register_key", key=key, fingerprint=fp)  # autocommit: the key is visible at once
    h.point("after_key")
    yield from h.sql("begin")
    locked = yield from h.sql("lock_key", key=key)  # waits while another copy works on the key
    if locked.error or locked.row is None:
        yield from h.sql("rollback")
        return Response(409, {"error": "the key's record changed meanwhile; retry"})
    if locked.row["status"] == "done":
        stored = (yield from h.sql("select_key", key=key)).row
        yield from h.sql("commit")
        if stored["fingerprint"] != fp:
            return Response(422, {"error": "Idempotency-Key reused with a different request body"})
        return Response.from_stored(stored["response"])
    paid = yield from h.capture(amount)  # the bug: no key of its own for the processor
    if paid.outcome != "captured":
        yield from h.sql("rollback")
        if paid.outcome == "declined":
            return Response(500, {"error": "payment processor failed"})
        return Response(503, {"error": "payment processor outcome unknown"})
    h.point("after_processor")
    charge = yield from h.sql("insert_charge", amount=amount, key=key)
    h.point("after_charge")
    response = Response(201, {"id": f"ch_{charge.id}", "amount": amount, "status": "succeeded"})
    yield from h.sql("complete_key", key=key, response=response.stored())
    h.point("before_commit")
    yield from h.sql("commit")
    return response
