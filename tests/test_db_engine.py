"""The DB model, behaviour by behaviour (the numbered list of the DB schedule spec, 1–14), as specifications.

Each test runs a small schedule on the model and asserts every step's (op, start, end, rows, row, error).
"""

from __future__ import annotations

import pytest
import simpy

from idemsim.model.db.engine import Database, DbEvent, Result
from idemsim.proof.agreement import model_runs
from idemsim.proof.schedule import ModelRun, parse, run_on_model

# -- schedule shorthand ---------------------------------------------------------------------------------------------


def _step(op: str, at: float | None, **fields) -> dict:
    step = {"op": op, **{k: v for k, v in fields.items() if v is not None}}
    if at is not None:
        step["at"] = at
    return step


def begin(at=None, isolation=None):
    return _step("begin", at, isolation=isolation)


def commit(at=None):
    return _step("commit", at)


def rollback(at=None):
    return _step("rollback", at)


def disconnect(at=None):
    return _step("disconnect", at)


def register(key="k", fp="fp1", at=None):
    return _step("register_key", at, key=key, fingerprint=fp)


def insert(key="k", fp="fp1", at=None):
    return _step("insert_key", at, key=key, fingerprint=fp)


def select(key="k", at=None):
    return _step("select_key", at, key=key)


def complete(key="k", response=None, at=None):
    return _step("complete_key", at, key=key, response=response or {"status": 201})


def delete(key="k", at=None):
    return _step("delete_key", at, key=key)


def charge(amount=1000, key="k", at=None):
    return _step("insert_charge", at, amount=amount, key=key)


def count(at=None):
    return _step("count_charges", at)


def lock_timeout(seconds, at=None):
    return _step("lock_timeout", at, seconds=seconds)


def sleep(seconds, at=None):
    return _step("sleep", at, seconds=seconds)


def lock(key="k", at=None):
    return _step("lock_key", at, key=key)


def claim(key="k", lease=4.5, at=None):
    return _step("claim_key", at, key=key, lease=lease)


def set_point(key="k", point="charged", release=None, at=None):
    return _step("set_point", at, key=key, point=point, release=release)


def run(sessions: dict, unique_key: bool = True) -> ModelRun:
    return run_on_model(parse({"version": 1, "unique_key": unique_key, "sessions": sessions}, "test"))


def lanes(model_run: ModelRun) -> dict[str, list[tuple]]:
    """Every step of every session as (op, start, end, rows, row, error)."""
    return {name: [(e["op"], e["start"], e["end"], e["rows"], e["row"], e["error"]) for e in entries]
            for name, entries in model_run.document["sessions"].items()}


NEW = {"status": "in_progress", "fingerprint": "fp1", "response": None}
DONE = {"status": "done", "fingerprint": "fp1", "response": {"status": 201}}
HOLDS_K_UNTIL_5 = [begin(0), register(), sleep(5), commit()]
"""s1 of the article: inserts k at 0, commits at 5."""


# -- 1 ----------------------------------------------------------------------------------------------------------------


class TestInsertWaits:
    def test_insert_waits_for_an_uncommitted_insert(self):
        """A register_key of a key another transaction inserted waits until that transaction commits."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [register(at=1)]}))["s2"] == [
            ("register_key", 1, 5, 0, None, None)]

    def test_insert_waits_for_an_uncommitted_update(self):
        """An insert of a key whose row another transaction updated waits for it."""
        result = run({"s1": [register(at=0), begin(), complete(), sleep(5), commit()],
                      "s2": [register(at=1)], "s3": [insert(at=2)]})
        assert lanes(result)["s2"] == [("register_key", 1, 5, 0, None, None)]
        assert lanes(result)["s3"] == [("insert_key", 2, 5, None, None, "23505")]

    def test_insert_waits_for_an_uncommitted_delete(self):
        """An insert of a key whose row another transaction deleted waits, then inserts after the commit."""
        result = run({"s1": [register(at=0), begin(), delete(), sleep(5), commit()], "s2": [register(fp="fp2", at=1)]})
        assert lanes(result)["s2"] == [("register_key", 1, 5, 1, None, None)]
        assert result.document["tables"]["idempotency_keys"] == [{**NEW, "key": "k", "fingerprint": "fp2"}]

    def test_a_committed_row_never_causes_a_wait(self):
        """A committed, untouched row gives 0 rows / 23505 at once."""
        assert lanes(run({"s1": [register(at=0)], "s2": [register(at=1), insert()]}))["s2"] == [
            ("register_key", 1, 1, 0, None, None), ("insert_key", 1, 1, None, None, "23505")]

    def test_select_never_waits(self):
        """select_key of a key another transaction holds returns at once and sees no row."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [select(at=1)]}))["s2"] == [
            ("select_key", 1, 1, 0, None, None)]

    def test_the_wait_is_on_the_holding_transaction(self):
        """The waiting statement's Result names the connection it waited for and how long."""
        result = run({"s1": HOLDS_K_UNTIL_5, "s2": [register(at=1)]})
        assert result.results["s2"] == [Result(0, None, None, id=2, waited=4.0, blocked_by=("s1",))]


# -- 2 ----------------------------------------------------------------------------------------------------------------


