"""A user's own design, written carelessly or with hostility, and the benchmark's command line (issue 28).

Whatever a design does — ends the process (``sys.exit``), raises `KeyboardInterrupt` or another `BaseException`,
yields or returns what is not allowed, names a class or an imported function, declares crash points that are not
names, prints, or loops — the command says so in one line naming the design, the request and the line of the
design's file, with exit code 2; the same input gives the same line; ``--format json`` stays JSON. A step that
runs too long is stopped by the command line's watchdog (``IDEMSIM_DESIGN_SECONDS``). The benchmark refuses what
it cannot run in one line, and ends quietly when its reader has gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import idemsim
from idemsim.base.errors import InputError
from idemsim.base.http import Response
from idemsim.cli import watchdog
from idemsim.model.calls import DesignCode
from idemsim.model.designs import DESIGNS, SHIPPED, register_design

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def forget_registered_designs():
    """Each test starts with the shipped designs only."""
    yield
    for name in [n for n in DESIGNS if n not in SHIPPED]:
        del DESIGNS[name]


def design_file(tmp_path: Path, source: str, name: str = "mine.py") -> str:
    """``source`` written as ``name`` (its first line is line 1); the path, for ``--design PATH:handler``."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return str(path)


def run_line(cli, one_line, design: str, *more: str) -> str:
    """The one error line of ``idemsim run lost-response --design DESIGN`` (exit 2, no traceback)."""
    return one_line(cli("run", "lost-response", "--design", design, *more))


class TestWhateverTheHandlerDoesIsOneLine:
    @pytest.mark.parametrize("body, said", [
        ("""
         import sys
         def handler(h):
             yield from h.sql("begin")
             sys.exit(3)
         """, "failed in request 1.1, at statement 'begin' at 0.050 s (mine.py:4): SystemExit: 3"),
        ("""
         import sys
         def handler(h):
             yield from h.sql("begin")
             sys.exit(0)
         """, "failed in request 1.1, at statement 'begin' at 0.050 s (mine.py:4): SystemExit: 0"),
        ("""
         def handler(h):
             yield from h.sql("begin")
             raise KeyboardInterrupt
         """, "failed in request 1.1, at statement 'begin' at 0.050 s (mine.py:3): KeyboardInterrupt"),
        ("""
         class Mine(BaseException):
             pass
         def handler(h):
             raise Mine(object())
             yield
         """, "failed in request 1.1 at 0.050 s (mine.py:4): Mine: <object object>"),
        ("""
         def helper():
             return {}["missing"]
         def handler(h):
             yield from h.sql("begin")
             helper()
         """, "failed in request 1.1, at statement 'begin' at 0.050 s (mine.py:2): KeyError: 'missing'"),
    ], ids=["sys.exit(3)", "sys.exit(0)", "KeyboardInterrupt", "BaseException", "in a helper"])
    def test_what_it_raises_names_the_design_the_request_and_the_line(self, cli, one_line, tmp_path, body, said):
        """sys.exit, KeyboardInterrupt, a BaseException of its own: idemsim neither ends with the design's code
        nor prints a traceback; the line is the design's own (the helper's, when it raised there)."""
        path = design_file(tmp_path, body)
        assert run_line(cli, one_line, f"{path}:handler") == f"error: design '{path}:handler' {said}"

    @pytest.mark.parametrize("body, said", [
        ("""
         def handler(h):
             yield from h.sql("begin")
             yield None
         """, "yielded None in request 1.1 at 0.050 s (mine.py:3), not an event: run a statement, capture or work "
              "with yield from"),
        ("""
         from idemsim.base.http import Response
         def handler(h):
             yield from h.sql("begin")
             yield from h.sql("commit")
             return Response(201, {1, 2})
         """, "the handler of request 1.1 answered with a body JSON cannot hold (set) at 0.050 s (the handler "
              "starts at mine.py:2): a body is null, true or false, a number, text, a list or an object"),
        ("""
         from idemsim.base.http import Response
         def handler(h):
             yield from h.sql("begin")
             yield from h.sql("commit")
             return Response(201, {"at": float("nan")})
         """, "the handler of request 1.1 answered with a body JSON cannot hold (nan) at 0.050 s (the handler "
              "starts at mine.py:2): a body is null, true or false, a number, text, a list or an object"),
        ("""
         from idemsim.base.http import Response
         def handler(h):
             yield from h.sql("begin")
             yield from h.sql("commit")
             return Response("201", {})
         """, "the handler of request 1.1 answered with status '201' at 0.050 s (the handler starts at mine.py:2): "
              "a status is a whole number from 100 to 599"),
        ("""
         from idemsim.base.http import Response
         def handler(h):
             yield from h.sql("begin")
             yield from h.sql("commit")
             return Response(True, {})
         """, "the handler of request 1.1 answered with status True at 0.050 s (the handler starts at mine.py:2): "
              "a status is a whole number from 100 to 599"),
        ("""
         def handler(h):
             yield from h.sql("begin")
             return object()
         """, "the handler of request 1.1 returned <object object>, not an idemsim.base.http.Response, at 0.050 s "
              "(the handler starts at mine.py:1)"),
    ], ids=["yield None", "a set as body", "NaN in the body", "a text status", "a boolean status", "an object"])
    def test_what_it_yields_or_answers_names_the_design_the_request_and_the_line(self, cli, one_line, tmp_path,
                                                                                   body, said):
        """A yield of a non-event names the yield's line; an answer that is not a Response with a status from
        100 to 599 and a JSON body names where the handler starts (its return is gone)."""
        path = design_file(tmp_path, body)
        design = f"{path}:handler"
        line = run_line(cli, one_line, design)
        assert line == f"error: design '{design}' {said}" or line == f"error: design '{design}': {said}"

    def test_the_same_input_gives_the_same_line(self, cli, one_line, tmp_path):
        """An error that shows an object shows no memory address: two runs of the same design say the same."""
        path = design_file(tmp_path, """
            def handler(h):
                yield from h.sql("begin")
                raise ValueError(object(), [object()])
            """)
        lines = {run_line(cli, one_line, f"{path}:handler") for _ in range(3)}
        assert lines == {f"error: design '{path}:handler' failed in request 1.1, at statement 'begin' at 0.050 s "
                         "(mine.py:3): ValueError: (<object object>, [<object object>])"}

    def test_it_is_said_in_the_commands_language(self, cli, one_line, tmp_path):
        """--lang ja: the same facts in Japanese."""
        path = design_file(tmp_path, """
            import sys
            def handler(h):
                yield from h.sql("begin")
                sys.exit(3)
            """)
        assert run_line(cli, one_line, f"{path}:handler", "--lang", "ja") == (
            f"エラー: 設計 '{path}:handler': 要求 1.1 の文 'begin' で失敗しました（時刻 0.050 秒、mine.py:4）: "
            "SystemExit: 3")

    def test_from_python_it_is_an_input_error(self):
        """idemsim.run with a registered design that calls sys.exit: an InputError, the process goes on."""
        def handler(h):
            yield from h.sql("begin")
            sys.exit(4)

        register_design("exits", handler)
        with pytest.raises(InputError) as raised:
            idemsim.run("lost-response", design="exits")
        line = handler.__code__.co_firstlineno + 2
        assert str(raised.value) == ("design 'exits' failed in request 1.1, at statement 'begin' at 0.050 s "
                                     f"(test_hostile_designs.py:{line}): SystemExit: 4")


