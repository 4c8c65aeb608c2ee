"""`python -m idemsim.bench`: the benchmark runs the load it describes and reports the figures issue 13 names.

These check what the benchmark reports, not how fast anything is (a timed test on a shared machine would only
be noise); docs/performance.md has the measurements.
"""

from __future__ import annotations

import json

import pytest

from idemsim import bench


@pytest.mark.slow
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

    def test_scaling_compares_every_size_in_a_fresh_process_the_last_one_too(self, capsys):
        """--scaling runs each size, -n's too, in a process of its own, so that their peaks compare; the figures at
        the top are -n's process's, and the growth is read from the first size to the last."""
        assert bench.main(["-n", "200", "--repeat", "1", "--scaling", "100"]) == 0
        doc = json.loads(capsys.readouterr().out)
        rows = doc["scaling"]["sizes"]
        assert [row["payments"] for row in rows] == [100, 200] and rows[1] == bench._scaling_row(doc)
        assert (doc["scaling"]["growth"]["from"], doc["scaling"]["growth"]["to"]) == (100, 200)
        assert doc["targets"] == []  # smaller than the sizes the targets are set at

    def test_text_and_the_profile(self, capsys):
        """--format text prints the table; --profile groups the time by area and names the costliest functions."""
        assert bench.main(["-n", "200", "--format", "text", "--profile"]) == 0
        out = capsys.readouterr().out
        assert "full model" in out and "bare SimPy" in out and "ratio" in out and "database model" in out
        assert "~:0(" not in out and " at 0x" not in out  # a built-in by its name alone


# A document as `python -m idemsim.bench -n 100000 --scaling 1000 10000 --gc --json-memory --text --cli` writes it
# (figures of a run on 2026-12-01, the profile cut short).
MEASURED = {
    "payments": 100000, "seconds": 10.59, "events": 1729258, "events_per_payment": 17.29, "payments_per_s": 9442.9,
    "us_per_payment": 105.9, "us_per_event": 6.12, "ok": 99633, "charges": 99992, "violations": 2,
    "peak_rss_mib": 226.6, "arrivals": "poisson", "repeat": 3, "ratio": 0.384, "pair_ratios": [0.384, 0.371, 0.35],
    "bare": {"payments": 100000, "seconds": 4.07, "events": 1692000, "events_per_payment": 16.92,
             "payments_per_s": 24570.0, "us_per_payment": 40.7, "us_per_event": 2.41, "ok": 99700,
             "peak_rss_mib": 141.0},
    "scaling": {"sizes": [
        {"payments": 1000, "us_per_payment": 85.4, "bare_us_per_payment": 29.5, "peak_rss_mib": 35.3,
         "bare_peak_rss_mib": 33.9, "ratio": 0.345},
        {"payments": 10000, "us_per_payment": 93.3, "bare_us_per_payment": 32.2, "peak_rss_mib": 52.8,
         "bare_peak_rss_mib": 43.6, "ratio": 0.345},
        {"payments": 100000, "us_per_payment": 105.9, "bare_us_per_payment": 40.7, "peak_rss_mib": 226.6,
         "bare_peak_rss_mib": 141.0, "ratio": 0.384}],
        "growth": {"from": 1000, "to": 100000, "cost_per_payment": 1.24, "bare_cost_per_payment": 1.38,
                   "memory_from": 10000, "kib_per_payment": 1.98, "bare_kib_per_payment": 1.11}},
    "gc": {"seconds": 10.59, "seconds_without_gc": 10.36, "share": 0.022},
    "json_memory": {"runs": [{"operations": 5000, "seconds": 6.2, "peak_rss_mib": 59.1},
                             {"operations": 20000, "seconds": 24.1, "peak_rss_mib": 85.3}], "ratio": 1.44},
    "text": {"operations": 5000, "events": 89415, "json": {"seconds": 6.36, "us_per_event": 71.11},
             "text": {"seconds": 1.2, "us_per_event": 13.43}, "text_full": {"seconds": 4.15, "us_per_event": 46.43},
             "text_full_vs_json": 0.65},
    "cli": {"idemsim_s": 0.285, "bare_s": 0.22, "ratio": 1.29, "idemsim_cpu_s": 0.27, "bare_cpu_s": 0.21,
            "cpu_ratio": 1.3},
    "profile": {"seconds": 0.565, "areas": {area: 0.1 for area in bench.AREAS}, "functions": [
        {"function": "idemsim/model/db/engine.py:474(statement)", "calls_per_payment": 5.92, "share": 0.082},
        {"function": "<method 'get' of 'dict' objects>", "calls_per_payment": 33.68, "share": 0.013},
        {"function": "idemsim/a/module/with/a/very/long/path/that/does/not/fit.py:1(function)",
         "calls_per_payment": 1.0, "share": 0.01}]},
}