class TestWhatTheWaiterGets:
    def test_read_committed_register_gets_zero_rows(self):
        """After the holder commits, a read committed register_key gets 0 rows and sees the stored response."""
        result = run({"s1": [begin(0), register(), complete(), sleep(5), commit()],
                      "s2": [register(at=1), select()]})
        assert lanes(result)["s2"] == [("register_key", 1, 5, 0, None, None), ("select_key", 5, 5, 1, DONE, None)]

    def test_repeatable_read_register_gets_40001_after_waiting(self):
        """A repeatable read waiter whose snapshot predates the commit gets 40001 when the holder commits."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(1, "repeatable read"), count(), register(at=2), rollback()]}))["s2"] == [
            ("begin", 1, 1, None, None, None), ("count_charges", 1, 1, None, {"count": 0}, None),
            ("register_key", 2, 5, None, None, "40001"), ("rollback", 5, 5, None, None, None)]

    def test_repeatable_read_register_gets_40001_at_once(self):
        """If the commit came after the snapshot but before the statement, 40001 comes without a wait."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(3, "repeatable read"), count(), register(at=6), rollback()]}))["s2"][2] == \
            ("register_key", 6, 6, None, None, "40001")

    def test_serializable_register_gets_40001(self):
        """A serializable register_key waiting for a row that commits after its snapshot gets 40001."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(1, "serializable"), count(), register(at=2), rollback()]}))["s2"][2] == \
            ("register_key", 2, 5, None, None, "40001")

    def test_a_snapshot_taken_after_the_commit_sees_the_row(self):
        """A repeatable read transaction whose first statement follows the commit gets 0 rows, as read committed."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(1, "repeatable read"), register(at=6), commit()]}))["s2"][1] == \
            ("register_key", 6, 6, 0, None, None)

    @pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
    def test_insert_key_gets_23505(self, isolation):
        """insert_key waiting for a row that commits gets 23505."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(1, isolation), count(), insert(at=2), rollback()]}))["s2"][2] == \
            ("insert_key", 2, 5, None, None, "23505")

    def test_serializable_insert_key_after_both_read_gets_40001(self):
        """Both serializable and both read the key first: the waiting insert_key gets 40001, not 23505."""
        result = run({"s1": [begin(0, "serializable"), select(), insert(at=1), sleep(4), commit()],
                      "s2": [begin(2, "serializable"), select(), insert(at=3), rollback()]})
        assert lanes(result)["s2"] == [
            ("begin", 2, 2, None, None, None), ("select_key", 2, 2, 0, None, None),
            ("insert_key", 3, 5, None, None, "40001"), ("rollback", 5, 5, None, None, None)]

    def test_serializable_insert_key_when_only_the_waiter_read_gets_23505(self):
        """Only the waiter read the key: its insert_key gets 23505."""
        result = run({"s1": [begin(0, "serializable"), insert(), sleep(5), commit()],
                      "s2": [begin(1, "serializable"), select(), insert(at=2), rollback()]})
        assert lanes(result)["s2"][2] == ("insert_key", 2, 5, None, None, "23505")

    @pytest.mark.parametrize("end", [rollback(), disconnect()])
    def test_the_waiter_inserts_when_the_inserter_rolls_back(self, end):
        """The inserting transaction rolls back or disconnects: the waiter inserts its row."""
        result = run({"s1": [begin(0), register(), sleep(5), end], "s2": [insert(fp="fp2", at=1)]})
        assert lanes(result)["s2"] == [("insert_key", 1, 5, 1, None, None)]
        assert result.document["tables"]["idempotency_keys"] == [{**NEW, "key": "k", "fingerprint": "fp2"}]

    @pytest.mark.parametrize("change", [complete(), delete()])
    def test_an_update_or_delete_that_rolls_back_leaves_the_row(self, change):
        """The holder updated or deleted the row and rolls back: register_key gets 0 rows, insert_key 23505."""
        result = run({"s1": [register(at=0), begin(), change, sleep(5), rollback()],
                      "s2": [register(at=1)], "s3": [insert(at=2)]})
        assert lanes(result)["s2"] == [("register_key", 1, 5, 0, None, None)]
        assert lanes(result)["s3"] == [("insert_key", 2, 5, None, None, "23505")]


# -- 3 ----------------------------------------------------------------------------------------------------------------


class TestUpdateAndDeleteWait:
    def test_read_committed_update_waits_and_the_last_writer_wins(self):
        """complete_key of a row another transaction updated waits, then updates the newest version."""
        result = run({"s1": [register(at=0), begin(), complete(response={"by": 1}), sleep(5), commit()],
                      "s2": [complete(response={"by": 2}, at=1)]})
        assert lanes(result)["s2"] == [("complete_key", 1, 5, 1, None, None)]
        assert result.document["tables"]["idempotency_keys"][0]["response"] == {"by": 2}

    @pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
    @pytest.mark.parametrize("change", [complete(response={"by": 2}), delete()])
    def test_repeatable_read_and_serializable_get_40001(self, isolation, change):
        """complete_key / delete_key waiting for a committed update fail with 40001 in repeatable read and up."""
        result = run({"s1": [register(at=0), begin(), complete(response={"by": 1}), sleep(5), commit()],
                      "s2": [begin(1, isolation), {**change, "at": 1}, rollback()]})
        assert lanes(result)["s2"][1] == (change["op"], 1, 5, None, None, "40001")

    def test_a_committed_concurrent_update_fails_repeatable_read_without_a_wait(self):
        """A row updated and committed after the snapshot fails a repeatable read update at once."""
        result = run({"s1": [register(at=0), complete(at=2)],
                      "s2": [begin(1, "repeatable read"), select(), complete(response={"by": 2}, at=3), rollback()]})
        assert lanes(result)["s2"][2] == ("complete_key", 3, 3, None, None, "40001")

    def test_a_row_deleted_meanwhile_is_not_updated(self):
        """After waiting for a committed delete, read committed delete_key / complete_key find 0 rows."""
        result = run({"s1": [register(at=0), begin(), delete(), sleep(5), commit()],
                      "s2": [delete(at=1)], "s3": [complete(at=2)]})
        assert lanes(result)["s2"] == [("delete_key", 1, 5, 0, None, None)]
        assert lanes(result)["s3"] == [("complete_key", 2, 5, 0, None, None)]

    def test_an_uncommitted_insert_is_not_updated_and_not_waited_for(self):
        """complete_key and delete_key do not see another transaction's uncommitted row: 0 rows, no wait."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [complete(at=1), delete()]}))["s2"] == [
            ("complete_key", 1, 1, 0, None, None), ("delete_key", 1, 1, 0, None, None)]


