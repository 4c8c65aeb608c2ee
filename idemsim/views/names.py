"""One name per thing, in every view and both languages: a party, an attempt, an amount.

The trace names its parties by id (``client``, ``client-dup``, ``api#1``, ``db``, ``processor`` …); a view shows
each by its display name from the catalogue, one per language (``client (duplicate)``, ``API #1``,
「クライアント（重複）」, 「決済 API #1」). An attempt is ``attempt 2`` (「2 回目」), never "retry 2" or
"(retry)"; an amount is written as the request's JSON and the SQL write it (``1000``, never ``1,000``).

Guarantees: every view that names one of these calls the function here, so that the text timeline, ``--brief``,
the summary, compare, the figure, Mermaid and the HTML page write each thing the same way; an id the catalogue
does not know (a client a scenario names ``alice``) is shown as written, and ``alice-dup`` as ``alice
(duplicate)``.
"""

from __future__ import annotations

from typing import Any

from ..base.i18n import text as t

ROLES = {"client": "party.client", "api": "party.api", "db": "party.db", "processor": "party.processor",
         "completer": "party.completer", "gateway": "party.gateway", "recovery": "party.recovery",
         "reaper": "party.reaper", "net": "party.net"}
"""The parties the catalogue names, by their trace id."""

DUPLICATE = "-dup"
"""The suffix of the client process that sends a scenario's duplicate (`idemsim.runners.simulation`)."""


def party_name(party: str, lang: str = "en") -> str:
    """A trace's party id as a view shows it: ``client-dup`` → ``client (duplicate)``, ``api#1`` → ``API #1``."""
    if party.endswith(DUPLICATE) and len(party) > len(DUPLICATE):
        return t("party.duplicate", lang, client=party_name(party[:-len(DUPLICATE)], lang))
    if party.startswith("api#") and party[4:].isdigit():
        return t("party.handler", lang, n=party[4:])
    return t(ROLES[party], lang) if party in ROLES else party


def attempt_name(n: int, lang: str = "en") -> str:
    """The ``n``-th attempt of an operation: ``attempt 2`` (「2 回目」); the first is ``attempt 1``."""
    return t("tl.attempt", lang, n=n)


def amount_text(amount: Any, lang: str = "en") -> str:
    """An amount as the request body and the SQL write it: ``1000`` (no thousands separator); the unit, where a
    language writes one (「1000 円」), is the sentence's."""
    return str(amount)