class TestTheFileItself:
    @pytest.mark.parametrize("source, said", [
        ("import sys\nsys.exit(0)\n", "importing {path} failed at mine.py:2: SystemExit: 0"),
        ("import sys\n\nsys.exit(3)\n", "importing {path} failed at mine.py:3: SystemExit: 3"),
        ("raise KeyboardInterrupt\n", "importing {path} failed at mine.py:1: KeyboardInterrupt"),
        ("class Stop(BaseException):\n    pass\nraise Stop(object())\n",
         "importing {path} failed at mine.py:3: Stop: <object object>"),
        ("def handler(h):\n    yield from\n", "importing {path} failed at mine.py:2: SyntaxError: invalid syntax "
                                               "(mine.py, line 2)"),
    ], ids=["sys.exit(0)", "sys.exit(3)", "KeyboardInterrupt", "BaseException", "SyntaxError"])
    def test_what_its_import_raises_is_one_line_at_its_line(self, cli, one_line, tmp_path, source, said):
        """Whatever the file raises while imported, sys.exit(0) too, is one line and exit 2."""
        path = design_file(tmp_path, source)
        assert run_line(cli, one_line, f"{path}:handler") == (
            f"error: --design {path}:handler: " + said.format(path=path))

    @pytest.mark.parametrize("name, said", [
        ("Handler", "'Handler' in {path} is a class, not a function: name the handler, a function the file defines "
                    "(def handler(h): …)"),
        ("join", "'join' in {path} is imported from posixpath: name the handler, a function the file defines "
                 "(def handler(h): …)"),
        ("getpid", "'getpid' in {path} is imported from posix: name the handler, a function the file defines "
                   "(def handler(h): …)"),
    ], ids=["a class", "an imported function", "a builtin"])
    def test_a_name_that_is_not_a_function_of_the_file_is_refused(self, cli, one_line, tmp_path, name, said):
        """file.py:NAME names a function the file defines: a class or an imported object is refused before any run."""
        path = design_file(tmp_path, """
            from os import getpid
            from os.path import join
            class Handler:
                pass
            """)
        assert run_line(cli, one_line, f"{path}:{name}") == (
            f"error: --design {path}:{name}: " + said.format(path=path))

    @pytest.mark.parametrize("points, shown", [("(1, None)", "1"), ("('after_key', None)", "None"),
                                               ("('two words',)", "'two words'"), ("('',)", "''")])
    def test_crash_points_that_are_not_names_are_refused(self, cli, one_line, tmp_path, points, shown):
        """points=(1, None): one line naming the design, its line and the first point that is not a name."""
        path = design_file(tmp_path, f"""
            import idemsim
            from idemsim.base.http import Response
            @idemsim.design(points={points})
            def handler(h):
                yield from h.sql("begin")
                return Response(201, {{}})
            """)
        assert run_line(cli, one_line, f"{path}:handler") == (
            f"error: design '{path}:handler' (mine.py:3): crash point {shown} is not a name: points are names such "
            "as 'after_key'")

    def test_a_path_too_long_is_no_such_file(self, cli, one_line):
        """A design path of 100,000 characters: one line (the system's reason), no traceback."""
        line = run_line(cli, one_line, "x" * 100_000 + ".py:handler")
        assert line == f"error: --design {'x' * 199}…: no such file '{'x' * 199}…' (File name too long)"


