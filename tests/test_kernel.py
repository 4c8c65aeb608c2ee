"""The kernel (`idemsim.kernel`): the engine's tricks do exactly what plain SimPy does, on the SimPy they were
written for.

The installed SimPy is the release the kernel was checked against (it relies on SimPy's internals, which a new
release may change), and the project's pin admits no other. The bounded loop processes the same events in the
same order as SimPy's own and refuses a run past its bounds with the run's `InputError`, before the event that
would break them; a finished run's schedule is let go empty; the starts of many processes are where
``env.process`` would put them. (`tests/test_waits.py` holds the waits; `tests/test_untraced.py` the collector.)
"""

from __future__ import annotations

import gc
import tomllib
import weakref
from importlib.metadata import version
from pathlib import Path

import pytest
import simpy
from packaging.requirements import Requirement

from idemsim import kernel
from idemsim.base.errors import InputError, Message
from idemsim.kernel.loop import BoundedEnvironment, events_processed, let_go
from idemsim.kernel.starts import Starts
from idemsim.kernel.waits import Deferred

ROOT = Path(__file__).resolve().parent.parent


def _major_minor(text: str) -> str:
    return ".".join(text.split(".")[:2])


class TestTheSimPyItWasWrittenFor:
    def test_the_installed_simpy_is_the_release_the_kernel_was_checked_against(self):
        """The installed SimPy's major.minor is the kernel's SIMPY_CHECKED: another release must be read first."""
        assert _major_minor(version("simpy")) == kernel.SIMPY_CHECKED, (
            f"SimPy {version('simpy')} is installed; idemsim.kernel relies on SimPy {kernel.SIMPY_CHECKED}'s "
            "internals: read its core.py and events.py against idemsim/kernel/__init__.py, then move the pin")

    def test_the_pin_admits_the_checked_release_and_no_later_one(self):
        """pyproject.toml's simpy requirement admits the installed release and none of the next minor."""
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        (pin,) = [Requirement(d) for d in project["dependencies"] if Requirement(d).name == "simpy"]
        major, minor = (int(part) for part in kernel.SIMPY_CHECKED.split("."))
        assert pin.specifier.contains(version("simpy"))
        assert not pin.specifier.contains(f"{major}.{minor + 1}.0")


def _story(env: simpy.Environment, log: list) -> None:
    """Processes whose steps fall due at the same moments, one failing into another that catches it: only
    the schedule's order decides who goes first."""

    def worker(name: str, delays: tuple):
        log.append((env.now, name, "start"))
        for delay in delays:
            yield env.timeout(delay)
            log.append((env.now, name, delay))
        return name

    def failing():
        yield env.timeout(1.0)
        raise KeyError("caught")

    def catcher():
        try:
            yield env.process(failing())
        except KeyError:
            log.append((env.now, "caught"))
        done = yield env.process(worker("d", (0.5, 0.0)))
        log.append((env.now, "joined", done))

    env.process(worker("a", (1.0, 0.0, 1.0)))
    env.process(worker("b", (0.0, 1.0, 1.0)))
    env.process(catcher())
    env.process(worker("c", (2.0, 1.0)))


class TestBoundedEnvironment:
    @staticmethod
    def _bounded(max_time: float = 1e9, max_events: int = 10**9) -> BoundedEnvironment:
        return BoundedEnvironment(max_time, max_events, "the story")

    def test_it_processes_what_simpy_processes_in_the_same_order(self):
        """Within its bounds, run and step take the same steps at the same moments as SimPy's Environment."""
        def timeline(env: simpy.Environment) -> list:
            log: list = []
            _story(env, log)
            env.run(until=1.5)
            env.step()
            env.run()
            return log + [env.now]

        assert timeline(self._bounded()) == timeline(simpy.Environment())

    def test_it_counts_the_events_it_processes(self):
        """``events`` is what SimPy processed: every step, whether taken by run or by step."""
        bounded, plain = self._bounded(), simpy.Environment()
        for env in (bounded, plain):
            _story(env, [])
            env.run(until=1.0)
            env.step()
            env.run()
        assert bounded.events == events_processed(plain) > 10

    def test_run_until_an_event_returns_its_value(self):
        """run(until=event) stops when the event is processed and returns its value, as SimPy's does."""
        env = self._bounded()
        assert env.run(until=env.timeout(2.0, value="done")) == "done" and env.now == 2.0

    def test_a_failure_no_process_catches_ends_the_run(self):
        """A failed event nothing defuses is raised out of run, as SimPy raises it."""
        env = self._bounded()

        def broken():
            yield env.timeout(1.0)
            raise KeyError("lost")

        env.process(broken())
        with pytest.raises(KeyError, match="lost"):
            env.run()

    @pytest.mark.parametrize("advance", ["run", "step"])
    def test_a_run_past_its_time_is_refused_before_the_event(self, advance):
        """The first event due after max_time is refused with the run's InputError (err.run_time), unprocessed:
        the clock stays where it was."""
        env, log = self._bounded(max_time=1.75), []
        _story(env, log)
        with pytest.raises(InputError) as refused:
            env.run() if advance == "run" else [env.step() for _ in range(1000)]
        assert refused.value.message == Message("err.run_time", where="the story", seconds=1.75)
        assert env.now == 1.5 and env.peek() == 2.0 and log[-1][0] == 1.5

    @pytest.mark.parametrize("advance", ["run", "step"])
    def test_a_run_past_its_events_is_refused_before_the_event(self, advance):
        """The event after the max_events-th is refused with the run's InputError (err.run_events), whether the
        run advances by run or by step, and the count says one past the bound."""
        env = self._bounded(max_events=5)
        _story(env, [])
        with pytest.raises(InputError) as refused:
            env.run() if advance == "run" else [env.step() for _ in range(1000)]
        assert refused.value.message == Message("err.run_events", where="the story", events=5, now=env.now)
        assert env.events == 6

    def test_a_simulation_past_its_bound_names_it(self):
        """simulate refuses a run past max_events with the same InputError, naming the scenario and design."""
        from idemsim.runners.simulation import simulate
        from idemsim.scenario.schema import load

        with pytest.raises(InputError) as refused:
            simulate(load("lost-response"), max_events=3)
        assert refused.value.message.id == "err.run_events" and refused.value.message.fields["events"] == 3
        assert "lost-response" in str(refused.value)