# -- 4 ----------------------------------------------------------------------------------------------------------------


class TestSnapshots:
    def test_read_committed_takes_a_snapshot_per_statement(self):
        """Read committed sees a row at the first statement after its commit, never before."""
        result = run({"s1": HOLDS_K_UNTIL_5, "rc": [begin(0), select(at=2), select(at=6), commit()]})
        assert lanes(result)["rc"][1:3] == [("select_key", 2, 2, 0, None, None), ("select_key", 6, 6, 1, NEW, None)]

    @pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
    def test_repeatable_read_keeps_the_first_statements_snapshot(self, isolation):
        """Repeatable read and serializable see no row that committed after their first statement."""
        result = run({"s1": HOLDS_K_UNTIL_5, "rr": [begin(0, isolation), select(at=2), select(at=6), commit()]})
        assert lanes(result)["rr"][1:3] == [("select_key", 2, 2, 0, None, None), ("select_key", 6, 6, 0, None, None)]

    def test_the_snapshot_is_taken_by_the_first_statement_not_by_begin(self):
        """A repeatable read transaction that began before the commit but reads after it sees the row."""
        result = run({"s1": HOLDS_K_UNTIL_5, "rr": [begin(0, "repeatable read"), select(at=6), commit()]})
        assert lanes(result)["rr"][1] == ("select_key", 6, 6, 1, NEW, None)

    def test_a_transaction_sees_its_own_rows(self):
        """A transaction reads the row it inserted and updated before it commits."""
        assert lanes(run({"s1": [begin(0, "repeatable read"), register(), complete(), select(), commit()]}))["s1"][3] \
            == ("select_key", 0, 0, 1, DONE, None)


# -- 5 ----------------------------------------------------------------------------------------------------------------


class TestSeveralWaiters:
    def test_on_commit_all_waiters_get_zero_rows_at_once(self):
        """Several inserts wait on one key; the commit releases all of them at the same moment."""
        result = lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [register(at=1)], "s3": [register(at=2)],
                            "s4": [insert(at=3)]}))
        assert [result["s2"], result["s3"], result["s4"]] == [
            [("register_key", 1, 5, 0, None, None)], [("register_key", 2, 5, 0, None, None)],
            [("insert_key", 3, 5, None, None, "23505")]]

    def test_on_rollback_the_first_waiter_inserts_and_the_others_wait_on_it(self):
        """After a rollback the waiter that started first inserts; the next one now waits for that transaction."""
        result = run({"s1": [begin(0), register(), sleep(5), rollback()],
                      "s2": [begin(1), register(fp="fp2"), sleep(4), commit()],
                      "s3": [begin(2), register(fp="fp3"), sleep(1), commit()]})
        assert lanes(result)["s2"][1] == ("register_key", 1, 5, 1, None, None)
        assert lanes(result)["s3"][1] == ("register_key", 2, 9, 0, None, None)
        assert result.results["s3"][1].blocked_by == ("s1", "s2")

    def test_every_order_postgresql_could_choose_is_enumerable(self):
        """Under the other wake order the second waiter inserts first (db compare accepts either)."""
        schedule = parse({"version": 1, "sessions": {
            "s1": [begin(0), register(), sleep(5), rollback()],
            "s2": [begin(1), register(fp="fp2"), sleep(4), commit()],
            "s3": [begin(2), register(fp="fp3"), sleep(1), commit()]}})
        winners = [run.document["tables"]["idempotency_keys"][0]["fingerprint"] for run in model_runs(schedule)]
        assert winners == ["fp2", "fp3"]


# -- 6 ----------------------------------------------------------------------------------------------------------------


