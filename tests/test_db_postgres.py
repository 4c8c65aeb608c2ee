"""The model against a real PostgreSQL: every shipped schedule must agree by the spec's rule.

The schedules run at scale 0.1 (a 5 s sleep becomes 0.5 s; every wait of interest stays at 0.3 s or more, and
deadlock_timeout stays 1 s), eight at a time, each in its own schema. Without a server these tests skip, and
under CI=true they fail (tests/pg.py).
"""

from __future__ import annotations

import functools
import itertools
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from idemsim.proof.agreement import compare, racy_instants
from idemsim.proof.postgres import PostgresRun, PostgresUnavailable, connect, run_on_postgres, run_postgres
from idemsim.proof.schedule import ModelRun, Schedule, load, parse, run_on_model, shipped

pytestmark = pytest.mark.slow
"""Against a real PostgreSQL: not on the fast path (pytest -m "not slow")."""

SCALE = 0.1
PARALLEL = 10
"""Schedules run at once (each holds one connection per session; PostgreSQL's default limit is 100)."""
RANDOM_SCHEDULES = 24
"""Random schedules compared too: combinations of statements nobody wrote a schedule for."""
OPS = ["register_key", "register_key", "insert_key", "select_key", "complete_key", "complete_key", "delete_key",
       "insert_charge", "count_charges", "lock_timeout"]
RECOVERY_OPS = ["lock_key", "lock_key", "claim_key", "claim_key", "set_point", "set_point"]
"""Drawn too when the key is unique (the spec defines them only then)."""


def random_schedule(seed: int) -> Schedule:
    """A random schedule of 2–4 contending sessions on two keys; every `at` is a distinct whole second.

    Distinct times keep PostgreSQL from racing where the model cannot know the order (two statements sent at
    the same instant); waits, rollbacks, disconnects, lock timeouts and all isolation levels still mix freely,
    and with a unique key so do row locks, claims (leases of 2.5 or 4.5 s) and recovery points.
    """
    rng = random.Random(seed)
    unique_key = rng.random() < 0.7
    taken: set[int] = {0}

    def slot(t: int) -> int:
        while t in taken:
            t += 1
        taken.add(t)
        return t

    sessions: dict[str, list[dict]] = {}
    if rng.random() < 0.5:
        sessions["s0"] = [{"op": "insert_key", "key": "k1", "fingerprint": "fp0", "at": 0}]
    for i in range(1, rng.randint(2, 4) + 1):
        t = slot(rng.randint(1, 6))
        explicit = rng.random() < 0.8
        steps = [{"op": "begin", "at": t, "isolation": rng.choice(
            ["read committed", "read committed", "repeatable read", "serializable"])}] if explicit else []
        for _ in range(rng.randint(1, 4)):
            t = slot(t + rng.randint(1, 5))
            key = "k1" if rng.random() < 0.75 else "k2"
            op = rng.choice(OPS + RECOVERY_OPS if unique_key else OPS)
            if op == "register_key" and not unique_key:
                op = "insert_key"
            fields = {"register_key": {"key": key, "fingerprint": f"fp{i}"},
                      "insert_key": {"key": key, "fingerprint": f"fp{i}"},
                      "select_key": {"key": key}, "delete_key": {"key": key},
                      "complete_key": {"key": key, "response": {"by": i}},
                      "insert_charge": {"amount": 100 * i, "key": key}, "count_charges": {},
                      "lock_timeout": {"seconds": rng.choice([2.5, 4.5])}, "lock_key": {"key": key},
                      "claim_key": {"key": key, "lease": rng.choice([2.5, 4.5])},
                      "set_point": {"key": key, "point": f"p{i}", "release": rng.random() < 0.3}}[op]
            steps.append({"op": op, "at": t, **fields})
        if explicit:
            steps.append({"op": rng.choice(["commit", "commit", "rollback", "disconnect"]),
                          "at": slot(t + rng.randint(1, 8))})
        sessions[f"s{i}"] = steps
    return parse({"version": 1, "unique_key": unique_key, "sessions": sessions}, f"random schedule {seed}")


