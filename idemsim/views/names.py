"""One name per thing, in every view and both languages: a party, an attempt, an amount, an outcome, and the
line that says what a client saw and what money moved.

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


def outcome_name(outcome: str, lang: str = "en") -> str:
    """ok, fail, info: in English the Jepsen names themselves, in Japanese the article's words."""
    return outcome if lang == "en" else t(f"outcome.{outcome}", lang)


def seen_text(seen: list, outcome: str, status: Any, lang: str = "en") -> str:
    """What a client saw and how its operation ended: ``timeout, 201 → ok 201``."""
    statuses = t("list.sep", lang).join(t("tl.timeout", lang) if s in (None, "timeout") else str(s) for s in seen)
    return t("term.seen", lang, seen=statuses or t("term.nothing", lang), outcome=outcome_name(outcome, lang),
             status=status if status is not None else "").rstrip()


def money_text(ledger: list[dict], lang: str = "en") -> str:
    """The processor's ledger in a line: how many captures, and each one's id, amount and time (the first
    three of a long ledger)."""
    if not ledger:
        return t("term.money_none", lang)
    shown = t("list.sep", lang).join(t("term.money_one", lang, id=c["id"], amount=amount_text(c["amount"], lang),
                                       t=c["t"]) for c in ledger[:3])
    more = t("term.money_more", lang, n=len(ledger) - 3) if len(ledger) > 3 else ""
    return f"{len(ledger)}  ({shown}{more})"

