"""A run without a trace is judged exactly like a run with one (``simulate(..., trace=False)``).

Sweeps and explore simulate without a trace: the run keeps only its tally, fed as it goes. Its summary, its
properties' violations and its sweep measures (`idemsim.judge.measures.of_run`) must be those of the same run with a
trace, byte for byte, and its tally the one the trace gives, for every shipped story under every design, for
random explore schedules, and for the shipped loads. A run that streams its trace (``stream=``) gives each event
once, the same events in the same order as a kept trace, and keeps none. The database model's reclaiming of
dead row versions (`idemsim.model.db.engine.Database.vacuum`) changes nothing a run shows, even when it runs after every
transaction.
"""

from __future__ import annotations

import json

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

import idemsim.model.db.engine as engine
from idemsim.judge.measures import of_run
from idemsim.judge.properties import check
from idemsim.judge.tally import Tally
from idemsim.model.designs import SHIPPED
from idemsim.runners import explore
from idemsim.runners.simulation import simulate
from idemsim.runners.strategies import schedules
from idemsim.scenario.schema import builtin_names, load, runs, sweep_names

STORIES = [story for name in builtin_names() for story in runs(load(name))]
SHIPPED_DESIGNS = list(SHIPPED)


def judged(run) -> str:
    """Everything a judge reads of a run, as one text: its summary, its violations and its measures."""
    return json.dumps({"summary": run.summary.to_dict(), "violations": [v.to_dict() for v in check(run)],
                       "measures": of_run(run)}, sort_keys=True, ensure_ascii=False)


def assert_judged_alike(scenario, design, seed=None) -> None:
    traced = simulate(scenario, design, seed)
    untraced = simulate(scenario, design, seed, trace=False)
    assert untraced.trace is None
    assert judged(untraced) == judged(traced)
    assert untraced.tables == traced.tables and untraced.ledger == traced.ledger
    assert untraced.sim_events == traced.sim_events
    assert untraced.tally == traced.tally == Tally.of(traced.trace)  # fed directly, fed events, replayed


class TestWithoutATrace:
    @pytest.mark.parametrize("design", SHIPPED_DESIGNS)
    def test_every_story_is_judged_alike_under_every_design(self, design):
        """Every shipped story (and variant) gives the same summary, violations and measures without a trace."""
        for story in STORIES:
            assert_judged_alike(story, design)

    @pytest.mark.parametrize("name", sweep_names())
    def test_every_shipped_load_is_judged_alike(self, name):
        """The shipped sweeps' scenarios (outages, pools, retry budgets, many operations), cut to 150
        operations where they generate more, under every design they sweep."""
        scenario = load(name)
        if scenario.arrivals is not None and scenario.arrivals.count > 150:
            scenario = load(name, ["arrivals.count=150"])
        for design in scenario.sweep.designs or SHIPPED_DESIGNS:
            assert_judged_alike(scenario, design, 3)

    @pytest.mark.slow
    @settings(max_examples=40)
    @given(schedules(), st.sampled_from(SHIPPED_DESIGNS), st.sampled_from(["none", "request-key"]))
    def test_random_explore_schedules_are_judged_alike(self, schedule, design, processor_key):
        """Any schedule the search may choose, under any design, with or without the processor's key."""
        scenario = explore.scenario_for(design, schedule, [f"api.processor_key={processor_key!r}"])
        assert_judged_alike(scenario, design, scenario.seed)

    @pytest.mark.slow
    def test_a_lossy_load_with_retries_is_judged_alike(self):
        """A load with random losses, jitter and retries: the tally sees every retry and replay."""
        for design in SHIPPED_DESIGNS:
            scenario = load("lost-response", ["network.request.loss=0.3", "network.response.loss=0.3",
                                              "client.jitter='full'", "client.max_attempts=6", "faults=[]",
                                              "arrivals={process='poisson', count=200, gap=0.05}"])
            assert_judged_alike(scenario, design, 5)


class TestStreaming:
    def test_a_streamed_trace_is_the_kept_trace(self):
        """Streaming gives each event as it is recorded, in the kept trace's order, and keeps none."""
        for story in STORIES[:12]:
            kept = simulate(story)
            streamed = []
            run = simulate(story, stream=streamed.append)
            assert len(run.trace) == 0
            assert [e.to_dict() for e in streamed] == kept.trace.to_list()
            assert run.summary == kept.summary


