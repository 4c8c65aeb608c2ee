"""The page's engine (idemsim/web/engine.py): the same summary as the CLI, tokens that really lose what they say,
canonical queries and commands, one-line errors, and nothing Pyodide lacks."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from idemsim.model.designs import DESIGNS
from idemsim.runners.simulation import event_json, simulate
from idemsim.scenario.fault_text import parse_faults, with_faults
from idemsim.scenario.schema import builtin_names, load, runs
from idemsim.scenario.schema import variant as pick
from idemsim.web import engine

STORIES = [(name, story.variant) for name in builtin_names() for story in runs(load(name))]
SHIPPED = [name for name, spec in DESIGNS.items() if not spec.custom]


def query_of(name: str, variant: str | None = None, **more: str) -> dict[str, str]:
    return {"scenario": name, **({"variant": variant} if variant else {}), **more}


def run(query: dict[str, str]) -> dict:
    status, out = engine.handle("/api/run", query)
    assert status == 200, out
    return out


def cli_summary(cli, args: list[str]) -> dict:
    result = cli(*args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["summary"]


class TestTheSummaryIsTheCommandLines:
    @pytest.mark.parametrize("name, variant", STORIES)
    def test_every_shipped_story(self, cli, name, variant):
        """state.summary is exactly the summary of `idemsim run NAME [--variant V] --format json`."""
        out = run(query_of(name, variant))
        args = ["run", name] + (["--variant", variant] if variant else [])
        assert out["state"]["summary"] == cli_summary(cli, args)
        assert out["state"]["variant"] == variant and out["state"]["scenario"] == name

    @pytest.mark.parametrize("design", ["naive", "same-tx", "committed-first"])
    def test_three_designs_of_lost_response(self, cli, design):
        """The same under naive, same-tx and committed-first."""
        out = run({"design": design})
        assert out["state"]["summary"] == cli_summary(cli, ["run", "lost-response", "--design", design])
        assert out["state"]["design"] == design

    @pytest.mark.parametrize("query", [
        {},
        {"design": "naive", "faults": "lose:response@1.1"},
        {"design": "naive", "faults": ""},
        {"variant": "gateway-504", "seed": "7", "lang": "ja", "faults": "lose:response@1.1"},
        {"scenario": "same-tx-wait", "design": "check-then-insert", "faults": "duplicate@1+0.5,processor_error@1.1"},
        {"scenario": "crash-in-progress", "variant": "lease-recovery", "faults": "crash:after_key@1.1+2"},
        {"design": "same-tx", "faults": "delay:response@1.1+2.5,outage:503@2-3"},
        {"scenario": "key-reuse", "variant": "processor-refuses", "seed": "-4"},
    ])
    def test_the_command_shown_prints_the_same_summary(self, cli, query):
        """The page's `command`, run with --format json, prints the state's summary."""
        out = run(query)
        words = shlex.split(out["command"])
        assert words[:2] == ["idemsim", "run"]
        assert out["state"]["summary"] == cli_summary(cli, words[1:])


class TestCanonicalQueryAndCommand:
    def test_only_what_differs_from_the_story_is_written(self):
        """The contract's example: design, variant, seed, faults and language in the documented order."""
        out = run({"lang": "ja", "faults": "lose:response@1", "seed": "7", "variant": "gateway-504",
                   "design": "naive", "scenario": "lost-response"})
        assert out["query"] == ("scenario=lost-response&design=naive&variant=gateway-504&seed=7&lang=ja"
                                "&faults=lose:response@1.1")
        assert out["command"] == ("idemsim run lost-response --design naive --variant gateway-504 --seed 7 "
                                  "--faults 'lose:response@1.1' --lang ja")

    def test_the_storys_own_values_are_left_out(self):
        """A query that names the story's own design, seed and faults is the story's plain query."""
        out = run({"design": "same-tx", "seed": "1", "faults": "lose:response@1.1", "lang": "en"})
        assert (out["query"], out["command"]) == ("scenario=lost-response", "idemsim run lost-response")
        assert out["state"]["faults"] == "lose:response@1.1"

    def test_no_faults_is_written_as_an_empty_faults(self):
        """`faults=` (none) differs from the story's own, so it is written."""
        out = run({"faults": ""})
        assert (out["query"], out["command"]) == ("scenario=lost-response&faults=",
                                                  "idemsim run lost-response --faults ''")
        assert out["state"]["faults"] == ""

    def test_a_plus_is_escaped_in_the_query(self):
        """A delay's `+` would read as a space in a URL: it is written %2B, and the query reads back."""
        out = run({"faults": "delay:response@1.1+2.5"})
        assert out["query"] == "scenario=lost-response&faults=delay:response@1.1%2B2.5"
        again = {k: v[0] for k, v in parse_qs(out["query"], keep_blank_values=True).items()}
        assert run(again)["state"] == out["state"]

    @pytest.mark.parametrize("query", [{"faults": ""}, {"variant": "gateway-504", "design": "naive"},
                                       {"scenario": "same-tx-wait", "faults": "duplicate@1+0.25", "lang": "ja"}])
    def test_the_canonical_query_gives_the_same_answer(self, query):
        """Opening the canonical query again reproduces the state, byte for byte."""
        out = run(query)
        again = run({k: v[0] for k, v in parse_qs(out["query"], keep_blank_values=True).items()})
        assert json.dumps(again) == json.dumps(out)


