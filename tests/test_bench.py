"""`python -m idemsim.bench`: the benchmark runs the load it describes and reports the figures issue 13 names.

These check what the benchmark reports, not how fast anything is (a timed test on a shared machine would only
be noise); docs/performance.md has the measurements.
"""

from __future__ import annotations

import json

from idemsim import bench


class TestBench:
    def test_the_json_has_the_figures_of_both_models_and_their_ratio(self, capsys):
        """The full model's figures at the top, the bare model's under bare, and the ratio of payments per
        second."""
        assert bench.main(["-n", "300", "--arrivals", "poisson"]) == 0
        doc = json.loads(capsys.readouterr().out)
        figures = ("payments", "events", "events_per_payment", "payments_per_s", "peak_rss_mib")
        assert all(key in doc and key in doc["bare"] for key in figures)
        assert doc["payments"] == doc["bare"]["payments"] == 300 and doc["arrivals"] == "poisson"
        assert doc["ratio"] == round(doc["payments_per_s"] / doc["bare"]["payments_per_s"], 3)
        assert len(doc["pair_ratios"]) == doc["repeat"] == 3 and min(doc["pair_ratios"]) > 0
        assert doc["charges"] > 250 and doc["events_per_payment"] > 10 and doc["bare"]["events_per_payment"] > 10

    def test_every_arrival_process_runs_in_both_models(self):
        """concurrent, poisson and sequential: the full model and the bare one end every payment."""
        for arrivals in bench.ARRIVALS:
            full, bare = bench.run_full(60, arrivals), bench.run_bare(60, arrivals)
            assert full["ok"] > 50 and bare["ok"] > 50, arrivals

    def test_the_load_is_the_one_described(self):
        """2 ms + exponential(8 ms) each way, 10 % loss, 1-5 ms of work with a 5 % stall of 300 ms, a 100 ms
        timeout, 3 retries with proportional jitter, same-tx, a key per payment."""
        s = bench.scenario(10)
        link = s.network.request
        assert (link.loss, link.latency.dist, link.latency.mean, link.latency.shift) == (0.1, "exponential", 0.008,
                                                                                         0.002)
        assert s.network.response == link
        charge = s.api.charge
        assert (charge.dist, charge.low, charge.high, charge.stall, charge.stall_seconds) == ("uniform", 0.001,
                                                                                              0.005, 0.05, 0.3)
        c = s.client
        assert (c.timeout, c.max_attempts, c.backoff, c.multiplier, c.jitter, c.key_strategy) == (
            0.1, 4, 0.05, 2.0, "proportional", "per-operation")
        assert s.design == "same-tx" and s.arrivals.count == 10

    def test_text_and_the_profile(self, capsys):
        """--format text prints the table; --profile groups the time by area and names the costliest functions."""
        assert bench.main(["-n", "200", "--format", "text", "--profile"]) == 0
        out = capsys.readouterr().out
        assert "full model" in out and "bare SimPy" in out and "ratio" in out and "database model" in out