class TestUsage:
    def test_a_bad_option_is_one_line_and_exit_2(self, capsys):
        """A value the benchmark refuses, or one argparse cannot read, is one line on stderr and exit code 2."""
        for argv, says in ((["-n", "0"], "argument -n: 0 payments: give 1 to 1,000,000"),
                           (["--arrivals", "bursty"], "argument --arrivals: invalid choice: 'bursty'")):
            with pytest.raises(SystemExit) as exited:
                bench.main(argv)
            err = capsys.readouterr().err
            assert exited.value.code == 2 and err.count("\n") == 1 and says in err, err


class TestTargets:
    def test_each_target_is_judged_against_the_issues_limit(self):
        """The ratio at 10,000 and 100,000 payments (at least 0.33), the cost growth (at most the bare model's),
        the memory growth (at most 2 KiB a payment), JSON's memory (1.5×), text (1×) and the CLI (1.3×)."""
        verdicts = [(v["target"], v["measured"], v["limit"], v["met"]) for v in bench.targets(MEASURED)]
        assert verdicts == [
            ("full ÷ bare payments/s at 10,000", 0.345, 0.33, True),
            ("full ÷ bare payments/s at 100,000", 0.384, 0.33, True),
            ("cost growth 1,000→100,000 (limit: bare's)", 1.24, 1.38, True),
            ("memory growth 10,000→100,000, KiB/payment", 1.98, 2.0, True),
            ("run --format json peak, 20,000 ÷ 5,000", 1.44, 1.5, True),
            ("text --full ÷ JSON time per event", 0.65, 1.0, True),
            ("run lost-response ÷ bare typer + rich", 1.29, 1.3, True)]

    def test_a_figure_past_its_limit_is_not_met(self):
        """A ratio under 0.33 and a memory growth over 2 KiB a payment are each reported as not met."""
        doc = {**MEASURED, "ratio": 0.329, "scaling": {**MEASURED["scaling"], "growth": {
            **MEASURED["scaling"]["growth"], "kib_per_payment": 2.01}}}
        missed = [v["target"] for v in bench.targets(doc) if not v["met"]]
        assert missed == ["full ÷ bare payments/s at 100,000", "memory growth 10,000→100,000, KiB/payment"]

    def test_a_run_smaller_than_the_targets_sizes_is_not_judged(self, capsys):
        """Below 10,000 payments no ratio is judged, and a growth that stops short of 100,000 is not either."""
        assert bench.main(["-n", "300", "--repeat", "1"]) == 0
        assert json.loads(capsys.readouterr().out)["targets"] == []
        sizes = MEASURED["scaling"]["sizes"][:1]
        small = {**MEASURED, "payments": 5000, "scaling": {"sizes": sizes, "growth": bench.growth(sizes)}}
        assert [v["target"] for v in bench.targets(small)] == ["run --format json peak, 20,000 ÷ 5,000",
                                                               "text --full ÷ JSON time per event",
                                                               "run lost-response ÷ bare typer + rich"]

    def test_the_text_shows_every_figure_in_tables_within_80_columns(self):
        """No JSON in the text: the scaling table, the collector, the profile, the commands, then the targets."""
        lines = bench.text({**MEASURED, "targets": bench.targets(MEASURED)}).splitlines()
        assert max(len(line) for line in lines) <= 80 and not any("{" in line for line in lines)
        assert "     1,000      85.4      29.5      35.3      33.9     0.345" in lines
        assert "cost per payment from 1,000 to 100,000: 1.24× (bare 1.38×)" in lines
        assert "memory from 10,000 to 100,000: 1.98 KiB a payment (bare 1.11)" in lines
        assert "garbage collector: 2.2% of the full model's time (10.59 s, 10.36 s without)" in lines
        assert "5,000 operations 59.1 MiB, 20,000 operations 85.3 MiB (1.44×)" in lines
        assert "JSON 71.11, text 13.43, text --full 46.43 (0.65× JSON)" in lines
        assert "(1.29×; CPU time 1.3×)" in lines
        assert any(line.startswith("  …") for line in lines)  # a long function name is cut at its start
        assert lines[-8:] == [
            "target (issue 13)                               measured     limit",
            "full ÷ bare payments/s at 10,000                   0.345    ≥ 0.33  met",
            "full ÷ bare payments/s at 100,000                  0.384    ≥ 0.33  met",
            "cost growth 1,000→100,000 (limit: bare's)           1.24    ≤ 1.38  met",
            "memory growth 10,000→100,000, KiB/payment           1.98       ≤ 2  met",
            "run --format json peak, 20,000 ÷ 5,000              1.44     ≤ 1.5  met",
            "text --full ÷ JSON time per event                   0.65       ≤ 1  met",
            "run lost-response ÷ bare typer + rich               1.29     ≤ 1.3  met"]
