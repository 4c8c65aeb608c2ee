"""The page's timings in headless Chromium, on both engines: run by hand, never collected by pytest (not a test).

    python tests/bench_web.py                  # both engines, 5 runs each
    python tests/bench_web.py -n 9 --engine pyodide --site DIR   # an already-built site

Each run is a fresh browser (an empty cache: a student's first visit) that opens lost-response's default story
and measures, from the navigation's start (the page's ``performance.timeOrigin``):
- first picture: the first drawn message (``[data-event]``) on screen (the animation frame after it appears);
- ready: ``window.idemsim.ready`` resolved: the URL's story drawn and the engine's run of it made (on the static
  site the embedded story is drawn first, then Pyodide loads, installs the wheels and runs the story);
- engine: a first click answered — ``window.idemsim.lose`` of a message, called once ready, until the re-run is
  drawn;
- re-run: after that warm-up, ``lose`` of another message until the re-run is drawn and painted (what a click
  does; the median of ``--clicks`` in each run).
It prints the medians over the runs, in seconds, and the issue's targets. The browser resolves nothing but
127.0.0.1, as in the tests (tests/browser.py).
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser import WAIT, build_site, serving, start_browser, static  # noqa: E402 (tests/ is not a package)

QUERY = "scenario=lost-response"
MARKS = """
(() => {
  const mark = (name) => { if (!performance.getEntriesByName(name).length) performance.mark(name); };
  const drawn = () => !!document.querySelector("[data-event]");
  const observer = new MutationObserver(() => {
    if (drawn()) { observer.disconnect(); requestAnimationFrame(() => mark("bench:first-picture")); }
  });
  observer.observe(document, {childList: true, subtree: true, attributes: true, attributeFilter: ["data-event"]});
  const poll = setInterval(() => {
    if (window.idemsim && window.idemsim.ready) {
      clearInterval(poll);
      Promise.resolve(window.idemsim.ready).then(() => mark("bench:ready"));
    }
  }, 2);
})();
"""
"""Injected before the page's own scripts: performance marks when the first message is drawn and when ready."""

READ_MARKS = """
const done = arguments[arguments.length - 1];
const read = () => Object.fromEntries(["bench:first-picture", "bench:ready"].map(
  (name) => [name, (performance.getEntriesByName(name)[0] || {}).startTime]));
(function wait() {
  const got = read();
  if (Object.values(got).every((t) => t !== undefined)) done(got); else setTimeout(wait, 5);
})();
"""

LOSE = """
const [event, done] = [arguments[0], arguments[arguments.length - 1]];
const start = performance.now();
Promise.resolve(window.idemsim.lose(event))
  .then(() => new Promise((painted) => requestAnimationFrame(() => painted())))
  .then(() => done({start, end: performance.now()}), (error) => done({error: String(error)}));
"""
"""``lose(event)``, timed in the page until the frame after the re-run is drawn."""


def losable(driver) -> list[int]:
    """The events of the messages between the client and a handler that are not lost yet, latest first."""
    messages = driver.execute_script("return window.idemsim.messages()")
    ends = [m for m in messages if not m["lost"] and (m["from"].startswith("client") or m["to"].startswith("client"))]
    return [m["event"] for m in reversed(ends)]


def lose(driver, event: int) -> dict:
    answer = driver.execute_async_script(LOSE, event)
    if "error" in answer:
        raise RuntimeError(f"lose({event}) failed: {answer['error']}")
    return answer


def one_run(base: str, clicks: int) -> dict[str, float]:
    """One fresh browser on the page: the four timings, in seconds."""
    driver = start_browser()
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": MARKS})
        driver.get(f"{base}?{QUERY}")
        marks = driver.execute_async_script(READ_MARKS)
        first = lose(driver, losable(driver)[0])
        reruns = []
        for _ in range(clicks):
            events = losable(driver)
            if not events:
                break
            answer = lose(driver, events[0])
            reruns.append((answer["end"] - answer["start"]) / 1000)
        return {"first picture": marks["bench:first-picture"] / 1000, "ready": marks["bench:ready"] / 1000,
                "engine": first["end"] / 1000, "re-run": statistics.median(reruns) if reruns else float("nan")}
    finally:
        driver.quit()


@contextlib.contextmanager
def engine_url(engine: str, site: Path | None):
    if engine == "serve":
        with serving() as url:
            yield url
        return
    with contextlib.ExitStack() as stack:
        if site is None:
            site = build_site(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "site")
        url, _ = stack.enter_context(static(site))
        yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=5, help="runs per engine, each in a fresh browser (default 5)")
    parser.add_argument("--clicks", type=int, default=3, help="warm re-runs timed in each run (default 3)")
    parser.add_argument("--engine", choices=["serve", "pyodide", "both"], default="both")
    parser.add_argument("--site", type=Path, help="a site already built by `idemsim site DIR` (default: build one)")
    args = parser.parse_args(argv)
    engines = ["serve", "pyodide"] if args.engine == "both" else [args.engine]
    columns = ["first picture", "ready", "engine", "re-run"]
    rows = {}
    for engine in engines:
        with engine_url(engine, args.site) as base:
            WAIT[engine] = max(WAIT[engine], 120.0)
            runs = []
            for i in range(args.n):
                started = time.perf_counter()
                runs.append(one_run(base, args.clicks))
                print(f"{engine} run {i + 1}/{args.n}: " + ", ".join(f"{k} {v:.3f} s" for k, v in runs[-1].items())
                      + f" ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
            rows[engine] = {c: statistics.median(r[c] for r in runs) for c in columns}
    print(f"lost-response's default story, medians of {args.n} runs (a fresh browser each), seconds")
    print(f"{platform.node()}, {platform.machine()}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'engine':<10}" + "".join(f"{c:>15}" for c in columns))
    for engine, row in rows.items():
        print(f"{engine:<10}" + "".join(f"{row[c]:>15.3f}" for c in columns))
    print("targets (issue 27): first picture ≤ 1 s; re-run ≤ 0.3 s (pyodide, warm), ≤ 0.15 s (serve)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