class TestVacuum:
    def test_reclaiming_after_every_transaction_changes_nothing(self, monkeypatch):
        """With the database reclaiming dead versions after every transaction, every story's trace, tables and
        summary are what they are without it."""
        before = {}
        for story in STORIES:
            run = simulate(story)
            before[(story.name, story.variant)] = (run.trace.to_json(), run.tables, run.summary)
        monkeypatch.setattr(engine, "VACUUM_MIN", 1)
        for story in STORIES:
            run = simulate(story)
            assert (run.trace.to_json(), run.tables, run.summary) == before[(story.name, story.variant)], story.name

    def test_dead_versions_are_reclaimed(self):
        """After many payments the key table holds one version per live row, not every version ever written."""
        db = engine.Database(simpy.Environment())
        _pay(db, range(3000))
        db.vacuum()
        assert len(db.versions[engine.KEYS]) == 3000 and db.written[engine.KEYS] == 6000
        assert db.key_counts() == (3000, 0)
        assert all(v.xmin is engine.FROZEN for v in db.versions[engine.KEYS])

    def test_a_vacuum_not_whole_examines_what_follows_the_settled_versions(self):
        """A vacuum that is not whole reclaims the dead versions written since the settled ones; a settled
        version deleted since stays (it is counted as disturbed) until the next whole vacuum reclaims it."""
        db = engine.Database(simpy.Environment())
        _pay(db, range(100))
        db.vacuum()
        assert db.settled[engine.KEYS] == len(db.versions[engine.KEYS]) == 100
        _run(db.connect("gone"), ("begin", {}), ("delete_key", {"key": "k0"}), ("commit", {}))
        _pay(db, range(100, 110))
        assert db._disturbed == 1 and len(db.versions[engine.KEYS]) == 120
        db.vacuum(whole=False)
        assert len(db.versions[engine.KEYS]) == 110 and db.key_versions("k0")  # k0's dead version waits
        assert db.key_counts() == (109, 0)
        db.vacuum()
        assert len(db.versions[engine.KEYS]) == 109 and db.key_versions("k0") == () and db._disturbed == 0
        assert db.settled[engine.KEYS] == 109 and db.key_counts() == (109, 0)

    def test_the_vacuum_that_runs_as_versions_are_written_keeps_the_dead_ones_few(self, monkeypatch):
        """Run as transactions end, the vacuum keeps no more dead versions than it is set to wait for, however
        many live ones the table holds."""
        monkeypatch.setattr(engine, "VACUUM_MIN", 64)
        db = engine.Database(simpy.Environment())
        _pay(db, range(1500))
        assert len(db.versions[engine.KEYS]) - db.key_counts()[0] <= 64
        db.vacuum()  # a whole one: the next still comes 64 versions later, not half the table later
        _pay(db, range(1500, 1800))
        assert len(db.versions[engine.KEYS]) - db.key_counts()[0] <= 64

    def test_a_key_with_one_version_is_kept_as_itself(self):
        """The unique index keeps a key's one version as itself and several as a tuple; both read as a tuple."""
        db = engine.Database(simpy.Environment())
        conn = db.connect("a")
        _run(conn, ("begin", {}), ("register_key", {"key": "k", "fingerprint": "f"}))
        (first,) = db.key_versions("k")
        assert db.versions_by_key["k"] is first
        _run(conn, ("complete_key", {"key": "k", "response": {"status": 201}}), ("commit", {}))
        assert db.key_versions("k") == db.versions_by_key["k"] == (first, first.successor)
        assert db.key_versions("other") == ()


def _run(conn, *statements) -> None:
    """Run ``statements`` on ``conn``, none of which waits."""
    for op, fields in statements:
        with pytest.raises(StopIteration):
            next(conn.execute(op, **fields))


def _pay(db, numbers) -> None:
    """Key ``k<i>`` registered and completed in one transaction, for each i of ``numbers``."""
    for i in numbers:
        _run(db.connect(f"c{i}"), ("begin", {}), ("register_key", {"key": f"k{i}", "fingerprint": "f"}),
             ("complete_key", {"key": f"k{i}", "response": {"status": 201}}), ("commit", {}))


