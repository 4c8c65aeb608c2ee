"""The page's engine: a query in, JSON-ready data out; the same code behind ``idemsim serve`` and in Pyodide.

A *query* is the page's URL query as a mapping of text: ``scenario`` (a shipped scenario's name; default
lost-response), ``design`` (a shipped design; default the story's), ``variant`` (default none: the main story),
``seed`` (an integer; default the story's), ``lang`` (en or ja; default en) and ``faults`` (absent: the story's
own faults; empty: none; else the fault syntax of `idemsim.scenario.fault_text`). Each is optional; an empty value
but for ``faults`` is as good as absent, and other keys are ignored. Only the shipped scenarios and designs can be
named: a query never reads a file nor loads code.

- `catalog` (lang): the shipped stories in the article's order, grouped as ``idemsim list`` groups them, and the
  designs with their crash points.
- `answer` (query): one run — its state (``summary`` is exactly the ``summary`` of ``idemsim run … --format
  json`` for that story), the canonical query and the equivalent command, the scene (`idemsim.views.scene`), the
  drawn messages each with the fault token that loses it, the handlers each with a token per crash point of the
  design, and every trace event with its SQL and its JSON line.
- `compare` (query): the same story and faults under every shipped design, in the registry's order.
- `handle` (path, query): ``/api/catalog``, ``/api/run`` or ``/api/compare`` as (200, data); bad input as (400,
  {"error": the CLI's one line}) and an unknown path as (404, {"error": …}), never an exception.

Guarantees: deterministic (the same query gives the same JSON, byte for byte); nothing here imports rich, typer,
matplotlib or hypothesis (Pyodide has none of them); everything returned is plain JSON data.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from ..base.errors import InputError
from ..base.i18n import LANGS, text
from ..base.printable import one_line, shown
from ..model.designs import DESIGNS, SHIPPED
from ..runners.simulation import Run, event_json, simulate
from ..scenario.fault_text import faults_text, parse_faults, with_faults
from ..scenario.schema import Scenario, builtin_names, load
from ..scenario.schema import variant as pick
from ..views.scene import scene

DEFAULT_SCENARIO = "lost-response"
PARAMS = ("scenario", "design", "variant", "seed", "lang", "faults")
"""The query's keys, in the order the canonical query writes them."""
_SEED = re.compile(r"-?\d{1,30}")


@dataclass(frozen=True)
class Query:
    """A query read and checked: what the user asked for (None: the story's own)."""

    scenario: str
    design: str | None
    variant: str | None
    seed: int | None
    lang: str
    faults: str | None


def _value(query: Mapping[str, Any], key: str) -> str | None:
    """The query's ``key`` as text (a number given by a script counts as its text); None when absent."""
    value = query.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return shown(value)
    return str(value)


def _lang(query: Mapping[str, Any]) -> str:
    """The query's language, English when it names none or one idemsim does not speak (for its error line)."""
    lang = _value(query, "lang")
    return lang if lang in LANGS else "en"


def read_query(query: Mapping[str, Any]) -> Query:
    """``query`` checked: an unknown language or a seed that is no integer is an `InputError` (the names of
    scenario, design and variant are checked when the story is loaded)."""
    given = {key: _value(query, key) for key in PARAMS}
    lang = given["lang"] or "en"
    if lang not in LANGS:
        raise InputError("err.web.lang", lang=shown(lang), langs=", ".join(LANGS))
    seed = given["seed"] or None
    if seed is not None and not _SEED.fullmatch(seed):
        raise InputError("err.web.seed", seed=shown(seed))
    return Query(given["scenario"] or DEFAULT_SCENARIO, given["design"] or None, given["variant"] or None,
                 None if seed is None else int(seed), lang, given["faults"])


def _scenario(name: str) -> Scenario:
    """A shipped scenario by name (never a path: a query reads no file of the user's)."""
    if name not in builtin_names():
        raise InputError("err.web.unknown_scenario", name=shown(name), names=", ".join(builtin_names()))
    return load(name)


