"""``committed-first``: commit the key as ``in_progress`` first, charge in a second transaction. A duplicate
that finds ``in_progress`` gets 409 at once instead of waiting; with a lease (``api.lease``), an
``in_progress`` record older than the lease is returned to absent and taken over, by a retry here and by the
API's recovery step (scenarios ``crash-in-progress``, ``lease-shorter-than-handler``, ``lease-recaptures``).
"""

from __future__ import annotations

from .keyed import keyed
from .spec import KEY_OPTIONS, PROCESSOR_OPTIONS, SHIPPED_POINTS, Design
from .steps import answer_from_record, charge_and_store, db_error


@keyed
def committed_first(h, key: str, fp: str, amount: int):
    """Commit the key as in_progress, then charge in a second transaction; duplicates get 409."""
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if registered.error:
        return db_error(registered.error)
    if registered.rows == 0:
        answer = yield from answer_from_record(h, key, fp, end_tx=False)
        if answer.status != 409 or h.config.lease is None:
            return answer
        # Lease recovery: an in_progress record older than the lease is taken over.
        released = yield from h.sql("delete_key", key=key, status="in_progress",
                                    created_before=h.env.now - h.config.lease)
        if released.rows != 1:
            return answer
        registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
        if registered.rows != 1:
            return (yield from answer_from_record(h, key, fp, end_tx=False))
    h.point("after_key")
    yield from h.sql("begin", isolation=h.config.isolation)
    return (yield from charge_and_store(h, key, amount, key_committed=True))


DESIGN = Design("committed-first", committed_first, "key committed as in_progress first; duplicates get 409",
                points=SHIPPED_POINTS, lease_recovery=True,
                options=KEY_OPTIONS | PROCESSOR_OPTIONS | {"isolation", "lease"}, rank=4)
