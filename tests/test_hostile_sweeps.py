"""Hostile input to sweeps, workers and Dask (issue 28): every refusal is one line and exit 2, in the user's
language, naming the option and what is allowed, before anything runs and within 2 s; a Dask address that
refuses is refused at once, one that accepts and never answers after a connect timeout the line states.

Each case is a spec: the command's arguments and the whole error line it must print. The cases that start
Dask, or that wait for a silent address, are marked slow.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from idemsim.runners import sweep as sw

SWEEP = ["sweep", "lost-response", "--vary", "network.response.loss=0,0.1", "--seeds", "2", "--design", "naive",
         "--quiet"]
"""A small valid sweep, which each case spoils with one option."""
HUGE_PORT = "9" * 100_000
CORES = os.cpu_count() or 1
MOST = 4 * CORES


def workers_line(n: int) -> str:
    return f"error: --workers {n}: give 1 to {MOST} (4 a core; this machine has {CORES})"


def table(document: str) -> str:
    """A scenario file with a ``[sweep]`` table: lost-response's story over two losses, then ``document``."""
    return ('title = "t"\nsummary = "s"\n[sweep]\nvary = { "network.response.loss" = [0, 0.1] }\nseeds = 2\n'
            + document)


# -- the grid, the seeds, the product --------------------------------------------------------------------------
REFUSED = {
    "a range step too small to count": (
        ["sweep", "lost-response", "--vary", "network.response.loss=0:1:1e-320"],
        "error: --vary network.response.loss=0:1:1e-320: more values than can be counted; at most 1000 per field"),
    "a range over the limit": (
        ["sweep", "lost-response", "--vary", "network.response.loss=0:1:0.001"],
        "error: --vary network.response.loss=0:1:0.001: 1,001 values; at most 1000 per field"),
    "a list of 30,000 values": (
        ["sweep", "lost-response", "--vary", "network.response.loss=" + ",".join(["0.1"] * 30_000)],
        "error: --vary network.response.loss=0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1…: "
        "30,000 values; at most 1000 per field"),
    "a field with no values": (
        ["sweep", "lost-response", "--vary", "network.response.loss="],
        "error: --vary 'network.response.loss=': no values; give FIELD=V1,V2,… or FIELD=START:STOP:STEP"),
    "the same field twice": (
        [*SWEEP, "--vary", "network.response.loss=0.2"],
        "error: --vary network.response.loss: the field is varied twice; give all its values in one --vary "
        "network.response.loss=V1,V2,…"),
    "two axes whose product is too big": (
        ["sweep", "lost-response", "--vary", "network.response.loss=0:1:0.01", "--vary",
         "network.request.loss=0:1:0.01", "--seeds", "100"],
        "error: the sweep would make 10,201 points × 6 designs × 100 seeds = 6,120,600 runs; at most 200,000 "
        "(docs/sweeps.md): give fewer values, designs or --seeds"),
    "a billion seeds": (
        ["sweep", "lost-response", "--vary", "network.response.loss=0", "--seeds", "1000000000"],
        "error: --seeds 1000000000: give 1 to 100,000 runs per point and design"),
    "no seeds": (
        ["sweep", "lost-response", "--vary", "network.response.loss=0", "--seeds", "0"],
        "error: --seeds 0: give 1 to 100,000 runs per point and design"),
    # -- workers
    "ten thousand workers": (
        [*SWEEP, "--workers", "10000"], workers_line(10000)),
    "no workers": (
        [*SWEEP, "--workers", "0"], workers_line(0)),
    "ten thousand workers of a local cluster": (
        [*SWEEP, "--dask", "local", "--workers", "10000"],
        workers_line(10000)),
    "workers for a remote cluster": (
        [*SWEEP, "--dask", "127.0.0.1:8786", "--workers", "2"],
        "error: --workers 2 with --dask 127.0.0.1:8786: a remote cluster's workers are its own; give --workers "
        "alone or with --dask local"),
    # -- Dask addresses, refused before Dask is imported
    "an empty address": (
        [*SWEEP, "--dask", ""], "error: --dask '': give a scheduler's address (HOST:PORT or tcp://HOST:PORT) or local"),
    "a port that is not a number": (
        [*SWEEP, "--dask", "127.0.0.1:abc"],
        "error: --dask 127.0.0.1:abc: not a scheduler's address; give HOST:PORT or tcp://HOST:PORT (a port from 1 "
        "to 65535), or local"),
    "a port of 100,000 digits": (
        [*SWEEP, "--dask", f"127.0.0.1:{HUGE_PORT}"],
        "error: --dask 127.0.0.1:9999999999999999999999999999999999999999999999999…: not a scheduler's address; "
        "give HOST:PORT or tcp://HOST:PORT (a port from 1 to 65535), or local"),
    "a port out of range": (
        [*SWEEP, "--dask", "tcp://127.0.0.1:70000"],
        "error: --dask tcp://127.0.0.1:70000: not a scheduler's address; give HOST:PORT or tcp://HOST:PORT (a port "
        "from 1 to 65535), or local"),
    "no host": (
        [*SWEEP, "--dask", ":8786"],
        "error: --dask :8786: not a scheduler's address; give HOST:PORT or tcp://HOST:PORT (a port from 1 to "
        "65535), or local"),
    "ucx": ([*SWEEP, "--dask", "ucx://127.0.0.1:8786"],
            "error: --dask ucx://127.0.0.1:8786: ucx:// is not supported; give HOST:PORT, tcp://HOST:PORT or local"),
    "tls": ([*SWEEP, "--dask", "tls://127.0.0.1:8786"],
            "error: --dask tls://127.0.0.1:8786: tls:// is not supported; give HOST:PORT, tcp://HOST:PORT or local"),
    "inproc": ([*SWEEP, "--dask", "inproc://127.0.0.1/1/2"],
               "error: --dask inproc://127.0.0.1/1/2: inproc:// is not supported; give HOST:PORT, tcp://HOST:PORT or "
               "local"),
    "nothing listening": (
        [*SWEEP, "--dask", "127.0.0.1:1"], "error: --dask 127.0.0.1:1: cannot reach the scheduler: Connection refused"),
    # -- explore: options that need another
    "explore --force without --save": (
        ["explore", "naive", "--force"],
        "error: --force does nothing without --save: add --save, or leave --force out"),
    "explore --workers without --exhaustive": (
        ["explore", "naive", "--workers", "2"],
        "error: --workers does nothing without --exhaustive: add --exhaustive, or leave --workers out"),
    "explore --dask without --exhaustive": (
        ["explore", "naive", "--dask", "local"],
        "error: --dask does nothing without --exhaustive: add --exhaustive, or leave --dask out"),
    "explore --exhaustive with ten thousand workers": (
        ["explore", "naive", "--exhaustive", "--workers", "10000"],
        workers_line(10000)),
    "explore --exhaustive on an address of no protocol of ours": (
        ["explore", "naive", "--exhaustive", "--dask", "tls://127.0.0.1:8786"],
        "error: --dask tls://127.0.0.1:8786: tls:// is not supported; give HOST:PORT, tcp://HOST:PORT or local"),
    "explore --exhaustive where nothing listens": (
        ["explore", "naive", "--exhaustive", "--dask", "127.0.0.1:1"],
        "error: --dask 127.0.0.1:1: cannot reach the scheduler: Connection refused"),
}


