"""What every keyed design does first: a request without a key follows the missing-key policy; the design
itself gets the key, the body's fingerprint and the amount.

``api.missing_key`` says what a request without a key gets: 400 (``reject``), or processed without protection,
as `idemsim.model.designs.naive` would.
"""

from __future__ import annotations

import functools

from ...base.http import Response
from .naive import naive


def missing_key(h):
    """The request carries no key: reject it (400), or process it without protection."""
    if h.config.missing_key == "reject":
        return Response(400, {"error": "Idempotency-Key header is required"})
    return (yield from naive(h))


def keyed(design):
    """A keyed design: a request without a key follows the missing-key policy; the design itself gets the
    key, the body's fingerprint and the amount."""

    @functools.wraps(design)
    def handler(h):  # (not a generator itself: it hands over the design's, one layer less for every request)
        key = h.request.key
        if key is None:
            return missing_key(h)
        body = h.request.body or {}
        return design(h, key, h.fingerprint, body.get("amount", 0))

    return handler
