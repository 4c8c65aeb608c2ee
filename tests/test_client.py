"""The client: attempts, outcomes, retries and keys, against a scripted stand-in for the API."""

import random

import simpy

from idemsim.base.http import Response
from idemsim.model.client import Client, ClientConfig, Operation, RetryPolicy
from idemsim.model.faults import FaultPlan
from idemsim.model.network import Latency, Link, Network
from idemsim.model.trace import Trace

NO_LATENCY = Link(latency=Latency(seconds=0.0))


class ScriptedApi:
    """Answers attempt N with ``answers[N-1]`` after ``delay`` seconds; None means it never answers."""

    def __init__(self, env, answers, delay=0.1):
        self.env, self.answers, self.delay = env, list(answers), delay
        self.received = []

    def receive(self, request, respond):
        self.received.append((self.env.now, request.attempt, request.key))
        status = self.answers[request.attempt - 1]
        if status is not None:
            self.env.process(self._answer(respond, status))

    def _answer(self, respond, status):
        yield self.env.timeout(self.delay)
        respond(Response(status, {}))


def run_client(answers, config=ClientConfig(timeout=1.0, backoff=0.5), operation=Operation(key="k-1"),
               delay=0.1, seed=1):
    env, trace, rng = simpy.Environment(), Trace(), random.Random(seed)
    plan = FaultPlan([], rng, {"request": NO_LATENCY, "response": NO_LATENCY})
    api = ScriptedApi(env, answers, delay)
    key = operation.key if config.key_strategy == "per-operation" else None
    client = Client(env, 1, operation, config, rng, Network(env, plan, trace), api, trace, key=key)
    env.process(client.run())
    env.run()
    return client.result, api.received, trace


class TestAttempts:
    def test_a_2xx_ends_the_operation_ok(self):
        """A 201 on the first attempt ends the operation ok, with no retry."""
        result, received, _ = run_client([201])
        assert (result.outcome, result.status, result.attempts) == ("ok", 201, 1)
        assert len(received) == 1

    def test_a_422_is_fail_and_is_not_retried(self):
        """A 422 means definitely not done: the client stops and reports fail."""
        result, received, _ = run_client([422, 201])
        assert (result.outcome, result.status, len(received)) == ("fail", 422, 1)

    def test_a_timeout_is_info_and_is_retried(self):
        """No answer within the timeout is info; the client retries and ends with the retry's answer."""
        result, received, _ = run_client([None, 201])
        assert result.statuses == [None, 201]
        assert (result.outcome, result.status) == ("ok", 201)

    def test_409_and_504_are_retried(self):
        """409 and 504 leave the client not knowing, so it tries again."""
        result, _, _ = run_client([409, 504, 201])
        assert result.statuses == [409, 504, 201] and result.outcome == "ok"

    def test_gives_up_with_info_after_the_last_attempt(self):
        """When every attempt times out, the operation ends info: the client does not know."""
        result, received, _ = run_client([None, None, None])
        assert (result.outcome, result.status, result.attempts) == ("info", None, 3)

    def test_operations_that_saw_the_same_statuses_share_one_list(self):
        """Two operations that saw the same statuses hold one list of them (a load keeps one per sequence)."""
        first, _, _ = run_client([None, 201])
        second, _, _ = run_client([None, 201])
        other, _, _ = run_client([201])
        assert first.statuses is second.statuses and first.statuses == [None, 201] and other.statuses == [201]

    def test_a_late_answer_is_ignored(self):
        """An answer that arrives after the timeout does not change the attempt's outcome."""
        result, _, trace = run_client([201, 201], config=ClientConfig(timeout=1.0, max_attempts=1), delay=2.0)
        assert (result.outcome, result.statuses) == ("info", [None])
        assert [e.data["ignored"] for e in trace.of_kind("response.arrive")] == [True]


class TestKeys:
    def test_a_retry_reuses_the_key_under_one_key_per_operation(self):
        """Every attempt of one operation carries the same Idempotency-Key."""
        _, received, _ = run_client([None, None, 201])
        assert [key for _, _, key in received] == ["k-1", "k-1", "k-1"]

    def test_a_new_key_per_attempt_breaks_the_link(self):
        """The per-attempt strategy sends a different key with every attempt."""
        _, received, _ = run_client([None, None, 201], config=ClientConfig(timeout=1.0, key_strategy="per-attempt"),
                                    operation=Operation())
        keys = [key for _, _, key in received]
        assert len(set(keys)) == 3 and all(k.startswith("k-") for k in keys)

    def test_no_key_strategy_sends_none(self):
        """Without a key strategy the request carries no Idempotency-Key."""
        _, received, _ = run_client([201], config=ClientConfig(key_strategy="none"))
        assert received[0][2] is None


class TestBackoff:
    def test_attempts_follow_timeout_plus_exponential_backoff(self):
        """Attempts start at 0, 1+0.5 and 1.5+1+1: timeout 1 s, backoff 0.5 s doubling."""
        _, received, _ = run_client([None, None, None])
        assert [t for t, _, _ in received] == [0.0, 1.5, 3.5]

    def test_retry_window_stops_new_attempts(self):
        """No attempt starts later than the retry window after the operation began."""
        config = ClientConfig(timeout=1.0, backoff=0.5, max_attempts=5, retry_window=2.0)
        result, received, trace = run_client([None] * 5, config=config)
        assert [t for t, _, _ in received] == [0.0, 1.5]
        assert trace.of_kind("client.give_up")[0].data["reason"] == "retry window closed"

    def test_full_jitter_stays_below_the_base(self):
        """Full jitter draws each backoff between 0 and the exponential base, from the run's RNG."""
        policy = RetryPolicy(backoff=1.0, jitter="full")
        rng = random.Random(3)
        draws = [policy.backoff_before(retry, rng) for retry in (1, 2, 3)]
        assert all(0 <= d <= base for d, base in zip(draws, (1.0, 2.0, 4.0)))
        assert draws == [RetryPolicy(backoff=1.0, jitter="full").backoff_before(r, rng2)
                         for rng2 in [random.Random(3)] for r in (1, 2, 3)]