class TestRefusals:
    @pytest.mark.parametrize("args, line", list(REFUSED.values()), ids=list(REFUSED))
    def test_is_one_line_naming_the_option_and_what_is_allowed_within_2_s(self, cli, one_line, args, line):
        """The whole line, exit 2, before anything runs."""
        started = time.monotonic()
        assert one_line(cli(*args)) == line
        assert time.monotonic() - started < 2

    def test_is_said_in_the_users_language(self, cli, one_line, monkeypatch):
        """IDEMSIM_LANG=ja: the overflowing range in Japanese."""
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        result = cli("sweep", "lost-response", "--vary", "network.response.loss=0:1:1e-320")
        assert one_line(result) == ("エラー: --vary network.response.loss=0:1:1e-320: 値が数えきれないほどあります。"
                                    "1 つの項目につき 1000 個までです")


TABLES = {
    "a measure that is none": (
        'measures = ["bogus"]\n',
        "error: {file}: [sweep] measures: 'bogus' is not a measure; allowed: " + ", ".join(sw.MEASURES)),
    "no designs": (
        "designs = []\n",
        "error: {file}: [sweep] designs = [] names no design; name at least one, or leave it out to sweep them all"),
    "a field with no values": (
        'vary = { "network.response.loss" = [] }\n',
        "error: {file}: [sweep] vary.network.response.loss: 0 values; give 1 to 1000"),
    "a measure these runs do not make": (
        'designs = ["naive"]\nmeasures = ["pool_wait_max.p95"]\n',
        "error: {file}: [sweep] measures: this sweep's runs do not measure pool_wait_max.p95 (pool_wait_max needs "
        "api.pool_size, peak_after_outage an outage)"),
}


