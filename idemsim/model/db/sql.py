"""The SQL each schedule operation stands for: one source of truth for traces, the text view and PostgreSQL.

`sql_for` returns complete, executable PostgreSQL text with the values inlined as SQL literals (strings quoted
by doubling `'`, as `standard_conforming_strings` requires), so what a trace shows is what the PostgreSQL
runner sends. Client-side steps (`sleep`, `disconnect`) return a `--` comment.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

DEFAULT_TTL = 86400.0
"""Default retention of a key record, seconds (the article's 24 hours)."""

SIM_START = "idemsim_start()"
"""SQL function the PostgreSQL runner defines in its schema: the run's common start (a timestamptz)."""


def literal(value: Any) -> str:
    """A SQL literal for a string, number, None or JSON object."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return literal(json.dumps(value)) + "::jsonb"


def interval(seconds: float) -> str:
    """An interval literal: '24 hours' for the default retention, else seconds."""
    if seconds == DEFAULT_TTL:
        return "interval '24 hours'"
    return f"interval '{_number(seconds)} seconds'"


def _number(x: float) -> str:
    """A time as SQL and trace text, to the microsecond (PostgreSQL's resolution), without float noise:
    1234567.5 stays 1234567.5 (not 1.23457e+06), 5.15 - 5 is 0.15."""
    x = round(float(x), 6)
    return str(int(x)) if x == int(x) else f"{x:.15g}"


def sql_for(op: str, fields: Mapping[str, Any]) -> str:
    """The SQL text the statement `op` with `fields` stands for."""
    f = fields
    match op:
        case "begin":
            return f"BEGIN ISOLATION LEVEL {f.get('isolation') or 'read committed'}".upper()
        case "commit":
            return "COMMIT"
        case "rollback":
            return "ROLLBACK"
        case "register_key" | "insert_key":
            sql = (f"INSERT INTO idempotency_keys (key, fingerprint, expires_at) VALUES ({literal(f['key'])}, "
                   f"{literal(f['fingerprint'])}, now() + {interval(f.get('ttl') or DEFAULT_TTL)})")
            return sql + (" ON CONFLICT (key) DO NOTHING RETURNING id" if op == "register_key" else " RETURNING id")
        case "select_key":
            return (f"SELECT status, fingerprint, response FROM idempotency_keys WHERE key = {literal(f['key'])} "
                    "ORDER BY id")
        case "complete_key":
            return (f"UPDATE idempotency_keys SET status = {literal(f.get('status') or 'done')}, "
                    f"response = {literal(f.get('response'))} WHERE key = {literal(f['key'])}")
        case "delete_key":
            sql = f"DELETE FROM idempotency_keys WHERE key = {literal(f['key'])}"
            if f.get("status") is not None:
                sql += f" AND status = {literal(f['status'])}"
            if f.get("created_before") is not None:
                sql += f" AND created_at < {SIM_START} + {interval(f['created_before'])}"
            return sql
        case "delete_expired":
            return "DELETE FROM idempotency_keys WHERE expires_at <= now()"
        case "insert_charge":
            return (f"INSERT INTO charges (amount, idempotency_key) VALUES ({literal(f['amount'])}, "
                    f"{literal(f.get('key'))}) RETURNING id")
        case "count_charges":
            return "SELECT count(*) FROM charges"
        case "lock_key":
            return f"SELECT status, recovery_point FROM idempotency_keys WHERE key = {literal(f['key'])} FOR UPDATE"
        case "claim_key":
            return (f"UPDATE idempotency_keys SET locked_at = now() WHERE key = {literal(f['key'])} "
                    f"AND (locked_at IS NULL OR locked_at < now() - make_interval(secs => {literal(f['lease'])})) "
                    "RETURNING recovery_point")
        case "set_point":
            return (f"UPDATE idempotency_keys SET recovery_point = {literal(f['point'])}, "
                    f"locked_at = CASE WHEN {literal(bool(f.get('release', False)))} THEN NULL ELSE locked_at END "
                    f"WHERE key = {literal(f['key'])}")
        case "lock_timeout":
            return f"SET lock_timeout = '{round(f['seconds'] * 1000)}ms'"
        case "sleep":
            return f"-- client sleeps {_number(f['seconds'])} s"
        case "disconnect":
            return "-- client disconnects"
    raise ValueError(f"unknown op {op!r}")
