"""DB schedules: the format, its one-line errors, `--scale`, shipped schedules and the result document."""

from __future__ import annotations

import codecs
import json
import os

import pytest

from idemsim.base.errors import InputError
from idemsim.model.db.sql import sql_for
from idemsim.proof.schedule import load, parse, resolve, run_on_model, scaled, shipped, shipped_dir

OPS = ("begin, commit, rollback, register_key, insert_key, select_key, complete_key, delete_key, delete_expired, "
       "insert_charge, count_charges, lock_key, claim_key, set_point, lock_timeout, sleep, disconnect")


def one_session(*steps) -> dict:
    return {"version": 1, "sessions": {"s1": list(steps)}}


class TestBadSchedules:
    @pytest.mark.parametrize("data, message", [
        (one_session({"op": "begin"}, {"op": "upsert_key", "key": "k"}),
         f"bad.json: session 's1', step 2 (1-based): unknown op 'upsert_key'; allowed ops: {OPS}"),
        (one_session({"op": "register_key", "key": "k"}),
         "bad.json: session 's1', step 1 (1-based), field 'fingerprint': missing; "
         "register_key takes key, fingerprint, ttl (optional), at (optional)"),
        (one_session({"op": "insert_charge", "amount": "1000"}),
         "bad.json: session 's1', step 1 (1-based), field 'amount': \"1000\" is not allowed; must be an integer"),
        (one_session({"op": "select_key", "key": 5}),
         "bad.json: session 's1', step 1 (1-based), field 'key': 5 is not allowed; must be a string"),
        (one_session({"op": "complete_key", "key": "k", "response": "201"}),
         "bad.json: session 's1', step 1 (1-based), field 'response': \"201\" is not allowed; must be a JSON object"),
        (one_session({"op": "begin", "isolation": "read uncommitted"}),
         "bad.json: session 's1', step 1 (1-based), field 'isolation': \"read uncommitted\" is not allowed; "
         "allowed: 'read committed', 'repeatable read' or 'serializable'"),
        (one_session({"op": "begin", "at": -1}),
         "bad.json: session 's1', step 1 (1-based), field 'at': -1 is negative; must be >= 0 seconds"),
        (one_session({"op": "sleep", "seconds": -0.5}),
         "bad.json: session 's1', step 1 (1-based), field 'seconds': -0.5 is negative; must be >= 0 seconds"),
        ({"version": 1, "sessions": {"s1": {"op": "begin"}}},
         "bad.json: session 's1': a session must be a list of steps, got dict"),
        (one_session({"op": "disconnect"}, {"op": "begin"}),
         "bad.json: session 's1', step 2 (1-based): a step after 'disconnect'; "
         "disconnect must be the session's last step"),
        (one_session({"op": "commit", "key": "k"}),
         "bad.json: session 's1', step 1 (1-based), field 'key': not allowed; commit takes at (optional)"),
        (one_session({"key": "k"}),
         f"bad.json: session 's1', step 1 (1-based): a step needs an \"op\"; allowed ops: {OPS}"),
        (one_session("begin"),
         "bad.json: session 's1', step 1 (1-based): a step must be an object with an \"op\", got str"),
        ({"version": 2, "sessions": {}}, "bad.json: field 'version': 2 is not allowed; allowed: 1"),
        ({"version": 1, "unique_key": "yes", "sessions": {}},
         "bad.json: field 'unique_key': \"yes\" is not allowed; must be true or false"),
        ({"version": 1, "sessions": {}, "seed": 1},
         "bad.json: field 'seed': not allowed; a schedule has version, description, unique_key, sessions"),
        ({"version": 1, "sessions": []},
         "bad.json: field 'sessions': must be an object of sessions (name -> list of steps), got list"),
        ([], "bad.json: a schedule must be a JSON object, got list"),
        (one_session({"op": "claim_key", "key": "k"}),
         "bad.json: session 's1', step 1 (1-based), field 'lease': missing; claim_key takes key, lease, at (optional)"),
        (one_session({"op": "claim_key", "key": "k", "lease": -1}),
         "bad.json: session 's1', step 1 (1-based), field 'lease': -1 is negative; must be >= 0 seconds"),
        (one_session({"op": "set_point", "key": "k", "point": "p", "release": "yes"}),
         "bad.json: session 's1', step 1 (1-based), field 'release': \"yes\" is not allowed; must be true or false"),
        (one_session({"op": "lock_key", "key": "k", "lease": 1}),
         "bad.json: session 's1', step 1 (1-based), field 'lease': not allowed; lock_key takes key, at (optional)"),
        ({"version": 1, "unique_key": False, "sessions": {"s1": [{"op": "begin"}, {"op": "lock_key", "key": "k"}]}},
         "bad.json: session 's1', step 2 (1-based): lock_key needs unique_key: true (lock_key, claim_key, set_point "
         "are defined only with the UNIQUE constraint)"),
    ])
    def test_a_bad_schedule_gets_one_line_naming_file_session_step_and_field(self, data, message):
        """Each kind of bad schedule raises InputError with one line that names where and what is allowed."""
        with pytest.raises(InputError) as raised:
            parse(data, "bad.json")
        assert str(raised.value) == message
        assert "\n" not in str(raised.value)

    def test_a_file_that_is_not_json_names_the_place(self, tmp_path):
        """Invalid JSON is reported with the file and the position."""
        path = tmp_path / "broken.json"
        path.write_text('{"version": 1,,}')
        with pytest.raises(InputError, match=r"broken.json: not valid JSON: Expecting property name .*line 1"):
            load(path)

    def test_an_unknown_name_points_to_the_list(self):
        """A name that is neither a file nor a shipped schedule says so."""
        with pytest.raises(InputError, match="nope: no such file, and no shipped schedule of that name"):
            load("nope")


