"""Load in the model: generated arrivals, an outage, a connection pool, retry budgets, attempts over time."""

from __future__ import annotations

import random

import pytest

from idemsim.model.client import RetryPolicy
from idemsim.runners import explore
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import Arrivals, validate


def scenario(**changes):
    """The explore defaults of same-tx with ``changes`` merged in (a raw, TOML-shaped dict)."""
    raw = explore.base_raw("same-tx")
    for section, value in changes.items():
        if isinstance(value, dict) and isinstance(raw.get(section), dict):
            raw[section] = {**raw[section], **value}
        else:
            raw[section] = value
    return validate(raw, "test")


def kinds(run, *wanted):
    return [(round(e.t, 3), e.kind) for e in run.trace if e.kind in wanted]


class TestArrivals:
    def test_uniform_arrivals_start_every_gap(self):
        """A uniform process starts count operations, gap seconds apart, from start."""
        arrivals = Arrivals(process="uniform", count=3, gap=0.5, start=1.0)
        assert arrivals.times(random.Random(1)) == [1.0, 1.5, 2.0]

    def test_a_burst_starts_every_operation_at_once(self):
        """A burst starts them all at start."""
        assert Arrivals(process="burst", count=4, start=2.0).times(random.Random(1)) == [2.0] * 4

    def test_poisson_gaps_come_from_the_runs_seed(self):
        """Poisson arrivals are the same for the same seed, and average the mean gap."""
        arrivals = Arrivals(process="poisson", count=2000, rate=10.0)
        times = arrivals.times(random.Random(7))
        assert times == arrivals.times(random.Random(7))
        assert 0.09 < times[-1] / len(times) < 0.11

    def test_generated_operations_are_numbered_after_the_written_ones(self):
        """Faults and expectations name a generated operation by its number, as if it were written out."""
        s = scenario(arrivals={"process": "uniform", "count": 3, "gap": 1.0, "start": 5.0},
                     faults=[{"kind": "lose", "message": "response", "op": 3}])
        run = simulate(s, "same-tx")
        assert [op.op for op in run.operations] == [1, 2, 3, 4]
        assert run.fired == [0]
        assert [r.started for r in run.operations] == [0.0, 5.0, 6.0, 7.0]

    @pytest.mark.parametrize("arrivals, message", [
        ({"process": "poisson", "count": 3}, "needs rate or gap"),
        ({"process": "uniform", "count": 3, "rate": 1.0, "gap": 1.0}, "rate or gap, not both"),
        ({"process": "uniform", "count": 0, "gap": 1.0}, "greater than or equal to 1"),
    ])
    def test_a_bad_arrivals_table_is_refused(self, arrivals, message):
        """An arrivals table without its spacing, with both, or with no operations is an input error."""
        from idemsim.base.errors import InputError

        with pytest.raises(InputError, match=message):
            scenario(arrivals=arrivals)


class TestOutage:
    def test_requests_during_a_lost_outage_vanish_and_retries_after_it_succeed(self):
        """Every request sent before the API is back is lost; the retry after `until` gets its answer."""
        s = scenario(faults=[{"kind": "outage", "from": 0.0, "until": 2.2}])
        run = simulate(s, "same-tx")
        assert run.operations[0].statuses == [None, 201]
        assert kinds(run, "request.lost") == [(0.025, "request.lost")]
        assert run.summary["faults"] == [{"fault": "the API is unreachable from 0 s to 2.2 s (every request is "
                                                   "lost)", "fired": True}]

    def test_in_503_mode_a_gateway_answers_for_the_api(self):
        """With mode 503 the client gets 503 (info) at once, retries after its backoff, and is charged once."""
        s = scenario(faults=[{"kind": "outage", "from": 0.0, "until": 0.3, "mode": "503"}])
        run = simulate(s, "same-tx")
        assert run.operations[0].statuses == [503, 201]
        assert run.summary["charges"] == 1

    def test_an_outage_that_touches_no_message_is_vacuous(self):
        """An outage after the run has ended never fires: the run proves nothing."""
        s = scenario(faults=[{"kind": "outage", "from": 50.0, "until": 60.0}])
        assert simulate(s, "same-tx").summary["verdict"] == "vacuous"


class TestConnectionPool:
    def test_a_request_waits_for_a_free_connection_first_come_first_served(self):
        """With one connection, a second purchase waits until the first handler has finished."""
        s = scenario(api={"pool_size": 1},
                     operations=[{"body": {"amount": 1000}, "key": "k-1"}, {"body": {"amount": 2000}, "key": "k-2"}])
        run = simulate(s, "same-tx")
        assert kinds(run, "pool.wait", "pool.acquire") == [(0.05, "pool.wait"), (0.25, "pool.acquire")]
        assert run.summary["pool_wait"] == {"p50": 0.1, "p95": 0.19, "max": 0.2}

    def test_a_duplicate_waiting_on_the_index_keeps_its_connection(self):
        """same-tx's duplicate waits on the index holding its connection: the peak counts it."""
        s = scenario(faults=[{"kind": "duplicate", "at": 0.1}], api={"charge_seconds": 1.0, "pool_size": 5})
        assert simulate(s, "same-tx").summary["waiting_peak"] == 1
        assert simulate(s, "committed-first").summary["waiting_peak"] == 0


