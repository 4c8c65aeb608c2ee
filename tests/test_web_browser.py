"""The page in a real browser (issue 27), on both engines: `idemsim serve` and the static site (Pyodide).

Each test opens a URL of the page in headless Chromium (tests/browser.py: it resolves nothing but 127.0.0.1) and
reads the page's API, ``window.idemsim``: what the page shows is held against what the CLI prints
(``idemsim run … --format json``'s ``summary``), clicks are real clicks, and no page writes an error to the
console. Screenshots of the main states are saved (the path is named at the end of pytest's report).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from browser import Page, cli_summary, state_command

from idemsim.scenario.schema import builtin_names

pytestmark = pytest.mark.slow
"""A browser, and for the site Pyodide: not on the fast path (pytest -m "not slow")."""

STORIES = builtin_names()
LOST_RESPONSE_DESIGNS = ["naive", "committed-first", "recovery-points"]
"""Three designs other than lost-response's own (same-tx), so that the engine runs them, not the embedded story."""
OUTSIDE = re.compile(r"""https?://(?!127\.0\.0\.1|localhost|www\.w3\.org/)[^\s'"`)<>]+""")
"""An address outside this machine (an XML namespace such as SVG's is a name, not an address)."""


def quiet(page: Page, expected: str | None = None) -> None:
    """No console error since the last check, and (static site) no file the page asked for was missing.

    ``expected``: a pattern of the URLs whose failure the browser may log (Chromium logs every answer ≥ 400, such
    as the engine's 400 to a bad query); a JavaScript error or console.error is never expected."""
    errors = page.console_errors()
    missing = []
    if page.served is not None:
        missing = [(path, code) for path, code in page.served if code >= 400 and path != "/favicon.ico"]
        page.served.clear()
    if expected:
        errors = [e for e in errors if not (e.startswith("network: ") and re.search(expected, e))]
        missing = [(path, code) for path, code in missing if not re.search(expected, path)]
    assert errors == []
    assert missing == []


def drawn_events(page: Page) -> set[int]:
    return set(page.driver.execute_script(
        "return [...document.querySelectorAll('[data-event]')].map(e => Number(e.dataset.event))"))


def verdict_colour(page: Page) -> tuple[int, int, int]:
    """The colour the design's verdict is written in (the page's ``#design-verdict``), as (red, green, blue)."""
    colour = page.driver.execute_script(
        "return getComputedStyle(document.getElementById('design-verdict')).color")
    return tuple(int(part) for part in re.findall(r"\d+", colour)[:3])


def shown_command(page: Page) -> list[str]:
    """The arguments of the ``idemsim run …`` the page shows for its story (``#command``)."""
    words = shlex.split(page.driver.find_element("id", "command").text)
    assert words[:2] == ["idemsim", "run"], words
    return words[2:]


def first_201(page: Page) -> dict:
    """The first response 201 the page draws (a handler's answer to the client)."""
    return page.message(lambda m: "201" in m["what"] and m["from"].startswith("api") and not m["lost"])


@pytest.mark.parametrize("name", STORIES)
def test_every_default_story_shows_the_clis_summary(page, name):
    """The page shows each story's default run as the CLI does: state().summary is its JSON summary.

    On `idemsim serve` each story is opened fresh at ?scenario=NAME. On the static site a fresh page would draw the
    story embedded at build time (test_the_sites_embedded_stories_are_the_clis checks those files) and leaving it
    before Pyodide has loaded can crash Chromium's tab (Page.settle), so there the page is opened once and each
    story is chosen in its story picker, as a student does: the Pyodide engine runs each one in the browser."""
    if page.engine == "pyodide" and page.driver.current_url.startswith(page.base) and page.state():
        page.settle()
        state = page.state() if page.state()["scenario"] == name else page.pick("scenario", name)
    else:
        state = page.open(f"scenario={name}")
    assert (state["scenario"], state["variant"], state["lang"]) == (name, None, "en")
    assert state["summary"] == cli_summary(name)
    messages = page.messages()
    assert messages and {m["event"] for m in messages} <= drawn_events(page)
    assert all(set(m) == {"event", "from", "to", "what", "lost"} for m in messages)
    if name == "lost-response":
        page.screenshot("lost-response")
    quiet(page)


