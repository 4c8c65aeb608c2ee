"""The lean waits (`idemsim.kernel.waits`) schedule exactly what SimPy would: the same moments, and the same order
among events due at the same moment, with fewer calls and without the events nothing waits for."""

from __future__ import annotations

import pytest
import simpy

from idemsim.kernel.waits import FirstOf, Task, fired, later, soon, timeout


def _story(env: simpy.Environment, log: list, start, wait):
    """Three workers and a ticker whose steps fall due at the same moments: only the schedule's order
    decides who goes first."""

    def worker(name: str, delays: tuple):
        log.append((env.now, name, "start"))
        for delay in delays:
            yield wait(env, delay)
            log.append((env.now, name, delay))

    def tick():
        for _ in range(4):
            yield env.timeout(1.0)
            log.append((env.now, "tick"))

    env.process(tick())
    start(env, worker("a", (1.0, 0.0, 1.0)))
    start(env, worker("b", (0.0, 1.0, 1.0)))
    env.process(worker("c", (2.0, 1.0)))
    start(env, worker("d", (1.0, 1.0, 0.5, 0.5)))


def _timeline(start, wait) -> list:
    env, log = simpy.Environment(), []
    _story(env, log, start, wait)
    env.run()
    return log


def _process(env, generator):
    return env.process(generator)


def _timeout(env, delay):
    return env.timeout(delay)


class TestTask:
    def test_a_task_takes_its_steps_where_a_process_would(self):
        """Workers run as tasks take every step at the moment, and in the order among ties, that they take as
        SimPy processes."""
        assert _timeline(Task, _timeout) == _timeline(_process, _timeout)

    def test_a_task_schedules_no_event_when_it_ends(self):
        """A finished task leaves nothing to process: one event fewer than a process, and none later."""
        def counted(start) -> int:
            env = simpy.Environment()

            def work():
                yield env.timeout(1.0)

            start(env, work())
            steps = 0
            while env.peek() != float("inf"):
                env.step()
                steps += 1
            return steps

        assert (counted(_process), counted(Task)) == (3, 2)

    def test_a_failing_task_fails_the_run_as_a_process_does(self):
        """The exception a task's generator raises comes out of env.run, as a process's does."""
        env = simpy.Environment()

        def broken():
            yield env.timeout(1.0)
            raise KeyError("lost")

        Task(env, broken())
        with pytest.raises(KeyError, match="lost"):
            env.run()

    def test_a_task_that_yields_no_event_is_refused_as_simpy_refuses_it(self):
        """A generator that yields something other than an event fails with SimPy's own RuntimeError."""
        env = simpy.Environment()

        def wrong():
            yield 42

        Task(env, wrong())
        with pytest.raises(RuntimeError, match='Invalid yield value "42"'):
            env.run()


class TestTimeout:
    def test_timeout_is_env_timeout(self):
        """waits.timeout falls due where env.timeout does, ties broken in the order they were made."""
        assert _timeline(_process, timeout) == _timeline(_process, _timeout)


class TestSoon:
    def test_soon_runs_where_a_process_started_now_would_begin(self):
        """A callback given to soon runs at the point of the schedule where a process started at the same
        instant takes its first step."""
        def order(start_soon: bool) -> list:
            env, log = simpy.Environment(), []

            def first():
                log.append("process")
                yield env.timeout(0)

            def begin(_event) -> None:
                log.append("soon")

            env.process(first())
            if start_soon:
                soon(env, begin)
            else:
                def second():
                    begin(None)
                    yield env.timeout(0)

                env.process(second())
            env.timeout(0).callbacks.append(lambda _e: log.append("timeout"))
            env.run()
            return log

        assert order(True) == order(False) == ["process", "soon", "timeout"]

    def test_later_calls_its_action_where_a_process_would(self):
        """later(env, d, f, x) calls f(x) where a process started now that waits d and then calls it would."""
        def calls(with_later: bool) -> list:
            env, log = simpy.Environment(), []
            for name, delay in (("x", 1.0), ("y", 0.0), ("z", 1.0)):
                if with_later:
                    later(env, delay, log.append, name)
                else:
                    def send(name=name, delay=delay):
                        yield env.timeout(delay)
                        log.append(name)

                    env.process(send())
                env.process(_tick(env, log))
            env.run()
            return log

        assert calls(True) == calls(False)


def _tick(env, log):
    yield env.timeout(1.0)
    log.append("tick")


class TestFirstOf:
    def test_first_of_resumes_as_a_condition_does(self):
        """A waiter on FirstOf(a, b) resumes at the moment and place of one on a | b, and tells which fired."""
        def story(first_of: bool) -> list:
            env, log = simpy.Environment(), []

            def waiter(name: str, reply_at: float, limit: float):
                reply = env.timeout(reply_at, value="reply")
                timer = env.timeout(limit)
                if first_of:
                    yield FirstOf(env, reply, timer)
                    got = fired(reply)
                else:
                    got = reply in (yield reply | timer)
                log.append((env.now, name, got))

            for name, reply_at, limit in (("a", 1.0, 2.0), ("b", 2.0, 1.0), ("c", 1.0, 1.0)):
                env.process(waiter(name, reply_at, limit))
            env.process(_tick(env, log))
            env.run()
            return log

        assert story(True) == story(False)


class TestDeferred:
    @pytest.mark.parametrize("seed", range(20))
    def test_deferred_events_are_processed_where_scheduled_ones_would_be(self, seed):
        """Events scheduled through Deferred, in any order of times and with ties, are processed at the same
        moments and in the same order as the same events given to env.schedule, among other events."""
        import random

        from simpy.events import NORMAL, Event

        from idemsim.kernel.waits import Deferred

        def story(deferred: bool) -> list:
            rng = random.Random(seed)
            env, log = simpy.Environment(), []
            later_ones = Deferred(env)

            def add(name: str, delay: float) -> None:
                event = Event(env)
                event._ok, event._value = True, None
                if deferred:
                    event.callbacks.append(later_ones.processed)
                    later_ones.schedule(event, delay)
                else:
                    env.schedule(event, NORMAL, delay)
                event.callbacks.append(lambda _e: log.append((env.now, name)))

            def other(name: str):
                for _ in range(5):
                    yield env.timeout(rng.choice((0.0, 0.5, 1.0)))
                    log.append((env.now, name))
                    if rng.random() < 0.5:
                        add(f"{name}+", rng.choice((0.0, 1.0, 1.5)))

            for i in range(30):
                add(f"e{i}", rng.choice((0.0, 0.5, 1.0, 2.0, 3.0)))
            for name in ("p", "q"):
                env.process(other(name))
            env.run()
            return log

        assert story(True) == story(False)

    def test_only_the_next_deferred_event_waits_in_the_schedule(self):
        """A thousand events due one after another take one place in the schedule, not a thousand."""
        from simpy.events import Event

        from idemsim.kernel.waits import Deferred

        env = simpy.Environment()
        later_ones = Deferred(env)
        for i in range(1000):
            event = Event(env)
            event._ok, event._value = True, None
            event.callbacks.append(later_ones.processed)
            later_ones.schedule(event, float(i))
        assert len(env._queue) == 1
        env.run()
        assert env.now == 999.0 and not later_ones.pending and not later_ones.in_order
