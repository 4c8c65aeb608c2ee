"""Run a DB schedule on a real PostgreSQL (psycopg 3), giving the same result document as the model.

Guarantees: the run uses a schema of its own (created, then dropped, even on failure) and touches nothing else;
one connection and one thread per session, all released together by a barrier, steps timed with
`time.monotonic()` from that common start; `deadlock_timeout` is 1 s. psycopg is imported only inside
functions, so `idemsim run` never imports it. A missing psycopg or an unreachable server raises
`PostgresUnavailable` (an `InputError`: one line, exit 2).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ..base.errors import InputError, Message
from ..model.db.sql import sql_for
from .schedule import Schedule, Sleep, StepNote, entry, scaled, statement_fields

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
SESSION_OPTIONS = "-c deadlock_timeout=1s -c lock_timeout=0 -c statement_timeout=0 " \
                  "-c default_transaction_isolation=read\\ committed -c synchronous_commit=off"
"""Settings every session starts with: PostgreSQL's defaults, stated so a server's config cannot change them,
but for ``synchronous_commit``. Off, a COMMIT returns, releases its locks and is visible to every other session
as soon as it is logically complete, without waiting for its WAL to reach the disk (PostgreSQL's "asynchronous
commit": only a crash's durability differs). The model has no disk; in a CI run, with the machine's disk busy
with the installs before it, every COMMIT of one schedule took 0.12 s (most likely flushing its WAL), past the
0.1 s the agreement rule allows, and so did the insert waiting on it."""
SPARE_SECONDS = 30.0
"""How long a run may overrun the schedule's own times before it is cancelled as stuck."""


class PostgresUnavailable(InputError):
    """psycopg is not installed, or the server does not answer."""


def default_dsn() -> str:
    """`IDEMSIM_PG_DSN`, else a local server's `test` database."""
    return os.environ.get("IDEMSIM_PG_DSN") or DEFAULT_DSN


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise PostgresUnavailable("err.pg.no_psycopg") from None
    return psycopg


def connect(dsn: str, **kwargs: Any):
    """A psycopg connection in autocommit mode (the schedule sends BEGIN/COMMIT itself)."""
    psycopg = _psycopg()
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=5, **kwargs)
    except psycopg.Error as error:
        reason = " ".join(str(error).split()) or Message("err.pg.no_reason")
        raise PostgresUnavailable("err.pg.connect", dsn=dsn, reason=reason) from None


def server_version(dsn: str) -> str:
    """The server's `version()` string; raises `PostgresUnavailable` when it does not answer."""
    with connect(dsn) as conn:
        return conn.execute("SELECT version()").fetchone()[0]


def _create_schema(admin, schema: str, unique_key: bool) -> None:
    unique = " UNIQUE" if unique_key else ""
    admin.execute(f"CREATE SCHEMA {schema}")
    admin.execute(f"""CREATE TABLE {schema}.idempotency_keys (
        id bigserial PRIMARY KEY, key text NOT NULL{unique}, fingerprint text NOT NULL,
        status text NOT NULL DEFAULT 'in_progress', response jsonb, expires_at timestamptz NOT NULL,
        recovery_point text NOT NULL DEFAULT 'started', locked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp())""")
    admin.execute(f"CREATE TABLE {schema}.charges (id bigserial PRIMARY KEY, amount int NOT NULL, "
                  "idempotency_key text)")
    admin.execute(f"CREATE TABLE {schema}.run_clock (t0 timestamptz)")
    admin.execute(f"INSERT INTO {schema}.run_clock VALUES (clock_timestamp())")
    admin.execute(f"CREATE FUNCTION {schema}.idemsim_start() RETURNS timestamptz LANGUAGE sql STABLE "
                  f"AS $$ SELECT t0 FROM {schema}.run_clock $$")


@dataclass
class PostgresRun:
    """A schedule run on PostgreSQL: the spec's result document and the ids PostgreSQL returned."""

    document: dict
    """Exactly the spec's result document."""
    notes: dict[str, list[StepNote | None]]
    """Per session, per step: the id an insert returned (PostgreSQL shows no id for one that inserted nothing)."""
    ids: dict[str, list[int]]
    """Per table, the `id` of each row of `document["tables"]`."""


def _statement(conn, op: str, sql: str) -> tuple[int | None, dict | None, int | None]:
    """Run one statement; return the spec's (rows, row) and the id an insert returned."""
    if op == "disconnect":
        conn.close()
        return None, None, None
    cur = conn.execute(sql)
    if op in ("register_key", "insert_key", "insert_charge"):
        returned = cur.fetchall()
        return len(returned), None, returned[0][0] if returned else None
    if op in ("select_key", "lock_key", "claim_key"):
        found = cur.fetchall()
        columns = {"select_key": ("status", "fingerprint", "response"), "lock_key": ("status", "recovery_point"),
                   "claim_key": ("recovery_point",)}[op]
        return len(found), dict(zip(columns, found[0])) if found else None, None
    if op in ("complete_key", "delete_key", "delete_expired", "set_point"):
        return cur.rowcount, None, None
    if op == "count_charges":
        return None, {"count": cur.fetchone()[0]}, None
    return None, None, None