class TestJsonStream:
    @pytest.mark.parametrize("name", ["lost-response", "crash-in-progress", "key-reuse", "http-methods"])
    def test_run_format_json_writes_the_kept_document(self, cli, name):
        """`run --format json` writes, as the runs go, exactly the document the kept runs give."""
        from idemsim.cli.app import json_text
        from idemsim.runners.simulation import FORMAT_VERSION

        main, *others = [simulate(story) for story in runs(load(name))]
        expected = json_text({"version": FORMAT_VERSION, **main.to_dict(), "variants": [r.to_dict() for r in others]})
        result = cli("run", name, "--format", "json")
        assert result.stdout == expected + "\n"

    def test_a_streamed_run_keeps_no_event(self, monkeypatch):
        """The runs of `run --format json` keep no trace: each event is written and let go."""
        import idemsim.runners.simulation as simulation
        from idemsim.cli import json_stream

        kept = []
        real = simulation.simulate

        def spy(*args, **kwargs):
            run = real(*args, **kwargs)
            kept.append(len(run.trace))
            return run

        monkeypatch.setattr(simulation, "simulate", spy)
        import io
        import sys

        monkeypatch.setattr(sys, "stdout", io.StringIO())
        json_stream.write(runs(load("crash-in-progress")), None, None, 1, lambda ch: ch)
        assert kept and set(kept) == {0} and sys.stdout.getvalue().startswith("{\n \"version\": 1")


@pytest.mark.slow
class TestLongTimelines:
    @pytest.mark.parametrize("width, color, lang", [(60, None, "en"), (100, "standard", "en"),
                                                   (160, "truecolor", "en"), (60, None, "ja"), (90, "256", "ja")])
    def test_row_by_row_is_richs_table(self, width, color, lang):
        """The timeline written row by row (as a long one is) is the rich table, character for character, at
        any width, with or without colour, wrapped descriptions included."""
        import io

        from rich.console import Console

        from idemsim.views.terminal import print_timeline, timeline_table

        def printed(draw) -> str:
            out = io.StringIO()
            draw(Console(file=out, width=width, force_terminal=color is not None, color_system=color,
                         highlight=False, soft_wrap=False))
            return out.getvalue()

        for story in STORIES + [load("herd", ["arrivals.count=40"])]:
            run = simulate(story)
            assert printed(lambda c: print_timeline(c, run, lang, long=0)) == printed(
                lambda c: c.print(timeline_table(run, lang)))


