"""The page in a real browser: headless Chromium driven by Selenium, on `idemsim serve` or on the static site.

Plain helpers first (tests/bench_web.py uses them outside pytest), then the fixtures built on them. conftest.py
loads this module as a plugin (`pytest_plugins`); Selenium is imported only when a browser starts, so the fast
tests pay nothing for it.

Guarantees:
- The browser resolves no name but 127.0.0.1 (`--host-resolver-rules`): a page that reaches out fails loudly
  (a console error), it never quietly works because the machine is online.
- A missing Chromium or chromedriver, or a registry out of reach while the site's cache is empty, skips the
  tests that need them with the reason; under ``CI=true`` it fails them instead.
- `Page.open` waits for ``window.idemsim.ready`` and hands back ``state()``; every console message of level
  SEVERE is collected, so a test can say "no console errors" (`Page.console_errors`).
- Screenshots go to ``$IDEMSIM_SCREENSHOTS`` or a temporary directory, named at the end of pytest's report.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

WIDTH, HEIGHT = 1280, 720
"""The page's viewport: a projector's 720p (the issue: readable at 1280×720)."""
NO_NAMES = "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
"""Chromium resolves no host but 127.0.0.1: the page cannot reach anything but this machine."""
REGISTRIES = [("registry.npmjs.org", 443), ("files.pythonhosted.org", 443)]
"""Where `idemsim site` downloads its third-party files from (into a cache) on first use."""
WAIT = {"serve": 30.0, "pyodide": 120.0}
"""How long a page may take to be ready, by engine (Pyodide loads and installs its wheels first)."""


class Unavailable(Exception):
    """A thing the browser tests need is missing on this machine (a browser, its driver, the registry)."""


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def unavailable(reason: str):
    """Skip with the reason; under CI=true, fail: CI must run the browser tests, not skip them."""
    if in_ci():
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


# --- the browser ------------------------------------------------------------------------------------------------

def browser_paths() -> tuple[str, str]:
    """Chromium and chromedriver (``$IDEMSIM_CHROMIUM``/``$IDEMSIM_CHROMEDRIVER``, else Debian's), or Unavailable."""
    chromium = os.environ.get("IDEMSIM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("IDEMSIM_CHROMEDRIVER") or shutil.which("chromedriver")
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", driver)) if not path]
    if missing:
        raise Unavailable(f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver)")
    return chromium, driver


def start_browser(page_load: str = "normal"):
    """A headless Chromium with a 1280×720 viewport that resolves nothing but 127.0.0.1, its console logged."""
    chromium, chromedriver = browser_paths()
    try:
        from selenium import webdriver  # (lazy: only the browser tests need Selenium)
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        raise Unavailable(f"selenium is not installed (pip install -e '.[test]'): {error}") from None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", f"--window-size={WIDTH},{HEIGHT}", f"--host-resolver-rules={NO_NAMES}",
                     "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--lang=en-US"):
        options.add_argument(argument)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.page_load_strategy = page_load
    log = os.environ.get("IDEMSIM_CHROME_LOG")  # a file for chromedriver's and Chromium's own log, to debug
    if log:
        options.add_argument("--enable-logging=stderr")
        service = Service(chromedriver, log_output=log, service_args=["--verbose"])
    else:
        service = Service(chromedriver)
    driver = webdriver.Chrome(options=options, service=service)
    # --window-size is the window's outer size: make the page's own viewport 1280×720.
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(WIDTH + WIDTH - inner[0], HEIGHT + HEIGHT - inner[1])
    driver.set_script_timeout(max(WAIT.values()))
    return driver


WAIT_READY = """
const [limit, done] = [arguments[0] * 1000, arguments[arguments.length - 1]];
const start = performance.now();
(function wait() {
  const api = window.idemsim;
  if (api && api.ready) {
    Promise.resolve(api.ready).then(
      () => done({ok: true, state: api.state()}),
      (error) => done({ok: false, error: "window.idemsim.ready rejected: " + String(error)}));
  } else if (performance.now() - start > limit) {
    done({ok: false, error: "window.idemsim.ready never appeared"});
  } else {
    setTimeout(wait, 20);
  }
})();
"""
"""Resolve with ``{ok, state}`` once ``window.idemsim.ready`` has resolved (the URL's story drawn)."""

CALL = """
const [name, args, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
Promise.resolve(window.idemsim[name](...args)).then(
  (value) => done({ok: true, value: value === undefined ? null : value, state: window.idemsim.state()}),
  (error) => done({ok: false, error: String(error)}));
"""
"""Call ``window.idemsim[name](...args)`` and wait for its promise; ``state()`` after it."""


class Page:
    """One browser on one engine's base URL: open a URL query, call the page's API, click, read the console."""

    def __init__(self, driver, base: str, engine: str, shots: Path | None = None,
                 served: list[tuple[str, int]] | None = None) -> None:
        self.driver = driver
        """The Selenium WebDriver."""
        self.base = base
        """The page's URL without a query: ``http://127.0.0.1:PORT/``."""
        self.engine = engine
        """``serve`` or ``pyodide``: which engine the base URL has."""
        self.shots = shots
        """Where `screenshot` saves (None: nowhere)."""
        self.served = served
        """The static server's log of (path, status), for the static site; None on `idemsim serve`."""
        self.console: list[dict] = []
        """Every console entry read so far (`console_errors` filters the SEVERE ones)."""

    def url(self, query: str = "") -> str:
        return self.base + (f"?{query}" if query else "")

    def get(self, url: str) -> None:
        """Navigate (the console of the page before is kept in `console`), once the page before has settled."""
        self.settle()
        self.read_console()
        self.driver.get(url)

    def settle(self) -> None:
        """Wait until the page on screen (this Page's or another's, on either engine) has its engine loaded or
        failed (its loading indicator, ``#engine-status``, is empty): Chromium 156 may crash the tab (and the next
        page with it) when a static-site page is left while its worker is inside Pyodide's ``loadPyodide``. On
        `idemsim serve` the indicator is empty at once."""
        if not self.driver.current_url.startswith("http://127.0.0.1:"):
            return
        deadline = time.monotonic() + max(WAIT.values())
        while self.driver.execute_script(
                "const e = document.getElementById('engine-status'); return e ? e.innerText.trim() : ''"):
            assert time.monotonic() < deadline, f"the engine never loaded at {self.driver.current_url}"
            time.sleep(0.05)

    def open(self, query: str = "", *, url: str | None = None) -> dict:
        """Open the page at ``?query`` (or a whole ``url``), wait until ready, and return ``state()``."""
        self.get(url or self.url(query))
        return self.ready()

    def ready(self) -> dict:
        answer = self.driver.execute_async_script(WAIT_READY, WAIT[self.engine])
        assert answer["ok"], f"{self.driver.current_url}: {answer['error']} (#error: {self.error_text()!r})"
        return answer["state"]

    def pick(self, select: str, value: str) -> dict:
        """Choose ``value`` in the page's ``<select id=select>`` as a user does; wait for the re-run; state()."""
        from selenium.webdriver.common.by import By  # (lazy: Selenium)
        from selenium.webdriver.support.ui import Select

        before = json.dumps(self.state(), sort_keys=True)
        Select(self.driver.find_element(By.ID, select)).select_by_value(value)
        return self.wait_for(lambda: json.dumps(self.state(), sort_keys=True) != before,
                             f"a re-run after choosing {value} in #{select}")

    def state(self) -> dict:
        return self.driver.execute_script("return window.idemsim.state()")

    def messages(self) -> list[dict]:
        return self.driver.execute_script("return window.idemsim.messages()")

    def call(self, name: str, *args) -> dict:
        """``window.idemsim.<name>(*args)``, waited for; returns ``state()`` after it."""
        answer = self.driver.execute_async_script(CALL, name, list(args))
        assert answer["ok"], f"window.idemsim.{name}{tuple(args)} failed: {answer['error']}"
        return answer["state"]

    def message(self, test) -> dict:
        """The first drawn message (in scene order) for which ``test(message)`` holds."""
        found = [m for m in self.messages() if test(m)]
        assert found, f"no such message among {self.messages()}"
        return found[0]

    def click_message(self, event: int, limit: float | None = None) -> dict:
        """Click the drawn message ``[data-event=event]`` as a user does; wait for the re-run; return state()."""
        from selenium.webdriver.common.by import By  # (lazy: Selenium)

        before = json.dumps(self.state(), sort_keys=True)
        element = self.driver.find_element(By.CSS_SELECTOR, f'[data-event="{event}"]')
        element.click()
        return self.wait_for(lambda: json.dumps(self.state(), sort_keys=True) != before,
                             f"a re-run after clicking message {event}", limit)

    def wait_for(self, condition, what: str, limit: float | None = None):
        """Poll ``condition()`` until true; then return ``state()``."""
        deadline = time.monotonic() + (limit or WAIT[self.engine])
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what} at {self.driver.current_url}"
            time.sleep(0.02)
        return self.state()

    def error_text(self) -> str | None:
        """The text of the page's one-line error (``#error``), or None when there is no such element."""
        return self.driver.execute_script(
            "const e = document.getElementById('error'); return e ? e.innerText : null")

    def wait_error(self, limit: float | None = None) -> str:
        """Wait until ``#error`` shows something; return its text."""
        deadline = time.monotonic() + (limit or WAIT[self.engine])
        while not (self.error_text() or "").strip():
            assert time.monotonic() < deadline, f"no error shown at {self.driver.current_url}"
            time.sleep(0.05)
        return self.error_text()

    def text(self) -> str:
        """The page's text as a reader sees it (hidden parts excluded)."""
        return self.driver.execute_script("return document.body.innerText")

    def read_console(self) -> list[dict]:
        entries = self.driver.get_log("browser")
        self.console.extend(entries)
        return entries

    def console_errors(self) -> list[str]:
        """Every SEVERE console message since the last call (then forgotten, so each test sees its own).

        Chromium itself logs "Failed to load resource" (source ``network``) for every answer ≥ 400, a page's
        own fetch included; those come back as "network: URL - …" for the test to judge."""
        self.read_console()
        errors = [("network: " if e.get("source") == "network" else "") + e["message"]
                  for e in self.console if e.get("level") == "SEVERE"]
        self.console.clear()
        return errors

    def screenshot(self, name: str) -> Path | None:
        if self.shots is None:
            return None
        path = self.shots / f"{self.engine}-{name}.png"
        self.driver.save_screenshot(str(path))
        SAVED.append(path)
        return path