def _design(name: str) -> str:
    if name not in SHIPPED:
        raise InputError("err.web.unknown_design", name=shown(name), designs=", ".join(SHIPPED))
    return name


@dataclass
class _Story:
    """The story a query names, ready to run: its own faults and design, and those the query gives."""

    query: Query
    story: Scenario
    own_faults: str
    """The canonical text of the story's own faults."""
    faults: str
    """The canonical text of the faults that run."""


def _story(q: Query) -> _Story:
    loaded = _scenario(q.scenario)
    story = pick(loaded, q.variant) if q.variant is not None else loaded
    own = faults_text(story.faults)
    faults = own
    if q.faults is not None:
        parsed = parse_faults(q.faults)
        faults = faults_text(parsed)
        if faults != own:
            story = with_faults(story, parsed)
    return _Story(q, story, own, faults)


def _canonical(s: _Story, design: str, seed: int) -> tuple[str, str]:
    """The canonical URL query and the equivalent ``idemsim run`` command of the story run under ``design`` and
    ``seed``: only what differs from the story's defaults is written (``faults`` whenever they differ from the
    story's own)."""
    q, story = s.query, s.story
    pairs: list[tuple[str, str]] = [("scenario", q.scenario)]
    words = ["idemsim", "run", shlex.quote(q.scenario)]
    if design != story.design:
        pairs.append(("design", design))
        words += ["--design", shlex.quote(design)]
    if q.variant is not None:
        pairs.append(("variant", q.variant))
        words += ["--variant", shlex.quote(q.variant)]
    if seed != story.seed:
        pairs.append(("seed", str(seed)))
        words += ["--seed", str(seed)]
    if q.lang != "en":
        pairs.append(("lang", q.lang))
    if s.faults != s.own_faults:
        pairs.append(("faults", s.faults))
        words += ["--faults", f"'{s.faults}'"]  # (the canonical text holds no quote)
    if q.lang != "en":
        words += ["--lang", q.lang]
    order = {key: i for i, key in enumerate(PARAMS)}
    pairs.sort(key=lambda pair: order[pair[0]])
    return urlencode(pairs, quote_via=quote, safe=":@,"), " ".join(words)


def _request(request_id: str) -> tuple[int, int]:
    """``"2.1"`` -> (2, 1): a request's operation and attempt."""
    op, _, attempt = request_id.partition(".")
    return int(op), int(attempt)


def _losing(m, answered: set[str]) -> str | None:
    """The fault token that loses the drawn message ``m``, or None where no fault can: a client's request or the
    answer to it (a duplicate's too: its operation is numbered after the written ones), the processor's first
    answer to a handler's call in an attempt. A handler's call to the processor, a background lookup and its
    answer, an answer the gateway dropped cannot be lost."""
    if m.kind == "request":
        return f"lose:request@{m.info['op']}.{m.info['attempt']}"
    if m.kind == "response":
        op, attempt = _request(m.info["request"])
        return f"lose:response@{op}.{attempt}"
    if m.kind == "processor.answer" and m.info.get("request") is not None and m.info["request"] not in answered:
        answered.add(m.info["request"])  # (a fault loses the first answer of an attempt's calls)
        op, attempt = _request(m.info["request"])
        return f"lose:processor_response@{op}.{attempt}"
    return None


def _result(s: _Story, run: Run, events: bool) -> dict[str, Any]:
    q, story = s.query, s.story
    query, command = _canonical(s, run.design, run.seed)
    drawn = scene(run, q.lang)
    answered: set[str] = set()
    messages = [{"event": m.event, "from": m.src, "to": m.dst, "what": m.what, "lost": m.arrived is None,
                 "fault": _losing(m, answered)} for m in drawn.messages]
    serving = {e.data["handler"]: e.data["request"] for e in run.trace if e.kind == "request.arrive"}
    points = DESIGNS[run.design].points
    handlers = []
    for lane in drawn.lanes:
        if lane.role == "handler" and lane.id in serving:
            op, attempt = _request(serving[lane.id])
            handlers.append({"lane": lane.id, "name": lane.name, "op": op, "attempt": attempt,
                             "crash": {point: f"crash:{point}@{op}.{attempt}" for point in points}})
    out = {
        "state": {"scenario": q.scenario, "design": run.design, "variant": story.variant, "seed": run.seed,
                  "lang": q.lang, "faults": s.faults, "summary": run.summary.to_dict()},
        "query": query,
        "command": command,
        "title": story.text("title", q.lang),
        "story": story.text("story", q.lang),
        "teaches": story.text("teaches", q.lang),
        "article": story.article,
        "scene": drawn.to_dict(),
        "messages": messages,
        "handlers": handlers,
    }
    if events:
        out["events"] = [_event(i, e) for i, e in enumerate(run.trace)]
    return _plain(out)