class TestRetryBudget:
    def test_a_client_stops_retrying_when_its_bucket_is_empty(self):
        """A bucket of 15 tokens pays one timeout retry (10) and not a second: the client gives up."""
        budget = {"capacity": 15.0, "retry_cost": 5.0, "timeout_cost": 10.0, "refill": 1.0}
        s = scenario(client={"retry_budget": budget, "max_attempts": 5},
                     network={"request": {"loss": 1.0}})
        run = simulate(s, "same-tx")
        assert run.operations[0].attempts == 2
        assert [e.data["reason"] for e in run.trace if e.kind == "client.give_up"] == ["retry budget exhausted"]

    def test_the_bucket_is_shared_by_the_operations_of_one_client(self):
        """Two operations of the same client draw on one bucket: the second finds it spent."""
        budget = {"capacity": 10.0, "retry_cost": 5.0, "timeout_cost": 10.0, "refill": 0.0}
        s = scenario(client={"retry_budget": budget, "max_attempts": 3}, network={"request": {"loss": 1.0}},
                     operations=[{"body": {"amount": 1000}, "key": "k-1"},
                                 {"at": 10.0, "body": {"amount": 2000}, "key": "k-2"}])
        run = simulate(s, "same-tx")
        assert [op.attempts for op in run.operations] == [2, 1]

    @pytest.mark.parametrize("jitter", ["none", "full", "equal", "proportional"])
    def test_max_backoff_caps_every_jitter(self, jitter):
        """No backoff exceeds max_backoff, whatever the jitter."""
        policy = RetryPolicy(backoff=1.0, multiplier=10.0, max_backoff=3.0, jitter=jitter)
        rng = random.Random(3)
        assert max(policy.backoff_before(n, rng) for n in range(1, 30)) <= 3.0


class TestTheBenchsLoad:
    """The fields the benchmark's load needs (`idemsim.bench`): each a scenario field like the others."""

    def test_proportional_jitter_is_the_backoff_times_half_to_one_and_a_half(self):
        """Each backoff is the exponential one times a uniform draw from 0.5 to 1.5: one draw per backoff."""
        policy = RetryPolicy(backoff=0.05, multiplier=2.0, jitter="proportional")
        rng, mirror = random.Random(4), random.Random(4)
        for retry in range(1, 6):
            assert policy.backoff_before(retry, rng) == 0.05 * 2 ** (retry - 1) * mirror.uniform(0.5, 1.5)

    def test_a_latency_shift_is_added_to_every_draw(self):
        """shift moves the distribution; it draws nothing more."""
        from idemsim.model.network import Latency

        plain, shifted = Latency(dist="exponential", mean=0.008), Latency(dist="exponential", mean=0.008,
                                                                          shift=0.002)
        a, b = random.Random(2), random.Random(2)
        for _ in range(20):
            assert shifted.draw(b) == pytest.approx(plain.draw(a) + 0.002, abs=1e-15)
        assert a.random() == b.random()

    def test_a_stall_takes_a_second_draw_only_when_set(self):
        """With stall > 0 a second draw decides the stall; without, a draw takes one number, as before."""
        from idemsim.model.network import Latency

        stalling = Latency(dist="uniform", low=0.001, high=0.005, stall=0.5, stall_seconds=0.3)
        rng, mirror = random.Random(8), random.Random(8)
        for _ in range(50):
            base = 0.001 + 0.004 * mirror.random()
            expected = base + (0.3 if mirror.random() < 0.5 else 0.0)
            assert stalling.draw(rng) == expected
        plain, counted = random.Random(8), random.Random(8)
        Latency(dist="uniform", stall_seconds=0.3).draw(plain)
        counted.random()
        assert plain.random() == counted.random()

    def test_a_capture_time_drawn_from_a_distribution(self):
        """api.charge: each capture takes a time drawn from the run's seed; charge_seconds is then not given."""
        from idemsim.base.errors import InputError

        raw = explore.base_raw("same-tx")
        del raw["api"]["charge_seconds"]
        raw["api"]["charge"] = {"dist": "constant", "seconds": 0.75}
        run = simulate(validate(raw, "test"), "same-tx")
        [capture] = [e for e in run.trace if e.kind == "processor.capture"]
        [call] = [e for e in run.trace if e.kind == "processor.call"]
        assert capture.t - call.t == pytest.approx(0.75)
        with pytest.raises(InputError, match="charge or charge_seconds, not both"):
            scenario(api={"charge": {"dist": "constant"}, "charge_seconds": 0.1})

    def test_sequential_arrivals_start_each_when_the_one_before_ended(self):
        """One at a time: each generated operation starts when the one before it ended; a written one does not
        wait."""
        s = scenario(operations=[{"at": 0.0, "key": "k-0"}], arrivals={"process": "sequential", "count": 5},
                     network={"request": {"loss": 0.3}})
        run = simulate(s, "same-tx")
        generated = run.operations[1:]
        assert len(generated) == 5 and generated[0].started == 0.0
        assert all(b.started == a.ended for a, b in zip(generated, generated[1:]))
        assert Arrivals(process="sequential", count=3, start=1.0).times(random.Random(1)) == [1.0] * 3


