"""A SimPy model of PostgreSQL running the two tables of the DB schedule spec (docs/db-model.md).

Guarantees: statements take no simulated time except while blocked; a statement blocks only where PostgreSQL
blocks (an insert on a key whose row an uncommitted transaction inserted, updated or deleted; an UPDATE, DELETE
or `FOR UPDATE` of a row an uncommitted transaction updated, deleted or locked), and it waits on that
*transaction*, as PostgreSQL does. `now()` is the transaction's start (`BEGIN`, or the autocommit statement's
start, before any wait). Errors — PostgreSQL's refusals of bad values included — come back as SQLSTATE strings
in `Result.error`, never as exceptions. There is no randomness and no wall clock; where PostgreSQL may choose,
the model takes the documented choice (`Database.wake_order`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Sequence
from typing import Any, NamedTuple

import simpy

from .mvcc import (
    ABORTED,
    ACTIVE,
    CHARGES,
    COMMITTED,
    DEADLOCK,
    FROZEN,
    ISOLATION_LEVELS,
    KEYS,
    LOCK_TIMEOUT,
    READ_COMMITTED,
    RELEASED,
    SERIALIZABLE,
    LockWait,
    RowVersion,
    Snapshot,
    Transaction,
)
from .mvcc import Sequence as IdSequence
from .sql import DEFAULT_TTL, sql_for
from .ssi import PredicateLocks, SerializationFailure

__all__ = ["Database", "Connection", "Result", "DbEvent", "sql_for", "OPS", "arrival_order", "ISOLATION_LEVELS"]

OPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "begin": ((), ("isolation",)),
    "commit": ((), ()),
    "rollback": ((), ()),
    "register_key": (("key", "fingerprint"), ("ttl",)),
    "insert_key": (("key", "fingerprint"), ("ttl",)),
    "select_key": (("key",), ()),
    "complete_key": (("key", "response"), ("status",)),
    "delete_key": (("key",), ("status", "created_before")),
    "delete_expired": ((), ()),
    "insert_charge": (("amount",), ("key",)),
    "count_charges": ((), ()),
    "lock_key": (("key",), ()),
    "claim_key": (("key", "lease"), ()),
    "set_point": (("key", "point"), ("release",)),
    "lock_timeout": (("seconds",), ()),
    "disconnect": ((), ()),
}
"""Every statement `Connection.execute` accepts: op -> (required fields, optional fields)."""

_FIELDS = {op: (frozenset(required), frozenset(required + optional)) for op, (required, optional) in OPS.items()}
"""Per op: its required fields and all the fields it accepts, as sets (checked at every statement)."""

VACUUM_MIN = 4096
"""The database is vacuumed at the end of a transaction once this many row versions were written since it last
was (or half as many as it then left unsettled, if more): `Database.vacuum`, or its cheaper form that examines
only the versions after the settled ones (see `Database.settled`)."""
INT4_MIN, INT4_MAX = -2**31, 2**31 - 1
"""The range of PostgreSQL's `int` (the `amount` column); a value outside it fails with 22003."""
LOCK_TIMEOUT_MAX_MS = 2**31 - 1
"""The largest `lock_timeout` PostgreSQL accepts, milliseconds; a larger one fails with 22023."""


class Result(NamedTuple):
    """How one statement ended: the spec's result fields, plus what the model can tell beyond them (a named
    tuple: every statement makes one, and `Connection.statement` makes it the quick way)."""

    rows: int | None
    row: dict | None
    error: str | None
    id: int | None = None
    """Sequence value an insert used up (also when it inserted nothing or failed after taking it)."""
    waited: float = 0.0
    """Simulated seconds this statement spent blocked."""
    blocked_by: tuple[str, ...] = ()
    """Names of the connections it waited for, in order."""


class DbEvent:
    """A trace event: "wait" when a statement starts to block, "result" when any statement ends.

    ``sql``, the statement's text (`sql_for`), is rendered only when something reads it."""

    __slots__ = ("t", "conn", "kind", "op", "blocked_by", "result", "fields")

    def __init__(self, t: float, conn: str, kind: str, op: str, blocked_by: str | None = None,
                 result: Result | None = None, fields: dict | None = None):
        self.t = t
        self.conn = conn
        self.kind = kind
        self.op = op
        self.blocked_by = blocked_by
        self.result = result
        self.fields = fields
        """The statement's fields (its key, amount, response …), as `Connection.execute` got them."""

    @property
    def sql(self) -> str:
        return sql_for(self.op, self.fields or {})

    def __repr__(self) -> str:
        return (f"DbEvent(t={self.t!r}, conn={self.conn!r}, kind={self.kind!r}, op={self.op!r}, "
                f"blocked_by={self.blocked_by!r}, result={self.result!r}, fields={self.fields!r})")




class SqlError(Exception):
    """A statement failed with `sqlstate`; caught in `Connection.execute` and returned in `Result.error`."""

    def __init__(self, sqlstate: str):
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def arrival_order(waits: Sequence[LockWait]) -> Sequence[LockWait]:
    """The default wake order when a transaction ends: the waiter that started waiting first runs first."""
    return waits


