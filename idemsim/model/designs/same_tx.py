"""``same-tx``: the article's design. Register the key (``INSERT … ON CONFLICT DO NOTHING``), charge, store
the response, all in one transaction; a duplicate waits on the unique index until the first ends, then replays
the stored response (the article's measured wait, scenario ``same-tx-wait``).

The database never holds two charges for one key; a crash or a lost processor answer between the capture and
the COMMIT rolls the key back, so the retry captures again (``crash-after-processor``).
"""

from __future__ import annotations

from .keyed import keyed
from .spec import KEY_OPTIONS, PROCESSOR_OPTIONS, SHIPPED_POINTS, Design
from .steps import answer_from_record, charge_and_store, db_error


@keyed
def same_tx(h, key: str, fp: str, amount: int):
    """Key, charge and stored response in one transaction; a duplicate waits on the unique index."""
    yield from h.sql("begin", isolation=h.config.isolation)
    registered = yield from h.sql("register_key", key=key, fingerprint=fp, ttl=h.config.ttl)
    if registered.error:
        yield from h.sql("rollback")
        return db_error(registered.error)
    if registered.rows == 0:
        return (yield from answer_from_record(h, key, fp, end_tx=True))
    h.point("after_key")
    return (yield from charge_and_store(h, key, amount))


DESIGN = Design("same-tx", same_tx, "unique key + charge + stored response in one transaction (the article's)",
                points=SHIPPED_POINTS, options=KEY_OPTIONS | PROCESSOR_OPTIONS | {"isolation"}, rank=3)
