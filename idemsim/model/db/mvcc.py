"""Row versions, transactions, snapshots and lock waits: PostgreSQL's MVCC, reduced to what idemsim needs.

A `RowVersion` is visible to a `Snapshot` exactly when the snapshot sees the transaction that created it
(`xmin`) and does not see the one that deleted or replaced it (`xmax`). A snapshot sees its own transaction
and every transaction that committed before the snapshot was taken; never an uncommitted or later one.
A row lock that changes nothing (`SELECT … FOR UPDATE`) is kept apart from `xmax` (`RowVersion.locker`): it
never changes what anyone sees, and only statements that lock rows wait for it.
Nothing here takes simulated time or makes a choice; `engine.py` drives these objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import simpy

ACTIVE, COMMITTED, ABORTED = "active", "committed", "aborted"
"""The three states of a `Transaction`."""

READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE = "read committed", "repeatable read", "serializable"
ISOLATION_LEVELS = (READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE)
"""The isolation levels `begin` accepts, spelled as in `BEGIN ISOLATION LEVEL …` (lower case)."""

KEYS, CHARGES = "idempotency_keys", "charges"
"""The two tables of the schedule spec."""


NO_CONFLICTS: Mapping = MappingProxyType({})
"""The (always empty, read-only) rw-conflicts of a transaction that is not serializable."""


class Transaction:
    """One transaction: a `begin` … `commit`/`rollback` block, or one autocommit statement."""

    __slots__ = ("xid", "conn_name", "isolation", "explicit", "saved_lock_timeout", "start_time", "state",
                 "commit_seq", "snapshot", "waiters", "waiting", "doomed", "in_conflicts", "out_conflicts")

    def __init__(self, xid: int, conn_name: str, isolation: str, explicit: bool, saved_lock_timeout: float,
                 start_time: float = 0.0):
        self.xid = xid
        """Creation order, unique within a `Database`; used to order transactions deterministically."""
        self.conn_name = conn_name
        """Name of the connection that runs it (shown as `blocked_by`)."""
        self.isolation = isolation
        """One of `ISOLATION_LEVELS`; autocommit statements run in read committed."""
        self.explicit = explicit
        """True for a `begin` block; False for an autocommit statement."""
        self.saved_lock_timeout = saved_lock_timeout
        """The connection's `lock_timeout` when the block began: a rollback restores it (`SET` semantics)."""
        self.start_time = start_time
        """Simulated time the transaction began (`BEGIN`, or the autocommit statement's start): its `now()`."""
        self.state = ACTIVE
        """ACTIVE, then COMMITTED or ABORTED, once."""
        self.commit_seq: int | None = None
        """Position in the database's commit order, once committed."""
        self.snapshot: Snapshot | None = None
        """Repeatable read / serializable: the snapshot taken by the first statement, kept to the end."""
        self.waiters: list[LockWait] = []
        """Statements of other transactions blocked until this one ends, in the order they started waiting."""
        self.waiting: LockWait | None = None
        """The wait this transaction's current statement is blocked in, if any (edges of the wait-for graph)."""
        self.doomed = False
        """Serializable only: chosen to fail with 40001 at its next conflict check or at commit."""
        serializable = isolation == SERIALIZABLE
        self.in_conflicts: dict[Transaction, None] = {} if serializable else NO_CONFLICTS  # type: ignore
        """Serializable only: readers that did not see what this transaction wrote (reader -rw-> self)."""
        self.out_conflicts: dict[Transaction, None] = {} if serializable else NO_CONFLICTS  # type: ignore
        """Serializable only: writers whose writes this transaction did not see (self -rw-> writer)."""

    def __repr__(self) -> str:
        return f"<Transaction {self.xid} {self.conn_name} {self.isolation} {self.state}>"

    def statement_snapshot(self, commit_horizon: int) -> Snapshot:
        """The snapshot a statement starting now reads with: a fresh one in read committed, else the first one."""
        if self.isolation == READ_COMMITTED:
            return Snapshot(self, commit_horizon)
        if self.snapshot is None:
            self.snapshot = Snapshot(self, commit_horizon)
        return self.snapshot


FROZEN = Transaction(0, "", READ_COMMITTED, False, 0.0)
"""The creator of a row version every snapshot sees (PostgreSQL's frozen xmin): the database puts it in place of
a committed creator once no snapshot, present or future, can fail to see it, so that the finished transaction
itself need not be kept."""
FROZEN.state, FROZEN.commit_seq = COMMITTED, 0