class TestLockTimeout:
    def test_the_waiter_fails_with_55P03_and_the_holder_is_unaffected(self):
        """A wait longer than lock_timeout fails with 55P03 at the timeout; the holder commits normally."""
        result = lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [lock_timeout(3), register(at=1)]}))
        assert result["s2"][1] == ("register_key", 1, 4, None, None, "55P03")
        assert result["s1"][-1] == ("commit", 5, 5, None, None, None)

    def test_a_rollback_undoes_set_lock_timeout(self):
        """lock_timeout set in a transaction that rolls back is undone: the insert waits to the end."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(0), lock_timeout(3), rollback(), register(at=1)]}))["s2"][3] == \
            ("register_key", 1, 5, 0, None, None)

    def test_a_commit_keeps_set_lock_timeout(self):
        """lock_timeout set in a transaction that commits stays set."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5,
                          "s2": [begin(0), lock_timeout(3), commit(), register(at=1)]}))["s2"][3] == \
            ("register_key", 1, 4, None, None, "55P03")

    def test_zero_waits_forever(self):
        """lock_timeout 0 turns the timeout off."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [lock_timeout(3), lock_timeout(0), register(at=1)]}))["s2"][2] \
            == ("register_key", 1, 5, 0, None, None)


# -- 7 ----------------------------------------------------------------------------------------------------------------


class TestAbortedTransaction:
    def test_every_statement_fails_with_25P02_and_commit_rolls_back(self):
        """After an error every statement fails with 25P02 until the end; commit then rolls back silently."""
        result = run({"s1": [register(at=0)],
                      "s2": [begin(1), charge(), insert(), select(), lock_timeout(1), begin(), commit(), count()]})
        assert lanes(result)["s2"] == [
            ("begin", 1, 1, None, None, None), ("insert_charge", 1, 1, 1, None, None),
            ("insert_key", 1, 1, None, None, "23505"), ("select_key", 1, 1, None, None, "25P02"),
            ("lock_timeout", 1, 1, None, None, "25P02"), ("begin", 1, 1, None, None, "25P02"),
            ("commit", 1, 1, None, None, None), ("count_charges", 1, 1, None, {"count": 0}, None)]

    def test_the_failed_transactions_rows_are_released_at_the_error(self):
        """A waiter on a transaction that fails is released at the error, not at the later rollback."""
        result = run({"s0": [register(key="taken", at=0)],
                      "s1": [begin(0), register(), insert(key="taken", at=2), sleep(3), rollback()],
                      "s2": [register(fp="fp2", at=1)]})
        assert lanes(result)["s2"] == [("register_key", 1, 2, 1, None, None)]


# -- 8 ----------------------------------------------------------------------------------------------------------------


class TestDeadlock:
    def test_the_first_to_wait_finds_the_cycle_after_deadlock_timeout(self):
        """Two transactions wait for each other's key: the first waiter gets 40P01 1 s into its wait."""
        result = lanes(run({
            "s1": [begin(0), register("a"), register("b", at=2), rollback()],
            "s2": [begin(1), register("b", "fp2"), register("a", "fp2", at=2.5), commit()]}))
        assert result["s1"][2] == ("register_key", 2, 3, None, None, "40P01")
        assert result["s2"][2] == ("register_key", 2.5, 3, 1, None, None)

    def test_a_check_before_the_cycle_closed_finds_nothing(self):
        """When the second wait starts more than 1 s after the first, the second session gets 40P01."""
        result = lanes(run({
            "s1": [begin(0), register("a"), register("b", at=2), commit()],
            "s2": [begin(1), register("b", "fp2"), register("a", "fp2", at=15), rollback()]}))
        assert result["s1"][2] == ("register_key", 2, 16, 1, None, None)
        assert result["s2"][2] == ("register_key", 15, 16, None, None, "40P01")

    def test_deadlock_timeout_is_a_setting(self):
        """The database's deadlock_timeout sets when the check runs."""
        env = simpy.Environment()
        db = Database(env, deadlock_timeout=0.25)
        a, b = db.connect("a"), db.connect("b")
        ends = {}

        def session(conn, first, second, at):
            yield from conn.execute("begin")
            yield from conn.execute("register_key", key=first, fingerprint="fp")
            yield env.timeout(at)
            ends[conn.name] = (yield from conn.execute("register_key", key=second, fingerprint="fp")).error, env.now

        env.process(session(a, "x", "y", 1))
        env.process(session(b, "y", "x", 1.1))
        env.run()
        assert ends == {"a": ("40P01", 1.25), "b": (None, 1.25)}


# -- 9 ----------------------------------------------------------------------------------------------------------------


def check_then_insert(isolation, keys=("k", "k"), insert_at=(2, 3), commit_at=(4, 5)):
    return {name: [begin(i, isolation), select(keys[i]), insert(keys[i], at=insert_at[i]), charge(key=keys[i]),
                   commit(commit_at[i])]
            for i, name in enumerate(("s1", "s2"))}


class TestCheckThenInsert:
    @pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
    def test_without_the_constraint_both_insert(self, isolation):
        """Without the unique constraint both read 'absent' and both insert: two rows, two charges."""
        tables = run(check_then_insert(isolation), unique_key=False).document["tables"]
        assert (len(tables["idempotency_keys"]), len(tables["charges"])) == (2, 2)

    def test_serializable_fails_the_later_commit(self):
        """Serializable, both inserted before either committed: the later commit fails with 40001."""
        result = run(check_then_insert("serializable"), unique_key=False)
        assert [lane[-1] for lane in lanes(result).values()] == [
            ("commit", 4, 4, None, None, None), ("commit", 5, 5, None, None, "40001")]
        assert len(result.document["tables"]["charges"]) == 1

    def test_serializable_fails_the_insert_after_the_other_committed(self):
        """Serializable, the other already committed: the later insert_key fails with 40001."""
        result = lanes(run(check_then_insert("serializable", insert_at=(2, 5), commit_at=(3, 6)), unique_key=False))
        assert result["s2"][2:] == [("insert_key", 5, 5, None, None, "40001"),
                                    ("insert_charge", 5, 5, None, None, "25P02"), ("commit", 6, 6, None, None, None)]

    def test_serializable_fails_whatever_the_keys(self):
        """The predicate locks cover the whole small table: different keys still conflict."""
        result = lanes(run(check_then_insert("serializable", keys=("k-1", "k-2")), unique_key=False))
        assert result["s2"][-1] == ("commit", 5, 5, None, None, "40001")

    def test_serializable_transactions_that_do_not_read_do_not_conflict(self):
        """Two serializable inserts without reads commit both."""
        result = run({"s1": [begin(0, "serializable"), insert("a"), commit(2)],
                      "s2": [begin(1, "serializable"), insert("b"), commit(3)]}, unique_key=False)
        assert [lane[-1][-1] for lane in lanes(result).values()] == [None, None]

    def test_with_the_constraint_the_second_insert_gets_23505(self):
        """With the unique constraint the second insert waits and gets 23505: one row, one charge."""
        result = run(check_then_insert("read committed", commit_at=(6, 7)))
        assert lanes(result)["s2"][2] == ("insert_key", 3, 6, None, None, "23505")
        assert len(result.document["tables"]["charges"]) == 1

    def test_register_key_needs_the_constraint(self):
        """register_key (ON CONFLICT (key)) fails with 42P10 without a unique constraint."""
        assert lanes(run({"s1": [register(), insert()]}, unique_key=False))["s1"] == [
            ("register_key", 0, 0, None, None, "42P10"), ("insert_key", 0, 0, 1, None, None)]


