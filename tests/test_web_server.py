"""``idemsim serve`` (idemsim/web/server.py), over real sockets on 127.0.0.1: the page's files and nothing else,
the engine's JSON, 400 on bad input, 404 for any other path, quiet, and a clean Ctrl-C."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from idemsim.web import engine, server


@pytest.fixture(scope="module")
def serving():
    """A server on a free port of 127.0.0.1, serving on a thread; yields its URL."""
    made = server.make_server("127.0.0.1", 0)
    thread = threading.Thread(target=made.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.url_of(made).rstrip("/")
    finally:
        made.shutdown()
        made.server_close()
        thread.join(5)


def get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers["Content-Type"], refused.read()


def raw_get(base: str, target: str) -> int:
    """The status of a GET of ``target`` exactly as written (no client-side normalising of ``..``)."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.putrequest("GET", target, skip_host=False, skip_accept_encoding=True)
        connection.endheaders()
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


class TestWhatItServes:
    def test_the_page_at_the_root(self, serving):
        """`/` is the page's index.html."""
        status, kind, body = get(serving + "/")
        assert (status, kind) == (200, "text/html; charset=utf-8")
        assert body == (server.PAGE / "index.html").read_bytes()
        assert get(serving + "/index.html")[2] == body

    def test_engine_json_says_serve(self, serving):
        """The page learns which engine it has."""
        status, kind, body = get(serving + "/engine.json")
        assert (status, kind, json.loads(body)) == (200, "application/json; charset=utf-8", {"engine": "serve"})

    def test_a_run_is_the_engines_answer(self, serving):
        """`/api/run?…` is `engine.handle("/api/run", …)`, as JSON."""
        status, kind, body = get(serving + "/api/run?design=naive&faults=lose:response@1.1")
        assert (status, kind) == (200, "application/json; charset=utf-8")
        out = json.loads(body)
        assert out == engine.answer({"design": "naive", "faults": "lose:response@1.1"})
        assert out["state"]["summary"]["charges"] == 2

    def test_an_escaped_plus_and_an_empty_faults_arrive_as_written(self, serving):
        """`%2B` is a plus, `faults=` is no fault: the canonical query comes back as it was sent."""
        out = json.loads(get(serving + "/api/run?faults=delay:response@1.1%2B2.5")[2])
        assert out["state"]["faults"] == "delay:response@1.1+2.5"
        none = json.loads(get(serving + "/api/run?faults=")[2])
        assert none["state"]["faults"] == "" and none["query"] == "scenario=lost-response&faults="

    def test_the_catalog_and_a_comparison(self, serving):
        """The other two API paths."""
        catalog = json.loads(get(serving + "/api/catalog?lang=ja")[2])
        assert catalog == engine.catalog("ja")
        compared = json.loads(get(serving + "/api/compare?faults=")[2])
        assert [d["state"]["summary"]["charges"] for d in compared["designs"]] == [1] * len(compared["designs"])

    def test_bad_input_is_400_with_the_one_line(self, serving):
        """The engine's 400 and its line, in the query's language."""
        status, kind, body = get(serving + "/api/run?scenario=nope")
        assert (status, kind) == (400, "application/json; charset=utf-8")
        assert json.loads(body)["error"].startswith("error: unknown scenario 'nope'")
        status, _, body = get(serving + "/api/run?faults=oops&lang=ja")
        assert status == 400 and json.loads(body)["error"].startswith("エラー: 障害の指定 'oops'")

    def test_head_answers_the_headers_alone(self, serving):
        """HEAD: the same status and headers, no body."""
        request = urllib.request.Request(serving + "/engine.json", method="HEAD")
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200 and answer.read() == b""
            assert answer.headers["Content-Length"] == str(len(b'{"engine": "serve"}'))
            assert answer.headers["Cache-Control"] == "no-store"