BASE = '{"version": 1, "sessions": {"s1": [%s]}}'


def written(tmp_path, text: str | None = None, data: bytes | None = None, name: str = "bad.json"):
    path = tmp_path / name
    path.write_bytes(data if data is not None else text.encode("utf-8"))
    return path


class TestNumbersNoStatementCarries:
    @pytest.mark.parametrize("step, message", [
        ('{"op": "register_key", "key": "k", "fingerprint": "f", "ttl": Infinity}',
         "session 's1', step 1 (1-based), field 'ttl': Infinity is not allowed; numbers must be finite"),
        ('{"op": "sleep", "seconds": 1e400}',
         "session 's1', step 1 (1-based), field 'seconds': Infinity is not allowed; numbers must be finite"),
        ('{"op": "claim_key", "key": "k", "lease": -Infinity}',
         "session 's1', step 1 (1-based), field 'lease': -Infinity is not allowed; numbers must be finite"),
        ('{"op": "complete_key", "key": "k", "response": {"body": [1, NaN]}}',
         "session 's1', step 1 (1-based), field 'response', at body[1]: NaN is not allowed; numbers must be finite"),
        ('{"op": "sleep", "seconds": 1e8}',
         "session 's1', step 1 (1-based), field 'seconds': 1e+08 s is too long; times must be at most 1e+07 s "
         "(about 116 days)"),
        ('{"op": "sleep", "seconds": 1%s}' % ("0" * 400),
         "session 's1', step 1 (1-based), field 'seconds': 100000000000000000000000000000000000000… is too "
         "large; must be a finite number"),
    ])
    def test_a_number_no_statement_can_carry_is_one_line(self, tmp_path, step, message):
        """NaN, infinities and times beyond 10^7 s are refused with the file, session, step and field."""
        path = written(tmp_path, BASE % step)
        with pytest.raises(InputError) as raised:
            load(path)
        assert str(raised.value) == f"{path}: {message}"

    def test_a_number_too_long_to_read_is_one_line(self, tmp_path):
        """An integer of more digits than Python converts is refused, not a ValueError."""
        path = written(tmp_path, BASE % ('{"op": "insert_charge", "amount": 1%s}' % ("0" * 5000)))
        with pytest.raises(InputError, match=r"bad.json: a number has too many digits to read$"):
            load(path)

    @pytest.mark.parametrize("factor, message", [
        (1e6, "bad.json: session 's1', step 1 (1-based), field 'seconds': 100 s × --scale 1e+06 = 1e+08 s is too "
              "long; times must be at most 1e+07 s (about 116 days)"),
        (float("nan"), "--scale nan: must be > 0 and finite"),
        (float("inf"), "--scale inf: must be > 0 and finite"),
        (-1.0, "--scale -1: must be > 0 and finite"),
    ])
    def test_a_scale_that_makes_times_absurd_is_refused_on_both_sides(self, factor, message):
        """--scale must be finite and > 0 and keep every time within 10^7 s, on the model and on PostgreSQL."""
        from idemsim.proof.postgres import run_postgres

        schedule = parse(one_session({"op": "sleep", "seconds": 100}, {"op": "claim_key", "key": "k", "lease": 1}),
                         "bad.json")
        for run in (lambda: run_on_model(schedule, factor),
                    lambda: run_postgres(schedule, "postgresql://postgres@127.0.0.1:9/test", factor)):
            with pytest.raises(InputError) as raised:
                run()
            assert str(raised.value) == message

    def test_scale_checks_the_lease_too(self):
        """A lease that --scale takes beyond 10^7 s is refused and named."""
        schedule = parse(one_session({"op": "claim_key", "key": "k", "lease": 5}), "s.json")
        with pytest.raises(InputError, match=r"^s.json: session 's1', step 1 \(1-based\), field 'lease': 5 s × "):
            scaled(schedule, 1e7)