class TestCollector:
    """Python's collector is kept out of a run's way (`idemsim.kernel.collector`) in a process idemsim owns (its
    command, its benchmark, a sweep's workers) or when a run asks (``quiet_collector=True``), and nowhere else:
    pytest's process, like a notebook's, is not idemsim's. The tests of what it does then ask for it."""

    @pytest.fixture(autouse=True)
    def a_process_idemsim_does_not_own(self):
        """Each test starts in a process idemsim does not own, and leaves the process's switch as it found it."""
        from idemsim.kernel import collector

        owned = collector.owns_process()
        collector.own_process(False)
        yield
        collector.own_process(owned)

    @staticmethod
    def _collector_state() -> tuple:
        import gc

        from idemsim.kernel import collector

        return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), collector._freeze_instead in gc.callbacks

    def test_a_notebook_run_leaves_the_collector_untouched(self):
        """simulate() called from a notebook (a process idemsim does not own, nothing asked) changes nothing of
        the collector, during the run or after it, also when the run fails: enabled, thresholds, nothing frozen,
        no hook added."""
        import gc

        from idemsim.base.errors import InputError
        from idemsim.bench import scenario

        before = self._collector_state()
        during: list = []

        def watch(phase, info) -> None:
            if phase == "stop" and info["generation"] == 0:
                during.append(self._collector_state())

        gc.callbacks.append(watch)
        try:
            run = simulate(scenario(300), trace=False)
            with pytest.raises(InputError):
                simulate(STORIES[0], max_events=3)
        finally:
            gc.callbacks.remove(watch)
        assert run.operations and self._collector_state() == before
        assert len(during) >= 3 and set(during) == {before}  # young collections ran as usual, nothing frozen

    def test_a_run_in_a_process_idemsim_owns_quiets_it_unless_told_not_to(self):
        """Once idemsim owns the process (`own_process`), a run slows the collector by default while it goes,
        and a run told ``quiet_collector=False`` leaves it as it is."""
        import gc

        from idemsim.kernel import collector

        before = gc.get_threshold()
        seen: list = []
        collector.own_process()
        simulate(STORIES[0], stream=lambda _event: seen.append(gc.get_threshold()))
        assert seen and set(seen) == {(collector.THRESHOLD, collector.OLDER, collector.OLDER)}
        seen.clear()
        simulate(STORIES[0], stream=lambda _event: seen.append(gc.get_threshold()), quiet_collector=False)
        assert seen and set(seen) == {before} and gc.get_threshold() == before

    @pytest.mark.slow
    def test_a_run_makes_no_cyclic_garbage_that_grows_with_it(self):
        """The collector is kept out of a run's way (idemsim.kernel.collector): that is safe only while the model's
        garbage is freed by reference counting. The cyclic garbage a run leaves does not grow with its length."""
        import gc

        from idemsim.bench import scenario

        def garbage(n: int) -> int:
            gc.collect()
            gc.disable()
            try:
                # the run is kept: what is found is what it let go of
                run = simulate(scenario(n), trace=False, quiet_collector=True)
                found = gc.collect()
                assert run.summary["charges"] > 0
                return found
            finally:
                gc.enable()

        small, large = garbage(100), garbage(800)
        assert large < small + 100, (small, large)

    @pytest.mark.slow
    def test_a_run_lets_its_model_go_when_it_ends(self):
        """Reference counting frees the model (the API, the database and its row versions) as soon as a run
        ends: a daemon's pending timeout once kept it alive, through its process, until the next collection,
        which a run's slowed collector makes rare (the summary was then made beside the whole database)."""
        import gc

        from idemsim.bench import scenario
        from idemsim.model.db.engine import Database
        from idemsim.model.db.mvcc import RowVersion

        def alive() -> int:
            return sum(type(o) in (Database, RowVersion) for o in gc.get_objects())

        gc.collect()
        gc.disable()
        try:
            before = alive()
            run = simulate(scenario(300), trace=False, quiet_collector=True)
            assert run.summary["charges"] > 0 and alive() == before
        finally:
            gc.enable()

    def test_the_collector_is_as_it_was_after_a_run(self):
        """The collector's thresholds are back after a run that quieted it, also after one that fails."""
        import gc

        from idemsim.base.errors import InputError

        before = self._collector_state()
        simulate(STORIES[0], quiet_collector=True)
        assert self._collector_state() == before and gc.isenabled()
        with pytest.raises(InputError):
            simulate(STORIES[0], max_events=3, quiet_collector=True)
        assert self._collector_state() == before

    @staticmethod
    def _young_collections(monkeypatch, run) -> list[dict]:
        """What each collection of the youngest generation during ``run()`` left: the objects it collected, how
        many were frozen, and how many sit in the next generation (collections made frequent: every 1,000
        allocations)."""
        import gc

        from idemsim.kernel import collector

        monkeypatch.setattr(collector, "THRESHOLD", 1000)
        seen: list[dict] = []

        def watch(phase, info) -> None:
            if phase == "stop" and info["generation"] == 0:
                seen.append({"collected": info["collected"], "frozen": gc.get_freeze_count(),
                             "older": len(gc.get_objects(generation=1))})

        gc.collect()
        gc.callbacks.append(watch)
        try:
            run()
        finally:
            gc.callbacks.remove(watch)
        return seen

    @pytest.mark.slow
    def test_a_run_of_the_models_code_alone_is_never_examined(self, monkeypatch):
        """A shipped design without a stream: each young collection during the run first moves every object
        out of the collector's sight (gc.freeze), so nothing the run makes is examined or reaches the older
        generations while it goes; afterwards nothing is frozen and the collector is as it was."""
        import gc

        from idemsim.bench import scenario
        from idemsim.kernel import collector

        before = gc.get_threshold()
        seen = self._young_collections(monkeypatch, lambda: simulate(scenario(300), trace=False, quiet_collector=True))
        assert len(seen) >= 3 and all(c["frozen"] > 0 and c["older"] < 50 for c in seen), seen[:3]
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
        assert collector._freeze_instead not in gc.callbacks

    @pytest.mark.slow
    def test_cycles_that_code_not_the_models_makes_are_collected_during_the_run(self, monkeypatch):
        """A stream (json.dumps makes cycles) or a design of one's own may make cycles: while such a run goes,
        the collector is only slowed, freezes nothing, and collects them as it goes."""
        from idemsim.bench import scenario
        from idemsim.model.designs import DESIGNS, register_design, same_tx

        def cyclic(_event) -> None:
            a: list = []
            a.append(a)

        def cyclic_same_tx(h):
            cyclic(None)
            return same_tx(h)

        register_design("cyclic-same-tx", cyclic_same_tx)
        try:
            for run in (lambda: simulate(scenario(300), stream=cyclic, quiet_collector=True),
                        lambda: simulate(scenario(300), "cyclic-same-tx", trace=False, quiet_collector=True)):
                seen = self._young_collections(monkeypatch, run)
                assert seen and all(c["frozen"] == 0 for c in seen)
                assert sum(c["collected"] for c in seen) >= 100
        finally:
            del DESIGNS["cyclic-same-tx"]
