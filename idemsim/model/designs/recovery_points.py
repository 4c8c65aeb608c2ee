"""``recovery-points``: Stripe's atomic phases. Register and claim the key, note the intent to pay, pay with the
request's key as the processor's own key, then record the charge and the answer; each phase commits a
*recovery point*. A retry that finds the key claimed for longer than the lease (``api.lease``, 10 s by default)
takes it over and resumes from its recovery point instead of starting over; a *completer* (every
``api.completer_every`` seconds, 1 s by default) finishes or releases keys abandoned for longer than the lease
(scenario ``completer-finishes``).
"""

from __future__ import annotations

from ...base.http import Response
from .keyed import keyed
from .spec import KEY_OPTIONS, SHIPPED_POINTS, Design, recovery_lease
from .steps import answer_from_row, charged, db_error, processor_failed, processor_refused, processor_unknown


@keyed
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
            return db_error(claimed.error or done.error)
        point = "started"
    else:
        yield from h.sql("rollback")
        if registered.error:
            return db_error(registered.error)
        found = yield from h.sql("select_key", key=key)
        if found.error:
            return db_error(found.error)
        if found.row is None or found.row["status"] == "done" or (
                h.config.fingerprint_check and found.row["fingerprint"] != fp):
            return answer_from_row(h, found.row, fp)
        claimed = yield from h.sql("claim_key", key=key, lease=lease)
        if claimed.error:
            return db_error(claimed.error)
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
            return db_error(noted.error) if noted.error else Response(409, {"error": "the key's record changed "
                                                                                     "meanwhile; retry"})
    paid = yield from h.capture(amount, key=key)  # the request's key, always: a resumed call captures nothing new
    if paid.outcome == "captured":
        h.point("after_processor")
    if not paid.known:
        yield from h.sql("set_point", key=key, point="payment_requested", release=True)
        return processor_unknown()
    if paid.outcome == "refused":  # the processor's key was first used with other parameters: nothing captured
        yield from h.sql("delete_key", key=key)
        return processor_refused()
    if paid.outcome == "declined" and not h.config.replay_errors:
        yield from h.sql("delete_key", key=key)
        return processor_failed()
    return (yield from _finish(h, key, amount, paid))


def _finish(w, key: str, amount, paid):
    """The last phase, in one transaction: lock the key row, and unless someone finished it meanwhile, record
    the charge (or the declined answer), store the answer, mark the key finished and release it."""
    yield from w.sql("begin", isolation=w.config.isolation)
    guard = yield from w.sql("lock_key", key=key)
    if guard.error or guard.row is None or guard.row["recovery_point"] == "finished":
        yield from w.sql("rollback")
        if guard.error:
            return db_error(guard.error)
        found = yield from w.sql("select_key", key=key)  # finished meanwhile by another: its answer
        if found.row is not None and found.row["status"] == "done" and found.row["response"] is not None:
            return Response.from_stored(found.row["response"])
        return Response(409, {"error": "the key's record changed meanwhile; retry"})
    if paid.outcome == "declined":
        response = processor_failed()
    else:
        charge = yield from w.sql("insert_charge", amount=amount, key=key)
        if charge.error:
            yield from w.sql("rollback")
            return db_error(charge.error)
        w.point("after_charge")
        response = charged(charge, amount)
    w.point("before_response_stored")
    yield from w.sql("complete_key", key=key, response=response.stored())
    yield from w.sql("set_point", key=key, point="finished", release=True)
    w.point("before_commit")
    done = yield from w.sql("commit")
    if done.error:
        return db_error(done.error)
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


def abandoned(row: dict, now: float, config) -> bool:
    """A key is abandoned when in progress and its claim is older than the lease."""
    return row["status"] == "in_progress" and (row.get("locked_at") is None
                                               or row["locked_at"] < now - recovery_lease(config))


DESIGN = Design("recovery-points", recovery_points, "atomic phases with recovery points, the processor's own key "
                                                    "and a completer (Stripe's)", points=SHIPPED_POINTS,
                completer=complete_abandoned, abandoned=abandoned,
                options=KEY_OPTIONS | {"processor_timeout", "completer_every"}, rank=6)