class TestFilesThatAreNotSchedules:
    def test_utf8_with_a_byte_order_mark_loads(self, tmp_path):
        """A UTF-8 file that starts with a byte order mark is read like one without."""
        text = BASE % '{"op": "select_key", "key": "café"}'
        with_bom = load(written(tmp_path, data=codecs.BOM_UTF8 + text.encode()))
        assert with_bom.model_dump() == load(written(tmp_path, text, name="plain.json")).model_dump()
        assert with_bom.sessions["s1"][0].key == "café"

    @pytest.mark.parametrize("data, message", [
        ((BASE % '{"op": "sleep", "seconds": 1}').encode("utf-16"),
         "is UTF-16 (it starts with a UTF-16 byte order mark); a schedule file must be UTF-8"),
        ((BASE % '{"op": "sleep", "seconds": 1}').encode("utf-32"),
         "is UTF-32 (it starts with a UTF-32 byte order mark); a schedule file must be UTF-8"),
        ((BASE % '{"op": "sleep", "seconds": 1}').encode("utf-16-le"),
         "contains NUL bytes (UTF-16 or UTF-32 without a byte order mark?); a schedule file must be UTF-8"),
        ((BASE % '{"op": "select_key", "key": "café"}').encode("latin-1"),
         "not UTF-8 (byte 0xe9 at offset 67); a schedule file must be UTF-8"),
        (("[" * 100_000 + "]" * 100_000).encode(), "nested too deeply to read; a schedule nests at most 100 levels"),
        ((BASE % '{"op": "select_key", "key": "\\ud800x"}').encode(),
         "session 's1', step 1 (1-based), field 'key': '\\\\ud800x' is not valid Unicode (a lone surrogate); "
         "strings must be valid Unicode"),
    ])
    def test_an_unreadable_file_is_one_line(self, tmp_path, data, message):
        """Other encodings, nesting too deep to read and invalid Unicode are refused in one line."""
        path = written(tmp_path, data=data)
        with pytest.raises(InputError) as raised:
            load(path)
        assert str(raised.value) == f"{path}: {message}"

    def test_a_response_nested_too_deep_is_refused(self, tmp_path):
        """Nesting that JSON can read but deeper than 100 levels is refused, naming the step and field."""
        response = '{"a": ' * 150 + "1" + "}" * 150
        path = written(tmp_path, BASE % ('{"op": "complete_key", "key": "k", "response": %s}' % response))
        with pytest.raises(InputError, match=r"field 'response', at a\.a\.a.*: nested more than 100 levels deep"):
            load(path)

    def test_deep_python_data_is_refused_without_recursion(self):
        """parse() walks decoded data without recursion: 100,000 levels are one InputError."""
        deep: list = []
        for _ in range(100_000):
            deep = [deep]
        with pytest.raises(InputError, match="nested more than 100 levels deep"):
            parse({"version": 1, "sessions": {"s1": deep}}, "deep")

    def test_a_directory_is_named_as_one(self, tmp_path):
        """A directory given as the schedule says it is a directory."""
        with pytest.raises(InputError, match=r"^.*: is a directory, not a schedule file$"):
            load(tmp_path)

    def test_a_fifo_is_named_as_one_without_reading_it(self, tmp_path):
        """A named pipe is refused as what it is, without blocking on a read."""
        fifo = tmp_path / "pipe.json"
        os.mkfifo(fifo)
        with pytest.raises(InputError, match=r"pipe.json: is a FIFO \(named pipe\), not a schedule file$"):
            load(fifo)