class TestLetGo:
    def test_a_let_go_schedule_is_empty(self):
        """After let_go the schedule and the deferred queues beside it hold nothing, and every event they held
        has no callbacks left (nothing runs it, nothing it held is kept through it)."""
        env = BoundedEnvironment(1e9, 10**9, "the story")
        waiting = Deferred(env)
        pending = [env.timeout(10.0), env.timeout(20.0)]
        deferred = [waiting.timeout(float(delay)) for delay in (30, 40, 35)]
        _story(env, [])
        env.run(until=1.0)
        let_go(env, waiting)
        assert env.peek() == float("inf") and env._queue == []
        assert not (waiting.scheduled or waiting.in_order or waiting.pending)
        assert all(event.callbacks is None for event in pending + deferred)

    def test_what_a_waiting_process_held_is_freed_at_once(self):
        """A process waiting on a long timeout holds its generator's locals through a cycle (process ↔ timeout);
        let go, they are freed by reference counting, without the cyclic collector."""
        class Model:
            pass

        env = simpy.Environment()
        model = Model()
        held = weakref.ref(model)

        def daemon(model):
            while True:
                yield env.timeout(1000.0)

        env.process(daemon(model))
        env.run(until=1.0)
        del model
        gc.disable()
        try:
            assert held() is not None
            let_go(env)
            assert held() is None
        finally:
            gc.enable()


class TestStarts:
    @staticmethod
    def _timeline(started: bool) -> tuple[list, list]:
        """Clients due at various times (some now, some at the same moment as a ticker's steps), started by
        `Starts` or by ``env.process`` made up front; what happened, and each client's end as it was seen."""
        env, log, ended = simpy.Environment(), [], []
        times = [0.0, 2.0, 1.0, 0.0, 2.0, 3.5, 1.0]

        def client(i: int):
            if times[i] > env.now:
                yield env.timeout(times[i] - env.now)
            log.append((env.now, i, "start"))
            yield env.timeout(0.5 * (i % 3))
            log.append((env.now, i, "end"))

        def ticker():
            for _ in range(5):
                log.append((env.now, "tick"))
                yield env.timeout(1.0)

        def one_ended(_process) -> None:
            ended.append(env.now)

        env.process(ticker())
        indices = [0, 1, 2, 3, 5, 6]
        if started:
            Starts(env, times.__getitem__, client, one_ended).schedule(indices)
        else:
            for i in indices:
                env.process(client(i)).callbacks.append(one_ended)
        env.process(ticker())
        env.run()
        return log, ended

    def test_processes_start_and_end_where_env_process_would_have_them(self):
        """Every client takes its steps at the same moments and in the same order among ties as a process made
        for it up front, and its end is seen at the same moment."""
        assert self._timeline(True) == self._timeline(False)

    def test_a_process_is_made_only_when_it_is_due(self):
        """The generator of a process due later is made at its time, not when the starts are scheduled."""
        env, made = simpy.Environment(), []

        def generator(i: int):
            made.append((i, env.now))
            yield env.timeout(0)

        starts = Starts(env, lambda i: float(i), generator, lambda _process: None)
        starts.schedule([3, 1, 2])
        env.run(until=1.5)
        assert made == [(1, 1.0)]
        env.run()
        assert made == [(1, 1.0), (2, 2.0), (3, 3.0)]
