"""HTTP messages and how a client reads a status code.

`classify` is the client's only source of truth about an attempt, after Jepsen: ``ok`` (2xx, it definitely
happened), ``fail`` (definitely not done: 400, 422 and the other 4xx a server sends without acting) and
``info`` (unknown: 409, 408, 429, any 5xx including a gateway's 504, and a timeout or lost response). A lost
response is always ``info``, never ``fail``: the client cannot tell it from a lost request. One method-aware
rule: a ``DELETE`` answered 404 or 410 is ``ok``, since the resource is gone, which is what the client asked
for; RFC 9110's idempotent DELETE promises the same intended effect, not the same answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["ok", "fail", "info"]

REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found",
           409: "Conflict", 422: "Unprocessable Content", 500: "Internal Server Error",
           503: "Service Unavailable", 504: "Gateway Timeout"}

#: 4xx codes that do not say "definitely not done": the server may still be working on it, or may do it later.
INDEFINITE_4XX = frozenset({408, 409, 425, 429})


def classify(status: int | None, method: str | None = None) -> Outcome:
    """The client's reading of one attempt; ``None`` means no answer (timeout)."""
    if status is None:
        return "info"
    if method == "DELETE" and status in (404, 410):
        return "ok"
    if 200 <= status < 300:
        return "ok"
    if 400 <= status < 500 and status not in INDEFINITE_4XX:
        return "fail"
    return "info"


def fingerprint(body: Any) -> str:
    """A short, stable hash of a request body (the draft's "fingerprint")."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "fp-" + hashlib.sha256(text.encode()).hexdigest()[:8]


@dataclass(slots=True)
class Request:
    """One attempt as it travels: ``id`` is ``"<op>.<attempt>"``."""

    id: str
    op: int
    attempt: int
    method: str
    path: str
    key: str | None
    body: Any
    client: str = "client"
    """Who sent it: the API answers, and the trace names, this client process."""

    def describe(self) -> str:
        key = f" Idempotency-Key: {self.key}" if self.key else ""
        body = f" {json.dumps(self.body, ensure_ascii=False)}" if self.body is not None else ""
        return f"{self.method} {self.path}{key}{body}"


class _Stored:
    """A stored response as the attribute dict of an instance: a plain dict whose keys CPython keeps in one
    table shared by every instance (a split table), so that each holds only its two values."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body


@dataclass(slots=True)
class Response:
    """An answer: status code, JSON body, and whether the API replayed a stored answer."""

    status: int
    body: Any = None
    replay: bool = False
    headers: dict[str, str] = field(default_factory=dict)

    def stored(self) -> dict[str, Any]:
        """The form kept in ``idempotency_keys.response``: ``{"status": …, "body": …}`` (a load keeps one per key:
        a shared-key dict, `_Stored`)."""
        return _Stored(self.status, self.body).__dict__

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> "Response":
        return cls(stored["status"], stored.get("body"), replay=True)

    def describe(self) -> str:
        return f"{self.status} {REASONS.get(self.status, '')}".rstrip()
