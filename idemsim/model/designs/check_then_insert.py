"""``check-then-insert``: look for the key, insert it if absent, in one transaction, without a unique
constraint on the key: two concurrent first attempts both see "absent" and both charge (scenario
``check-then-insert-race``). With the constraint (``api.unique = true``) the second gets 23505 and replays.
"""

from __future__ import annotations

from .keyed import keyed
from .spec import KEY_OPTIONS, PROCESSOR_OPTIONS, SHIPPED_POINTS, Design
from .steps import answer_from_record, answer_from_row, charge_and_store, db_error


@keyed
def check_then_insert(h, key: str, fp: str, amount: int):
    """Look for the key and insert it if absent, in one transaction; no ON CONFLICT."""
    yield from h.sql("begin", isolation=h.config.isolation)
    found = yield from h.sql("select_key", key=key)
    if found.error:
        yield from h.sql("rollback")
        return db_error(found.error)
    if found.row is not None:
        yield from h.sql("rollback")
        return answer_from_row(h, found.row, fp)
    inserted = yield from h.sql("insert_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if inserted.error == "23505":
        # The unique constraint caught the race: the other copy committed first.
        yield from h.sql("rollback")
        return (yield from answer_from_record(h, key, fp, end_tx=False))
    if inserted.error:
        yield from h.sql("rollback")
        return db_error(inserted.error)
    h.point("after_key")
    return (yield from charge_and_store(h, key, amount))


DESIGN = Design("check-then-insert", check_then_insert, "look for the key, insert if absent, no unique constraint",
                points=SHIPPED_POINTS, unique_key=False,
                options=KEY_OPTIONS | PROCESSOR_OPTIONS | {"isolation", "unique"}, rank=2)