def clear_lease_tests(run: ModelRun) -> bool:
    """Whether every `now()` a claim can use or record starts on a whole (unscaled) second.

    A transaction's `now()` is its `begin`, or an autocommit claim's start; if all are whole seconds, every lease
    test (2.5 or 4.5 s) is at least 0.5 s from its boundary, which PostgreSQL's few milliseconds of lag cannot
    cross. A step delayed by a lock timeout can start on a half second and tie; such schedules are left out.
    """
    starts = [e["start"] / SCALE for entries in run.document["sessions"].values() for e in entries
              if e["op"] in ("begin", "claim_key")]
    return all(abs(t - round(t)) < 1e-6 for t in starts)


def determinate_random_seeds(count: int) -> list[int]:
    """The first `count` seeds whose schedule has no racy instant (see `racy_instants`) and clear lease tests."""
    runs = ((seed, run_on_model(random_schedule(seed), SCALE)) for seed in itertools.count())
    seeds = (seed for seed, run in runs if not racy_instants(run) and clear_lease_tests(run))
    return list(itertools.islice(seeds, count))


@functools.cache
def _schedules() -> dict[str, Schedule]:
    return {**{name: load(name) for name in shipped()},
            **{f"random-{seed}": random_schedule(seed) for seed in determinate_random_seeds(RANDOM_SCHEDULES)}}


@pytest.fixture(scope="module")
def postgres_runs(postgres_dsn) -> dict[str, PostgresRun | BaseException]:
    """Every shipped schedule and the random ones, run once each on PostgreSQL at SCALE, in parallel."""
    schedules = _schedules()

    def one(name: str) -> PostgresRun | BaseException:
        try:
            return run_postgres(schedules[name], postgres_dsn, SCALE)
        except BaseException as error:  # reported by the test of that schedule
            return error

    with ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip(schedules, pool.map(one, schedules)))


@pytest.mark.postgres
class TestShippedSchedulesAgree:
    @pytest.mark.parametrize("name", list(_schedules()))
    def test_the_model_agrees_with_postgresql(self, name, postgres_runs):
        """The model's result and PostgreSQL's agree step by step, in the tables and in time."""
        outcome = postgres_runs[name]
        if isinstance(outcome, BaseException):
            raise outcome
        comparison = compare(_schedules()[name], outcome.document, SCALE)
        problems = [f"{v.session} step {v.index + 1}: {'; '.join(map(str, v.problems))}" for v in comparison.steps
                    if v.problems] + [str(problem) for problem in comparison.tables_problems]
        assert problems == []

    def test_the_ids_postgresql_returns_are_the_models(self, postgres_runs):
        """Inserts that insert nothing or roll back use up ids on PostgreSQL as in the model."""
        model = run_on_model(load("b10-sequence-ids-used-up"), SCALE)
        outcome = postgres_runs["b10-sequence-ids-used-up"]
        returned = [note.id for note in outcome.notes["s1"]]
        assert returned == [1, None, None, None, 4, None, 5]
        assert [r.id if r and r.rows else None for r in model.results["s1"]] == returned
        assert outcome.ids == model.ids == {"idempotency_keys": [1, 5], "charges": []}

    def test_each_run_drops_its_schema(self, postgres_runs, postgres_dsn):
        """After the runs no schema of this process is left on the server."""
        import os

        with connect(postgres_dsn) as conn:
            left = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s",
                                (f"idemsim_{os.getpid()}_%",)).fetchall()
        assert left == []

    def test_shipped_schedules_are_determinate(self):
        """No shipped schedule lets two sessions resume from a wait and race on (see racy_instants)."""
        assert {name: racy_instants(run_on_model(load(name), SCALE)) for name in shipped()} == \
            {name: [] for name in shipped()}

    def test_the_article_wait_is_seen_on_postgresql(self, postgres_runs):
        """On PostgreSQL too the second register_key waits until the first commits, then gets 0 rows."""
        s2 = postgres_runs["article-wait-commit"].document["sessions"]["s2"][0]
        assert (s2["rows"], round(s2["end"] - s2["start"], 1)) == (0, 0.4)


