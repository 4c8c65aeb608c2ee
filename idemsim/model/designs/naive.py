"""``naive``: no key. Every request that arrives captures and records a charge, so a retry after a lost
response pays twice: the article's opening problem, the baseline every other design is compared with.
"""

from __future__ import annotations

from .spec import PROCESSOR_OPTIONS, Design
from .steps import charged, pay, processor_failed, processor_refused, processor_unknown


def naive(h):
    """Capture and record a charge for every request that arrives."""
    amount = (h.request.body or {}).get("amount", 0)
    paid = yield from pay(h, amount, h.request.key)
    if not paid.known:
        return processor_unknown()
    if paid.outcome == "refused":
        return processor_refused()
    if paid.outcome == "declined":
        return processor_failed()
    charge = yield from h.sql("insert_charge", amount=amount, key=h.request.key)
    h.point("after_charge")
    return charged(charge, amount)


DESIGN = Design("naive", naive, "no key, no duplicate detection", keyed=False,
                points=("after_processor", "after_charge"), stores_keys=False, options=PROCESSOR_OPTIONS, rank=1)