class TestMessages:
    def test_every_drawn_message_is_listed_in_scene_order(self):
        """One entry per scene message, with its trace index, parties, words and fate."""
        out = run({"design": "naive"})
        assert [(m["event"], m["from"], m["to"], m["what"], m["lost"]) for m in out["messages"]] == [
            (m["event"], m["src"], m["dst"], m["what"], m["arrived"] is None) for m in out["scene"]["messages"]]
        assert [m["fault"] for m in out["messages"]] == [
            "lose:request@1.1", None, "lose:processor_response@1.1", "lose:response@1.1", "lose:request@1.2", None,
            "lose:processor_response@1.2", "lose:response@1.2"]
        assert out["messages"][3]["lost"] and not out["messages"][7]["lost"]

    @pytest.mark.parametrize("name, variant", STORIES)
    def test_a_message_is_drawn_once_for_its_event(self, name, variant):
        """Each message has its own trace index (the page's data-event)."""
        events = [m["event"] for m in run(query_of(name, variant))["messages"]]
        assert len(events) == len(set(events)) and all(e >= 0 for e in events)

    def losing_checked(self, query: dict[str, str]) -> int:
        """Add each offered token to the faults that ran, re-run, and check that the message is lost by it."""
        out = run(query)
        story = load(query.get("scenario", "lost-response"))
        if query.get("variant"):
            story = pick(story, query["variant"])
        checked = 0
        for m in out["messages"]:
            if m["fault"] is None or m["lost"]:
                continue
            faults = parse_faults(out["state"]["faults"]) + parse_faults(m["fault"])
            again = simulate(with_faults(story, faults), out["state"]["design"], out["state"]["seed"])
            added = len(faults) - 1
            assert added in again.fired, (m, "the token never fired")
            lost = [e for e in again.trace if e.kind.endswith(".lost") and e.data.get("fault") == added]
            assert len(lost) == 1, m
            kind = {"lose:request": "request.lost", "lose:response": "response.lost",
                    "lose:processor_response": "processor.lost"}[m["fault"].partition("@")[0]]
            assert lost[0].kind == kind
            relosing = run({**query, "faults": ",".join(filter(None, [out["state"]["faults"], m["fault"]]))})
            assert [x["lost"] for x in relosing["messages"] if x["fault"] == m["fault"]] == [True]
            checked += 1
        return checked

    @pytest.mark.parametrize("design", ["naive", "same-tx"])
    def test_each_offered_token_loses_its_message_in_lost_response(self, design):
        """Adding a message's `fault` to the faults and running again loses that very message."""
        assert self.losing_checked({"design": design, "faults": ""}) == 3

    def test_a_duplicates_messages_are_numbered_after_the_operations(self):
        """A duplicate's request and answer are operation 2's (the fault model numbers copies after the written
        operations), and its token loses them."""
        out = run({"scenario": "same-tx-wait"})
        dup = [m["fault"] for m in out["messages"] if "client-dup" in (m["from"], m["to"])]
        assert dup == ["lose:request@2.1", "lose:response@2.1"]
        assert self.losing_checked({"scenario": "same-tx-wait"}) == 5

    @pytest.mark.slow
    @pytest.mark.parametrize("name, variant", STORIES)
    def test_each_offered_token_loses_its_message_in_every_story(self, name, variant):
        """So in every shipped story and variant."""
        self.losing_checked(query_of(name, variant))


