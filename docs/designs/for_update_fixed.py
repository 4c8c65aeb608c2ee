"""SELECT … FOR UPDATE, fixed: the processor gets the request's key, and a completer records what it took.

The same design as ``for_update.py`` with two changes, each closing one way to lose the money's count:

1. the payment processor is called with the request's own key (``h.capture(amount, key=key)``): a retry's call
   after a crash is answered with the first capture, so the card is captured once however often the work
   runs;
2. a *completer* (``completer`` below, registered with the ``@design`` decorator) visits every key left in
   progress for longer than the lease (10 s): it locks the row, asks the processor what became of the key
   (``w.lookup``), and records a capture it finds, or releases the key so that a retry starts afresh. Without it,
   a last attempt that dies after the capture leaves money nobody recorded.

    idemsim explore docs/designs/for_update_fixed.py:handler --exhaustive --max-faults 3   # PROVED: exit 0
"""

from idemsim import Response, design


def completer(w, key):
    """Finish a key a handler left in progress: record the processor's capture, or release the key."""
    yield from w.sql("begin")
    locked = yield from w.sql("lock_key", key=key)  # waits if a handler still works on it
    if locked.error or locked.row is None or locked.row["status"] == "done":
        yield from w.sql("rollback")
        return
    paid = yield from w.lookup(key)
    if paid.outcome == "captured":
        charge = yield from w.sql("insert_charge", amount=paid.amount, key=key)
        response = Response(201, {"id": f"ch_{charge.id}", "amount": paid.amount, "status": "succeeded"})
        yield from w.sql("complete_key", key=key, response=response.stored())
        yield from w.sql("commit")
        w.finished(key, response)
    elif paid.known:  # nothing was captured: a retry may start afresh
        yield from w.sql("delete_key", key=key)
        yield from w.sql("commit")
        w.released(key, "no capture")
    else:
        yield from w.sql("rollback")  # the processor did not say: look again next time


@design(completer=completer, points=("after_key", "after_processor", "after_charge", "before_commit"))
def handler(h):
    key, fp, amount = h.key, h.fingerprint, h.amount
    yield from h.sql("register_key", key=key, fingerprint=fp)
    h.point("after_key")
    yield from h.sql("begin")
    locked = yield from h.sql("lock_key", key=key)
    if locked.error or locked.row is None:
        yield from h.sql("rollback")
        return Response(409, {"error": "the key's record changed meanwhile; retry"})
    if locked.row["status"] == "done":
        stored = (yield from h.sql("select_key", key=key)).row
        yield from h.sql("commit")
        if stored["fingerprint"] != fp:
            return Response(422, {"error": "Idempotency-Key reused with a different request body"})
        return Response.from_stored(stored["response"])
    paid = yield from h.capture(amount, key=key)  # the fix: the processor captures once per key
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