class TestWhatADesignPrints:
    SOURCE = """
        from idemsim.base.http import Response
        print("imported")
        def handler(h):
            print("handling", h.request.id, end="")
            yield from h.sql("begin")
            print(" and \\x1b[31mdone")
            yield from h.sql("commit")
            return Response(201, {})
        """

    def test_json_stays_json_and_the_prints_go_to_stderr_marked(self, cli, tmp_path):
        """run --format json: standard output is the JSON alone; each printed line is on stderr after the design
        and the request, a line spanning steps kept whole, a control character escaped."""
        design = f"{design_file(tmp_path, self.SOURCE)}:handler"
        result = cli("run", "lost-response", "--variant", "gateway-504", "--design", design, "--format", "json")
        assert json.loads(result.stdout)["design"] == design
        assert result.stderr.splitlines() == [f"[{design}] imported", f"[{design} 1.1] handling 1.1 and \\x1b[31mdone"]

    def test_from_python_stdout_is_untouched(self, capsys):
        """A registered design's print goes to standard error too, whoever runs it."""
        def handler(h):
            print("hello")
            yield from h.sql("begin")
            yield from h.sql("commit")
            return Response(201, {})

        register_design("talks", handler)
        idemsim.run("lost-response", design="talks")
        out, err = capsys.readouterr()
        assert out == "" and err.splitlines()[0] == "[talks 1.1] hello"

    def test_a_design_that_replaces_stdout_gets_it_back(self, capsys):
        """A design that sets sys.stdout itself: idemsim's standard output is put back after each step."""
        def handler(h):
            sys.stdout = None
            yield from h.sql("begin")
            yield from h.sql("commit")
            return Response(201, {})

        register_design("rude", handler)
        before = sys.stdout
        idemsim.run("lost-response", design="rude")
        assert sys.stdout is before