class TestHandlers:
    def test_each_handler_is_offered_its_designs_crash_points(self):
        """One entry per handler lane, the attempt it serves, a token per crash point of the design."""
        out = run({"design": "naive", "faults": "lose:response@1.1"})
        assert out["handlers"] == [
            {"lane": f"api#{n}", "name": f"API #{n}", "op": 1, "attempt": n,
             "crash": {"after_processor": f"crash:after_processor@1.{n}", "after_charge": f"crash:after_charge@1.{n}"}}
            for n in (1, 2)]
        ja = run({"design": "naive", "lang": "ja"})
        assert [h["name"] for h in ja["handlers"]] == ["決済 API #1", "決済 API #2"]

    def test_crashing_same_tx_after_the_processor_gives_one_row_and_two_captures(self):
        """The contract's click: crash same-tx's first handler after the processor."""
        out = run({"faults": ""})
        token = out["handlers"][0]["crash"]["after_processor"]
        crashed = run({"faults": token})
        summary = crashed["state"]["summary"]
        assert (summary["charges"], summary["captures"]) == (1, 2)
        assert summary["faults"] == [{"fault": "crash the API at after_processor of op 1 attempt 1, restart "
                                               "after 1 s", "fired": True}]

    @pytest.mark.parametrize("design", SHIPPED)
    def test_every_point_of_every_design_is_a_fault_that_reads(self, design):
        """Every token offered parses, and names the handler's attempt."""
        out = run({"design": design, "faults": ""})
        for handler in out["handlers"]:
            assert list(handler["crash"]) == list(DESIGNS[design].points)
            for point, token in handler["crash"].items():
                (fault,) = parse_faults(token)
                assert (fault.point, fault.op, fault.attempt) == (point, handler["op"], handler["attempt"])


class TestEvents:
    def test_every_trace_event_with_its_sql_and_its_line(self):
        """One entry per trace event, in order; a DB event carries its SQL; the line is the event's JSON."""
        out = run({})
        trace = simulate(load("lost-response")).trace
        assert [e["event"] for e in out["events"]] == list(range(len(trace)))
        for entry, event in zip(out["events"], trace):
            data = event_json(event)
            assert json.loads(entry["line"]) == json.loads(json.dumps(data))
            assert "\n" not in entry["line"]
            assert (entry["actor"], entry["kind"], entry["t"]) == (event.actor, event.kind, data["t"])
            assert entry["sql"] == data["data"].get("sql")
        assert any(e["sql"] and e["sql"].startswith("INSERT") for e in out["events"])


class TestCompare:
    def test_the_same_faults_under_every_design_in_the_registrys_order(self):
        """One answer per shipped design, without events; lost-response without its fault: one charge each."""
        out = engine.compare({"faults": ""})
        assert [d["state"]["design"] for d in out["designs"]] == SHIPPED
        assert all("events" not in d and d["state"]["faults"] == "" for d in out["designs"])
        assert [d["state"]["summary"]["charges"] for d in out["designs"]] == [1] * len(SHIPPED)
        lost = engine.compare({})
        assert lost["designs"][0]["state"]["summary"]["charges"] == 2

    def test_each_design_is_its_own_answer(self):
        """A comparison's design is the answer that design's query gives (but the events)."""
        one = engine.compare({"variant": "gateway-504"})["designs"][1]
        alone = run({"variant": "gateway-504", "design": one["state"]["design"]})
        del alone["events"]
        assert one == alone


class TestCatalog:
    def test_the_stories_in_the_articles_order_and_the_designs(self):
        """Every shipped scenario once, groups in order, variants with their words, designs with their points."""
        out = engine.catalog("en")
        names = [s["name"] for g in out["groups"] for s in g["scenarios"]]
        assert sorted(names) == builtin_names()
        assert [g["title"][:2] for g in out["groups"]] == [f"{n}." for n in range(1, len(out["groups"]) + 1)]
        lost = next(s for s in out["groups"][0]["scenarios"] if s["name"] == "lost-response")
        assert (lost["design"], lost["seed"]) == ("same-tx", 1)
        assert lost["variants"][0]["name"] == "gateway-504" and lost["variants"][0]["title"]
        assert lost["article"] and lost["story"] and lost["teaches"]
        assert [(d["name"], d["points"]) for d in out["designs"]] == [(n, list(DESIGNS[n].points)) for n in SHIPPED]
        assert (out["lang"], out["langs"]) == ("en", ["en", "ja"])

    def test_in_japanese(self):
        """The article's words."""
        out = engine.catalog("ja")
        assert out["groups"][0]["title"] == "1. 再送だけで足りない理由"
        assert engine.handle("/api/catalog", {"lang": "ja"}) == (200, out)


