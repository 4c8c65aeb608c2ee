"""The course's checks (`idemsim.course`): every exercise judged right on its answer and "not yet" on the plausible
wrong ones, each with the hint it gives; a check that never raises and speaks the notebook's language; designs
judged on several purchases and every small schedule; the notebooks calling the checks, their predictions asked
before the cell that shows the answer.

The expected lines are the whole lines a notebook prints (``right: …`` / ``not yet: …``): a change of wording or
of what the simulator shows reads as a diff here.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

import idemsim
from idemsim import course
from idemsim.course.answers import KINDS
from idemsim.course.designs import STUDENT_DESIGN, starter_with

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
RIGHT_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"}

ANSWERS = [  # (exercise, answer, the line check prints): the right answer first, then plausible wrong ones
    ("1.1", 3, "right: every attempt reached the API and each was charged; the client saw ['timeout', 'timeout', 201] "
               "and believes it paid once."),
    ("1.1", 2, "not yet: more than that: count the attempts that reached the API. Without a key, every one that "
               "arrives is a new charge, and only answers were lost, never a request."),
    ("1.1", 4, "not yet: fewer than that: the client tries at most 3 times, and each attempt that arrives is charged "
               "once."),
    ("1.1", "3", "not yet: '3' is a text (in quotes); write a whole number, without quotes"),
    ("1.1", True, "not yet: True is a truth value; write a whole number"),
    ("1.2", "client.max_attempts=1", "right: one attempt, one charge, and the client ends info: it treats a purchase "
                                     "that was paid as not done (the flowchart's fourth branch)."),
    ("1.2", "client.max_attempts=2", "not yet: with that change the run records 2 charge(s) and the client ends ok "
                                     "after 2 attempt(s). The retry policy is in [client]: how many attempts may the "
                                     "client make?"),
    ("1.2", "api.ttl=5", "not yet: 'api.ttl=5' changes another section; change only fields of [client], texts that "
                         "start with \"client.\""),
    ("1.2", 1, "not yet: 1 is not a --set text; write a text such as \"client.FIELD=VALUE\""),
    ("1.2", "client.nonsense=3", "not yet: idemsim could not run it: scenario 'naive-double-charge', --set "
                                 "'client.nonsense=3': unknown field 'client.nonsense'; allowed: timeout, "
                                 "max_attempts, backoff, multiplier, max_backoff, jitter, retry_window, "
                                 "retry_budget, key_strategy, duplicate_rate, duplicate_delay"),
    ("1.3", 100, "right: every copy that arrived took 100: 500 -> 100. \"Set to 400\" would have ended at 400 however "
                 "many copies arrived."),
    ("1.3", 200, "not yet: lower than that: every copy that arrives takes 100 again. How many copies arrive when three "
                 "answers are lost and the client tries 4 times?"),
    ("1.3", 400, "not yet: 400 is where \"set to 400\" ends, however many copies arrive; \"decrease by 100\" takes 100 "
                 "again with every copy. How many copies arrive?"),
    ("1.3", "100", "not yet: '100' is a text (in quotes); write a number, without quotes"),
    ("1.3", 0, "not yet: higher than that: only the copies that arrive take 100, and the client tries 4 times at "
               "most. How many copies arrive?"),
    ("1.4", RIGHT_METHODS, "right: the safe methods (GET, HEAD, OPTIONS, TRACE) plus PUT and DELETE. POST and PATCH "
                           "are not: each POST /charges makes a new charge."),
    ("1.4", RIGHT_METHODS | {"CONNECT"}, "not yet: CONNECT: not one of the eight methods of the question, and not "
                                         "idempotent in RFC 9110's table; choose among GET, HEAD, OPTIONS, TRACE, PUT, "
                                         "DELETE, POST and PATCH."),
    ("1.4", RIGHT_METHODS - {"DELETE"}, "not yet: DELETE missing. Idempotent is not safe: a method may change the "
                                        "server's state, as long as many identical requests change it as one does."),
    ("1.4", RIGHT_METHODS | {"POST"}, "not yet: RFC 9110 does not call POST idempotent: look at POST in the "
                                      "http-methods run above, two copies, two charges; PATCH is no better."),
    ("1.4", "GET, HEAD", "not yet: 'GET, HEAD' is not a set of texts; write the method names as a set, such as "
                         "{\"GET\", \"HEAD\"}"),
    ("1.4", {"GET", "CONNECT"}, "not yet: CONNECT: not one of the eight methods of the question; and DELETE, HEAD, "
                                "OPTIONS, PUT, TRACE missing. Idempotent is not safe: a method may change the server's "
                                "state, as long as many identical requests change it as one does."),
    ("2.1", 2, "right: the first attempt charged; every later one found the key and was answered from the record: "
               "1 charge, 2 replays, all identical."),
    ("2.1", 1, "not yet: more than that: only the first attempt that registers the key charges; every later attempt "
               "with the same key gets 0 rows and a replay. How many later attempts are there?"),
    ("2.1", 3, "not yet: fewer than that: the first attempt is not a replay, it registers the key and charges. How "
               "many attempts come after it?"),
    ("2.1", "2", "not yet: '2' is a text (in quotes); write a whole number, without quotes"),
    ("2.2", "api.unique=true", "right: with a unique constraint the copy's INSERT waits for the first transaction, "
                               "fails with 23505 before the copy calls the processor, and the copy replays the 201."),
    ("2.2", "api.unique=false", "not yet: still 2 charges. Which constraint did section 4 add?"),
    ("2.2", "api.isolation=serializable", "not yet: one charge row, but the card was captured 2 times: the copy called "
                                          "the processor before it failed. Which constraint stops the copy at its "
                                          "INSERT?"),
    ("2.2", "design=same-tx", "not yet: keep the design check-then-insert (that setting made it same-tx); change the "
                              "table or the transaction."),
    ("2.3", 2, "right: both copies read \"absent\" and each inserted its row: one key, a row for each copy, which is "
               "exactly what a unique constraint forbids."),
    ("2.3", 1, "not yet: more than that: both copies ran SELECT before either committed, and each read \"absent\". "
               "What did each do then?"),
    ("2.3", 3, "not yet: fewer than that: only the copies of this one purchase inserted the key, each at most once."),
    ("2.3", "2", "not yet: '2' is a text (in quotes); write a whole number, without quotes"),
    ("2.4", 0, "right: the key committed, the process died before the charge, and the retry answered \"done\" from "
               "the key alone: the client believes it paid, and nothing was charged."),
    ("2.4", 1, "not yet: fewer than that: the process died between the two transactions, key first. Which one had "
               "committed?"),
    ("2.4", False, "not yet: False is a truth value; write a whole number"),
    ("2.4", "0", "not yet: '0' is a text (in quotes); write a whole number, without quotes"),
    ("3.1", 3, "right: the copy waits from t=2 until the first transaction commits at t=5: 3.0 s, then 0 rows and a "
               "replay."),
    ("3.1", 3.01, "right: the copy waits from t=2 until the first transaction commits at t=5: 3.0 s, then 0 rows and "
                  "a replay."),
    ("3.1", 4, "not yet: not that long: the wait ends when the first transaction commits, and the copy began to wait "
               "at t=2. When does the first commit?"),
    ("3.1", 2, "not yet: longer than that: the copy waits until the first transaction ends, however late it arrived. "
               "When does the first commit?"),
    ("3.1", "3", "not yet: '3' is a text (in quotes); write a number of seconds, without quotes"),
    ("3.2", ["client.backoff=2.0"], "right: the copy saw [409, 409, 201]: it kept retrying until the first had "
                                    "committed, and then got the stored 201."),
    ("3.2", "client.backoff=2.0", "right: the copy saw [409, 409, 201]: it kept retrying until the first had "
                                  "committed, and then got the stored 201."),
    ("3.2", ["client.max_attempts=3"], "not yet: the clients end ['ok', 'info'], with 1 charge(s). The first commits "
                                       "at t=5; the copy's last attempt must come later. Wait longer between attempts, "
                                       "or try more times."),
    ("3.2", ["api.lease=1"], "not yet: 'api.lease=1' changes another section; change only fields of [client], texts "
                             "that start with \"client.\""),
    ("3.2", [...], "not yet: write a list of texts such as [\"client.FIELD=VALUE\"] in place of the ... in the cell "
                   "above, and run that cell"),
    ("3.3", 2, "right: request 1 rolled back; the copy, released after its 4 s wait, got 1 row and went on as the "
               "first. Request 1's retry then replayed the copy's 201."),
    ("3.3", 1, "not yet: the processor declined request 1 (nothing captured), and its whole transaction rolled back, "
               "key included. After a ROLLBACK the waiting INSERT gets 1 row. Whose INSERT was waiting?"),
    ("3.3", "2", "not yet: '2' is a text (in quotes); write one of 1, 2, without quotes"),
    ("3.3", 3, "not yet: 3 is not one of 1, 2"),
    ("3.4", 5, "right: a retry found the record older than the lease and took the key over: the client saw "
               "['timeout', 409, 201]."),
    ("3.4", 0.5, "right: a retry found the record older than the lease and took the key over: the client saw "
                 "['timeout', 201]. Careful: a lease shorter than a handler's own work lets a retry take over a "
                 "request that is still running (the story lease-shorter-than-handler)."),
    ("3.4", 10, "not yet: the client saw ['timeout', 409, 409, 409] and ends info. The record was written at t=0.05; "
                "some retry must find it older than the lease."),
    ("3.4", "5", "not yet: '5' is a text (in quotes); write a number of seconds, without quotes"),
    ("3.4", -1, "not yet: idemsim could not run it: scenario 'crash-in-progress', --set 'api.lease=-1.0': field "
                "'api.lease': Input should be greater than or equal to 0.001 (got -1.0)"),
    ("4.1", 40, "right: a record must outlive the last moment a client may retry, 40 s after it began. A small sample "
                "can show no double charge below that (a rate of 1 % hides in 10 seeds), but the argument does not "
                "depend on luck."),
    ("4.1", 41, "not yet: that is safe, but not the shortest; every second longer holds more records."),
    ("4.1", 39, "not yet: a retry may still come up to the retry window after the purchase began. Even if the "
                "10-seed sweep shows 0 % there, 200 seeds find double charges just below it."),
    ("4.1", "40", "not yet: '40' is a text (in quotes); write a number of seconds, without quotes"),
    ("4.2", ["client.backoff=5"], "right: the retry now arrives while k-0001's record still exists (saw ['timeout', "
                                  "201]): retries must fit inside the retention."),
    ("4.2", ["client.backoff=15"], "not yet: 5 charges. The record of k-0001 lives until t=10.05; when does the retry "
                                   "go out? (timeout 2 s + backoff)"),
    ("4.2", ["client.max_attempts=1"], "not yet: some client gave up without knowing (info). It must still retry, "
                                       "just sooner."),
    ("4.2", ["api.ttl=60"], "not yet: 'api.ttl=60' changes another section; change only fields of [client], texts "
                            "that start with \"client.\""),
    ("4.3", (2, 1), "right: both requests got a 201, so the client believes 2; only the 1,000-yen purchase was "
                    "charged. The fingerprint check turns this silent error into a 422."),
    ("4.3", [2, 1], "right: both requests got a 201, so the client believes 2; only the 1,000-yen purchase was "
                    "charged. The fingerprint check turns this silent error into a 422."),
    ("4.3", (1, 2), "not yet: the other way round: write (believed, charged), what the client believes first."),
    ("4.3", (1, 1), "not yet: the client believes a purchase done when its request gets a 2xx. Without the "
                    "fingerprint check, what does the 2,500-yen request get?"),
    ("4.3", (2, 2), "not yet: a charge is recorded only when a request runs the business work. Did the 2,500-yen "
                    "request run it, or get the stored answer?"),
    ("4.3", "2, 1", "not yet: '2, 1' is not a pair; write two whole numbers in parentheses, such as (1, 1)"),
    ("4.4", "per-operation", "right: one key per purchase, sent with every attempt: the retry is linked to the "
                             "record and replayed."),
    ("4.4", "per-attempt", "not yet: 2 charges. Which strategy sends the same key with every attempt?"),
    ("4.4", "none", "not yet: the API refused it (400): this API requires a key. Which strategy sends the same key "
                    "with every attempt?"),
    ("4.4", "PER-OPERATION", "not yet: 'PER-OPERATION' is not one of 'none', 'per-operation', 'per-attempt'"),
    ("5.1", 2, "right: the charge row was written but not committed, so the crash rolled it back with the key; the "
               "retry captured again: 1 row, 2 captures."),
    ("5.1", 1, "not yet: more than that: a ROLLBACK touches the database, not the processor's ledger. The capture "
               "happened before the crash, and the retry starts afresh."),
    ("5.1", 3, "not yet: fewer than that: one crash, one retry. How many times did a handler call the processor?"),
    ("5.1", "2", "not yet: '2' is a text (in quotes); write a whole number, without quotes"),
    ("5.2", "api.processor_key=request-key", "right: the retry calls the processor with the request's key, and the "
                                             "processor answers with cap_1 instead of capturing again: a downstream "
                                             "key."),
    ("5.2", "api.processor_timeout=10", "not yet: 1 row(s), 2 captures. Section 4: what does the API give the "
                                        "processor as its idempotency key?"),
    ("5.2", "design=recovery-points", "not yet: keep the design same-tx (that setting made it recovery-points)."),
    ("5.2", ["client.max_attempts=5"], "not yet: 1 row(s), 2 captures. Section 4: what does the API give the "
                                       "processor as its idempotency key?"),
    ("5.3", (0, 1), "right: the only attempt died after the capture and nobody finished it: the money is taken "
                    "(1 capture) and never recorded (0 rows), an orphan."),
    ("5.3", (1, 0), "not yet: the other way round: write (rows, captures), the charge rows first."),
    ("5.3", (1, 1), "not yet: the charge rows: the only attempt died before its COMMIT, the client gave up, and no "
                    "completer runs. Did anyone record the charge?"),
    ("5.3", (0, 0), "not yet: the captures: the processor captured before the crash, and a crash does not undo a "
                    "capture."),
    ("6.1", 1, "right: lose the response of op 1 attempt 1: the exhaustive mode tries the schedules with the fewest "
               "faults first, so no smaller one breaks naive."),
    ("6.1", 2, "not yet: fewer than that: think of Lesson 1. What is the least that must go wrong for a naive API to "
               "charge twice?"),
    ("6.1", 0, "not yet: without any fault a naive API charges once: something must go wrong."),
    ("6.1", "1", "not yet: '1' is a text (in quotes); write a whole number, without quotes"),
    ("6.2", "api.lease=0.1", "right: the search found two charge rows: lose the response of op 1 attempt 1. A design "
                             "is only as safe as its settings: a lease shorter than the handler's work, for one, frees "
                             "a key whose first request is still running, and a retry charges again."),
    ("6.2", 0.1, "not yet: 0.1 is not a --set text; write a text such as \"api.FIELD=VALUE\""),
    ("6.2", "api.lease=-1", "not yet: idemsim could not run it: explore, --set 'api.lease=-1': field 'api.lease': "
                            "Input should be greater than or equal to 0.001 (got -1)"),
    ("6.2", ..., "not yet: write a text such as \"api.FIELD=VALUE\" in place of the ... in the cell above, and run "
                 "that cell"),
    ("6.4", 2, "right: lose the processor's answer to op 1 attempt 1; crash the API at after_key of op 1 attempt 2, "
               "restart after 1 s: ledger-agrees: capture cap_1 of operation 1 (by 1.1 at 0.250 s) has no charge row: "
               "the customer paid and the API has no record. The rollback erased the key, so nothing is left for a "
               "completer to find; recovery-points commits its key first."),
    ("6.4", 1, "not yet: 1 fault(s) are not enough: after one, the next attempt retries and the processor answers it "
               "with the first capture. What must also happen to that retry?"),
    ("6.4", 3, "not yet: fewer are enough: the exhaustive mode finds a schedule of fewer faults than 3. Think of a "
               "capture whose handler dies, when no later attempt records it."),
    ("6.4", "2", "not yet: '2' is a text (in quotes); write a whole number, without quotes"),
]


def _id(case) -> str:
    exercise, answer, line = case
    return f"{exercise}-{'right' if line.startswith('right') else 'not-yet'}-{answer!r}"[:60]


# -- answers to the function exercise (5.4) and the design exercise (6.3) ---------------------------------------
def ledgers_match(run):
    return run.summary["charges"] == run.summary["captures"]


def nothing_broke(run):
    return not run.summary["violations"]


def one_charge_row(run):
    return run.summary["charges"] == 1


def one_capture(run):
    return run.summary["captures"] == 1


def no_fewer_rows(run):
    return run.summary["charges"] >= run.summary["captures"]


def no_more_rows(run):
    return run.summary["charges"] <= run.summary["captures"]


def the_difference(run):
    return run.summary["charges"] - run.summary["captures"]


def body_left_out(run):
    ...


def a_wrong_key(run):
    return run.summary["rows"] == run.summary["captures"]


def crashing_design(h):
    yield from h.sql("begin")
    return 1 / 0  # its second line after the def: the line the hint names


FIXED_RIGHT = ("right: all 407 schedules of up to 2 faults keep one charge row and one capture, and every purchase "
               "of intended-duplicate, ttl-shorter-than-retry-window --variant ttl-longer is charged once: with the "
               "request's key, the processor answers a second call of the same purchase with its first capture, and "
               "a new purchase with a new one.")
TWO_PURCHASES_ONE_CAPTURE = (
    "not yet: intended-duplicate: 2 purchases, each with its own key, recorded 2 charge row(s) for 1 capture(s). The "
    "processor took one purchase's call for a retry of another: its key must be the same for every attempt of one "
    "purchase and differ from one purchase to the next, as the request's key does (Lesson 4).")
NO_PROCESSOR_KEY = ("not yet: explore broke it with lose the processor's answer to op 1 attempt 1 "
                    "(at-most-one-capture). The rollback cannot undo a capture; what could make the processor "
                    "recognise the retry's call?")


class TestEveryExercise:
    @pytest.mark.parametrize("case", ANSWERS, ids=[_id(c) for c in ANSWERS])
    def test_an_answer_gets_its_verdict_and_its_hint(self, case):
        """Each answer is judged right or not yet, and the line printed says why, or what to look at."""
        exercise, answer, line = case
        checked = course.check(exercise, answer)
        assert str(checked) == line
        assert checked.right is line.startswith("right: ") and checked.exercise == exercise
        assert checked.hint == line.split(": ", 1)[1]

    def test_every_exercise_has_its_right_answer_and_three_wrong_ones_here(self):
        """The table above holds, for every exercise (6.3 and 5.4 below), one right answer and three wrong ones."""
        for exercise in course.EXERCISES:
            lines = [line for e, _, line in ANSWERS + FUNCTION_ANSWERS + DESIGN_ANSWERS if e == exercise]
            assert sum(line.startswith("right: ") for line in lines) >= 1, exercise
            assert sum(line.startswith("not yet: ") for line in lines) >= 3, exercise

    def test_an_answer_not_yet_written_is_not_yet_for_every_exercise(self):
        """The placeholder of every answer cell (``...``, and None for a cell not yet run) is "not yet", never an
        error."""
        for exercise in course.EXERCISES:
            for answer in (..., None):
                checked = course.check(exercise, answer)
                assert not checked.right and "in place of the ..." in checked.hint, exercise

    def test_a_wrong_kind_of_answer_is_not_yet_for_every_exercise(self):
        """Anything at all (a text, a function, an object) is judged without raising."""
        for exercise in course.EXERCISES:
            for answer in ("nonsense", object(), print, {"a": 1}, float("nan")):
                assert course.check(exercise, answer).right is False, (exercise, answer)


FUNCTION_ANSWERS = [
    ("5.4", ledgers_match, "right: on all 6 runs it tells matching ledgers from a double capture and an orphan, "
                           "whatever properties broke. idemsim's own property ledger-agrees does the same, operation "
                           "by operation, naming each orphan."),
    ("5.4", nothing_broke, "not yet: wrong for naive-double-charge: 2 charge row(s) and 2 capture(s), so the answer "
                           "is True, and your function returned False (wrong on 1 of 6 runs). Compare "
                           "run.summary['charges'] with run.summary['captures'], whatever else the run shows."),
    ("5.4", one_charge_row, "not yet: wrong for crash-after-processor: 1 charge row(s) and 2 capture(s), so the "
                            "answer is False, and your function returned True (wrong on 2 of 6 runs). Compare "
                            "run.summary['charges'] with run.summary['captures'], whatever else the run shows."),
    ("5.4", one_capture, "not yet: wrong for completer-finishes --variant no-completer: 0 charge row(s) and 1 "
                         "capture(s), so the answer is False, and your function returned True (wrong on 3 of 6 "
                         "runs). Compare run.summary['charges'] with run.summary['captures'], whatever else the run "
                         "shows."),
    ("5.4", no_fewer_rows, "not yet: wrong for split-transactions --variant charge-first --set "
                           "api.processor_key=request-key: 2 charge row(s) and 1 capture(s), so the answer is False, "
                           "and your function returned True (wrong on 1 of 6 runs). Compare run.summary['charges'] "
                           "with run.summary['captures'], whatever else the run shows."),
    ("5.4", no_more_rows, "not yet: wrong for crash-after-processor: 1 charge row(s) and 2 capture(s), so the answer "
                          "is False, and your function returned True (wrong on 2 of 6 runs). Compare "
                          "run.summary['charges'] with run.summary['captures'], whatever else the run shows."),
    ("5.4", the_difference, "not yet: for lost-response your function returned 0; return True or False."),
    ("5.4", body_left_out, "not yet: your function returns None; write its body (a return statement)."),
    ("5.4", a_wrong_key, "not yet: calling your function on lost-response failed (KeyError: 'rows'). Read "
                         "run.summary['charges'] and run.summary['captures']."),
    ("5.4", 5, "not yet: 5 is of type int, not a function; write it with def"),
]


@pytest.mark.slow
def test_a_setting_with_which_the_search_finds_nothing_is_not_yet():
    """6.2 with committed-first's own lease: the search's 200 examples find no double charge, and the hint says
    what committed-first's safety depends on."""
    assert str(course.check("6.2", "api.lease=10")) == (
        "not yet: 200 examples, no double charge. committed-first takes a key over when its record is older than "
        "the lease (api.lease).")