def test_the_sites_embedded_stories_are_the_clis(site_dir):
    """stories/NAME.LANG.json, the first picture of a fresh page on the static site: the CLI's summary (English),
    and one file for every shipped story in every language."""
    assert sorted(p.name for p in (Path(site_dir) / "stories").iterdir()) == sorted(
        f"{name}.{lang}.json" for name in STORIES for lang in ("en", "ja"))
    for name in STORIES:
        answer = json.loads((Path(site_dir) / "stories" / f"{name}.en.json").read_text(encoding="utf-8"))
        assert answer["state"]["summary"] == cli_summary(name), name


@pytest.mark.parametrize("design", LOST_RESPONSE_DESIGNS)
def test_lost_response_under_other_designs_shows_the_clis_summary(page, design):
    """?scenario=lost-response&design=D: the engine's run of that design, the CLI's summary."""
    state = page.open(f"scenario=lost-response&design={design}")
    assert state["design"] == design
    assert state["summary"] == cli_summary("lost-response", "--design", design)
    quiet(page)


def test_clicking_the_first_201_under_naive_charges_twice(page):
    """From no faults, a click on the first 201 loses it: the retry charges again (2 charges, broken, red)."""
    state = page.open("scenario=lost-response&design=naive&faults=")
    assert (state["faults"], state["summary"]["charges"]) == ("", 1)
    assert state["summary"] == cli_summary(*state_command(state))
    page.screenshot("naive-no-faults")

    state = page.click_message(first_201(page)["event"])
    assert state["summary"]["charges"] == 2 and state["summary"]["design_verdict"] == "broken"
    red, green, blue = verdict_colour(page)
    assert red > max(green, blue) + 60, (red, green, blue)
    assert state["faults"] == "lose:response@1.1"
    assert state["summary"] == cli_summary(*state_command(state)) == cli_summary(*shown_command(page))
    page.screenshot("naive-201-lost")

    again = page.open(url=page.driver.current_url)
    assert again == state
    quiet(page)


def test_same_tx_charges_once_and_a_crash_after_the_processor_captures_twice(page):
    """Under same-tx the lost 201 still makes one charge; crashing after the processor: one row, two captures."""
    state = page.open("scenario=lost-response&design=same-tx&faults=")
    state = page.click_message(first_201(page)["event"])
    assert state["summary"]["charges"] == 1 and state["summary"]["captures"] == 1
    assert state["summary"]["design_verdict"] == "holds"
    red, green, blue = verdict_colour(page)
    assert green > red, (red, green, blue)
    assert state["summary"] == cli_summary(*state_command(state))
    page.screenshot("same-tx-201-lost")

    state = page.call("crash", "api#1", "after_processor")
    assert (state["summary"]["charges"], state["summary"]["captures"]) == (1, 2)
    assert "crash:after_processor@1.1" in state["faults"]
    assert state["summary"]["design_verdict"] == "broken"
    assert state["summary"] == cli_summary(*state_command(state)) == cli_summary(*shown_command(page))
    assert page.driver.execute_script("return document.getElementById('details-body').hidden"), \
        "the side panel still shows an event of the run before (its numbers mean other events now)"
    page.screenshot("same-tx-crash-after-processor")

    url = page.driver.current_url
    again = page.open(url=url)
    assert again == state, url
    page.screenshot("same-tx-crash-reopened")
    quiet(page)


def test_losing_a_lost_message_changes_nothing(page):
    """lose(event) of a message already lost resolves with the same story."""
    state = page.open("scenario=lost-response")
    lost = page.message(lambda m: m["lost"])
    assert page.call("lose", lost["event"]) == state
    quiet(page)


def test_the_japanese_page_shows_the_articles_words(page):
    """?lang=ja: the story's Japanese title and article passage are on the page; the summary is `--lang ja`'s."""
    from idemsim.web.engine import answer

    state = page.open("scenario=lost-response&lang=ja")
    assert state["lang"] == "ja"
    assert state["summary"] == cli_summary("lost-response", "--lang", "ja")
    words = answer({"scenario": "lost-response", "lang": "ja"})
    text = page.text()
    assert words["title"] in text
    everything = page.driver.execute_script("return document.body.textContent")
    passage = words["article"].strip().splitlines()[0].strip()
    assert passage[:20] in everything
    page.screenshot("japanese")
    quiet(page)