class Snapshot:
    """What one transaction can see: its own writes and the commits numbered up to `horizon`."""

    __slots__ = ("owner", "horizon")

    def __init__(self, owner: Transaction, horizon: int):
        self.owner = owner
        """The transaction reading with this snapshot."""
        self.horizon = horizon
        """Number of commits the database had when the snapshot was taken."""

    def __repr__(self) -> str:
        return f"Snapshot(owner={self.owner!r}, horizon={self.horizon})"

    def sees(self, tx: Transaction) -> bool:
        """Whether `tx`'s writes are visible: it is the owner, or it committed before the snapshot."""
        return tx is self.owner or (tx.commit_seq is not None and tx.commit_seq <= self.horizon)

    def shows(self, version: RowVersion) -> bool:
        """Whether `version` is visible: its creator is seen and its deleter (if any) is not."""
        xmin = version.xmin
        if not (xmin is self.owner or (xmin.commit_seq is not None and xmin.commit_seq <= self.horizon)):
            return False
        xmax = version.xmax
        return xmax is None or not (xmax is self.owner or (xmax.commit_seq is not None
                                                           and xmax.commit_seq <= self.horizon))


class RowVersion:
    """One version of a row (a heap tuple). An UPDATE ends a version and appends its successor."""

    __slots__ = ("table", "id", "values", "xmin", "xmax", "locker", "successor", "readers")

    def __init__(self, table: str, id: int, values: dict[str, Any], xmin: Transaction):
        self.table = table
        """KEYS or CHARGES."""
        self.id = id
        """The row's `id` from its table's sequence; shared by all versions of the row."""
        self.values = values
        """Column values other than `id`."""
        self.xmin = xmin
        """The transaction that created this version."""
        self.xmax: Transaction | None = None
        """The transaction that deleted or updated this version (it may still be active, or have aborted)."""
        self.locker: Transaction | None = None
        """The last transaction that locked this version without changing it (`FOR UPDATE`, or an UPDATE that
        waited and then found it no longer matching); the lock lasts while that transaction is active."""
        self.successor: RowVersion | None = None
        """The version `xmax`'s UPDATE created (t_ctid); None after a DELETE."""
        self.readers: dict[Transaction, None] | None = None
        """Serializable transactions holding a predicate lock on this very version (SIREAD tuple lock); None
        until the first (most versions never have one)."""

    def __repr__(self) -> str:
        return (f"<RowVersion {self.table} id={self.id} {self.values} xmin={self.xmin.xid} "
                f"xmax={self.xmax and self.xmax.xid} locker={self.locker and self.locker.xid}>")

    def holder(self, tx: Transaction) -> Transaction | None:
        """Another, still active transaction that updated, deleted or locked this version: whom `tx` must wait
        for before it may change or lock the row; None when the row is free for `tx`."""
        for other in (self.xmax, self.locker):
            if other is not None and other is not tx and other.state == ACTIVE:
                return other
        return None

    def committed_live(self) -> bool:
        """Whether this version is part of the committed state (created by a commit, not deleted by one)."""
        return self.xmin.state == COMMITTED and (self.xmax is None or self.xmax.state != COMMITTED)


RELEASED, LOCK_TIMEOUT, DEADLOCK = "released", "55P03", "40P01"
"""How a `LockWait` ends: the holder ended, `lock_timeout` expired, or the deadlock check chose this waiter."""


class LockWait:
    """A statement of `waiter` blocked on the transaction lock of `holder` until it ends (XactLockTableWait)."""

    __slots__ = ("waiter", "holder", "since", "seq", "inserting", "done")

    def __init__(self, env: simpy.Environment, waiter: Transaction, holder: Transaction, seq: int, inserting: bool):
        self.waiter = waiter
        """The blocked transaction."""
        self.holder = holder
        """The transaction whose end the waiter awaits."""
        self.since = env.now
        """Simulated time the wait began."""
        self.seq = seq
        """Order in which waits began, database-wide: breaks ties between waits that began at the same time."""
        self.inserting = inserting
        """True for an insert's unique check (PostgreSQL may wake these in any order), False for a statement that
        locks the row (UPDATE, DELETE, `FOR UPDATE`), which queues on PostgreSQL's tuple lock."""
        self.done = env.event()
        """Succeeds once, with RELEASED, LOCK_TIMEOUT or DEADLOCK."""

    def end(self, outcome: str) -> None:
        """End the wait with `outcome`, unless it has ended already."""
        if not self.done.triggered:
            self.done.succeed(outcome)


class Sequence:
    """A bigserial sequence: `nextval` is never rolled back."""

    def __init__(self) -> None:
        self.last = 0
        """The last value handed out (0: none yet)."""

    def nextval(self) -> int:
        self.last += 1
        return self.last
