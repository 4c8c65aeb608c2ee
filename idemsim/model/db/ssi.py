"""Serializable snapshot isolation: PostgreSQL's predicate locks and rw-conflicts, at small-table granularity.

Only serializable transactions take part. A read leaves predicate (SIREAD) locks; a write that a concurrent
serializable reader did not see records a rw-conflict reader -> writer, whether found from the reader's side
(it skips an invisible version) or from the writer's (it writes under the reader's lock). Two consecutive
rw-conflicts whose outgoing end committed first are a *dangerous structure*; the rules that decide who gets
40001, and when, are PostgreSQL's (`OnConflict_CheckForSerializationFailure` and
`PreCommit_CheckForSerializationFailure` in predicate.c), with "prepared" equal to "committed".

Lock granularity is what PostgreSQL reaches on tables of one page: a key lookup through the unique index locks
the index's only page (so it covers a new row of *any* key) and the row versions it returned (more than two
of them become a heap page lock, i.e. all rows); a scan without that index locks the whole table.
"""

from __future__ import annotations

from collections.abc import Iterable

from .mvcc import ABORTED, ACTIVE, COMMITTED, SERIALIZABLE, RowVersion, Snapshot, Transaction

SERIALIZATION_FAILURE = "40001"
MAX_TUPLE_LOCKS_PER_PAGE = 2
"""PostgreSQL's `max_pred_locks_per_page`: a third tuple lock on a page becomes a page lock."""


class SerializationFailure(Exception):
    """Raised into the statement of the transaction that must fail with 40001."""


class PredicateLocks:
    """The SIREAD locks of all serializable transactions of one database, and the rw-conflict rules."""

    def __init__(self) -> None:
        self.range_readers: dict[str, dict[Transaction, None]] = {}
        """Per table: readers whose locks cover rows inserted later (relation lock, or the key index's page)."""
        self.row_readers: dict[str, dict[Transaction, None]] = {}
        """Per table: readers whose locks cover every existing row (relation lock or heap page lock)."""
        self.tuple_locks: dict[tuple[Transaction, str], int] = {}
        """Number of tuple locks each reader holds per table, for promotion to a page lock."""

    # -- reads -----------------------------------------------------------------------------------------------

    def on_read(self, reader: Transaction, snapshot: Snapshot, table: str, examined: Iterable[RowVersion],
                returned: Iterable[RowVersion], by_index: bool) -> None:
        """Record a scan: conflicts out to writers of invisible versions, then the predicate locks it leaves."""
        if reader.isolation != SERIALIZABLE:
            return
        for version in examined:
            self._conflict_out(reader, snapshot, version)
        self.range_readers.setdefault(table, {})[reader] = None
        if not by_index:
            self.row_readers.setdefault(table, {})[reader] = None
            return
        for version in returned:
            if version.xmin is reader or (version.readers is not None and reader in version.readers):
                continue
            if version.readers is None:
                version.readers = {}
            version.readers[reader] = None
            count = self.tuple_locks.get((reader, table), 0) + 1
            self.tuple_locks[(reader, table)] = count
            if count > MAX_TUPLE_LOCKS_PER_PAGE:
                self.row_readers.setdefault(table, {})[reader] = None

    def _conflict_out(self, reader: Transaction, snapshot: Snapshot, version: RowVersion) -> None:
        """A reader examined `version`: if a concurrent serializable writer made it look as it does, flag it."""
        if reader.doomed:
            raise SerializationFailure
        if version.xmin.state == ABORTED:
            return
        if snapshot.shows(version):
            writer = version.xmax if version.xmax is not None and version.xmax.state != ABORTED else None
        elif snapshot.sees(version.xmin):
            return  # deleted before the snapshot: dead to this reader
        else:
            writer = version.xmin
        if writer is None or writer is reader or writer.isolation != SERIALIZABLE or writer.doomed:
            return
        self._flag(reader, writer, me=reader)

    # -- writes ----------------------------------------------------------------------------------------------

    def on_write(self, writer: Transaction, table: str, version: RowVersion | None = None) -> None:
        """A serializable transaction inserts into `table` (version None) or updates/deletes `version`."""
        if writer.isolation != SERIALIZABLE:
            return
        if writer.doomed:
            raise SerializationFailure
        if version is None:
            holders = list(self.range_readers.get(table, {}))
        else:
            holders = list(self.row_readers.get(table, {})) + list(version.readers or ())
        assert writer.snapshot is not None
        for reader in sorted(set(holders), key=lambda tx: tx.xid):
            if reader is writer or reader.doomed or reader.state == ABORTED:
                continue
            if reader.state == COMMITTED and reader.commit_seq <= writer.snapshot.horizon:
                continue  # committed before the writer's snapshot: not concurrent
            self._flag(reader, writer, me=writer)

    # -- conflicts -------------------------------------------------------------------------------------------

    def _flag(self, reader: Transaction, writer: Transaction, me: Transaction) -> None:
        """Record reader -rw-> writer; on a dangerous structure fail `me` or doom the writer."""
        if writer in reader.out_conflicts:
            return
        reader.out_conflicts[writer] = None
        writer.in_conflicts[reader] = None
        if not _dangerous(reader, writer):
            return
        if me is writer or writer.state == COMMITTED:
            raise SerializationFailure
        writer.doomed = True

    def before_commit(self, tx: Transaction) -> None:
        """PreCommit check: fail if doomed; doom an active pivot whose out-conflict is `tx` committing first."""
        if tx.isolation != SERIALIZABLE:
            return
        if tx.doomed:
            raise SerializationFailure
        for near in list(tx.in_conflicts):
            if near.state != ACTIVE or near.doomed:
                continue
            for far in near.in_conflicts:
                if far is tx or (far.state == ACTIVE and not far.doomed):
                    near.doomed = True
                    break

    def forget(self, tx: Transaction) -> None:
        """An aborted transaction's conflicts disappear (its locks are ignored from now on)."""
        if tx.isolation != SERIALIZABLE:
            return  # it has none
        for other in tx.in_conflicts:
            other.out_conflicts.pop(tx, None)
        for other in tx.out_conflicts:
            other.in_conflicts.pop(tx, None)
        tx.in_conflicts.clear()
        tx.out_conflicts.clear()


def _committed_before(a: Transaction, b: Transaction) -> bool:
    """Whether `a` committed no later than `b` (b may still be active)."""
    return a.state == COMMITTED and (b.state != COMMITTED or a.commit_seq <= b.commit_seq)


def _dangerous(reader: Transaction, writer: Transaction) -> bool:
    """Whether the new reader -rw-> writer edge completes a structure that must not commit (predicate.c)."""
    if writer.state == COMMITTED and any(
        t.state == COMMITTED and t.commit_seq < writer.commit_seq for t in writer.out_conflicts
    ):
        return True  # reader -> writer -> T2, writer committed after T2
    for t2 in writer.out_conflicts:
        if _committed_before(t2, reader) and _committed_before(t2, writer):
            return True  # writer is a pivot whose out-conflict committed first
    if writer.state == COMMITTED:
        for t0 in reader.in_conflicts:
            if not t0.doomed and (t0.state != COMMITTED or t0.commit_seq >= writer.commit_seq):
                return True  # reader is a pivot whose out-conflict (the writer) committed first
    return False