SAVED: list[Path] = []
"""Every screenshot this pytest session saved (named in the terminal summary)."""


# --- the engines: `idemsim serve`, and the static site on a plain HTTP server ------------------------------------

def python_env() -> dict[str, str]:
    """The environment for a child Python that imports this very idemsim, unbuffered."""
    import idemsim  # (lazy: only to find the package a child must import)

    root = str(Path(idemsim.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


@contextlib.contextmanager
def serving(limit: float = 30.0) -> Iterator[str]:
    """`idemsim serve --port 0` in a child process; yields the URL it prints, stops it (SIGINT) at the end."""
    command = [sys.executable, "-c", "from idemsim.cli.app import main; main()", "serve", "--port", "0"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=python_env())
    lines: queue.Queue[str | None] = queue.Queue()
    said: list[str] = []

    def read():
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + limit
        url = None
        while url is None:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"`idemsim serve --port 0` printed no URL: {''.join(said)!r}")
            said.append(line)
            found = re.search(r"http://127\.0\.0\.1:\d+/?", line)
            url = found and found.group(0)
        yield url if url.endswith("/") else url + "/"
    finally:
        if child.poll() is None:
            child.send_signal(2)  # Ctrl-C: the server stops cleanly
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """`python -m http.server`'s handler, logging to a list instead of stderr."""

    log: list[tuple[str, int]]

    def log_request(self, code="-", size="-"):
        self.log.append((self.path, 0 if isinstance(code, str) else int(code)))

    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def static(directory: Path) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """``python -m http.server --bind 127.0.0.1 --directory DIR 0``, in a thread: yields (URL, requests served)."""
    log: list[tuple[str, int]] = []
    handler = type("Handler", (_Quiet,), {"log": log})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", log
    finally:
        server.shutdown()
        server.server_close()


def registry_reachable(timeout: float = 5.0) -> str | None:
    """None when the registries answer a TCP connection, else why not."""
    for host, port in REGISTRIES:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as error:
            return f"{host}:{port} is unreachable ({error})"
    return None


def build_site(directory: Path) -> Path:
    """`idemsim.web.site.build_site(directory)`; Unavailable when it fails because the registry is out of reach."""
    from idemsim.web.site import build_site as build  # (lazy: W2's module, only the site's tests need it)

    try:
        build(directory)
    except Exception as error:
        cut = registry_reachable()
        if cut:
            raise Unavailable(f"cannot build the site ({error}) and {cut}; the cache is not filled yet") from error
        raise
    return directory


# --- the CLI's own answers ---------------------------------------------------------------------------------------

@functools.cache
def _cli_summary(args: tuple[str, ...]) -> str:
    from typer.testing import CliRunner  # (lazy: the CLI is only the reference here)

    from idemsim.cli.app import app

    result = CliRunner().invoke(app, ["run", *args, "--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.dumps(json.loads(result.stdout)["summary"])


def cli_summary(*args: str) -> dict:
    """The ``summary`` of ``idemsim run ARGS --format json``, in-process (cached: each is computed once)."""
    return json.loads(_cli_summary(tuple(str(a) for a in args)))


def state_command(state: dict) -> list[str]:
    """The arguments of the ``idemsim run`` that reproduces a page's ``state()`` (every option written out)."""
    args = [state["scenario"], "--design", state["design"], "--seed", str(state["seed"]),
            "--lang", state["lang"], "--faults", state["faults"]]
    if state.get("variant"):
        args += ["--variant", state["variant"]]
    return args


# --- the fixtures --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (each test navigates it); skipped/failed when none is installed."""
    try:
        driver = start_browser()
    except Unavailable as error:
        unavailable(str(error))
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where the tests save their screenshots: ``$IDEMSIM_SCREENSHOTS`` or a temporary directory."""
    chosen = os.environ.get("IDEMSIM_SCREENSHOTS")
    path = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def serve_url() -> Iterator[str]:
    """The URL of `idemsim serve --port 0`, running for the session."""
    with serving() as url:
        yield url


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    """A static site written by `idemsim site` (its third-party files from the cache, downloaded once)."""
    try:
        return build_site(tmp_path_factory.mktemp("web") / "site")
    except Unavailable as error:
        unavailable(str(error))


@pytest.fixture(scope="session")
def site(site_dir) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """The static site served by a plain HTTP server on 127.0.0.1: (URL, the requests it answered)."""
    with static(site_dir) as served:
        yield served


@pytest.fixture(scope="module", params=["serve", "pyodide"])
def page(request, browser, screenshots) -> Page:
    """The page on each engine in turn: `idemsim serve`, then the static site (Pyodide)."""
    if request.param == "serve":
        return Page(browser, request.getfixturevalue("serve_url"), "serve", screenshots)
    base, served = request.getfixturevalue("site")
    return Page(browser, base, "pyodide", screenshots, served)


@pytest.fixture(scope="module")
def site_page(browser, screenshots, site) -> Page:
    """The page on the static site only (Pyodide): for what only the site has."""
    base, served = site
    return Page(browser, base, "pyodide", screenshots, served)


def pytest_terminal_summary(terminalreporter):
    if SAVED:
        terminalreporter.write_line(f"browser screenshots ({len(SAVED)}): {SAVED[0].parent}")