class TestShippedSchedules:
    def test_every_shipped_schedule_loads_and_describes_itself(self):
        """Every file in scenarios/db is a valid schedule with a one-line description."""
        found = shipped()
        assert "article-wait-commit" in found and "article-wait-rollback" in found
        for name, path in found.items():
            description = load(path).description
            assert description and "\n" not in description, name

    def test_every_numbered_behaviour_has_a_schedule(self):
        """Each of the spec's behaviours 1–14 has at least one shipped schedule, named by behaviour."""
        assert {name.split("-")[0] for name in shipped() if name[0] == "b"} == {f"b{i}" for i in range(1, 15)}

    def test_the_recovery_points_schedule_shows_each_phase(self):
        """x-recovery-points: a claim, a 409 while the lease is fresh, a resumed phase and a released finish."""
        document = run_on_model(load("x-recovery-points")).document
        rows = {name: [(e["op"], e["rows"], e["row"]) for e in entries if e["op"] in ("claim_key", "lock_key")]
                for name, entries in document["sessions"].items()}
        assert rows == {
            "api1": [("claim_key", 1, {"recovery_point": "started"}),
                     ("lock_key", 1, {"status": "in_progress", "recovery_point": "started"})],
            "api2": [("claim_key", 0, None)],
            "api3": [("claim_key", 1, {"recovery_point": "charge_created"}),
                     ("lock_key", 1, {"status": "in_progress", "recovery_point": "charge_created"})],
            "api4": []}
        assert document["tables"]["idempotency_keys"][0]["status"] == "done"
        assert len(document["tables"]["charges"]) == 1

    def test_a_name_resolves_to_the_shipped_file(self):
        """A bare name (with or without .json) finds the shipped schedule."""
        assert resolve("article-wait-commit") == resolve("article-wait-commit.json") == \
            shipped_dir() / "article-wait-commit.json"


class TestScale:
    def test_scale_multiplies_at_sleep_and_lock_timeout(self):
        """--scale multiplies every time in the schedule."""
        schedule = scaled(parse(one_session({"op": "lock_timeout", "seconds": 3, "at": 1},
                                            {"op": "sleep", "seconds": 5})), 0.1)
        assert [(s.op, s.at, s.seconds) for s in schedule.sessions["s1"]] == [("lock_timeout", 0.1, 0.3),
                                                                              ("sleep", None, 0.5)]

    def test_scale_multiplies_a_claims_lease(self):
        """--scale multiplies claim_key's lease like every other time."""
        schedule = scaled(parse(one_session({"op": "claim_key", "key": "k", "lease": 4.5, "at": 2})), 0.1)
        assert [(s.at, s.lease) for s in schedule.sessions["s1"]] == [(0.2, 0.45)]

    def test_scale_keeps_deadlock_timeout(self):
        """At scale 0.1 the deadlock check still comes 1 s into the wait."""
        document = run_on_model(load("b8-deadlock"), scale=0.1).document
        assert [(e["start"], e["end"], e["error"]) for e in document["sessions"]["s1"]][2] == (0.2, 1.2, "40P01")

    def test_a_scale_of_zero_is_refused(self):
        """--scale must be positive."""
        with pytest.raises(InputError, match="--scale 0: must be > 0"):
            scaled(load("b8-deadlock"), 0)