@pytest.mark.postgres
class TestRefusedValuesAgree:
    def test_refused_values_use_no_id_on_postgresql_either(self, postgres_runs):
        """Statements PostgreSQL refuses (42601, 22P05, 22003) take no id: PostgreSQL's ids are the model's."""
        model = run_on_model(load("x-refused-values"), SCALE)
        assert postgres_runs["x-refused-values"].ids == model.ids == {"idempotency_keys": [1, 3], "charges": [1]}

    def test_a_lock_timeout_beyond_its_range_is_refused_alike(self, postgres_dsn):
        """SET lock_timeout above 2147483647 ms: 22023 on PostgreSQL and on the model, and the block is aborted."""
        schedule = parse({"version": 1, "sessions": {"s1": [
            {"op": "lock_timeout", "seconds": 2147483.647}, {"op": "begin"},
            {"op": "lock_timeout", "seconds": 2147483.648}, {"op": "select_key", "key": "k"}, {"op": "rollback"}]}},
            "lock-timeout-range")
        comparison = compare(schedule, run_on_postgres(schedule, postgres_dsn), 1.0)
        assert [v.postgres["error"] for v in comparison.steps] == [None, None, "22023", "25P02", None]
        assert comparison.agrees

    def test_a_session_starts_with_the_stated_settings_and_commits_asynchronously(self, postgres_dsn):
        """Each session of a run has PostgreSQL's defaults, stated, and ``synchronous_commit`` off: a COMMIT does
        not wait for the disk, which the model does not have."""
        from idemsim.proof.postgres import SESSION_OPTIONS

        with connect(postgres_dsn, options=SESSION_OPTIONS) as conn:
            shown = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in (
                "deadlock_timeout", "lock_timeout", "statement_timeout", "default_transaction_isolation",
                "synchronous_commit")}
        assert shown == {"deadlock_timeout": "1s", "lock_timeout": "0", "statement_timeout": "0",
                         "default_transaction_isolation": "read committed", "synchronous_commit": "off"}

    def test_a_client_that_refuses_a_nul_still_lets_the_server_answer(self, postgres_dsn, monkeypatch):
        """Should psycopg refuse a text with a NUL itself, the runner sends what libpq would (cut at the NUL)."""
        import psycopg

        from idemsim.proof import postgres

        sent = postgres._statement

        def refusing(conn, op, sql):
            if "\x00" in sql:
                raise psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
            return sent(conn, op, sql)

        monkeypatch.setattr(postgres, "_statement", refusing)
        schedule = load("x-refused-values")
        assert compare(schedule, run_on_postgres(schedule, postgres_dsn, SCALE), SCALE).agrees


class TestUnavailable:
    def test_an_unreachable_server_is_one_line(self):
        """A server that does not answer gives PostgresUnavailable with the DSN, on one line."""
        with pytest.raises(PostgresUnavailable) as raised:
            run_on_postgres(load("article-wait-commit"), "postgresql://postgres@127.0.0.1:9/test")
        message = str(raised.value)
        assert message.startswith("cannot connect to PostgreSQL at postgresql://postgres@127.0.0.1:9/test: ")
        assert "\n" not in message

    def test_a_missing_psycopg_is_one_line(self, monkeypatch):
        """Without psycopg installed the error says which extra to install."""
        monkeypatch.setitem(sys.modules, "psycopg", None)
        with pytest.raises(PostgresUnavailable, match=r"psycopg is not installed; .*pip install 'idemsim\[pg\]'"):
            run_on_postgres(load("article-wait-commit"))

    def test_the_model_side_never_imports_psycopg(self):
        """Running a schedule on the model (and loading the db CLI) does not import psycopg."""
        code = ("import sys, idemsim.cli.db, idemsim.proof.render, idemsim.proof.agreement; "
                "from idemsim.proof.schedule import load, run_on_model; run_on_model(load('article-wait-commit')); "
                "print('psycopg' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "False"