class TestTheWatchdog:
    @pytest.fixture(autouse=True)
    def quick(self, monkeypatch):
        monkeypatch.setenv("IDEMSIM_DESIGN_SECONDS", "0.2")

    def test_a_handler_that_never_yields_is_stopped(self, cli, one_line, tmp_path):
        """A loop in the handler: one line naming the design, the request, the line and the limit."""
        path = design_file(tmp_path, """
            def handler(h):
                yield from h.sql("begin")
                while True:
                    pass
            """)
        started = time.monotonic()
        line = run_line(cli, one_line, f"{path}:handler")
        assert time.monotonic() - started < 5
        assert line in (f"error: design '{path}:handler' ran for more than 0.2 s of wall-clock time without "
                        f"yielding, in request 1.1 at 0.050 s (mine.py:{n}): stopped (IDEMSIM_DESIGN_SECONDS sets "
                        "the limit)" for n in (3, 4))

    def test_a_handler_that_sleeps_is_stopped(self, cli, one_line, tmp_path):
        """time.sleep in the handler is wall-clock time too."""
        path = design_file(tmp_path, """
            import time
            def handler(h):
                time.sleep(60)
                yield from h.sql("begin")
            """)
        assert run_line(cli, one_line, f"{path}:handler") == (
            f"error: design '{path}:handler' ran for more than 0.2 s of wall-clock time without yielding, in request "
            "1.1 at 0.050 s (mine.py:3): stopped (IDEMSIM_DESIGN_SECONDS sets the limit)")

    def test_an_import_that_never_ends_is_stopped(self, cli, one_line, tmp_path):
        """A loop at the top of the file: one line naming the file and its line."""
        path = design_file(tmp_path, "x = 0\nwhile True:\n    x += 1\n")
        line = run_line(cli, one_line, f"{path}:handler")
        assert line in (f"error: --design {path}:handler: importing {path} ran for more than 0.2 s of wall-clock "
                        f"time (mine.py:{n}): stopped (IDEMSIM_DESIGN_SECONDS sets the limit)" for n in (2, 3))

    def test_a_design_that_catches_exceptions_is_stopped_all_the_same(self, cli, one_line, tmp_path):
        """``except Exception`` in the design does not swallow the watchdog's stop."""
        path = design_file(tmp_path, """
            def handler(h):
                while True:
                    try:
                        sum(range(1000))
                    except Exception:
                        pass
                yield
            """)
        assert "ran for more than 0.2 s of wall-clock time without yielding" in run_line(cli, one_line,
                                                                                         f"{path}:handler")

    def test_steps_that_yield_are_not_stopped(self):
        """The limit is a step's, not a run's: a handler of three quick steps that take longer than the limit
        together ends normally."""
        def handler(h):
            for _ in range(3):
                if h.request.id == "1.1":
                    time.sleep(0.08)
                yield from h.work(0.001)
            return Response(201, {})

        register_design("patient", handler)
        with watchdog.installed():
            run = idemsim.run("lost-response", design="patient")
        assert run.operations[0].statuses[-1] == 201

    @pytest.mark.parametrize("value", ["abc", "0", "-1", "inf", "nan"])
    def test_a_limit_that_is_not_a_number_is_one_line(self, cli, one_line, monkeypatch, value):
        """IDEMSIM_DESIGN_SECONDS is a number > 0 or off."""
        monkeypatch.setenv("IDEMSIM_DESIGN_SECONDS", value)
        assert one_line(cli("run", "lost-response")) == (
            f"error: IDEMSIM_DESIGN_SECONDS='{value}': the seconds of wall-clock time a design's code may run without "
            "yielding are a number > 0 (default 5), or off")

    def test_an_earlier_timer_still_rings_and_the_handler_is_put_back(self):
        """A SIGALRM timer set before the command keeps its time through the design's steps, its handler is called,
        and it is the SIGALRM handler again when the command ends."""
        rang = []

        def earlier(signum, frame):
            rang.append(time.monotonic())

        previous = signal.signal(signal.SIGALRM, earlier)
        try:
            started = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with watchdog.installed():
                code = DesignCode("d")
                while time.monotonic() - started < 0.6 and not rang:
                    with code:
                        time.sleep(0.01)
            assert rang and 0.25 < rang[0] - started < 0.5
            assert signal.getsignal(signal.SIGALRM) is earlier
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def test_off_is_no_watchdog(self, monkeypatch):
        """IDEMSIM_DESIGN_SECONDS=off: nothing is armed."""
        monkeypatch.setenv("IDEMSIM_DESIGN_SECONDS", "off")
        before = signal.getsignal(signal.SIGALRM)
        with watchdog.installed():
            assert signal.getsignal(signal.SIGALRM) is before


@pytest.mark.slow
class TestWithTheDefaultLimit:
    def test_a_loop_is_stopped_after_five_seconds(self, tmp_path):
        """The real command, unset IDEMSIM_DESIGN_SECONDS: stopped after 5 s, well within 20."""
        path = design_file(tmp_path, "def handler(h):\n    while True:\n        pass\n    yield\n")
        env = {k: v for k, v in os.environ.items() if k != "IDEMSIM_DESIGN_SECONDS"}
        started = time.monotonic()
        done = subprocess.run([str(Path(sys.executable).parent / "idemsim"), "run", "lost-response", "--design",
                               f"{path}:handler"], capture_output=True, text=True, env=env, timeout=60)
        assert 5 <= time.monotonic() - started < 20
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr in (f"error: design '{path}:handler' ran for more than 5 s of wall-clock time without "
                               f"yielding, in request 1.1 at 0.050 s (mine.py:{n}): stopped (IDEMSIM_DESIGN_SECONDS "
                               "sets the limit)\n" for n in (2, 3))