class TestBadInput:
    @pytest.mark.parametrize("query, start", [
        ({"scenario": "nope"}, "error: unknown scenario 'nope'"),
        ({"scenario": "/etc/passwd"}, "error: unknown scenario '/etc/passwd'"),
        ({"scenario": "scenarios/lost-response.toml"}, "error: unknown scenario"),
        ({"design": "nope"}, "error: unknown design 'nope'"),
        ({"design": "evil.py:handler"}, "error: unknown design 'evil.py:handler'"),
        ({"variant": "nope"}, "error: scenario 'lost-response' has no variant 'nope'"),
        ({"seed": "seven"}, "error: seed 'seven': must be an integer"),
        ({"seed": "1.5"}, "error: seed '1.5'"),
        ({"lang": "fr"}, "error: unknown language 'fr'; languages: en, ja"),
        ({"faults": "lose:everything"}, "error: bad fault 'lose:everything'"),
        ({"faults": "duplicate@5"}, "error: scenario 'lost-response', --faults 'duplicate@5'"),
    ])
    def test_a_bad_query_is_400_and_the_command_lines_one_line(self, query, start):
        """Never an exception: (400, {"error": line})."""
        status, out = engine.handle("/api/run", query)
        assert status == 400 and list(out) == ["error"]
        assert out["error"].startswith(start) and "\n" not in out["error"]
        assert engine.handle("/api/compare", query)[0] == 400

    def test_in_the_querys_language(self):
        """A Japanese page gets its errors in Japanese."""
        status, out = engine.handle("/api/run", {"lang": "ja", "scenario": "nope"})
        assert status == 400 and out["error"].startswith("エラー: ")

    def test_an_unknown_path_is_404(self):
        """Only the three API paths are answered."""
        assert engine.handle("/api/nope", {}) == (404, {"error": "error: no such page: '/api/nope'"})

    def test_other_keys_and_empty_values_are_as_good_as_absent(self):
        """The page may carry more in its URL; `design=` is the story's design."""
        assert run({"design": "", "seed": "", "variant": "", "t": "3.5"})["state"] == run({})["state"]


class TestPurity:
    def test_the_same_query_gives_the_same_json(self):
        """Deterministic, byte for byte."""
        query = {"scenario": "same-tx-wait", "faults": "duplicate@1+0.25", "lang": "ja"}
        assert json.dumps(engine.answer(query)) == json.dumps(engine.answer(query))
        assert json.dumps(engine.compare(query)) == json.dumps(engine.compare(query))

    def test_answers_are_strict_json(self):
        """Plain JSON data, no NaN."""
        out = engine.answer({})
        assert json.loads(json.dumps(out, allow_nan=False)) == out

    @pytest.mark.slow
    def test_the_engine_needs_neither_rich_typer_matplotlib_nor_hypothesis(self):
        """It runs where those cannot be imported (Pyodide has only SimPy and pydantic)."""
        code = ("import sys\n"
                "for name in ('rich', 'typer', 'matplotlib', 'hypothesis', 'click', 'numpy'):\n"
                "    sys.modules[name] = None\n"
                "from idemsim.web import engine\n"
                "out = engine.answer({'design': 'naive', 'lang': 'ja'})\n"
                "assert engine.compare({})['designs'] and engine.catalog('ja')['groups']\n"
                "assert engine.handle('/api/run', {'scenario': 'x'})[0] == 400\n"
                "print(out['state']['summary']['charges'])\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "2"


class TestTheDocs:
    DOC = (Path(__file__).resolve().parent.parent / "docs" / "web.md").read_text(encoding="utf-8")

    def test_the_python_example_runs_and_says_what_it_shows(self):
        """docs/web.md's engine example runs; the error it quotes begins as the engine's does."""
        code = re.search(r"```text\n(from idemsim.web import engine\n.*?)```", self.DOC, re.S).group(1)
        lines = code.strip().splitlines()
        namespace: dict = {}
        exec("\n".join(lines[:-1]), namespace)
        said = re.search(r"# \((400), \{\"error\": \"(.*?)…\"\}\)", lines[-1])
        status, out = eval(lines[-1].partition("#")[0], namespace)
        assert (status, out["error"][:len(said.group(2))]) == (int(said.group(1)), said.group(2))

    def test_the_command_shown_is_the_engines_for_its_query(self):
        """The command docs/web.md shows is the one the engine gives for the query it stands for."""
        shown = re.search(r"```sh\n(idemsim run .*?) --format json\n```", self.DOC).group(1)
        out = run({"scenario": "lost-response", "design": "naive", "variant": "gateway-504", "seed": "7",
                   "lang": "ja", "faults": "lose:response@1.1"})
        assert out["command"] == shown