class TestNothingElse:
    @pytest.mark.parametrize("target", [
        "/nothing.html", "/api/nope", "/api", "/../pyproject.toml", "/%2e%2e/pyproject.toml",
        "/%2E%2E/%2E%2E/pyproject.toml", "/..%2fpyproject.toml", "/%2e%2e%2f%2e%2e%2fpyproject.toml",
        "//etc/passwd", "/%2Fetc%2Fpasswd", "/./index.html", "/..", "/.hidden", "/index.html/",
        "/..\\..\\pyproject.toml", "/%5c..%5cpyproject.toml", "/index.html%00.js", "/%ff%fe",
        "http://127.0.0.1/../pyproject.toml", "/../engine.py", "/../server.py", "/%2e%2e/engine.py",
    ])
    def test_any_other_path_is_404(self, serving, target):
        """No traversal, no absolute path, no hidden file, no NUL or backslash: 404."""
        assert raw_get(serving, target) == 404

    def test_a_symbolic_link_out_of_the_page_is_not_followed(self, tmp_path):
        """A link inside the folder that leads out of it is refused; a plain file is served."""
        page = tmp_path / "page"
        page.mkdir()
        (page / "index.html").write_text("<p>hi</p>")
        (tmp_path / "secret.txt").write_text("secret")
        os.symlink(tmp_path / "secret.txt", page / "secret.txt")
        os.symlink(tmp_path, page / "up")
        assert server.page_file("/", page) == (page / "index.html").resolve()
        assert server.page_file("/secret.txt", page) is None
        assert server.page_file("/up/secret.txt", page) is None
        assert server.page_file("/up/page/index.html", page) == (page / "index.html").resolve()

    def test_served_over_a_socket_too(self, serving, tmp_path, monkeypatch):
        """The server reads the page's folder when it answers: a link out of it is 404."""
        page = tmp_path / "page"
        page.mkdir()
        (page / "app.js").write_text("export {};\n")
        (tmp_path / "secret.txt").write_text("secret")
        os.symlink(tmp_path / "secret.txt", page / "secret.txt")
        monkeypatch.setattr(server, "PAGE", page)
        assert get(serving + "/app.js")[:2] == (200, "text/javascript; charset=utf-8")
        assert raw_get(serving, "/secret.txt") == 404


class TestQuietAndClean:
    def test_requests_are_not_logged(self, serving, capfd):
        """Nothing per request on stderr, even for a 404, a 400 or a client that hangs up."""
        get(serving + "/")
        get(serving + "/api/run?scenario=nope")
        raw_get(serving, "/../x")
        host, port = serving.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"GET /api/run HTTP/1.1\r\nHost: x\r\n\r\n")
        get(serving + "/engine.json")
        assert capfd.readouterr().err == ""

    def test_a_port_taken_is_one_line_and_exit_2(self, cli, one_line):
        """`idemsim serve --port P` on a port in use says so."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            line = one_line(cli("serve", "--port", port))
        assert line.startswith(f"error: cannot serve on '127.0.0.1' port {port}: ")

    def test_an_address_not_of_this_machine_is_one_line(self, cli, one_line):
        """An address that cannot be bound (TEST-NET-3, documentation only): one line, exit 2."""
        assert one_line(cli("serve", "--host", "203.0.113.1", "--port", "0")).startswith(
            "error: cannot serve on '203.0.113.1' port 0: ")

    @pytest.mark.slow
    def test_the_command_prints_its_url_serves_and_stops_on_ctrl_c(self):
        """`idemsim serve --port 0` prints the URL it serves; SIGINT ends it with exit 0, nothing on stderr."""
        code = "import sys\nfrom idemsim.cli.app import main\nsys.argv = ['idemsim', 'serve', '--port', '0']\nmain()\n"
        env = {**os.environ, "PYTHONPATH": str(Path(server.__file__).parents[2])}
        process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=env)
        try:
            line = process.stdout.readline()
            assert line.startswith("idemsim serve: open http://127.0.0.1:")
            url = line.split()[3]
            status, _, body = get(url + "api/run?design=naive")
            assert status == 200 and json.loads(body)["state"]["summary"]["charges"] == 2
            assert "idemsim.web" not in line
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
        assert (process.returncode, err) == (0, "")

    @pytest.mark.slow
    def test_run_does_not_import_the_web_package(self):
        """`idemsim run` loads neither the engine nor the server."""
        code = ("import sys\nfrom idemsim.cli.app import main\nsys.argv = ['idemsim', 'run', 'lost-response']\n"
                "try:\n    main()\nexcept SystemExit:\n    pass\n"
                "print(sorted(m for m in sys.modules if m.startswith('idemsim.web')))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.stdout.strip().splitlines()[-1] == "[]"


class TestSiteCommand:
    def test_site_calls_build_site_with_the_folder_and_the_cache(self, cli, tmp_path, monkeypatch):
        """`idemsim site DIR [--cache PATH]` is `idemsim.web.site.build_site(Path(DIR), Path(PATH) or None)`; its
        InputError is one line, exit 2."""
        import types

        from idemsim.base.errors import InputError

        calls = []

        def build_site(directory, cache):
            calls.append((directory, cache))
            if directory.name == "bad":
                raise InputError("err.web.not_found", path="'bad'")

        monkeypatch.setitem(sys.modules, "idemsim.web.site", types.SimpleNamespace(build_site=build_site))
        result = cli("site", tmp_path / "out", "--cache", tmp_path / "cache")
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == str(tmp_path / "out")
        assert cli("site", tmp_path / "out2").exit_code == 0
        assert calls == [(tmp_path / "out", tmp_path / "cache"), (tmp_path / "out2", None)]
        result = cli("site", tmp_path / "bad")
        assert (result.exit_code, result.stderr.strip()) == (2, "error: no such page: 'bad'")