# -- 10 ---------------------------------------------------------------------------------------------------------------


class TestSequence:
    def test_inserts_that_insert_nothing_or_roll_back_use_up_ids(self):
        """A 0-row register_key, a 23505 and a rolled-back insert each use an id: the next row gets id 5."""
        result = run({"s1": [register("a"), register("a"), insert("a"), begin(), register("b"), rollback(),
                             register("c")]})
        assert [r.id if r else None for r in result.results["s1"]] == [1, 2, 3, None, 4, None, 5]
        assert result.ids == {"idempotency_keys": [1, 5], "charges": []}


# -- 11 ---------------------------------------------------------------------------------------------------------------

LOCKED = {"status": "in_progress", "recovery_point": "started"}
"""lock_key's row for a key just registered."""


def held(*steps, until=5, at=1):
    """s1 registers k at 0, then holds it in a transaction from `at` to `until` with `steps`."""
    return [register(at=0), begin(at), *steps, sleep(until - at), commit()]


class TestLockKey:
    def test_lock_key_waits_for_a_transaction_that_updated_the_row(self):
        """lock_key waits for a transaction that updated the row, then returns its newest version."""
        result = run({"s1": held(complete()), "s2": [lock(at=2)]})
        assert lanes(result)["s2"] == [("lock_key", 2, 5, 1, {"status": "done", "recovery_point": "started"}, None)]
        assert result.results["s2"][0].blocked_by == ("s1",)

    def test_lock_key_of_a_row_deleted_meanwhile_gets_zero_rows(self):
        """lock_key waits for a transaction that deleted the row, and finds nothing after its commit."""
        assert lanes(run({"s1": held(delete()), "s2": [lock(at=2)]}))["s2"] == [("lock_key", 2, 5, 0, None, None)]

    @pytest.mark.parametrize("holder", [lock(), claim(), set_point()])
    def test_lock_key_waits_for_a_lock_a_claim_or_a_set_point(self, holder):
        """lock_key waits for a transaction that locked, claimed or set a point on the row."""
        assert lanes(run({"s1": held(holder), "s2": [lock(at=2)]}))["s2"][0][:3] == ("lock_key", 2, 5)

    @pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
    def test_repeatable_read_lock_key_gets_40001_when_the_row_changed(self, isolation):
        """Repeatable read and serializable lock_key get 40001 once the transaction that updated the row commits."""
        result = run({"s1": held(complete(), at=2), "s2": [begin(1, isolation), select(), lock(at=3), rollback()]})
        assert lanes(result)["s2"][2] == ("lock_key", 3, 5, None, None, "40001")

    @pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
    def test_repeatable_read_lock_key_gets_the_row_when_the_holder_only_locked_it(self, isolation):
        """A holder that only locked the row changed nothing: repeatable read lock_key gets 1 row after its commit."""
        result = run({"s1": held(lock(), at=2), "s2": [begin(1, isolation), select(), lock(at=3), commit()]})
        assert lanes(result)["s2"][2] == ("lock_key", 3, 5, 1, LOCKED, None)

    def test_lock_key_does_not_see_an_uncommitted_insert(self):
        """lock_key, claim_key and set_point of a row another transaction inserted get 0 rows at once."""
        assert lanes(run({"s1": HOLDS_K_UNTIL_5, "s2": [lock(at=1), claim(), set_point(), lock(at=6)]}))["s2"] == [
            ("lock_key", 1, 1, 0, None, None), ("claim_key", 1, 1, 0, None, None), ("set_point", 1, 1, 0, None, None),
            ("lock_key", 6, 6, 1, LOCKED, None)]

    def test_inserts_and_select_key_do_not_wait_for_a_lock(self):
        """register_key, insert_key and select_key of a row that is only locked answer at once."""
        assert lanes(run({"s1": held(lock()), "s2": [register(at=2), insert(), select()]}))["s2"] == [
            ("register_key", 2, 2, 0, None, None), ("insert_key", 2, 2, None, None, "23505"),
            ("select_key", 2, 2, 1, NEW, None)]

    @pytest.mark.parametrize("change", [complete(), delete(), set_point(), claim()])
    def test_updates_and_deletes_wait_for_a_lock(self, change):
        """complete_key, delete_key, set_point and claim_key wait for a transaction that locked the row."""
        ends = lanes(run({"s1": held(lock()), "s2": [{**change, "at": 2}]}))["s2"][0]
        assert (ends[:4], ends[5]) == ((change["op"], 2, 5, 1), None)

    def test_a_transaction_does_not_wait_for_its_own_lock(self):
        """A transaction that locked the row locks and updates it again without waiting."""
        result = run({"s1": [register(at=0), begin(), lock(), lock(), set_point(), claim(), commit()]})
        assert lanes(result)["s1"][2:6] == [
            ("lock_key", 0, 0, 1, LOCKED, None), ("lock_key", 0, 0, 1, LOCKED, None),
            ("set_point", 0, 0, 1, None, None), ("claim_key", 0, 0, 1, {"recovery_point": "charged"}, None)]

    def test_lock_timeout_ends_a_wait_for_a_lock(self):
        """A lock_key waiting longer than lock_timeout fails with 55P03."""
        assert lanes(run({"s1": held(lock()), "s2": [lock_timeout(2), lock(at=2)]}))["s2"][1] == \
            ("lock_key", 2, 4, None, None, "55P03")

    def test_waiters_on_a_lock_take_it_in_turn(self):
        """When the holder commits, the first waiter locks the row and the next one waits for it."""
        result = run({"s1": held(lock()), "s2": [begin(2), lock(), sleep(3), commit()], "s3": [complete(at=3)]})
        assert lanes(result)["s3"] == [("complete_key", 3, 8, 1, None, None)]
        assert result.results["s3"][0].blocked_by == ("s1", "s2")