class TestAFunctionExercise:
    @pytest.mark.parametrize("case", FUNCTION_ANSWERS, ids=[c[1].__name__ if callable(c[1]) else repr(c[1])
                                                            for c in FUNCTION_ANSWERS])
    def test_a_function_is_judged_on_runs_that_tell_it_from_the_plausible_wrong_ones(self, case):
        """5.4 is right only for the function that compares rows with captures: "no property broke", "one row",
        "one capture", "no fewer rows" and "no more rows" each fail on some run, named in the hint."""
        exercise, answer, line = case
        assert str(course.check(exercise, answer)) == line


DESIGN_ANSWERS = [
    ("6.3", starter_with(lambda h: h.key), FIXED_RIGHT),
    ("6.3", starter_with(lambda h: f"pay-{h.key}"), FIXED_RIGHT),
    ("6.3", starter_with(lambda h: "charge"), TWO_PURCHASES_ONE_CAPTURE),
    ("6.3", starter_with(lambda h: h.fingerprint), TWO_PURCHASES_ONE_CAPTURE),
    ("6.3", starter_with(lambda h: None), NO_PROCESSOR_KEY),
    ("6.3", starter_with(lambda h: h.request.id), NO_PROCESSOR_KEY),
    ("6.3", crashing_design, "not yet: idemsim could not run it: design 'my-design' failed in request 1.1, at "
                             "statement 'begin' at 0.050 s (test_course.py:"
                             f"{crashing_design.__code__.co_firstlineno + 2}): ZeroDivisionError: division by zero"),
    ("6.3", "my_design", "not yet: 'my_design' is of type str, not a function; write it with def"),
]
DESIGN_IDS = ["the request's key", "a key derived from it", "a constant key", "the fingerprint as key",
              "no processor key", "the attempt's id as key", "a design that raises", "a text"]