class _Statement:
    """One statement as it runs: its op and fields, the sequence value it took, and its waits."""

    __slots__ = ("op", "fields", "id", "waited", "blocked_by")

    def __init__(self, op: str, fields: dict[str, Any]):
        self.op = op
        self.fields = fields
        self.id: int | None = None
        self.waited = 0.0
        self.blocked_by: list[str] | None = None

    @property
    def sql(self) -> str:
        return sql_for(self.op, self.fields)


_new = tuple.__new__
"""`Result` made without its ``__new__`` (a call less for every statement)."""

_NOTHING_RUN = _Statement("", {})
"""What a statement that reads and writes no table (``begin``, ``commit``, …) or fails before it does took and
waited: nothing (never changed)."""


class Database:
    """The two tables, their sequences, the unique index (optional), transactions and their lock waits."""

    def __init__(self, env: simpy.Environment, *, unique_key: bool = True, deadlock_timeout: float = 1.0,
                 on_event: Callable[[DbEvent], None] | None = None,
                 on_result: Callable[[str, str, dict, Result], None] | None = None,
                 wake_order: Callable[[Sequence[LockWait]], Sequence[LockWait]] = arrival_order):
        self.env = env
        self.unique_key = unique_key
        """Whether `idempotency_keys.key` has a UNIQUE constraint (and so an index that inserts check)."""
        self.deadlock_timeout = deadlock_timeout
        """Seconds a wait lasts before its session looks for a wait cycle (PostgreSQL's `deadlock_timeout`)."""
        self.on_event = on_event
        """Called with every `DbEvent`."""
        self.on_result = on_result
        """If given, called with (connection name, op, fields, `Result`) when a statement ends, instead of
        `on_event` with a "result" `DbEvent` (no event is made: a run without a trace feeds its tally so)."""
        self.wake_order = wake_order
        """Order in which the waiters of an ending transaction resume (they all resume at the same instant)."""
        self.versions: dict[str, list[RowVersion]] = {KEYS: [], CHARGES: []}
        """Every row version written, per table, in the order written, but those `vacuum` reclaimed."""
        self.versions_by_key: dict[str, RowVersion | tuple[RowVersion, ...]] = {}
        """`idempotency_keys` versions per key value: what the unique index (or a key lookup) reaches; read it
        with `key_versions`. A key's one version is kept as itself, several as a tuple: a load keeps an entry per
        key, most of them one version. A key stays here (with an empty tuple) when all its versions have been
        reclaimed."""
        self.written = {KEYS: 0, CHARGES: 0}
        """Row versions ever written, per table (reclaimed ones included)."""
        self.settled = {KEYS: 0, CHARGES: 0}
        """Per table, how many of its first versions are settled: when vacuum last saw them, each was created by
        a transaction every snapshot sees (`FROZEN`) and neither deleted, updated nor locked. Such a version
        changes only if a statement later deletes, updates or locks it (`_disturbed` counts those), so the
        vacuum that runs as versions are written examines the versions after them, not the whole table."""
        self._disturbed = 0
        """Settled versions deleted, updated or locked since the last whole `vacuum` (versions created by `FROZEN`,
        that is: every settled one, and some that are not yet)."""
        self._whole_at = VACUUM_MIN
        """The whole table is vacuumed once `_disturbed` reaches this: half the versions the last whole vacuum
        kept, or `VACUUM_MIN`."""
        self._unvacuumed = 0
        """Row versions written since the last vacuum."""
        self._vacuum_at = VACUUM_MIN
        """A vacuum runs when a transaction ends with this many versions written since the last one."""
        self._min_expiry = float("inf")
        """No key version written since the last `vacuum` (or kept by it) expires earlier than this."""
        self._holding: dict[Transaction, None] = {}
        """Active repeatable-read and serializable blocks: their snapshots outlive a statement."""
        self.sequences = {KEYS: IdSequence(), CHARGES: IdSequence()}
        """The bigserial sequences of the two tables."""
        self.predicate_locks = PredicateLocks()
        """Serializable transactions' SIREAD locks and rw-conflicts."""
        self.commits = 0
        """Number of commits so far: a snapshot's horizon."""
        self._xids = 0
        self._wait_seq = 0

    def connect(self, name: str) -> Connection:
        """A new session; `name` identifies it in traces and in `Result.blocked_by`."""
        return Connection(self, name)

    # -- committed state ----------------------------------------------------------------------------------------

    def key_counts(self) -> tuple[int, int]:
        """How many committed `idempotency_keys` rows there are, and how many of them are `in_progress`."""
        held = in_progress = 0
        for v in self.versions[KEYS]:
            if v.committed_live():
                held += 1
                in_progress += v.values["status"] == "in_progress"
        return held, in_progress

    def _live(self, table: str, order: Callable[[RowVersion], Any]) -> list[RowVersion]:
        return sorted((v for v in self.versions[table] if v.committed_live()), key=order)

    def committed_keys(self) -> list[dict]:
        """Committed `idempotency_keys` rows, by key then id: `id`, the spec's columns (`recovery_point` and
        `locked_at` included; times in simulated seconds, `locked_at` None when unclaimed) and `created_at`."""
        return [{"id": v.id, **v.values} for v in self._live(KEYS, _by_key_then_id)]

    def committed_charges(self) -> list[dict]:
        """Committed `charges` rows in insertion order: `id`, `amount`, `key`."""
        return [{"id": v.id, **v.values} for v in self._live(CHARGES, _by_id)]

    def any_in_progress(self) -> bool:
        """Whether a committed `idempotency_keys` row is `in_progress`."""
        return any(v.values["status"] == "in_progress" and v.committed_live() for v in self.versions[KEYS])

    def tables(self) -> dict:
        """The committed state in the result document's form (a charge row is the version's own values: read
        the rows, never change them)."""
        return {
            KEYS: [_key_row(v.values) for v in self._live(KEYS, _by_key_then_id)],
            CHARGES: [v.values for v in self._live(CHARGES, _by_id)],  # exactly its columns, never changed: shared
        }

    def take_tables(self) -> dict:
        """`tables`, for the database's last reader (the end of a run): its row versions are let go as the rows
        are made, so that the tables and the versions they come from are not all in memory at once. The
        database is empty afterwards."""
        keys = self._live(KEYS, _by_id)
        keys.sort(key=_key_of)  # by key then id, as `tables`, without a (key, id) tuple per version
        charges = self._live(CHARGES, _by_id)
        self.versions = {KEYS: [], CHARGES: []}
        self.versions_by_key = {}
        self.settled = {KEYS: 0, CHARGES: 0}
        key_rows = []
        for i, version in enumerate(keys):
            key_rows.append(_key_row(version.values))
            keys[i] = None
        return {KEYS: key_rows, CHARGES: [v.values for v in charges]}

    # -- transactions -------------------------------------------------------------------------------------------

    def _begin(self, conn: Connection, isolation: str, explicit: bool) -> Transaction:
        self._xids += 1
        tx = Transaction(self._xids, conn.name, isolation, explicit, conn.lock_timeout, self.env.now)
        if isolation != READ_COMMITTED:
            self._holding[tx] = None
        return tx

    def _snapshot(self, tx: Transaction) -> Snapshot:
        return tx.statement_snapshot(self.commits)

    def _commit(self, tx: Transaction) -> None:
        """Commit `tx`, or abort it and raise 40001 if serializable snapshot isolation forbids the commit."""
        if tx.isolation == SERIALIZABLE:
            try:
                self.predicate_locks.before_commit(tx)
            except SerializationFailure:
                self._abort(tx)
                raise SqlError("40001") from None
        self.commits += 1
        tx.commit_seq = self.commits
        tx.state = COMMITTED
        self._ended(tx)

    def _abort(self, tx: Transaction) -> None:
        """Roll `tx` back: its versions become invisible, the rows it deleted or updated come back."""
        if tx.state != ACTIVE:
            return
        tx.state = ABORTED
        self.predicate_locks.forget(tx)
        self._ended(tx)

    def _ended(self, tx: Transaction) -> None:
        """`tx` has just committed or aborted: its waiters resume; dead row versions may be reclaimed."""
        waits = tx.waiters
        tx.waiters = ()  # nothing waits on an ended transaction: no list kept while a row version holds it
        if waits:
            for wait in self.wake_order(waits):
                wait.end(RELEASED)
        if tx.isolation != READ_COMMITTED:
            self._holding.pop(tx, None)
        if self._unvacuumed >= self._vacuum_at:
            self.vacuum(whole=self._disturbed >= self._whole_at)

    def _disturb(self, version: RowVersion) -> None:
        """`version` is about to be deleted, updated or locked: if it may be settled, a whole vacuum is nearer."""
        if version.xmin is FROZEN:
            self._disturbed += 1

    def key_versions(self, key: str | None) -> tuple[RowVersion, ...]:
        """The versions of ``key`` in `versions_by_key`, oldest first."""
        found = self.versions_by_key.get(key, ())
        return (found,) if type(found) is RowVersion else found

    def _index(self, key: str, version: RowVersion) -> None:
        """Put a new version of ``key`` in `versions_by_key`."""
        by_key = self.versions_by_key
        found = by_key.get(key)
        by_key[key] = version if not found else (found, version) if type(found) is RowVersion else found + (version,)

    def _written(self, version: RowVersion) -> None:
        """A new row version is in its table's list (and, for a key, in `versions_by_key`)."""
        self.written[version.table] += 1
        self._unvacuumed += 1
        if version.table == KEYS:
            expires_at = version.values["expires_at"]
            if expires_at < self._min_expiry:
                self._min_expiry = expires_at

    # -- reclaiming row versions --------------------------------------------------------------------------------

    def horizon(self) -> int:
        """The oldest snapshot any statement may still read with: every version whose deleter committed at or
        before it is invisible to every snapshot, present or future. Read committed takes a snapshot per statement
        and reads it at once; repeatable read and serializable keep theirs to the end of the block."""
        horizon = self.commits
        for tx in self._holding:
            if tx.snapshot is not None and tx.snapshot.horizon < horizon:
                horizon = tx.snapshot.horizon
        return horizon

    def vacuum(self, whole: bool = True) -> None:
        """Reclaim row versions no snapshot can see, as PostgreSQL's VACUUM does, and forget finished transactions.

        A version goes when its creator aborted, or when its deleter (or updater) committed at or before the
        `horizon`: nothing can see it, wait on it, or find a conflict through it. In the versions kept, a
        creator every snapshot sees is replaced by `FROZEN`, an aborted deleter and a finished locker by None,
        since each of them changes nothing any more; so no finished transaction is kept alive by a row. Nothing a
        statement returns changes: the model behaves as if every version were still there. (A doomed serializable
        reader fails at a scan that would have examined a reclaimed version, as before: `Connection._scan_keys`.)
        Runs when enough versions were written since the last time that its cost per version stays constant.

        Not ``whole``, it examines only the versions after the `settled` ones: a settled version would be kept
        as it is, unless a statement has disturbed it since (`_disturbed`), and then it is reclaimed or cleared
        by the next whole vacuum, as a page PostgreSQL's VACUUM skips waits for the next aggressive one. So a
        load's dead versions are reclaimed a few thousand versions after they die, at a cost per version
        written that does not grow with the table."""
        horizon = self.horizon()
        removed: dict[int, RowVersion] = {}
        """The versions reclaimed, by id."""

        def keep(v: RowVersion) -> bool:
            xmin = v.xmin
            if xmin.state == ABORTED:
                removed[id(v)] = v
                return False
            xmax = v.xmax
            if xmax is not None:
                if xmax.state == COMMITTED:
                    if xmax.commit_seq <= horizon:
                        removed[id(v)] = v
                        return False
                elif xmax.state == ABORTED:
                    v.xmax = v.successor = None
            if xmin is not FROZEN and xmin.state == COMMITTED and xmin.commit_seq <= horizon:
                v.xmin = FROZEN
            locker = v.locker
            if locker is not None and locker.state != ACTIVE:
                v.locker = None
            return True

        unsettled = 0
        for table in (KEYS, CHARGES):
            versions = self.versions[table]
            start = 0 if whole else self.settled[table]
            tail = versions[start:]
            versions[start:] = [v for v in tail if keep(v)]  # (in place: the settled versions are not touched)
            if table == KEYS and removed:
                by_key = self.versions_by_key
                for key in {v.values["key"] for v in removed.values()}:  # (all of KEYS': it is vacuumed first)
                    rest = [v for v in self.key_versions(key) if id(v) not in removed]
                    by_key[key] = rest[0] if len(rest) == 1 else tuple(rest)
            end = len(versions)
            while start < end and (v := versions[start]).xmin is FROZEN and v.xmax is None and v.locker is None:
                start += 1  # settled: see `settled`
            self.settled[table] = start
            unsettled += end - start
        if whole:
            self._min_expiry = min((v.values["expires_at"] for v in self.versions[KEYS]), default=float("inf"))
            self._disturbed = 0
            self._whole_at = max(VACUUM_MIN, (len(self.versions[KEYS]) + len(self.versions[CHARGES])) // 2)
        self._unvacuumed = 0
        # The next one examines what is not settled now and what will be written: due once half as much as the
        # former is written, each version is examined about three times at most, and the dead ones stay under a
        # quarter of what it examines, or under VACUUM_MIN.
        self._vacuum_at = max(VACUUM_MIN, unsettled // 2)

    # -- lock waits and deadlocks ------------------------------------------------------------------------------

    def _new_wait(self, waiter: Transaction, holder: Transaction, inserting: bool) -> LockWait:
        self._wait_seq += 1
        wait = LockWait(self.env, waiter, holder, self._wait_seq, inserting)
        holder.waiters.append(wait)
        waiter.waiting = wait
        self._watch_for_deadlock(wait)
        return wait

    def _cycle(self, wait: LockWait) -> list[LockWait] | None:
        """The waits of a wait-for cycle through `wait`, or None."""
        waits = [wait]
        tx = wait.holder
        while tx is not wait.waiter:
            nxt = tx.waiting
            if nxt is None or nxt in waits:
                return None
            waits.append(nxt)
            tx = nxt.holder
        return waits

    def _watch_for_deadlock(self, wait: LockWait) -> None:
        """If `wait` closes a cycle, schedule the deadlock check that will find it.

        Each waiting session checks once, `deadlock_timeout` after its wait began; a check that ran before the
        cycle closed found nothing. So the victim is the member whose check comes first at or after now.
        """
        cycle = self._cycle(wait)
        if cycle is None:
            return
        now, timeout = self.env.now, self.deadlock_timeout
        victim = min((w for w in cycle if w.since + timeout >= now), key=lambda w: (w.since, w.seq))
        check = self.env.timeout(max(0.0, victim.since + timeout - now))
        check.callbacks.append(lambda _event: self._check_deadlock(victim))

    def _check_deadlock(self, wait: LockWait) -> None:
        if not wait.done.triggered and self._cycle(wait) is not None:
            wait.end(DEADLOCK)

    def _emit(self, event: DbEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)


class Connection:
    """One session: runs one statement at a time, in an open `begin` block or in autocommit."""

    def __init__(self, db: Database, name: str):
        self.db = db
        self.name = name
        """Shown in traces and in other statements' `blocked_by`."""
        self.tx: Transaction | None = None
        """The open `begin` block; it stays here, ABORTED, after an error until `commit`/`rollback`."""
        self.lock_timeout = 0.0
        """Seconds a statement may wait for a lock before 55P03; 0 waits forever."""
        self.closed = False
        """True after `disconnect`; later statements fail with 08003."""
        self.busy = False
        """True from the moment a statement is sent until its result is returned (waits for locks included)."""
        self.done: Callable[[], None] | None = None
        """If set, called when a statement has ended, its result recorded, before `execute` returns it (the API
        sets it on the connection of a handler whose process died while its statement ran)."""

    def __repr__(self) -> str:
        return f"<Connection {self.name}>"

    def execute(self, op: str, **fields: Any) -> Generator[simpy.Event, Any, Result]:
        """Run one statement: `result = yield from conn.execute("register_key", key="k", fingerprint="fp")`."""
        return self.statement(op, fields)

    def statement(self, op: str, fields: dict[str, Any]) -> Generator[simpy.Event, Any, Result]:
        """`execute` with the fields as a dict (which it keeps: it must not change afterwards)."""
        self.busy = True
        spec = _FIELDS.get(op)
        if spec is None:
            raise ValueError(f"unknown op {op!r}; allowed: {', '.join(OPS)}")
        names = fields.keys()
        if not (names == spec[1] or names == spec[0] or spec[0] <= names <= spec[1]):  # (all, or the required)
            required, optional = OPS[op]
            missing = [name for name in required if name not in fields]
            unknown = [name for name in fields if name not in required + optional]
            raise ValueError(f"{op}: missing fields {missing}, unknown fields {unknown}")
        db = self.db
        stmt = _NOTHING_RUN  # until a statement of the tables runs
        rows = row = error = None
        try:
            if self.closed:
                raise SqlError("08003")
            if op in _BLOCK_ENDS:
                self._end_block(commit=op == "commit")
                self.closed = op == "disconnect"
            else:
                for value in fields.values():
                    if isinstance(value, str) and "\x00" in value:
                        # A NUL ends the C string libpq sends: PostgreSQL reads a quoted literal that never closes.
                        # The parser finds that before it looks at the transaction: 42601 even in a failed one.
                        self._fail_block()
                        raise SqlError("42601")
                tx = self.tx
                if tx is not None and tx.state == ABORTED:
                    raise SqlError("25P02")
                if op == "begin":
                    isolation = fields.get("isolation") or READ_COMMITTED
                    if isolation not in ISOLATION_LEVELS:
                        raise ValueError(f"unknown isolation level {isolation!r}")
                    if tx is None:  # BEGIN inside a block is only a warning
                        self.tx = db._begin(self, isolation, explicit=True)
                elif op == "lock_timeout":
                    if round(fields["seconds"] * 1000) > LOCK_TIMEOUT_MAX_MS:
                        self._fail_block()
                        raise SqlError("22023")  # SET's value is checked when it runs
                    self.lock_timeout = float(fields["seconds"])
                else:
                    if tx is None:
                        tx = db._begin(self, READ_COMMITTED, explicit=False)
                    stmt = _Statement(op, fields)
                    try:
                        if op in _REFUSING:
                            _refuse_values(stmt)
                        run, may_wait = _STATEMENTS[op]
                        rows, row = (yield from run(self, tx, stmt)) if may_wait else run(self, tx, stmt)
                    except (SqlError, SerializationFailure) as failure:
                        db._abort(tx)
                        self._restore_settings(tx)
                        raise SqlError(getattr(failure, "sqlstate", "40001")) from None
                    if not tx.explicit:
                        db._commit(tx)
        except SqlError as failure:
            rows, row, error = None, None, failure.sqlstate
        blocked_by = stmt.blocked_by
        result = _new(Result, (rows, row, error, stmt.id, stmt.waited, tuple(blocked_by) if blocked_by else ()))
        if db.on_result is not None:
            db.on_result(self.name, op, fields, result)
        elif db.on_event is not None:
            db.on_event(DbEvent(db.env.now, self.name, "result", op, result=result, fields=fields))
        self.busy = False
        if self.done is not None:
            self.done()
        return result

    # -- transaction control ------------------------------------------------------------------------------------

    def _end_block(self, commit: bool) -> None:
        """COMMIT / ROLLBACK / disconnect: end the open block (a failed one always as a rollback)."""
        tx, self.tx = self.tx, None
        if tx is None or tx.state != ACTIVE:
            return
        if commit:
            try:
                self.db._commit(tx)
            except SqlError:
                self._restore_settings(tx)
                raise
        else:
            self.db._abort(tx)
            self._restore_settings(tx)

    def _fail_block(self) -> None:
        """A statement failed before it began: an open block is aborted (it stays open until commit/rollback)."""
        if self.tx is not None and self.tx.state == ACTIVE:
            self.db._abort(self.tx)
            self._restore_settings(self.tx)

    def _restore_settings(self, tx: Transaction) -> None:
        """A block that rolls back undoes its `SET lock_timeout`."""
        if tx.explicit:
            self.lock_timeout = tx.saved_lock_timeout

    def _wait_for(self, tx: Transaction, stmt: _Statement, holder: Transaction,
                  inserting: bool) -> Generator[simpy.Event, Any, None]:
        """Block until `holder` ends; raise 55P03 / 40P01 if the lock timeout or the deadlock check ends it."""
        db = self.db
        wait = db._new_wait(tx, holder, inserting)
        if stmt.blocked_by is None:
            stmt.blocked_by = []
        stmt.blocked_by.append(holder.conn_name)
        db._emit(DbEvent(db.env.now, self.name, "wait", stmt.op, blocked_by=holder.conn_name, fields=stmt.fields))
        if self.lock_timeout > 0:
            db.env.timeout(self.lock_timeout).callbacks.append(lambda _event: wait.end(LOCK_TIMEOUT))
        outcome = yield wait.done
        tx.waiting = None
        if wait in holder.waiters:
            holder.waiters.remove(wait)
        stmt.waited += db.env.now - wait.since
        if outcome != RELEASED:
            raise SqlError(outcome)

    # -- idempotency_keys -----------------------------------------------------------------------------------

    def _register_key(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        if not self.db.unique_key:
            raise SqlError("42P10")  # ON CONFLICT (key) needs a unique index; found at parse time
        return (yield from self._insert(tx, stmt, on_conflict_do_nothing=True))

    def _insert_key(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        return (yield from self._insert(tx, stmt, on_conflict_do_nothing=False))

    def _insert(self, tx: Transaction, stmt: _Statement,
                on_conflict_do_nothing: bool) -> Generator[simpy.Event, Any, tuple]:
        """INSERT a key row: take an id, check the unique index (waiting as needed), then insert or not."""
        db, f = self.db, stmt.fields
        snapshot = db._snapshot(tx) if tx.isolation != READ_COMMITTED else None  # read committed never reads it
        stmt.id = db.sequences[KEYS].nextval()  # the column default runs before the conflict check
        if db.unique_key:
            while True:
                holder, live = self._unique_check(tx, f["key"])
                if holder is None:
                    break
                yield from self._wait_for(tx, stmt, holder, inserting=True)
            if live is not None:
                if not on_conflict_do_nothing:
                    db.predicate_locks.on_write(tx, KEYS)  # SSI conflicts are reported before 23505
                    raise SqlError("23505")
                if tx.isolation != READ_COMMITTED and not snapshot.shows(live):
                    raise SqlError("40001")  # the conflicting row committed after this snapshot
                return 0, None
        if tx.isolation == SERIALIZABLE:
            db.predicate_locks.on_write(tx, KEYS)
        values = _KeyColumns(f["key"], f["fingerprint"], "in_progress", None,
                             tx.start_time + float(f.get("ttl") or DEFAULT_TTL), "started", None, db.env.now).__dict__
        version = RowVersion(KEYS, stmt.id, values, tx)
        db.versions[KEYS].append(version)
        db._index(f["key"], version)
        db._written(version)
        return 1, None

    def _unique_check(self, tx: Transaction, key: str) -> tuple[Transaction | None, RowVersion | None]:
        """The unique index's view (a dirty snapshot): a transaction to wait for, or a live row, or neither."""
        for version in self.db.key_versions(key):
            if version.xmin.state == ABORTED:
                continue
            if version.xmin.state == ACTIVE and version.xmin is not tx:
                return version.xmin, None  # inserted, not yet committed
            xmax = version.xmax
            if xmax is None or xmax.state == ABORTED:
                return None, version
            if xmax is tx or xmax.state == COMMITTED:
                continue  # deleted or replaced
            return xmax, None  # being deleted or updated, not yet committed
        return None, None

    def _scan_keys(self, tx: Transaction, snapshot: Snapshot, key: str | None,
                   match: Callable[[RowVersion], bool]) -> list[RowVersion]:
        """Visible key rows matching `match`, oldest id first; a lookup by key uses the unique index if any.

        The index returns every visible version of the key and each is predicate-locked before the rest of the
        WHERE clause (a status, a lease) is tested on it, as PostgreSQL's index scan does. Without the index a
        serializable scan examines every version of the table; any other scan finds the same rows through the
        key's versions (the WHERE clause of a key lookup names the key).
        """
        db = self.db
        by_index = key is not None and db.unique_key
        if tx.isolation != SERIALIZABLE:
            examined = db.key_versions(key) if key is not None else db.versions[KEYS]
            found = [v for v in examined if snapshot.shows(v) and match(v)]
            if len(found) > 1:
                found.sort(key=_by_id)
            return found
        if tx.doomed and (key in db.versions_by_key if by_index else db.written[KEYS]):
            # A doomed reader fails at the first version it examines; a reclaimed one counts (`Database.vacuum`).
            raise SerializationFailure
        examined = db.key_versions(key) if by_index else db.versions[KEYS]
        visible = sorted((v for v in examined if snapshot.shows(v)), key=_by_id)
        returned = [v for v in visible if v.values["key"] == key] if by_index else visible
        db.predicate_locks.on_read(tx, snapshot, KEYS, examined, returned, by_index)
        return [v for v in visible if match(v)]

    def _select_key(self, tx: Transaction, stmt: _Statement) -> tuple:
        key = stmt.fields["key"]
        rows = self._scan_keys(tx, self.db._snapshot(tx), key, lambda v: v.values["key"] == key)
        row = None
        if rows:
            values = rows[0].values
            row = {"status": values["status"], "fingerprint": values["fingerprint"], "response": values["response"]}
        return len(rows), row

    def _complete_key(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        f = stmt.fields
        key = f["key"]
        change = {"status": f.get("status") or "done", "response": f["response"]}
        changed = yield from self._modify(tx, stmt, key, lambda v: v.values["key"] == key, change)
        return len(changed), None

    def _delete_key(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        f = stmt.fields
        status, before = f.get("status"), f.get("created_before")

        def match(v: RowVersion) -> bool:
            return (v.values["key"] == f["key"] and (status is None or v.values["status"] == status)
                    and (before is None or v.values["created_at"] < before))

        return len((yield from self._modify(tx, stmt, f["key"], match, None))), None

    def _delete_expired(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        now = tx.start_time
        if now < self.db._min_expiry and tx.isolation != SERIALIZABLE:
            self.db._snapshot(tx)
            return 0, None  # no version written since the last vacuum, nor kept by it, has expired
        changed = yield from self._modify(tx, stmt, None, lambda v: v.values["expires_at"] <= now, None)
        return len(changed), None

    def _lock_key(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        """SELECT … FOR UPDATE: lock every visible row of the key (waiting for whoever holds it), and read it."""
        key = stmt.fields["key"]

        def match(v: RowVersion) -> bool:
            return v.values["key"] == key

        locked: list[RowVersion] = []
        for version in self._scan_keys(tx, self.db._snapshot(tx), key, match):
            target = yield from self._lock_row(tx, stmt, version, match)
            if target is not None:
                self.db._disturb(target)
                target.locker = tx
                locked.append(target)
        row = {c: locked[0].values[c] for c in ("status", "recovery_point")} if locked else None
        return len(locked), row

    def _claim_key(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        """Set `locked_at = now()` where the lease has run out (or none was taken); RETURNING recovery_point.

        The lease test uses `now()`, the transaction's start, in whole microseconds as PostgreSQL's timestamps.
        """
        f = stmt.fields
        now = tx.start_time

        def match(v: RowVersion) -> bool:
            locked_at = v.values["locked_at"]
            return v.values["key"] == f["key"] and (
                locked_at is None or _micros(locked_at) < _micros(now) - _micros(f["lease"]))

        changed = yield from self._modify(tx, stmt, f["key"], match, {"locked_at": now})
        row = {"recovery_point": changed[0].values["recovery_point"]} if changed else None
        return len(changed), row

    def _set_point(self, tx: Transaction, stmt: _Statement) -> Generator[simpy.Event, Any, tuple]:
        """Record the recovery point; with `release`, also give the lease up (`locked_at = NULL`)."""
        f = stmt.fields
        change: dict[str, Any] = {"recovery_point": f["point"]}
        if f.get("release"):
            change["locked_at"] = None
        changed = yield from self._modify(tx, stmt, f["key"], lambda v: v.values["key"] == f["key"], change)
        return len(changed), None

    def _modify(self, tx: Transaction, stmt: _Statement, key: str | None, match: Callable[[RowVersion], bool],
                change: dict | None) -> Generator[simpy.Event, Any, list[RowVersion]]:
        """UPDATE (`change`) or DELETE (None) the visible rows that `match`, each after waiting for whoever holds
        it; return the new versions (UPDATE) or the deleted ones (DELETE)."""
        db = self.db
        serializable = tx.isolation == SERIALIZABLE
        changed: list[RowVersion] = []
        for version in self._scan_keys(tx, db._snapshot(tx), key, match):
            locker = version.locker
            if version.xmax is None and (locker is None or locker is tx or locker.state != ACTIVE):
                target = version  # nobody holds the row: `_lock_row` would take it as it is
            else:
                target = yield from self._lock_row(tx, stmt, version, match)
                if target is None:
                    continue
            if serializable:
                db.predicate_locks.on_write(tx, KEYS, target)
            db._disturb(target)
            target.xmax = tx
            if change is not None:
                values = target.values.copy()  # (a copy of a shared-key dict shares its keys: `_KeyColumns`)
                values.update(change)
                successor = RowVersion(KEYS, target.id, values, tx)
                target.successor = successor
                db.versions[KEYS].append(successor)
                db._index(values["key"], successor)
                db._written(successor)
                changed.append(successor)
            else:
                target.successor = None
                changed.append(target)
        return changed

    def _lock_row(self, tx: Transaction, stmt: _Statement, version: RowVersion,
                  match: Callable[[RowVersion], bool]) -> Generator[simpy.Event, Any, RowVersion | None]:
        """Wait until no other transaction holds the row; return the version to change or lock, or None.

        A holder that only locked the row changed nothing: once it ends, the same version is taken. After a
        committed update or delete, read committed follows the row to its newest version, locks it and re-checks
        the WHERE clause there (EvalPlanQual): a version that no longer matches gives no row but **stays locked**
        until `tx` ends, and a deleted row gives nothing. Repeatable read and serializable fail with 40001
        instead of following (also without waiting, when the change committed after their snapshot).
        """
        followed = False
        while True:
            holder = version.holder(tx)
            if holder is not None:
                yield from self._wait_for(tx, stmt, holder, inserting=False)
                continue
            xmax = version.xmax
            if xmax is None or xmax.state == ABORTED:
                if followed and not match(version):
                    self.db._disturb(version)
                    version.locker = tx
                    return None
                return version
            if xmax is tx:
                return None  # this statement already changed the row
            if tx.isolation != READ_COMMITTED:
                raise SqlError("40001")
            version = version.successor
            if version is None:
                return None
            followed = True

    # -- charges --------------------------------------------------------------------------------------------

    def _insert_charge(self, tx: Transaction, stmt: _Statement) -> tuple:
        db = self.db
        if tx.isolation != READ_COMMITTED:
            db._snapshot(tx)  # the block's snapshot is taken by its first statement
        stmt.id = db.sequences[CHARGES].nextval()
        if tx.isolation == SERIALIZABLE:
            db.predicate_locks.on_write(tx, CHARGES)
        version = RowVersion(CHARGES, stmt.id, _ChargeColumns(stmt.fields["amount"], stmt.fields.get("key")).__dict__,
                             tx)
        db.versions[CHARGES].append(version)
        db._written(version)
        return 1, None

    def _count_charges(self, tx: Transaction, stmt: _Statement) -> tuple:
        db = self.db
        snapshot = db._snapshot(tx)
        examined = db.versions[CHARGES]
        if tx.isolation == SERIALIZABLE and tx.doomed and db.written[CHARGES]:
            raise SerializationFailure  # as at the first version examined, reclaimed or not (`Database.vacuum`)
        visible = [v for v in examined if snapshot.shows(v)]
        db.predicate_locks.on_read(tx, snapshot, CHARGES, examined, visible, by_index=False)
        return None, {"count": len(visible)}


# A load keeps a row version per payment and more. A version's `values` (and a row of `Database.tables`) is the
# attribute dict of an instance of one of these classes: a plain `dict`, the same as the literal it replaces
# (equality, order, JSON), whose keys CPython keeps in one table shared by all the instances of the class (a
# split table; a copy shares it too), so that each holds only its values: 160 bytes a key version instead of
# 280. A dict that gains or loses a key is given a table of its own, the same dict to every reader.
class _KeyColumns:
    def __init__(self, key, fingerprint, status, response, expires_at, recovery_point, locked_at,
                 created_at) -> None:
        self.key = key
        self.fingerprint = fingerprint
        self.status = status
        self.response = response
        self.expires_at = expires_at
        self.recovery_point = recovery_point
        self.locked_at = locked_at
        self.created_at = created_at


class _ChargeColumns:
    def __init__(self, amount, key) -> None:
        self.amount = amount
        self.key = key


class _KeyRow:
    def __init__(self, key, fingerprint, status, response) -> None:
        self.key = key
        self.fingerprint = fingerprint
        self.status = status
        self.response = response


def _key_row(values: dict) -> dict:
    """A key version's row in the tables: its key, fingerprint, status and response (a shared-key dict)."""
    return _KeyRow(values["key"], values["fingerprint"], values["status"], values["response"]).__dict__


def _by_id(version: RowVersion) -> int:
    return version.id


def _key_of(version: RowVersion) -> str:
    return version.values["key"]


def _by_key_then_id(version: RowVersion) -> tuple:
    return version.values["key"], version.id


_STATEMENTS: dict[str, tuple[Callable, bool]] = {
    op: (getattr(Connection, "_" + op), inspect.isgeneratorfunction(getattr(Connection, "_" + op)))
    for op in OPS if op not in ("begin", "commit", "rollback", "lock_timeout", "disconnect")}
"""Per statement: the method that runs it and whether it may wait (a generator)."""
_BLOCK_ENDS = frozenset({"commit", "rollback", "disconnect"})
_REFUSING = frozenset({"complete_key", "insert_charge"})
"""The statements whose values `_refuse_values` checks."""


def _refuse_values(stmt: _Statement) -> None:
    """Values PostgreSQL refuses while it analyses the statement (after the failed-transaction check, before it
    runs, so before any sequence value is taken): 22P05 for a NUL in a jsonb string (`\\u0000`, as JSON
    writes it), 22003 for an amount outside `int`."""
    f = stmt.fields
    if stmt.op == "complete_key" and _has_nul(f["response"]):
        raise SqlError("22P05")
    if stmt.op == "insert_charge" and not INT4_MIN <= f["amount"] <= INT4_MAX:
        raise SqlError("22003")


def _has_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL in any string, object keys included (walked without recursion)."""
    try:
        if "\\x00" not in repr(value):
            return False  # repr shows every NUL of a string as \x00 (the walk below decides when it shows one)
    except RecursionError:
        pass  # nested deeper than repr goes
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return False


def _micros(seconds: float) -> int:
    """A time in whole microseconds, the resolution of PostgreSQL's timestamps and intervals."""
    return round(seconds * 1_000_000)