class TestResultDocument:
    def test_the_article_schedule_gives_the_specs_document(self):
        """The result document has exactly the spec's shape: entries per step, then the committed tables."""
        document = run_on_model(load("article-wait-commit")).document
        response = {"status": 201, "body": {"id": "ch_1", "amount": 1000}}
        assert document == {
            "version": 1,
            "sessions": {
                "s1": [
                    {"op": "begin", "start": 0, "end": 0, "rows": None, "row": None, "error": None},
                    {"op": "register_key", "start": 0, "end": 0, "rows": 1, "row": None, "error": None},
                    {"op": "insert_charge", "start": 0, "end": 0, "rows": 1, "row": None, "error": None},
                    {"op": "complete_key", "start": 0, "end": 0, "rows": 1, "row": None, "error": None},
                    {"op": "sleep", "start": 0, "end": 5, "rows": None, "row": None, "error": None},
                    {"op": "commit", "start": 5, "end": 5, "rows": None, "row": None, "error": None}],
                "s2": [
                    {"op": "register_key", "start": 1, "end": 5, "rows": 0, "row": None, "error": None},
                    {"op": "select_key", "start": 5, "end": 5, "rows": 1,
                     "row": {"status": "done", "fingerprint": "fp1", "response": response}, "error": None}]},
            "tables": {
                "idempotency_keys": [{"key": "k-8f3a", "fingerprint": "fp1", "status": "done", "response": response}],
                "charges": [{"amount": 1000, "key": "k-8f3a"}]},
        }
        json.dumps(document)  # plain JSON

    def test_a_session_that_ends_inside_a_transaction_rolls_it_back(self):
        """A session's connection closes after its last step, rolling back what it left open."""
        document = run_on_model(parse(one_session({"op": "begin"}, {"op": "register_key", "key": "k",
                                                                    "fingerprint": "f"}))).document
        assert document["tables"] == {"idempotency_keys": [], "charges": []}


class TestSql:
    @pytest.mark.parametrize("op, fields, sql", [
        ("lock_key", {"key": "k-1"},
         "SELECT status, recovery_point FROM idempotency_keys WHERE key = 'k-1' FOR UPDATE"),
        ("claim_key", {"key": "k-1", "lease": 0.45},
         "UPDATE idempotency_keys SET locked_at = now() WHERE key = 'k-1' AND (locked_at IS NULL OR locked_at < "
         "now() - make_interval(secs => 0.45)) RETURNING recovery_point"),
        ("set_point", {"key": "k-1", "point": "charge_created"},
         "UPDATE idempotency_keys SET recovery_point = 'charge_created', locked_at = CASE WHEN false THEN NULL "
         "ELSE locked_at END WHERE key = 'k-1'"),
        ("set_point", {"key": "it's", "point": "finished", "release": True},
         "UPDATE idempotency_keys SET recovery_point = 'finished', locked_at = CASE WHEN true THEN NULL "
         "ELSE locked_at END WHERE key = 'it''s'"),
    ])
    def test_the_recovery_ops_stand_for_the_specs_sql(self, op, fields, sql):
        """lock_key, claim_key and set_point give the spec's SQL with their values inlined as literals."""
        assert sql_for(op, fields) == sql

    def test_an_interval_keeps_every_digit_of_a_time(self):
        """A ttl of 1234567.5 s is sent as such (not rounded to 1.23457e+06), float noise aside."""
        assert "now() + interval '1234567.5 seconds'" in sql_for("register_key", {"key": "k", "fingerprint": "f",
                                                                                  "ttl": 1234567.5})
        assert sql_for("delete_key", {"key": "k", "created_before": 5.15 - 5}).endswith("interval '0.15 seconds'")