def run_on_postgres(schedule: Schedule, dsn: str | None = None, scale: float = 1.0) -> dict:
    """Run `schedule` (times multiplied by `scale`) on PostgreSQL; return the spec's result document."""
    return run_postgres(schedule, dsn, scale).document


def run_postgres(schedule: Schedule, dsn: str | None = None, scale: float = 1.0) -> PostgresRun:
    """Run `schedule` (times multiplied by `scale`) on PostgreSQL."""
    psycopg = _psycopg()
    dsn = dsn or default_dsn()
    schedule = scaled(schedule, scale)
    schema = f"idemsim_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = connect(dsn)
    conns: dict[str, Any] = {}
    try:
        _create_schema(admin, schema, schedule.unique_key)
        names = list(schedule.sessions)
        for name in names:
            conns[name] = connect(dsn, options=f"-c search_path={schema} {SESSION_OPTIONS}",
                                  application_name=f"idemsim {name}".replace("\x00", "?"))  # libpq: C strings
        entries: dict[str, list[dict]] = {name: [] for name in names}
        notes: dict[str, list[StepNote | None]] = {name: [] for name in names}
        failures: list[BaseException] = []
        clock: dict[str, float] = {}

        def start_clock() -> None:  # runs once, in one thread, as all sessions are released
            admin.execute(f"UPDATE {schema}.run_clock SET t0 = clock_timestamp()")
            clock["t0"] = time.monotonic()

        barrier = threading.Barrier(len(names), action=start_clock)

        def session(name: str) -> None:
            conn = conns[name]
            try:
                barrier.wait()
                t0 = clock["t0"]
                for step in schedule.sessions[name]:
                    if step.at is not None:
                        time.sleep(max(0.0, t0 + step.at - time.monotonic()))
                    start = time.monotonic() - t0
                    if isinstance(step, Sleep):
                        time.sleep(step.seconds)
                        entries[name].append(entry("sleep", _t(start), _t(time.monotonic() - t0), None, None, None))
                        notes[name].append(None)
                        continue
                    sql = sql_for(step.op, statement_fields(step))
                    try:
                        try:
                            rows, row, returned_id = _statement(conn, step.op, sql)
                        except psycopg.Error as failure:
                            if failure.sqlstate is not None or "\x00" not in sql:
                                raise
                            # psycopg 3.3 sends a text with a NUL and libpq cuts it there (a C string), so the
                            # server answers 42601 (unterminated quoted string). Should a psycopg refuse such a
                            # text itself, send what libpq would have sent, so the server still decides.
                            rows, row, returned_id = _statement(conn, step.op, sql.split("\x00", 1)[0])
                        error = None
                    except psycopg.Error as failure:
                        if failure.sqlstate is None:
                            raise
                        rows, row, returned_id, error = None, None, None, failure.sqlstate
                    entries[name].append(entry(step.op, _t(start), _t(time.monotonic() - t0), rows, row, error))
                    notes[name].append(StepNote(returned_id))
            except BaseException as failure:  # reported by the main thread
                failures.append(failure)
            finally:
                conn.close()  # a session ends as a disconnect: an open transaction rolls back

        threads = [threading.Thread(target=session, args=(name,), name=f"idemsim-{name}", daemon=True)
                   for name in names]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + _planned_seconds(schedule) + SPARE_SECONDS
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            for conn in conns.values():
                conn.cancel()
            raise InputError("err.pg.stuck", seconds=SPARE_SECONDS)
        if failures:
            raise failures[0]
        tables, ids = _tables(admin, schema)
    finally:
        for conn in conns.values():
            conn.close()
        try:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            admin.close()
    return PostgresRun({"version": 1, "sessions": entries, "tables": tables}, notes, ids)


def _tables(admin, schema: str) -> tuple[dict, dict[str, list[int]]]:
    keys = admin.execute(f"SELECT id, key, fingerprint, status, response FROM {schema}.idempotency_keys "
                         "ORDER BY key, id").fetchall()
    charges = admin.execute(f"SELECT id, amount, idempotency_key FROM {schema}.charges ORDER BY id").fetchall()
    tables = {
        "idempotency_keys": [{"key": k, "fingerprint": f, "status": s, "response": r} for _, k, f, s, r in keys],
        "charges": [{"amount": a, "key": k} for _, a, k in charges],
    }
    return tables, {"idempotency_keys": [row[0] for row in keys], "charges": [row[0] for row in charges]}


def _planned_seconds(schedule: Schedule) -> float:
    """An upper bound of the schedule's own times: every `at`, sleep and lock timeout, as if in sequence."""
    total = 0.0
    for steps in schedule.sessions.values():
        for step in steps:
            total += (step.at or 0.0) + getattr(step, "seconds", 0.0)
    return total


def _t(seconds: float) -> float:
    return round(seconds, 4)