# -- 12 ---------------------------------------------------------------------------------------------------------------


class TestClaimKey:
    def test_a_claim_takes_an_unclaimed_key_and_returns_its_recovery_point(self):
        """claim_key of a key nobody claimed sets locked_at and returns the recovery point."""
        assert lanes(run({"s1": [register(at=0), set_point(point="charged"), claim(at=1)]}))["s1"][2] == \
            ("claim_key", 1, 1, 1, {"recovery_point": "charged"}, None)

    def test_a_fresh_claim_gives_zero_rows_and_an_expired_one_is_taken(self):
        """A second claim within the lease gets 0 rows; one after the lease has run out gets the key."""
        assert [lane[3] for lane in lanes(run({"s1": [register(at=0), claim(at=1), claim(at=3), claim(at=6)]}))["s1"]] \
            == [1, 1, 0, 1]

    def test_a_fresh_claim_gives_zero_rows_at_once_even_while_the_row_is_held(self):
        """The lease test fails on the snapshot's version: 0 rows without waiting for the holder."""
        result = run({"s0": [register(at=0), claim(at=1)], "s1": [begin(2), set_point(), sleep(5), commit()],
                      "s2": [claim(at=3)]})
        assert lanes(result)["s2"] == [("claim_key", 3, 3, 0, None, None)]

    def test_a_claim_that_passes_waits_and_retests_the_newest_version(self):
        """After waiting for a transaction that claimed the key, read committed re-tests and gets 0 rows."""
        result = run({"s1": held(claim()), "s2": [claim(at=2)]})
        assert lanes(result)["s2"] == [("claim_key", 2, 5, 0, None, None)]

    def test_a_claim_that_passes_the_retest_claims_the_newest_version(self):
        """After waiting for a set_point, read committed re-tests the newest version and claims it."""
        result = run({"s0": [register(at=0), claim(at=1)], "s1": [begin(2), set_point(), sleep(5), commit()],
                      "s2": [claim(lease=1, at=4)]})
        assert lanes(result)["s2"] == [("claim_key", 4, 7, 1, {"recovery_point": "charged"}, None)]

    def test_a_claim_waits_and_claims_when_the_holder_rolls_back(self):
        """The holder's claim rolls back: the waiting claim takes the key."""
        result = run({"s1": [register(at=0), begin(1), claim(), sleep(4), rollback()], "s2": [claim(at=2)]})
        assert lanes(result)["s2"] == [("claim_key", 2, 5, 1, {"recovery_point": "started"}, None)]

    @pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
    def test_repeatable_read_claim_gets_40001_after_a_wait(self, isolation):
        """A repeatable read or serializable claim waiting for a claim that commits gets 40001."""
        result = run({"s1": held(claim(), at=2), "s2": [begin(1, isolation), select(), claim(at=3), rollback()]})
        assert lanes(result)["s2"][2] == ("claim_key", 3, 5, None, None, "40001")

    @pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
    def test_repeatable_read_claim_gets_40001_at_once(self, isolation):
        """A claim committed after the snapshot fails a repeatable read claim that passes its test, at once."""
        result = run({"s1": held(claim(), at=2), "s2": [begin(1, isolation), select(), claim(at=6), rollback()]})
        assert lanes(result)["s2"][2] == ("claim_key", 6, 6, None, None, "40001")

    @pytest.mark.parametrize("isolation", ["read committed", "repeatable read", "serializable"])
    def test_a_claim_that_fails_on_its_snapshot_gives_zero_rows_without_error(self, isolation):
        """A claim whose lease test fails on its snapshot's version gets 0 rows and no error at every level."""
        result = run({"s1": [register(at=0), claim(at=1), begin(2), set_point(), sleep(3), commit()],
                      "s2": [begin(3, isolation), claim(), commit()]})
        assert lanes(result)["s2"][1] == ("claim_key", 3, 3, 0, None, None)

    def test_a_claim_that_got_zero_rows_after_a_wait_keeps_the_row_locked(self):
        """A read committed claim that waited and then got 0 rows keeps the row locked until its transaction ends."""
        result = run({"s1": held(claim()), "s2": [begin(2), claim(), sleep(4), commit()],
                      "s3": [lock(at=6)], "s4": [register(at=7)]})
        assert lanes(result)["s2"][1] == ("claim_key", 2, 5, 0, None, None)
        assert lanes(result)["s3"] == [("lock_key", 6, 9, 1, LOCKED, None)]
        assert lanes(result)["s4"] == [("register_key", 7, 7, 0, None, None)]

    def test_set_point_waits_like_an_update_and_release_frees_the_lease(self):
        """set_point waits for a claim like any UPDATE; with release it clears locked_at, so a claim succeeds."""
        result = run({"s1": held(claim()), "s2": [set_point(point="finished", release=True, at=2), claim()]})
        assert lanes(result)["s2"] == [("set_point", 2, 5, 1, None, None),
                                       ("claim_key", 5, 5, 1, {"recovery_point": "finished"}, None)]


# -- 13 ---------------------------------------------------------------------------------------------------------------