@pytest.mark.slow
class TestADesignExercise:
    @pytest.mark.parametrize("case", DESIGN_ANSWERS, ids=DESIGN_IDS)
    def test_a_design_is_judged_on_several_purchases_and_every_small_schedule(self, case):
        """6.3 is right for a processor key that follows the request's key; a constant key and the fingerprint
        record 2 charges for 1 capture on two real purchases; no key, or one per attempt, captures twice."""
        exercise, answer, line = case
        assert str(course.check(exercise, answer)) == line

    def test_the_design_is_registered_only_while_it_is_judged(self):
        """A check leaves the designs as it found them: a design the notebook registered under the same name is
        put back."""
        before = dict(idemsim.DESIGNS)
        course.check("6.3", starter_with(lambda h: h.key))
        assert idemsim.DESIGNS == before
        mine = starter_with(lambda h: None)
        idemsim.register_design(STUDENT_DESIGN, mine)
        try:
            course.check("6.3", starter_with(lambda h: h.key))
            assert idemsim.DESIGNS[STUDENT_DESIGN].handler is mine
        finally:
            idemsim.DESIGNS.pop(STUDENT_DESIGN)


class TestTheLanguage:
    def test_a_check_speaks_the_language_asked_for(self):
        """``lang="ja"`` gives the verdict and the hint in Japanese, from the catalogue."""
        assert str(course.check("1.1", 3, "ja")) == (
            "正解: どの送信も API に届き、それぞれ課金されました。"
            "クライアントが見たのは ['timeout', 'timeout', 201] で、1 回払ったと思っています。")
        assert str(course.check("1.1", "3", "ja")) == (
            "まだ: '3' は文字列（引用符付き）です。0 以上の整数を引用符なしで書いてください")

    def test_without_a_language_a_check_follows_idemsim_lang(self, monkeypatch):
        """A check without ``lang`` speaks IDEMSIM_LANG's language, as the Japanese notebooks set it; an explicit
        language wins."""
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        checked = course.check("2.4", 1)
        assert checked.lang == "ja" and str(checked) == (
            "まだ: それより少なくなります。プロセスは 2 つのトランザクションの間で落ちました。"
            "キーが先です。確定していたのはどちらですか？")
        assert str(course.check("2.4", 1, "en")).startswith("not yet: fewer than that")


