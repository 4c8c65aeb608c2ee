"""Determinism: the same scenario, design and seed give a byte-identical trace."""

import doctest

import idemsim
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import load

LOSSY = ["network.request.loss=0.4", "network.response.loss=0.4",
         "network.request.latency={dist='exponential', mean=0.2}", "client.jitter='full'", "client.max_attempts=6",
         "faults=[]"]


def trace_json(seed, sets=LOSSY, design=None):
    return simulate(load("lost-response", sets), design, seed).trace.to_json()


class TestDeterminism:
    def test_same_seed_same_trace(self):
        """Two runs with one seed, random losses, latencies and jitter included, give identical JSON."""
        assert trace_json(7) == trace_json(7)

    def test_another_seed_another_story(self):
        """The seed is what decides the random faults: other seeds tell other stories."""
        assert len({trace_json(seed) for seed in range(6)}) > 1

    def test_every_design_is_deterministic(self):
        """Determinism holds under every design."""
        for design in idemsim.DESIGNS:
            assert trace_json(3, design=design) == trace_json(3, design=design)


def test_the_package_docstring_runs():
    """The example in idemsim's docstring is executed and holds."""
    failures, _ = doctest.testmod(idemsim, raise_on_error=False)
    assert failures == 0


def test_the_sweep_docstring_runs():
    """The example of idemsim.sweep(...) runs and holds: a callable module with the sweep's functions."""
    import idemsim.runners.sweep

    failures, attempted = doctest.testmod(idemsim.runners.sweep, raise_on_error=False)
    assert (failures, attempted) == (0, 3)