class TestNowIsTransactionStart:
    def test_a_claim_records_the_transactions_begin_time(self):
        """A claim late in a transaction records locked_at = the BEGIN time."""
        env = simpy.Environment()
        db = Database(env)
        drive(db, env, "api", [("register_key", {"key": "k", "fingerprint": "f"}), ("begin", {}, 1),
                               ("claim_key", {"key": "k", "lease": 4.5}, 4), ("commit", {})])
        env.run()
        assert db.committed_keys()[0]["locked_at"] == 1

    def test_another_session_finds_a_late_claim_already_expired(self):
        """A claim made at 5 in a transaction begun at 1 has expired for a claim at 6.5 with a 4.5 s lease."""
        result = run({"s1": [register(at=0), begin(1), sleep(4), claim(), commit()], "s2": [claim(at=6.5)]})
        assert lanes(result)["s2"] == [("claim_key", 6.5, 6.5, 1, {"recovery_point": "started"}, None)]

    def test_an_autocommit_claim_retests_with_its_start_time_after_a_wait(self):
        """An autocommit claim's now() is its start, before the wait: the re-test at 6 still uses 2."""
        result = run({"s1": held(claim(lease=3), until=6), "s2": [claim(lease=3, at=2), claim(lease=3, at=7)]})
        assert lanes(result)["s2"] == [("claim_key", 2, 6, 0, None, None),
                                       ("claim_key", 7, 7, 1, {"recovery_point": "started"}, None)]

    def test_expires_at_counts_from_begin_and_delete_expired_uses_its_start(self):
        """expires_at is the BEGIN time + ttl; delete_expired compares it with its own transaction's start."""
        env = simpy.Environment()
        db = Database(env)
        drive(db, env, "api", [("begin", {}), ("register_key", {"key": "k", "fingerprint": "f", "ttl": 3}, 5),
                               ("commit", {})])
        reaped = drive(db, env, "reaper", [("begin", {}, 2), ("delete_expired", {}, 5), ("commit", {}),
                                           ("delete_expired", {})])
        env.run()
        assert db.committed_keys() == []
        assert [r.rows for r in reaped] == [None, 0, None, 1]


# -- 14 ---------------------------------------------------------------------------------------------------------------


class TestDeadlockThroughLocks:
    def test_two_transactions_waiting_for_each_others_locks_deadlock(self):
        """lock_key and set_point waiting for each other's rows: the first waiter gets 40P01 after 1 s."""
        result = lanes(run({
            "s0": [register("a", at=0), register("b")],
            "s1": [begin(1), lock("a"), lock("b", at=3), rollback()],
            "s2": [begin(2), claim("b"), set_point("a", at=3.5), commit()]}))
        assert result["s1"][2] == ("lock_key", 3, 4, None, None, "40P01")
        assert result["s2"][2] == ("set_point", 3.5, 4, 1, None, None)

    def test_a_check_before_the_cycle_closed_finds_nothing(self):
        """When the second wait starts more than 1 s after the first, the second session gets 40P01."""
        result = lanes(run({
            "s0": [register("a", at=0), register("b")],
            "s1": [begin(1), lock("a"), lock("b", at=3), commit()],
            "s2": [begin(2), lock("b"), lock("a", at=6), rollback()]}))
        assert result["s1"][2] == ("lock_key", 3, 7, 1, LOCKED, None)
        assert result["s2"][2] == ("lock_key", 6, 7, None, None, "40P01")


# -- values PostgreSQL refuses -----------------------------------------------------------------------------------------


class TestRefusedValues:
    @pytest.mark.parametrize("statement", [register(key="k\x00"), register(fp="fp\x00"), select("k\x00"),
                                           lock("k\x00"), claim("k\x00"), set_point(point="p\x00"),
                                           charge(key="k\x00"), _step("delete_key", None, key="k", status="x\x00"),
                                           _step("complete_key", None, key="k", response={}, status="done\x00")])
    def test_a_nul_in_a_text_value_is_a_syntax_error(self, statement):
        """A NUL in a string sent as a text literal fails with 42601, as libpq cuts the text at the NUL."""
        assert lanes(run({"s1": [register(at=0), statement]}))["s1"][1][3:] == (None, None, "42601")

    def test_the_syntax_error_comes_before_the_failed_transaction_check(self):
        """In a failed transaction a NUL still gives 42601 (the parser runs first); other statements give 25P02."""
        result = run({"s1": [begin(0), insert(), insert(), register(key="k\x00"), select(), rollback()]})
        assert [lane[5] for lane in lanes(result)["s1"]] == [None, None, "23505", "42601", "25P02", None]

    def test_a_syntax_error_aborts_the_transaction_and_uses_no_id(self):
        """42601 aborts an open transaction, and the refused insert takes no id from the sequence."""
        result = run({"s1": [begin(0), register("a"), register(key="b\x00"), select("a"), commit(), register("c")]})
        assert [lane[5] for lane in lanes(result)["s1"]] == [None, None, "42601", "25P02", None, None]
        assert result.ids == {"idempotency_keys": [2], "charges": []}

    @pytest.mark.parametrize("response", [{"error": "a\x00b"}, {"k\x00": 1}, {"list": [{"deep": "\x00"}]}])
    def test_a_nul_in_a_response_is_an_untranslatable_character(self, response):
        """A NUL anywhere in a response reaches jsonb as \\u0000, which PostgreSQL refuses with 22P05."""
        assert lanes(run({"s1": [register(at=0), complete(response=response), select()]}))["s1"][1:] == [
            ("complete_key", 0, 0, None, None, "22P05"), ("select_key", 0, 0, 1, NEW, None)]

    def test_a_nul_in_a_response_in_a_failed_transaction_is_25P02(self):
        """jsonb input runs after the failed-transaction check: 25P02 there."""
        result = run({"s1": [register(at=0), begin(), insert(), complete(response={"e": "\x00"}), rollback()]})
        assert lanes(result)["s1"][3][5] == "25P02"

    @pytest.mark.parametrize("amount, error", [(2**31, "22003"), (-2**31 - 1, "22003"), (10**20, "22003"),
                                               (2**31 - 1, None), (-2**31, None)])
    def test_an_amount_outside_int_is_out_of_range(self, amount, error):
        """insert_charge takes -2147483648..2147483647; anything else fails with 22003 and uses no id."""
        result = run({"s1": [charge(amount=amount), charge(amount=1)]})
        assert lanes(result)["s1"][0][5] == error
        assert result.ids["charges"] == ([1] if error else [1, 2])

    def test_a_lock_timeout_beyond_postgresqls_range_is_invalid(self):
        """SET lock_timeout above 2147483647 ms fails with 22023 and aborts the transaction; the setting stays."""
        result = run({"s1": HOLDS_K_UNTIL_5,
                      "s2": [lock_timeout(2), begin(), lock_timeout(2147483.648), select(), rollback(),
                             lock_timeout(2147483.647), lock_timeout(1), register(at=1)]})
        assert [lane[5] for lane in lanes(result)["s2"]] == [None, None, "22023", "25P02", None, None, None, "55P03"]


