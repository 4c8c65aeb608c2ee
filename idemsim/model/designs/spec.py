"""What a design is: the `Design` record, and the vocabulary its facts are written in.

A `Design` holds everything the rest of idemsim needs to know about a design: its handler, whether it uses the
key, its crash points, its completer, and the facts that decide how a run, a comparison or an exploration is set
up around it (whether it keeps key records, whether the key table has a unique constraint, whether the API runs
a lease recovery for it, which scenario options change its behaviour). Code outside `idemsim.model.designs`
reads these facts and never compares a design's name.

Guarantees: a `Design` is immutable; its ``options`` are names of `DESIGN_OPTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SHIPPED_POINTS = ("after_key", "after_processor", "after_charge", "before_response_stored", "before_commit")
"""The crash points a keyed design may declare, in the order a handler reaches them (each design declares those it
reaches: split-tx all but ``before_commit``; a registered design all of them unless told)."""

DESIGN_OPTIONS = ("lease", "order", "unique", "isolation", "fingerprint_check", "ttl", "reap_every", "missing_key",
                  "replay_errors", "processor_key", "processor_timeout", "completer_every")
"""The ``[api]`` fields that are design options: a story that differs from another only in these is the same
run under another configuration of the design (`idemsim.runners.compare`)."""
KEY_OPTIONS = frozenset({"fingerprint_check", "ttl", "reap_every", "missing_key", "replay_errors"})
"""The options of the key's record and policy, which every keyed design honours."""
PROCESSOR_OPTIONS = frozenset({"processor_key", "processor_timeout"})
"""The options of the call to the payment processor: its key, and how long the handler waits for its answer."""

RECOVERY_LEASE = 10.0
"""The lease when ``api.lease`` is unset, for a design with a completer: how long a claim on a key holds before
another may take the key over (longer than the longest handler, processor timeout included)."""
COMPLETER_EVERY = 1.0
"""How often a completer looks for abandoned keys when ``api.completer_every`` is unset."""


def recovery_lease(config) -> float:
    """The lease under ``config``: ``api.lease``, else `RECOVERY_LEASE`."""
    return config.lease if config.lease is not None else RECOVERY_LEASE


def completer_period(config) -> float | None:
    """The completer's period under ``config``, or None when it is off."""
    every = config.completer_every
    return None if every == "off" else (COMPLETER_EVERY if every is None else every)


def default_options(keyed: bool) -> frozenset[str]:
    """The options of a registered design that names none: the key's (if it is keyed) and the processor
    call's, which the shipped designs honour alike (but recovery-points, which gives the processor its own key)."""
    return PROCESSOR_OPTIONS | (KEY_OPTIONS if keyed else frozenset())


@dataclass(frozen=True)
class Design:
    """A design: its name, its handler for ``POST /charges``, and what else the simulation needs of it.

    ``handler(h)`` is a generator function run on a `idemsim.model.api.Handler` that returns the `Response`;
    ``completer(w, key)``, if any, is run by a background process on every key ``abandoned(row, now, config)``
    says was left behind (see `idemsim.model.designs.registry.register_design`).
    """

    name: str
    handler: Callable
    summary: str
    keyed: bool = True
    """A request without a key follows the missing-key policy (``api.missing_key``) instead of the handler."""
    points: tuple[str, ...] = ()
    """The crash points the handler declares: ``crash`` faults may name them, explore crashes it at each."""
    completer: Callable | None = None
    """A generator ``completer(w, key)`` the API runs every ``api.completer_every`` seconds on abandoned keys."""
    abandoned: Callable | None = None
    """``abandoned(row, now, config)``: whether the completer should take the key of ``row`` over."""
    custom: bool = False
    """True for a design registered by a user: its misbehaviour is reported as bad input, not a bug."""
    stores_keys: bool = True
    """It writes idempotency-key records: with ``api.ttl`` a reaper deletes the expired ones, explore's client
    sends a key, a run's summary shows the keys held and in progress. False for a design that ignores the key."""
    unique_key: bool = True
    """The key table has a unique constraint on the key, unless the scenario's ``api.unique`` says otherwise."""
    lease_recovery: bool = False
    """With ``api.lease`` the API runs a recovery step that deletes ``in_progress`` records older than the
    lease (every ``lease / 2`` seconds); explore gives it a lease longer than its longest handler."""
    rank: int = 0
    """A shipped design's place in the article's order (naive 1 … recovery-points 6): the order of `DESIGNS`, of
    every comparison table and listing. 0 for a design a user registers (they follow, in registration order)."""
    options: frozenset[str] = frozenset()
    """The `DESIGN_OPTIONS` that change what it does: ``compare`` runs a story's option variants under it only
    for these, and explore describes them."""