class TestAttemptsOverTime:
    def test_the_summary_counts_attempts_per_second_by_outcome(self):
        """lost-response's two attempts fall in the windows of seconds 0 and 2, the first info, the second ok."""
        run = simulate(scenario(faults=[{"kind": "lose", "message": "response"}]), "same-tx")
        assert run.summary["attempts_per_second"] == {
            "window": 1.0, "counts": [1, 0, 1],
            "by_outcome": {"ok": [0, 0, 1], "fail": [0, 0, 0], "info": [1, 0, 0]}}


class TestTheLoadViews:
    def test_a_load_is_summarised_not_listed(self, cli):
        """`idemsim run herd` prints figures, not thousands of lines; --full prints every event."""
        out = cli("run", "herd", "--set", "arrivals.count=30").stdout
        assert "a load of 30 operations, summarised" in out
        assert "attempts per second  peak" in out and len(out.splitlines()) < 40
        full = cli("run", "herd", "--set", "arrivals.count=30", "--full").stdout
        assert len(full.splitlines()) > 200

    def test_the_pool_is_busy_waiting_or_idle_at_every_step(self):
        """At every step of the pool's series, busy + waiting + idle is the pool's size, none below 0; same-tx's
        duplicates hold connections while they wait on the index, committed-first's never do."""
        from idemsim.scenario.schema import load
        from idemsim.views.sweep_plot import pool_series

        pool = load("pool")
        for design, waits in (("same-tx", True), ("committed-first", False)):
            run = simulate(pool, design)
            series = pool_series(run.trace, 10)
            steps = list(zip(series.busy, series.waiting, series.idle, series.queued))
            assert all(b + w + i == 10 and min(b, w, i, q) >= 0 for b, w, i, q in steps)
            assert series.times == sorted(series.times) and series.times[0] >= 0
            assert (max(series.waiting) > 0) is waits
            assert max(series.queued) > 0 and (series.busy[-1], series.waiting[-1], series.queued[-1]) == (0, 0, 0)
            assert max(series.waiting) <= run.summary.waiting_peak

    def test_the_series_follows_a_queued_request(self):
        """One connection, two purchases arriving at 0.05 s: the second queues until the first answers (0.25 s),
        then takes the connection and answers at 0.45 s; the connection is idle until the run ends."""
        from idemsim.views.sweep_plot import pool_series

        s = scenario(api={"pool_size": 1},
                     operations=[{"body": {"amount": 1000}, "key": "k-1"}, {"body": {"amount": 2000}, "key": "k-2"}])
        series = pool_series(simulate(s, "same-tx").trace, 1)
        assert [(round(t, 3), b, w, i, q) for t, b, w, i, q in zip(series.times, series.busy, series.waiting,
                                                                  series.idle, series.queued)] == [
            (0.05, 1, 0, 0, 1), (0.25, 1, 0, 0, 0), (0.45, 0, 0, 1, 0), (0.5, 0, 0, 1, 0)]

    def test_plot_draws_the_pool_of_a_load(self, cli, tmp_path):
        """`idemsim plot pool` draws the pool's connections (busy, waiting, idle), the requests queued for one,
        and the attempts per second, every axis from 0."""
        from idemsim.scenario.schema import load
        from idemsim.views.sweep_plot import load_figure

        fig = load_figure(simulate(load("pool"), "same-tx"))
        pool, attempts = fig.axes
        assert [t.get_text() for t in pool.get_legend().get_texts()] == [
            "busy", "held, waiting on the index or a lock", "idle", "requests queued for a connection"]
        assert pool.get_ylim()[0] == 0 and attempts.get_ylim()[0] == 0 and pool.get_xlim()[0] == 0
        assert pool.get_title(loc="left").startswith("the pool: 10 connections · waits for a connection: p95 ")
        result = cli("plot", "pool", "-o", tmp_path / "pool.svg")
        assert result.exit_code == 0, result.output
        assert "requests queued for a connection" in (tmp_path / "pool.svg").read_text()

    @pytest.mark.slow
    def test_compare_draws_a_load_as_its_pool_under_each_design(self, cli, tmp_path):
        """`idemsim compare pool --plot F` draws one pool panel per design (it once ran for minutes drawing
        thousands of lanes)."""
        plot = tmp_path / "compare-pool.png"
        result = cli("compare", "pool", "--plot", plot)
        assert result.exit_code == 0, result.output
        assert plot.read_bytes().startswith(b"\x89PNG")

    def test_plot_draws_attempts_per_second_for_a_load(self, cli, tmp_path):
        """`idemsim plot herd` draws the attempts per second over time, not a lane per client."""
        result = cli("plot", "herd", "-o", tmp_path / "herd.svg", "--set", "arrivals.count=50")
        assert result.exit_code == 0, result.output
        assert "attempts per second" in (tmp_path / "herd.svg").read_text()
