"""The network: one link each way, with latency and loss decided by the fault plan."""

import math
import random

import pytest
import simpy

from idemsim.model.faults import FaultPlan, LoseMessage
from idemsim.model.network import Latency, Link, Network
from idemsim.model.trace import Trace


def _network(faults=(), request=Link(), response=Link(), seed=1):
    env, trace = simpy.Environment(), Trace()
    plan = FaultPlan(list(faults), random.Random(seed), {"request": request, "response": response})
    return env, trace, plan, Network(env, plan, trace)


class TestNetwork:
    def test_message_arrives_after_its_latency(self):
        """A message on a link with 0.05 s latency arrives 0.05 s after it was sent."""
        env, trace, plan, net = _network()
        arrived = []
        net.carry("request", 1, 1, "1.1", "client", "api", lambda: arrived.append(env.now))
        env.run()
        assert arrived == [0.05]

    def test_dropped_message_never_arrives(self):
        """A message the fault plan loses is never delivered, and the loss is in the trace."""
        env, trace, plan, net = _network([LoseMessage(message="request", attempt=1)])
        arrived = []
        net.carry("request", 1, 1, "1.1", "client", "api", lambda: arrived.append(env.now))
        env.run()
        assert arrived == []
        assert [(e.kind, e.data["fault"]) for e in trace] == [("request.lost", 0)]
        assert plan.fired == [0] and plan.unfired() == []

    def test_scripted_loss_names_one_message_only(self):
        """Losing the response of attempt 1 leaves its request and attempt 2 alone."""
        env, trace, plan, net = _network([LoseMessage(message="response", attempt=1)])
        arrived = []
        net.carry("request", 1, 1, "1.1", "client", "api", lambda: arrived.append("req 1"))
        net.carry("response", 1, 2, "1.2", "api", "client", lambda: arrived.append("resp 2"))
        env.run()
        assert arrived == ["req 1", "resp 2"]
        assert plan.unfired() == [0]

    def test_random_loss_uses_the_injected_rng(self):
        """With loss 0.5, which messages are lost depends on the seed alone."""
        def lost(seed):
            env, trace, plan, net = _network(request=Link(loss=0.5), seed=seed)
            for i in range(20):
                net.carry("request", 1, i + 1, f"1.{i + 1}", "client", "api", lambda: None)
            env.run()
            return [e.data["request"] for e in trace]
        assert lost(7) == lost(7)
        assert lost(7) != lost(8)

    def test_scripted_fault_does_not_shift_random_draws(self):
        """Adding a scripted loss changes that message only: the other latencies stay the same."""
        uniform = Link(latency=Latency(dist="uniform", low=0.0, high=1.0))

        def arrivals(faults):
            env, trace, plan, net = _network(faults, request=uniform, seed=3)
            seen = []
            for i in range(1, 4):
                net.carry("request", 1, i, f"1.{i}", "client", "api", lambda i=i: seen.append((i, env.now)))
            env.run()
            return dict(seen)
        plain, with_loss = arrivals([]), arrivals([LoseMessage(message="request", attempt=2)])
        assert with_loss == {1: plain[1], 3: plain[3]}


class TestLatency:
    def test_each_distribution_draws_once(self):
        """Every distribution consumes exactly one random number per message."""
        for latency in (Latency(), Latency(dist="uniform", low=0.1, high=0.2), Latency(dist="exponential")):
            rng_a, rng_b = random.Random(5), random.Random(5)
            latency.draw(rng_a)
            rng_b.random()
            assert rng_a.random() == rng_b.random()

    @pytest.mark.parametrize("latency", [
        Latency(), Latency(seconds=0.02, shift=0.001), Latency(dist="uniform", low=0.1, high=0.2),
        Latency(dist="uniform", low=0.001, high=0.005, stall=0.05, stall_seconds=0.3),
        Latency(dist="exponential", mean=0.008, shift=0.002), Latency(dist="exponential", stall=0.5, stall_seconds=1),
    ], ids=repr)
    def test_a_latency_is_its_distribution_shifted_and_sometimes_stalled(self, latency):
        """A draw is the distribution's value of one random number u (constant: seconds; uniform: low + (high -
        low)·u; exponential: -mean·ln(1 - u)), plus shift, plus stall_seconds when a second random number falls
        below stall; the sampler made once and draw give exactly these values and leave the generator where
        they found it."""
        def expected(rng: random.Random) -> float:
            u = rng.random()
            value = {"constant": latency.seconds, "uniform": latency.low + (latency.high - latency.low) * u,
                     "exponential": -latency.mean * math.log(1.0 - u)}[latency.dist]
            if latency.shift:
                value += latency.shift
            if latency.stall and rng.random() < latency.stall:
                value += latency.stall_seconds
            return value

        rng_a, rng_b, rng_c = random.Random(7), random.Random(7), random.Random(7)
        sample = latency.sampler()
        wanted = [expected(rng_c) for _ in range(500)]
        assert [sample(rng_a) for _ in range(500)] == wanted == [latency.draw(rng_b) for _ in range(500)]
        assert rng_a.random() == rng_b.random() == rng_c.random()

    def test_uniform_stays_in_range(self):
        """A uniform latency lies between its low and high bounds."""
        rng = random.Random(1)
        draws = [Latency(dist="uniform", low=0.1, high=0.2).draw(rng) for _ in range(100)]
        assert all(0.1 <= d <= 0.2 for d in draws)
