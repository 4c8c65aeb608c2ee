"""The summary of a run as a typed record: `Summary`, one field per key of the ``summary`` that
``idemsim run --format json`` prints, in the same order.

`idemsim.judge.summary.summarize` makes it, every field at once; nothing changes it afterwards (it is frozen).
Guarantees:

- `Summary.to_dict` is exactly the JSON's ``summary``: the same keys in the same order, the values themselves
  (not copies); `Summary.from_dict` makes the summary back from it. The two optional keys, ``pool_wait`` and
  ``pool_wait_max``, are there only for a run whose API has a connection pool: their fields are None otherwise
  (a present one never is), and the dict leaves them out.
- A `Summary` is also a read-only `Mapping` over that dict, for notebooks written when the summary was one:
  ``summary["charges"]``, ``summary.get("pool_wait")``, ``"pool_wait" in summary``, ``keys()``, ``items()``,
  ``dict(summary)``, and ``==`` against a dict or another summary. idemsim's own code reads the attributes.
- Every field is named as its key, except ``items`` (the API's items at the end), the field `Summary.api_items`:
  so that ``summary.items()`` stays the Mapping's method.

The nested values stay plain JSON data (lists and dicts), as the JSON prints them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Summary(Mapping):
    """What a run showed: its numbers, what each operation saw, the properties it broke and its verdict."""

    design: str
    """The design the run was simulated under."""
    charges: int
    """Rows of the ``charges`` table at the end."""
    captures: int
    """Captures in the payment processor's ledger."""
    outcome: str
    """The first operation's final outcome: ``ok``, ``fail`` or ``info``."""
    status: int | None
    """The first operation's final HTTP status; None if no attempt got an answer."""
    operations: list[dict[str, Any]]
    """Each operation (duplicates included) in order: ``op``, ``logical``, ``client``, ``key``, ``outcome``,
    ``status``, ``attempts``, ``seen`` (each attempt's status, ``"timeout"`` where it got no answer)."""
    client_believes: int
    """Logical operations the clients believe done (one of their copies ended ok)."""
    replays: int
    """Responses the API replayed from a key record."""
    replay_identical: bool | None
    """Whether every replayed response equalled the first; None when nothing was replayed."""
    wait_seconds: float
    """The longest wait of a statement on the index, in seconds (rounded to the µs)."""
    keys_held: int
    """Committed key records left at the end."""
    keys_in_progress: int
    """Of those, the records left ``in_progress``."""
    balance: int
    """The API's balance at the end."""
    api_items: dict[str, Any]
    """The API's items at the end (the key ``items``)."""
    log_lines: int
    """Requests the API wrote to its access log."""
    faults: list[dict[str, Any]]
    """Each scripted fault: ``fault`` (in words) and whether it ``fired``."""
    ledger: list[dict[str, Any]]
    """The processor's captures in capture order (`idemsim.model.processor.Capture.to_dict`)."""
    attempts_per_second: dict[str, Any]
    """Attempts sent in each window from t=0: ``window``, ``counts``, and ``by_outcome``."""
    waiting_peak: int
    """The most statements waiting on the index at once."""
    pool_wait: dict[str, float] | None = None
    """How long arrivals waited for a pooled connection: ``p50``, ``p95``, ``max``; None (not in the dict)
    without a pool."""
    pool_wait_max: float | None = None
    """The longest of those waits; None (not in the dict) without a pool."""
    violations: list[dict[str, str]]
    """The properties the run broke (`idemsim.judge.properties.Violation.to_dict`)."""
    verdict: str
    """``held``, ``failed``, ``vacuous`` or ``no expectation`` (`idemsim.judge.summary`)."""
    failures: list[str]
    """Why an expectation failed (expected vs got) or why the run is vacuous; empty otherwise."""
    design_verdict: str
    """The design's verdict, judged on the ledgers: ``holds`` when every property holds, ``broken`` otherwise."""
    story_check: str
    """Whether the run shows what the scenario file says the article shows: ``reproduces``, ``differs``,
    ``vacuous`` or ``no expectation`` (`idemsim.judge.summary.story_check`)."""
    story_says: str
    """The story's check in a short English sentence (``reproduces the article: 2 charges``); views say it in
    their language from the catalogue, not from this field."""
    expected_breaks: list[str] | None
    """The properties the scenario file declares this design breaks, in report order ([]: correct); None when the
    file states no expectation, or no ``breaks``, for the design."""
    stuck: list[str] = field(default_factory=list)
    """What was still open when the run ended (a key left in progress, an unanswered lookup), each a short English
    sentence; empty when nothing was."""

    @classmethod
    def from_dict(cls, summary: Mapping[str, Any]) -> Summary:
        """The summary whose `to_dict` is ``summary`` (the JSON's ``summary``, the optional keys left out or not)."""
        return cls(**{_ATTRIBUTE_OF[key]: value for key, value in summary.items()})

    def to_dict(self) -> dict[str, Any]:
        """The summary as the JSON prints it: its keys in order, the optional ones only when present."""
        return {key: value for key, value in self._pairs()}

    def _pairs(self) -> Iterator[tuple[str, Any]]:
        for key, attribute in _KEYS:
            value = getattr(self, attribute)
            if value is not None or key not in OPTIONAL:
                yield key, value

    def __getitem__(self, key: str) -> Any:
        attribute = _ATTRIBUTE_OF.get(key)
        if attribute is not None:
            value = getattr(self, attribute)
            if value is not None or key not in OPTIONAL:
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._pairs())

    def __len__(self) -> int:
        return sum(1 for _ in self._pairs())


KEY_OF_FIELD = {"api_items": "items"}
"""The fields named otherwise than their key."""

OPTIONAL = frozenset({"pool_wait", "pool_wait_max"})
"""The keys present only in some runs' summaries (a run whose API has a connection pool)."""

_KEYS = tuple((KEY_OF_FIELD.get(f.name, f.name), f.name) for f in fields(Summary))
"""(key, field name) of every field, in order."""
_ATTRIBUTE_OF = dict(_KEYS)

KEYS = tuple(key for key, _ in _KEYS)
"""Every key a summary can have, in the JSON's order."""