class TestNeverAnError:
    def test_an_unknown_exercise_is_not_yet_naming_the_exercises(self):
        """An exercise that does not exist is "not yet", with the list of those that do."""
        assert str(course.check("7.1", 3)) == (
            "not yet: there is no exercise '7.1'; the exercises are 1.1, 1.2, 1.3, 1.4, 2.1, 2.2, 2.3, 2.4, 3.1, 3.2, "
            "3.3, 3.4, 4.1, 4.2, 4.3, 4.4, 5.1, 5.2, 5.3, 5.4, 6.1, 6.2, 6.3, 6.4")

    def test_an_error_inside_a_check_is_said_not_raised(self, monkeypatch):
        """Whatever goes wrong while judging becomes "not yet" with the error's type and text."""
        from idemsim.course import lesson1

        def broken(*args, **kwargs):
            raise RuntimeError("the disk is full")

        monkeypatch.setattr(lesson1, "story", broken)
        assert str(course.check("1.1", 3)) == (
            "not yet: the check could not use your answer (RuntimeError: the disk is full); run the cells above, top "
            "to bottom, and try again")

    def test_the_module_docstring_runs(self):
        """The examples of ``idemsim.course``'s docstring hold."""
        assert doctest.testmod(course, raise_on_error=False).failed == 0


