"""The API designs for ``POST /charges``: how a handler uses the idempotency key and the database.

Each design is a handler: a generator that runs on a `Handler` (its connection, options and crash points)
and returns the `Response`. Every database statement goes through the DB model (`idemsim.model.db.engine`), whose
waits and results follow PostgreSQL's, so a duplicate under ``same-tx`` really blocks on the unique index.

=====================  ===================================================================================
``naive``              no key: every request that arrives records a charge.
``check-then-insert``  look for the key, insert it if absent, in one transaction, without a unique
                       constraint: two concurrent first attempts both see "absent".
``same-tx``            the article's: register the key (``INSERT … ON CONFLICT DO NOTHING``), charge,
                       store the response, all in one transaction; a duplicate waits on the index, then
                       replays the stored response.
``committed-first``    commit the key as ``in_progress`` first, charge in a second transaction; a duplicate
                       that finds ``in_progress`` gets ``409`` at once; with a lease, an ``in_progress``
                       record older than the lease is returned to absent.
``split-tx``           key and charge in separate transactions with no status; a retry that finds the key
                       answers as if done (200), or replays the response if one was stored. ``order``:
                       ``key-first`` or ``charge-first``.
``recovery-points``    Stripe's atomic phases with recovery points, the processor's own key and a completer.
=====================  ===================================================================================

One file a design (``naive.py``, ``check_then_insert.py``, ``same_tx.py``, ``committed_first.py``, ``split_tx.py``,
``recovery_points.py``): its handler and its `Design` entry, which states every fact the rest of idemsim reads of
it (nothing outside this package compares a design's name). ``steps.py`` holds the steps the handlers share,
``keyed.py`` the missing-key policy, ``spec.py`` the `Design` record, ``registry.py`` `DESIGNS` and registration.
A new design is one file plus its line in the registry.

This package's names are what other modules import: the handlers (``idemsim.model.designs.same_tx`` is the
handler function, as the module's own name is taken by it), the registry and the facts' vocabulary.
Options (`idemsim.model.api.ApiConfig`) apply to every keyed design alike: a request without a key gets 400 or is
processed as ``naive`` (``missing_key``); the others are described in `idemsim.model.designs.steps`.
"""

from __future__ import annotations

from .check_then_insert import check_then_insert
from .committed_first import committed_first
from .keyed import missing_key
from .naive import naive
from .recovery_points import complete_abandoned, recovery_points
from .registry import DESIGNS, SHIPPED, design, known_points, register_design, resolve_design
from .same_tx import same_tx
from .spec import (
                   COMPLETER_EVERY,
                   DESIGN_OPTIONS,
                   KEY_OPTIONS,
                   PROCESSOR_OPTIONS,
                   RECOVERY_LEASE,
                   SHIPPED_POINTS,
                   Design,
                   completer_period,
                   recovery_lease,
)
from .split_tx import split_tx
from .steps import RETRYABLE_DB_ERRORS

__all__ = ["COMPLETER_EVERY", "DESIGNS", "DESIGN_OPTIONS", "KEY_OPTIONS", "PROCESSOR_OPTIONS", "RECOVERY_LEASE",
           "RETRYABLE_DB_ERRORS", "SHIPPED", "SHIPPED_POINTS", "Design", "check_then_insert", "committed_first",
           "complete_abandoned", "completer_period", "design", "known_points", "missing_key", "naive",
           "recovery_lease", "recovery_points", "register_design", "resolve_design", "same_tx", "split_tx"]