@pytest.mark.parametrize("query", ["scenario=nope", "faults=lose:banana@1.1", "scenario=lost-response&design=nope"])
def test_bad_input_is_one_line_on_the_page(page, query):
    """An unknown scenario or design or a malformed fault: the engine's one line in #error, nothing on the console."""
    from idemsim.web.engine import handle

    status, body = handle("/api/run", dict(pair.split("=", 1) for pair in query.split("&")))
    assert status == 400
    page.get(page.url(query))
    shown = page.wait_error().strip()
    assert "\n" not in shown and body["error"] in shown
    page.ready()  # `ready` resolves once the error is shown, the pickers filled
    assert page.error_text().strip() == shown
    page.screenshot("error-" + re.sub(r"[^a-z]+", "-", query).strip("-"))
    quiet(page, expected=r"/api/run\?|/stories/nope\.")


def test_the_pyodide_engine_runs_every_story_as_the_cli_does(site_page):
    """engine.js's Pyodide engine, asked for each story's run (not the embedded one), gives the CLI's summary
    (on serve the answers are the CLI's own code in-process: tests/test_web_engine.py holds them to it)."""
    page = site_page
    page.open("scenario=lost-response")
    page.screenshot("first-picture")
    answers = page.driver.execute_async_script("""
        const [names, done] = [arguments[0], arguments[arguments.length - 1]];
        (async () => {
          const engine = await (await import(new URL("engine.js", location.href))).connect(() => {});
          const out = {kind: engine.kind, summaries: {}};
          for (const name of names) {
            out.summaries[name] = (await engine.run({scenario: name})).state.summary;
          }
          return out;
        })().then(done, (error) => done({error: String(error)}));
    """, STORIES)
    assert "error" not in answers, answers.get("error")
    assert answers["kind"] == "pyodide"
    wrong = [name for name in STORIES if answers["summaries"][name] != cli_summary(name)]
    assert wrong == []
    quiet(page)


def test_the_site_asks_nothing_of_the_network(site_page, site_dir):
    """The site's own files name no address outside 127.0.0.1, and the page fetched only from its own server."""
    page = site_page
    own = [p for p in Path(site_dir).iterdir() if p.suffix in {".html", ".js", ".mjs", ".css", ".json"}]
    assert any(p.name == "index.html" for p in own)
    found = {}
    for path in own:
        text = path.read_text(encoding="utf-8")
        if path.suffix in {".js", ".mjs", ".css"}:
            text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
            text = re.sub(r"(?m)^\s*//.*$", "", text)
        elif path.suffix == ".html":
            text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
        if path.name.startswith(("catalog.", "stories")):
            continue  # words of the catalogue, not fetched
        hits = OUTSIDE.findall(text)
        if hits:
            found[path.name] = hits
    assert found == {}
    page.open("scenario=lost-response&design=naive")
    fetched = page.driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    assert [url for url in fetched if not url.startswith(page.base)] == []
    engine = json.loads((Path(site_dir) / "engine.json").read_text(encoding="utf-8"))
    assert engine["engine"] == "pyodide"
    quiet(page)


def test_compare_shows_every_design_with_the_clis_verdict(page):
    """Compare designs: one panel per design, outlined broken exactly where `idemsim run --design D` breaks."""
    from selenium.webdriver.common.by import By

    from idemsim.model.designs import DESIGNS

    page.open("scenario=lost-response")
    page.driver.find_element(By.ID, "compare-button").click()

    def panels():
        return page.driver.find_elements(By.CSS_SELECTOR, ".panel[data-design]")

    page.wait_for(lambda: len(panels()) == len(DESIGNS), "the compare panels")
    shown = {p.get_attribute("data-design"): "broken" in p.get_attribute("class").split() for p in panels()}
    assert list(shown) == list(DESIGNS)
    assert shown == {design: cli_summary("lost-response", "--design", design)["design_verdict"] == "broken"
                     for design in DESIGNS}
    page.screenshot("compare")
    quiet(page)