class TestSweepTables:
    @pytest.mark.parametrize("document, line", list(TABLES.values()), ids=list(TABLES))
    def test_a_bad_sweep_table_is_one_line(self, cli, one_line, tmp_path, document, line):
        """A [sweep] table's designs, measures and values are checked as --vary's are."""
        if document.startswith("vary"):
            text = table("").replace('vary = { "network.response.loss" = [0, 0.1] }\n', document)
        else:
            text = table(document)
        path = tmp_path / "mine.toml"
        path.write_text(text, encoding="utf-8")
        assert one_line(cli("sweep", path, "--quiet")) == line.format(file=path)

    def test_the_python_api_refuses_the_same(self):
        """idemsim.sweep checks the limits that the command does."""
        with pytest.raises(sw.InputError, match="the field is varied twice"):
            sw.sweep("lost-response", vary=["network.response.loss=0", "network.response.loss=0.1"], seeds=1)


class TestWorkers:
    def test_a_failure_to_start_them_is_one_line(self, cli, one_line, monkeypatch):
        """A process limit (fork fails with EAGAIN) is an error line, not a traceback."""

        class Refusing:
            def __init__(self, **kwargs):
                pass

            def submit(self, *args, **kwargs):
                raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))

            def shutdown(self, *args, **kwargs):
                pass

        monkeypatch.setattr(sw, "ProcessPoolExecutor", Refusing)
        assert one_line(cli(*SWEEP, "--workers", "2")) == ("error: --workers 2: cannot start the worker processes: "
                                                            "Resource temporarily unavailable")


@contextmanager
def silent_server():
    """A port on 127.0.0.1 that accepts connections and never says a word (closed at the end)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.slow
class TestDask:
    @pytest.mark.parametrize("command", [SWEEP, ["explore", "naive", "--exhaustive"]], ids=["sweep", "explore"])
    def test_an_address_that_accepts_and_never_answers_times_out_saying_so(self, cli, one_line, command):
        """The connect timeout (3 s) is stated in the line, and kept."""
        with silent_server() as port:
            started = time.monotonic()
            line = one_line(cli(*command, "--dask", f"tcp://127.0.0.1:{port}"))
            took = time.monotonic() - started
        assert line == (f"error: --dask tcp://127.0.0.1:{port}: no answer within 3 s (a Dask scheduler answers as "
                        "soon as it accepts); is a scheduler listening there?")
        assert sw.CONNECT_TIMEOUT <= took < sw.CONNECT_TIMEOUT + 2

    def test_a_local_cluster_leaves_nothing_in_the_current_folder(self, cli, tmp_path, monkeypatch):
        """--dask local puts its scratch space in a temporary folder, removed at the end."""
        monkeypatch.chdir(tmp_path)
        before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("idemsim-dask-*"))
        result = cli(*SWEEP, "--dask", "local", "--workers", "1", "--format", "json")
        assert result.exit_code == 0, result.output
        assert list(tmp_path.iterdir()) == []
        assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("idemsim-dask-*")) == before

    def test_a_design_from_a_file_runs_on_a_local_cluster(self, cli):
        """A Dask worker's process loads the user's design itself, as a pool's inherits it."""
        design = Path(__file__).resolve().parent.parent / "docs" / "designs" / "for_update.py"
        args = ["sweep", "lost-response", "--vary", "network.response.loss=0,0.3", "--seeds", "2", "--quiet",
                "--format", "json", "--design", f"{design}:handler"]
        here = cli(*args, "--workers", "1")
        there = cli(*args, "--dask", "local", "--workers", "1")
        assert (here.exit_code, there.exit_code) == (0, 0), there.output
        assert there.stdout == here.stdout