@pytest.mark.slow
class TestInWorkers:
    SOURCE = """
        from idemsim.base.http import Response
        def handler(h):
            print("charging", h.request.id)
            found = yield from h.sql("register_key", key=h.key, fingerprint=h.fingerprint)
            yield from h.sql("begin")
            yield from h.capture(h.amount)
            yield from h.sql("insert_charge", amount=h.amount, key=h.key)
            yield from h.sql("commit")
            return Response(201, {"registered": bool(found)})
        """

    @pytest.mark.parametrize("where", [["--workers", "2"], ["--dask", "local", "--workers", "2"]],
                             ids=["process pool", "dask local"])
    def test_a_design_by_file_sweeps_in_workers_as_here(self, cli, tmp_path, monkeypatch, where):
        """sweep --workers / --dask local: every worker finds the design by its name; the JSON is the JSON of the
        sweep run here, whatever the design prints."""
        if "dask" in where:
            pytest.importorskip("distributed")
        monkeypatch.chdir(tmp_path)
        design_file(tmp_path, self.SOURCE)
        args = ["sweep", "lost-response", "--vary", "network.response.loss=0,0.5", "--design", "mine.py:handler",
                "--seeds", "3", "--quiet", "--format", "json"]
        here = cli(*args, "--workers", "1")
        there = cli(*args, *where)
        assert here.exit_code == there.exit_code == 0, there.stderr
        assert json.loads(there.stdout) == json.loads(here.stdout)

    def test_a_forked_worker_is_watched(self, cli, one_line, tmp_path, monkeypatch):
        """sweep --workers 2 with a design that loops: the workers' watchdog stops it, one line."""
        monkeypatch.setenv("IDEMSIM_DESIGN_SECONDS", "0.2")
        path = design_file(tmp_path, "def handler(h):\n    while True:\n        pass\n    yield\n")
        line = one_line(cli("sweep", "lost-response", "--vary", "network.response.loss=0", "--design",
                            f"{path}:handler", "--seeds", "1", "--workers", "2", "--quiet"))
        assert line.startswith(f"error: design '{path}:handler' ran for more than 0.2 s of wall-clock time")


# -- the benchmark ---------------------------------------------------------------------------------------------------
class TestTheBenchmarksCommandLine:
    @pytest.mark.parametrize("args, said", [
        (["--scaling", "0"], "argument --scaling: 0 payments: give sizes from 1 to 1,000,000"),
        (["--scaling", "100", "-5"], "argument --scaling: -5 payments: give sizes from 1 to 1,000,000"),
        (["-n", "1e12"], "argument -n: invalid int value: '1e12'"),
        (["-n", "1000000000000"], "argument -n: 1000000000000 payments: give 1 to 1,000,000"),
        (["-n", "-3"], "argument -n: -3 payments: give 1 to 1,000,000"),
        (["--repeat", "1000000"], "argument --repeat: 1000000: give 1 to 100"),
    ], ids=["scaling 0", "scaling -5", "n 1e12", "n 10^12", "n -3", "repeat"])
    def test_what_it_cannot_run_is_one_line(self, capsys, args, said):
        """A size it cannot run is refused before anything runs: one line on stderr, exit code 2."""
        from idemsim import bench as the_bench

        with pytest.raises(SystemExit) as exited:
            the_bench.command(args)
        assert exited.value.code == 2
        assert capsys.readouterr().err == f"python -m idemsim.bench: error: {said}\n"

    def test_a_closed_stdout_is_one_line_before_anything_runs(self):
        """Standard output closed (>&-): one line, exit code 2, at once."""
        done = subprocess.run([sys.executable, "-m", "idemsim.bench", "-n", "100", "--repeat", "1"], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1))
        assert (done.returncode, done.stderr) == (
            2, "python -m idemsim.bench: error: cannot write to standard output: Bad file descriptor\n")

    @pytest.mark.slow
    def test_a_full_stdout_is_one_line(self):
        """>/dev/full: one line, exit code 2."""
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-m", "idemsim.bench", "-n", "100", "--repeat", "1"], cwd=ROOT,
                                  stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        assert (done.returncode, done.stderr) == (
            2, "python -m idemsim.bench: error: cannot write to standard output: No space left on device\n")

    @pytest.mark.slow
    def test_a_pipe_closed_early_ends_quietly_with_141(self):
        """A reader that has gone when the figures come (``| head -1`` after its line, ``| true``): nothing on
        stderr, exit code 141, as idemsim's commands."""
        done = subprocess.run(f"{sys.executable} -m idemsim.bench -n 100 --repeat 1 --format text | true; "
                              "echo ${PIPESTATUS[0]} >&2", shell=True, executable="/bin/bash", cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert (done.stdout, done.stderr) == ("", "141\n")