# -- the Database API the simulator's designs use ---------------------------------------------------------------------


def drive(db: Database, env: simpy.Environment, conn_name: str, statements: list[tuple]) -> list[Result]:
    """Run statements (op, fields[, delay before]) on a new connection; return their results."""
    conn, results = db.connect(conn_name), []

    def session():
        for op, fields, *delay in statements:
            if delay:
                yield env.timeout(delay[0])
            results.append((yield from conn.execute(op, **fields)))

    env.process(session())
    return results


class TestDatabaseApi:
    def test_rows_record_created_at_and_expires_at(self):
        """A key row records the statement's time, time + ttl (default 86400 s) and the recovery columns."""
        env = simpy.Environment()
        db = Database(env)
        drive(db, env, "api", [("register_key", {"key": "a", "fingerprint": "f"}, 2),
                               ("register_key", {"key": "b", "fingerprint": "f", "ttl": 10})])
        env.run()
        assert db.committed_keys() == [
            {"id": 1, "key": "a", "fingerprint": "f", "status": "in_progress", "response": None,
             "created_at": 2, "expires_at": 86402, "recovery_point": "started", "locked_at": None},
            {"id": 2, "key": "b", "fingerprint": "f", "status": "in_progress", "response": None,
             "created_at": 2, "expires_at": 12, "recovery_point": "started", "locked_at": None}]

    def test_delete_key_filters_by_status_and_age(self):
        """delete_key deletes only a row in the given status created strictly before the given time."""
        env = simpy.Environment()
        db = Database(env)
        results = drive(db, env, "api", [
            ("register_key", {"key": "k", "fingerprint": "f"}, 1),
            ("delete_key", {"key": "k", "status": "done"}),
            ("delete_key", {"key": "k", "status": "in_progress", "created_before": 1}),
            ("delete_key", {"key": "k", "status": "in_progress", "created_before": 1.5})])
        env.run()
        assert [r.rows for r in results] == [1, 0, 0, 1]

    def test_delete_expired_reaps_rows_whose_time_has_come(self):
        """delete_expired deletes the rows whose expires_at is now or earlier."""
        env = simpy.Environment()
        db = Database(env)
        results = drive(db, env, "reaper", [
            ("register_key", {"key": "a", "fingerprint": "f", "ttl": 5}),
            ("register_key", {"key": "b", "fingerprint": "f", "ttl": 50}),
            ("delete_expired", {}, 5)])
        env.run()
        assert results[-1].rows == 1
        assert [row["key"] for row in db.committed_keys()] == ["b"]

    def test_complete_key_sets_the_given_status(self):
        """complete_key takes the new status, "done" by default."""
        env = simpy.Environment()
        db = Database(env)
        drive(db, env, "api", [("register_key", {"key": "k", "fingerprint": "f"}),
                               ("complete_key", {"key": "k", "response": {"s": 500}, "status": "failed"})])
        env.run()
        assert db.tables()["idempotency_keys"] == [
            {"key": "k", "fingerprint": "f", "status": "failed", "response": {"s": 500}}]

    def test_events_trace_waits_and_results(self):
        """on_event receives a "wait" when a statement blocks and a "result" when any statement ends."""
        env = simpy.Environment()
        events: list[DbEvent] = []
        db = Database(env, on_event=events.append)
        drive(db, env, "api#1", [("begin", {}), ("register_key", {"key": "k", "fingerprint": "f"}),
                                 ("commit", {}, 5)])
        drive(db, env, "api#2", [("register_key", {"key": "k", "fingerprint": "f"}, 1)])
        env.run()
        assert [(e.t, e.conn, e.kind, e.op, e.blocked_by) for e in events] == [
            (0, "api#1", "result", "begin", None), (0, "api#1", "result", "register_key", None),
            (1, "api#2", "wait", "register_key", "api#1"), (5, "api#1", "result", "commit", None),
            (5, "api#2", "result", "register_key", None)]
        assert events[2].sql.startswith("INSERT INTO idempotency_keys (key, fingerprint, expires_at) VALUES ('k'")

    def test_a_closed_connection_answers_08003(self):
        """After disconnect every statement fails with 08003 (connection does not exist)."""
        env = simpy.Environment()
        db = Database(env)
        results = drive(db, env, "api", [("disconnect", {}), ("select_key", {"key": "k"})])
        env.run()
        assert [r.error for r in results] == [None, "08003"]

    def test_an_unknown_op_is_a_programming_error(self):
        """An unknown op or a missing field raises ValueError instead of returning an error."""
        conn = Database(simpy.Environment()).connect("api")
        with pytest.raises(ValueError, match="unknown op 'upsert'"):
            next(conn.execute("upsert"))
        with pytest.raises(ValueError, match="missing fields \\['fingerprint'\\]"):
            next(conn.execute("register_key", key="k"))

    def test_runs_are_deterministic(self):
        """The same schedule gives the same document every time."""
        sessions = check_then_insert("serializable", keys=("k-1", "k-2"))
        assert run(sessions, unique_key=False).document == run(sessions, unique_key=False).document