def _event(i: int, event) -> dict[str, Any]:
    data = event_json(event)
    return {"event": i, "t": data["t"], "actor": event.actor, "kind": event.kind, "sql": data["data"].get("sql"),
            "line": json.dumps(data, ensure_ascii=False, allow_nan=False)}


def _plain(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` as plain JSON data (lists for tuples, no shared objects), checked to be strict JSON."""
    return json.loads(json.dumps(document, ensure_ascii=False, allow_nan=False))


def answer(query: Mapping[str, Any]) -> dict[str, Any]:
    """One run of the story ``query`` names (see the module's docstring); bad input raises `InputError`."""
    s = _story(read_query(query))
    design = _design(s.query.design) if s.query.design is not None else s.story.design
    seed = s.query.seed if s.query.seed is not None else s.story.seed
    return _result(s, simulate(s.story, design, seed), events=True)


def compare(query: Mapping[str, Any]) -> dict[str, Any]:
    """The story ``query`` names, with its faults, under every shipped design in the registry's order: each an
    `answer` without its events (``design`` in the query is checked, and ignored)."""
    s = _story(read_query(query))
    if s.query.design is not None:
        _design(s.query.design)
    seed = s.query.seed if s.query.seed is not None else s.story.seed
    return {"designs": [_result(s, simulate(s.story, design, seed), events=False) for design in SHIPPED]}


def catalog(lang: str = "en") -> dict[str, Any]:
    """The shipped stories and designs in ``lang`` (see the module's docstring)."""
    if lang not in LANGS:
        raise InputError("err.web.lang", lang=shown(lang), langs=", ".join(LANGS))
    groups: dict[str, dict[str, Any]] = {}
    for name in builtin_names():
        loaded = load(name)
        entry = {"name": name, "title": loaded.text("title", lang), "summary": loaded.text("summary", lang),
                 "story": loaded.text("story", lang), "teaches": loaded.text("teaches", lang),
                 "article": loaded.article, "design": loaded.design, "seed": loaded.seed, "variants": []}
        for variant in loaded.variants:
            told = pick(loaded, variant)
            entry["variants"].append({"name": variant, "title": told.text("title", lang),
                                      "summary": told.text("summary", lang)})
        group = groups.setdefault(loaded.group, {"title": loaded.text("group", lang), "scenarios": []})
        group["scenarios"].append(entry)
    designs = [{"name": name, "title": DESIGNS[name].summary, "points": list(DESIGNS[name].points)}
               for name in SHIPPED]
    return _plain({"lang": lang, "langs": list(LANGS), "groups": [groups[g] for g in sorted(groups)],
                   "designs": designs, "ui": {}})


ROUTES = {"/api/catalog": lambda query: catalog(read_query(query).lang), "/api/run": answer,
          "/api/compare": compare}
"""What `handle` answers, by path."""


def handle(path: str, query: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """``path``'s answer to ``query``: (200, data), (400, {"error": line}) for bad input, in the query's language
    (English when it names none that idemsim speaks), or (404, {"error": line}) for a path it does not serve."""
    lang = _lang(query)
    route = ROUTES.get(path)
    try:
        if route is None:
            raise InputError("err.web.not_found", path=shown(path))
        return 200, route(query)
    except InputError as e:
        return (404 if route is None else 400), {"error": text("error", lang, message=one_line(e.said(lang)))}