# -- the notebooks call the checks --------------------------------------------------------------------------------
REVEALED_BY = {"2.3": "l2-13", "2.4": "l2-16", "3.3": "l3-14", "3.4": "l3-16", "4.3": "l4-09", "5.3": "l5-13"}
"""The predictions, and the first code cell that shows their answer: it comes after the exercise's check."""


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def tagged(cell: dict, tag: str) -> bool:
    return tag in cell.get("metadata", {}).get("tags", [])


EVERY_NOTEBOOK = [NOTEBOOKS, NOTEBOOKS / "answers", NOTEBOOKS / "ja", NOTEBOOKS / "ja" / "answers"]


class TestTheExercises:
    def test_the_exercises_are_numbered_as_the_notebooks_number_them(self):
        """`EXERCISES` lists 1.1 … 6.4, four a lesson, in order, each with a kind of answer from `KINDS`."""
        assert list(course.EXERCISES) == [f"{lesson}.{n}" for lesson in range(1, 7) for n in range(1, 5)]
        assert all(e.kind in KINDS for e in course.EXERCISES.values())
        assert [(e.id, e.kind) for e in course.EXERCISES.values() if e.kind in ("function", "design")] == [
            ("5.4", "function"), ("6.3", "design")]

    @pytest.mark.parametrize("folder", EVERY_NOTEBOOK, ids=["lessons", "answers", "ja", "ja/answers"])
    def test_each_exercise_is_asked_answered_and_checked_in_its_notebook(self, folder):
        """In every notebook (English and Japanese, lessons and answers), an exercise's prompt cell is followed by
        its answer cell, which sets the exercise's name, and by its checking cell, which calls
        ``idemsim.course.check`` with the exercise and that name, and does nothing else."""
        for exercise in course.EXERCISES.values():
            notebook = cells(folder / f"{exercise.notebook}.ipynb")
            at = [c.get("id") for c in notebook].index(exercise.prompt)
            prompt, answer, check = notebook[at:at + 3]
            asked = (f"**Exercise {exercise.id} —", f"**演習 {exercise.id} —")
            assert prompt["cell_type"] == "markdown" and any(words in source(prompt) for words in asked)
            written = (f"{exercise.name} =", f"def {exercise.name}(")
            assert tagged(answer, "answer") and source(answer).startswith(written)
            assert tagged(check, "check") and source(check) == (
                f"# Check exercise {exercise.id}\nimport idemsim\n\n"
                f"print(idemsim.course.check(\"{exercise.id}\", globals().get(\"{exercise.name}\")))")

    def test_every_checking_cell_is_an_exercise_of_the_table(self):
        """The notebooks have no checking cell but those of `EXERCISES`, one each."""
        found = [source(c).splitlines()[0] for path in sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
                 for c in cells(path) if tagged(c, "check")]
        assert sorted(found) == [f"# Check exercise {e}" for e in course.EXERCISES]

    @pytest.mark.parametrize("exercise", REVEALED_BY)
    def test_a_prediction_is_asked_before_the_cell_that_shows_its_answer(self, exercise):
        """Each of the six predictions that the lessons answer on the way comes, with its check, before the first
        cell that shows the answer, in every version of its notebook."""
        for folder in EVERY_NOTEBOOK:
            ids = [c.get("id") for c in cells(folder / f"{course.EXERCISES[exercise].notebook}.ipynb")]
            check = ids.index(course.EXERCISES[exercise].prompt) + 2
            assert check < ids.index(REVEALED_BY[exercise]), (folder, exercise)
