"""The search for a counterexample: runs chosen by Hypothesis, or every schedule of a small universe.

`search` lets Hypothesis choose whole runs (`idemsim.runners.strategies.schedules`) for one design, judges each with
`idemsim.judge.properties.check`, and on the first violation shrinks it to the fewest faults on the plainest
timings. `exhaustive` instead enumerates every schedule of at most K faults drawn from `universe`: one logical
operation, at most 3 attempts, the loss of each request and each response, a crash at each named point of each
attempt, and a concurrent duplicate at each of a few time slots; it stops at the first counterexample, which
therefore has the fewest faults the universe allows.

Both start from `base_raw`, the documented default configuration (correct for ``same-tx``: one key per
operation, fingerprint check on, retention longer than the retry window; for ``committed-first`` a lease
longer than the longest handler time), with the user's ``--set`` overrides applied last, so that a field the
user sets is never varied by the search.

Guarantees: reproducible: the same design, overrides, seed and budget give the same examples in the same
order and the same counterexample (Hypothesis is seeded with the seed, its example database is off, and every
run uses ``random.Random(seed)``); a counterexample is 1-minimal (it keeps only faults that happened, and
removing any one of them breaks no property, see `reduce`); it comes with an ``idemsim run`` command that needs
no file and shows it again, exiting 1 as the exploration does (`reproduce_words`: a shipped story,
`REPRODUCE_STORY`, with ``--set``s that make it this run, its expectations left out), and `save` writes it
atomically as a scenario file that ``idemsim run FILE`` replays, stating what it shows and the properties it
breaks (so that the replay exits 0 while it reproduces it); both are checked, before the counterexample is
reported, by running them: the same trace, event for event.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel

from ..base.errors import InputError
from ..base.i18n import text as t
from ..base.output import check_output, write_output
from ..base.readers import label, parse_toml
from ..judge.properties import PROPERTIES, Violation, check, describe_violation
from ..model.designs import DESIGNS, completer_period, recovery_lease, resolve_design
from ..model.faults import CRASH_POINTS, Crash, Duplicate, LoseMessage
from ..scenario.schema import Scenario, apply_sets, deep_merge, load, validate
from .simulation import Run, simulate

DEFAULT_SEED = 1
DEFAULT_MAX_EXAMPLES = 200
DEFAULT_MAX_FAULTS = {"search": 5, "exhaustive": 3}
MAX_EXHAUSTIVE_FAULTS = 5
"""Above this the exhaustive mode would take many minutes (sum of C(28, k) for k <= 5 is 122,438 schedules)."""
EXPLORE_LEASE = 10.0
"""The default lease of a design with ``lease_recovery`` (committed-first): longer than the longest handler time
the search chooses (1 s)."""
KEY = "k-8f3a"

UNIVERSE_ATTEMPTS = 3
UNIVERSE_DUPLICATE_SLOTS = (0.0, 0.1, 0.3, 2.5)
"""Start times of a concurrent duplicate in the exhaustive universe: together with the first attempt, while
its transaction is open (the charge takes 0.2 s from 0.05 s), just after it commits, and with the retry."""
UNIVERSE_RESTART = 1.0
"""Seconds a crashed API stays down in the exhaustive universe (it is back before the first retry)."""


# -- the configuration ------------------------------------------------------------------------------------------
def base_raw(design: str, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The default scenario of an exploration, as a raw (TOML-shaped) dict: a client that sends a key if the
    design ``stores_keys``, and a lease if it has ``lease_recovery``."""
    spec = DESIGNS[resolve_design(design)]
    api: dict[str, Any] = {"charge_seconds": 0.2, "fingerprint_check": True, "ttl": 86400.0, "reap_every": 60.0}
    if spec.lease_recovery:
        api["lease"] = EXPLORE_LEASE
    return {
        "name": f"explore-{design}",
        "title": f"Exploring {design}",
        "summary": f"A run of {design} chosen by `idemsim explore`.",
        "group": "counterexamples",
        "design": design,
        "seed": seed,
        "client": {"key_strategy": "per-operation" if spec.stores_keys else "none", "timeout": 2.0,
                   "max_attempts": 3, "backoff": 0.5, "jitter": "none", "retry_window": 60.0},
        "operations": [{"method": "POST", "path": "/charges", "body": {"amount": 1000},
                        **({"key": KEY} if spec.stores_keys else {})}],
        "api": api,
        "faults": [],
    }


def base_scenario(design: str, sets: list[str] | None = None, seed: int = DEFAULT_SEED, *,
                  max_time: float | None = None) -> Scenario:
    """The default scenario of ``design`` with ``sets`` applied, validated (every time against ``max_time``,
    default the usual bound); bad input raises `InputError`."""
    design = resolve_design(design)
    raw = apply_sets(base_raw(design, seed), sets or [])
    raw["design"], raw["seed"] = design, seed
    scenario = validate(raw, "explore", max_time=max_time, sets=sets)
    _check_saveable(scenario)
    return scenario


def scenario_for(design: str, schedule, sets: list[str] | None = None, seed: int = DEFAULT_SEED, *,
                 max_time: float | None = None) -> Scenario:
    """The scenario of one searched run: the defaults, then the schedule's choices, then the user's ``sets``."""
    raw = deep_merge(base_raw(design, seed), schedule.overrides())
    raw = apply_sets(raw, sets or [])
    raw["design"], raw["seed"] = design, seed
    return validate(raw, "explore", max_time=max_time)


# -- one judged run ---------------------------------------------------------------------------------------------
@dataclass
class Counterexample:
    """A run that broke a property, reduced by `reduce`."""

    run: Run
    violations: list[Violation]
    saved: str | None = None
    """The scenario file it was saved to."""
    words: list[str] = field(default_factory=list)
    """The ``idemsim run`` command that shows it again without a file (`reproduce_words`, checked)."""

    @property
    def faults(self) -> list:
        return list(self.run.scenario.faults)

    def replay_command(self) -> str:
        return shlex.join(_run_words(self.saved, self.run.scenario._max_time)) if self.saved else ""

    def reproduce_command(self) -> str:
        """The command printed after ``reproduce:``, saved or not: ``idemsim run`` of `REPRODUCE_STORY` with the
        ``--set``s that make it this run; it states no expectation, so it exits 1 as the exploration did."""
        return shlex.join(self.words)

    def to_dict(self) -> dict[str, Any]:
        return {"faults": [f.model_dump(mode="json") for f in self.faults],
                "described": [f.describe() for f in self.faults],
                "violations": [v.to_dict() for v in self.violations],
                "saved": self.saved, "replay": self.replay_command(), "reproduce": self.reproduce_command(),
                "summary": self.run.summary.to_dict(), "trace": self.run.trace_json()}


def judged_properties(names: list[str] | None) -> tuple[str, ...]:
    """The properties an exploration judges: the ``--property`` names given (each checked), else all."""

    for name in names or ():
        if name not in PROPERTIES:
            raise InputError("err.property", name=repr(name), allowed=", ".join(PROPERTIES))
    return tuple(name for name in PROPERTIES if not names or name in names)


def judge(scenario: Scenario, design: str, seed: int,
          properties: tuple[str, ...] | None = None, trace: bool = False) -> tuple[Run, list[Violation]]:
    """One run and the violations of the judged ``properties`` (default: all); the run keeps its trace only
    with ``trace`` (a counterexample's, which is shown and saved)."""
    run = simulate(scenario, design, seed, trace=trace)
    return run, [v for v in check(run) if properties is None or v.property in properties]


def reduce(run: Run, base: Scenario, properties: tuple[str, ...] | None = None) -> tuple[Counterexample, int]:
    """The counterexample made minimal, and the runs that took.

    First only the faults that happened are kept (the others changed nothing); then, greedily, any single
    fault whose removal still breaks a property is removed, and any timing section (client, network, api)
    that can go back to ``base``'s is put back, until neither helps. The result is 1-minimal: dropping any one
    of its faults gives a run that breaks no property. Hypothesis's shrinking usually gets there alone; this
    makes it a guarantee.
    """
    fired = sorted(set(run.fired))
    best = run.scenario.model_copy(update={"faults": [run.scenario.faults[i] for i in fired]})
    best_run, best_violations = judge(best, run.design, run.seed, properties)
    runs = 1
    if not best_violations:  # cannot happen: a fault that never fired changed nothing
        return _found(*judge(run.scenario, run.design, run.seed, properties, trace=True)), runs
    improved = True
    while improved:
        improved = False
        candidates = [best.model_copy(update={"faults": best.faults[:i] + best.faults[i + 1:]})
                      for i in range(len(best.faults))]
        candidates += [best.model_copy(update={section: getattr(base, section)})
                       for section in ("client", "network", "api")
                       if getattr(best, section) != getattr(base, section)]
        for candidate in candidates:
            candidate_run, violations = judge(candidate, run.design, run.seed, properties)
            runs += 1
            if violations:
                best, best_run, best_violations, improved = candidate, candidate_run, violations, True
                break
    if best_run.trace is None:  # the runs above keep no trace; the counterexample is shown and saved with one
        best_run = simulate(best, run.design, run.seed)
    return _found(best_run, best_violations), runs


def _found(run: Run, violations: list[Violation]) -> Counterexample:
    """The counterexample of ``run`` (traced), with its file-free command, checked to give the same trace."""
    sets = reproduce_sets(run.scenario)
    words = reproduce_words(run, sets)
    again = simulate(load(REPRODUCE_STORY, sets, max_time=run.scenario._max_time), run.design, run.seed)
    if again.trace.to_json() != run.trace.to_json():
        raise RuntimeError(f"{shlex.join(words)}: does not give the counterexample's run")
    return Counterexample(run, violations, words=words)


# -- the Hypothesis search --------------------------------------------------------------------------------------
@dataclass
class Exploration:
    """What a search or an exhaustive enumeration did and found."""

    design: str
    seed: int
    mode: str
    counterexample: Counterexample | None
    examples: int = 0
    """Runs judged before the first counterexample (all of them when none was found)."""
    shrink_runs: int = 0
    """Further runs spent shrinking the counterexample."""
    universe: list = field(default_factory=list)
    """Exhaustive mode: the faults schedules are drawn from."""
    max_faults: int = 0
    schedules: int = 0
    """Exhaustive mode: how many schedules of at most ``max_faults`` faults the universe has."""
    effective: int = 0
    """Exhaustive mode: schedules checked in which every fault happened (the others repeat a smaller one)."""
    properties: tuple = ()
    """The properties judged (all unless ``--property`` named some)."""

    @property
    def verdict(self) -> str:
        if self.counterexample is not None:
            return "counterexample"
        return "proved" if self.mode == "exhaustive" else "none found"

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"design": self.design, "seed": self.seed, "mode": self.mode,
                               "verdict": self.verdict, "valid": self.counterexample is None,
                               "max_faults": self.max_faults, "properties": list(self.properties)}
        if self.mode == "exhaustive":
            doc.update(universe={"faults": len(self.universe), "schedules": self.schedules,
                                 "described": [f.describe() for f in self.universe]},
                       schedules_checked=self.examples, schedules_effective=self.effective)
        else:
            doc.update(examples=self.examples, shrink_runs=self.shrink_runs)
        doc["counterexample"] = self.counterexample.to_dict() if self.counterexample else None
        return doc


class _Found(AssertionError):
    """Raised inside the Hypothesis test when a run breaks a property."""


def search(design: str, sets: list[str] | None = None, *, max_examples: int = DEFAULT_MAX_EXAMPLES,
           seed: int = DEFAULT_SEED, max_faults: int = DEFAULT_MAX_FAULTS["search"],
           properties: list[str] | None = None, max_time: float | None = None) -> Exploration:
    """Let Hypothesis choose up to ``max_examples`` runs; shrink the first that breaks a property."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed

    from .strategies import schedules  # (lazy: imports hypothesis, loaded when a search starts)

    sets = list(sets or [])
    base = base_scenario(design, sets, seed, max_time=max_time)  # bad input fails here, before any example
    judged = judged_properties(properties)
    ops = 1
    state: dict[str, Any] = {"examples": 0, "shrink": 0, "last": None, "error": None}

    @settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
              phases=(Phase.explicit, Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False)
    @hypothesis_seed(seed)
    @given(schedules(max_faults=max_faults, ops=ops, points=DESIGNS[design].points or CRASH_POINTS))
    def probe(schedule) -> None:
        if state["error"] is not None:
            return  # a run passed its bound: the search is over, the remaining examples cost nothing
        if state["last"] is None:
            state["examples"] += 1
        else:
            state["shrink"] += 1
        try:
            run, violations = judge(scenario_for(design, schedule, sets, seed, max_time=max_time), design, seed,
                                    judged)
        except InputError as error:  # kept, not shrunk: every further run might take seconds to reach the bound
            state["error"] = error
            return
        if violations:
            state["last"] = run
            raise _Found(violations[0])

    with _no_files_in_the_working_directory():
        try:
            probe()
        except _Found:
            pass
    if state["error"] is not None:
        raise state["error"]
    result = Exploration(design, seed, "search", None, state["examples"], max(0, state["shrink"] - 1),
                          max_faults=max_faults, properties=judged)
    if state["last"] is not None:
        result.counterexample, runs = reduce(state["last"], base, judged)
        result.shrink_runs += runs
    return result


@contextmanager
def _no_files_in_the_working_directory() -> Iterator[None]:
    """Hypothesis keeps an example database and a cache of constants under ``.hypothesis/`` in the working
    directory. A search needs neither (its database is off): while it runs, Hypothesis's storage is a temporary
    directory, removed afterwards, and then Hypothesis's own storage is put back (a test session or a notebook
    that uses Hypothesis keeps its own). Whether pytest is loaded says nothing: Hypothesis 6.170 imports it."""

    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

    before = storage_directory(intent_to_write=False).home_directory
    home = tempfile.mkdtemp(prefix="idemsim-hypothesis-")
    set_hypothesis_home_dir(home)
    try:
        yield
    finally:
        set_hypothesis_home_dir(before)
        shutil.rmtree(home, ignore_errors=True)


# -- the exhaustive enumeration ---------------------------------------------------------------------------------
def universe(attempts: int = UNIVERSE_ATTEMPTS, points: tuple[str, ...] = CRASH_POINTS) -> list:
    """The faults of the exhaustive mode, in the order schedules are enumerated (plainest first); the crash
    points are the design's own (the shipped ones: `CRASH_POINTS`)."""
    out: list = []
    for attempt in range(1, attempts + 1):
        out += [LoseMessage(attempt=attempt, message=m) for m in ("request", "response", "processor_response")]
    out += [Duplicate(at=at) for at in UNIVERSE_DUPLICATE_SLOTS]
    for attempt in range(1, attempts + 1):
        out += [Crash(attempt=attempt, point=point, restart_after=UNIVERSE_RESTART) for point in points]
    return out


def count_schedules(n: int, k: int) -> int:

    return sum(comb(n, i) for i in range(min(k, n) + 1))


def exhaustive(design: str, sets: list[str] | None = None, *, max_faults: int = DEFAULT_MAX_FAULTS["exhaustive"],
               seed: int = DEFAULT_SEED, properties: list[str] | None = None, executor=None,
               max_time: float | None = None) -> Exploration:
    """Judge every schedule of at most ``max_faults`` faults of `universe`, fewest faults first, and stop at
    the first that breaks a judged property. With an ``executor`` (a process pool, a Dask cluster) the
    schedules are judged in chunks side by side; the result is the same, counts included: the first
    counterexample in enumeration order, and what was checked up to it."""
    base = base_scenario(design, sets, seed, max_time=max_time)
    judged = judged_properties(properties)
    faults = universe(points=DESIGNS[design].points or CRASH_POINTS)
    result = Exploration(design, seed, "exhaustive", None, universe=faults, max_faults=max_faults,
                          schedules=count_schedules(len(faults), max_faults), properties=judged)
    combos = [combo for k in range(min(max_faults, len(faults)) + 1)
              for combo in itertools.combinations(range(len(faults)), k)]
    chunks = [combos[i:i + EXHAUSTIVE_CHUNK] for i in range(0, len(combos), EXHAUSTIVE_CHUNK)]
    if executor is None:
        outcomes = (judge_chunk(base, design, seed, judged, faults, chunk) for chunk in chunks)
    else:
        futures = [executor.submit(judge_chunk, base, design, seed, judged, faults, chunk) for chunk in chunks]
        outcomes = (future.result() for future in futures)
    for chunk, (checked, effective, failing) in zip(chunks, outcomes):
        result.examples += checked
        result.effective += effective
        if failing is not None:
            scenario = base.model_copy(update={"faults": [faults[i] for i in chunk[failing]]})
            run, _ = judge(scenario, design, seed, judged)
            result.counterexample, _ = reduce(run, base, judged)
            break
    return result


EXHAUSTIVE_CHUNK = 400
"""Schedules an executor's worker judges at a time."""


def judge_chunk(base: Scenario, design: str, seed: int, judged: tuple[str, ...], faults: list,
                chunk: list[tuple[int, ...]]) -> tuple[int, int, int | None]:
    """Judge the schedules of ``chunk`` (tuples of indices into ``faults``) in order, up to the first that
    breaks a property: how many were checked, in how many every fault happened, and the failing one's
    position in the chunk (None if all held). A design from a file is loaded first: a Dask worker's process
    has not seen it."""
    design = resolve_design(design)
    effective = 0
    for position, combo in enumerate(chunk):
        run, violations = judge(base.model_copy(update={"faults": [faults[i] for i in combo]}), design, seed,
                                judged)
        effective += len(set(run.fired)) == len(combo)
        if violations:
            return position + 1, effective, position
    return len(chunk), effective, None


# -- the command that shows it again ----------------------------------------------------------------------------
REPRODUCE_STORY = "lost-response"
"""The shipped story a counterexample's file-free ``idemsim run`` starts from: one charge and its retries, close to
an exploration's defaults, so that few ``--set``s make it the counterexample's run."""
REPRODUCE_CLEARED = ["variants={}", "expect={}"]
"""What the command takes away from `REPRODUCE_STORY`: its variants (only this run is run) and its
expectations (they are the story's, not the counterexample's): ``idemsim run`` judges the properties alone."""


def reproduce_sets(scenario: Scenario) -> list[str]:
    """The ``--set``s that make `REPRODUCE_STORY`'s main story ``scenario``'s run: its name (so that the run is
    shown as the exploration showed it), its faults (always, whole: they are the counterexample), its operations
    (whole) if they differ, each field of the client, network, API and processor that differs, then
    `REPRODUCE_CLEARED`."""
    base = load(REPRODUCE_STORY, REPRODUCE_CLEARED)
    sets: list[str] = [f"name={_set_value(scenario.name)}"]
    for section in ("faults", "operations"):
        mine = [item.model_dump(mode="json", exclude_none=True) for item in getattr(scenario, section)]
        if section == "faults" or mine != [item.model_dump(mode="json", exclude_none=True)
                                           for item in getattr(base, section)]:
            sets.append(f"{section}={toml_inline(mine)}")
    if scenario.arrivals != base.arrivals:
        sets.append("arrivals=" + ("none" if scenario.arrivals is None else
                                   toml_inline(scenario.arrivals.model_dump(mode="json", exclude_none=True))))
    for section in ("client", "network", "api", "processor"):
        sets += _differing(section, getattr(base, section), getattr(scenario, section))
    return sets + REPRODUCE_CLEARED


def _differing(path: str, base, model) -> list[str]:
    """``path.field=value`` for each field of the model ``model`` that differs from ``base``'s, descending into
    a section's own sections (``network.request.latency``)."""
    out: list[str] = []
    for name in type(model).model_fields:
        mine, theirs = getattr(model, name), getattr(base, name)
        if mine == theirs:
            continue
        if isinstance(mine, BaseModel) and type(mine) is type(theirs):
            out += _differing(f"{path}.{name}", theirs, mine)
        elif mine is None:
            out.append(f"{path}.{name}=none")
        else:
            value = mine.model_dump(mode="json", exclude_none=True) if isinstance(mine, BaseModel) else mine
            out.append(f"{path}.{name}={_set_value(value)}")
    return out


def _set_value(value: Any) -> str:
    """``value`` as ``--set`` reads it: a word that TOML would not read as itself is written bare
    (``jitter=none``), anything else as TOML (`toml_inline`)."""
    if isinstance(value, str) and value and value.isprintable() and value == value.strip() and " " not in value:
        try:
            tomllib.loads(f"v = {value}")
        except tomllib.TOMLDecodeError:
            return value
    return toml_inline(value)


def toml_inline(value: Any) -> str:
    """``value`` (JSON data) as one line of TOML: inline tables and arrays; a None in a table is left out (TOML
    has no null: the field keeps its default, which for such fields is None)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_inline(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {toml_inline(v)}" for k, v in value.items() if v is not None) + "}"
    raise TypeError(f"not JSON data: {value!r}")


def _toml_key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else json.dumps(key, ensure_ascii=False)


def reproduce_words(run: Run, sets: list[str]) -> list[str]:
    """``idemsim run REPRODUCE_STORY --design D --seed S --set … [--max-time T]``: ``run`` again, with no file."""
    words = ["idemsim", "run", REPRODUCE_STORY, "--design", run.design, "--seed", str(run.seed)]
    for assignment in sets:
        words += ["--set", assignment]
    return words + _max_time_words(run.scenario._max_time)


def _max_time_words(max_time: float | None) -> list[str]:
    return [] if max_time is None else ["--max-time", str(max_time)]


# -- saving a counterexample ------------------------------------------------------------------------------------
def default_path(design: str, seed: int) -> str:
    return f"counterexample-{design}-{seed}.toml"


def check_save_path(path: str, force: bool = False) -> None:
    """Refuse, before any search, a ``--save`` path that is empty, an existing file (unless ``force``), or what
    `idemsim.base.output.check_output` refuses (a directory, a folder that does not exist or where no file can
    be made, a name too long)."""
    if not path.strip():
        raise InputError("err.give_file_name", file="--save ''")
    name = f"--save {path}"
    try:
        exists = os.path.isfile(path)  # a device, a FIFO or standard output is written through, not replaced
    except ValueError:
        exists = False
    if exists and not force:
        raise InputError("err.save.exists", path=label(path))
    check_output(path, name)


def scenario_document(cx: Counterexample, command: str) -> dict[str, Any]:
    """The counterexample as a scenario file's contents: a story like the shipped ones. Its expectation records
    every figure the broken properties are judged on, as the counterexample shows them (the charge rows and the
    captures, what each operation saw and how it ended, the keys left in progress, whether replays were
    identical) and declares the properties it breaks (``breaks``), so that ``idemsim run`` on the file exits 0
    exactly while it reproduces the counterexample, and 1 once it no longer does (a design fixed, a model
    changed)."""
    run, s = cx.run, cx.run.scenario
    summary = run.summary
    expect: dict[str, Any] = {"charges": summary.charges, "captures": summary.captures}
    if len(summary.operations) == 1:
        expect["seen"] = summary.operations[0]["seen"]
    else:
        expect["seen_by_op"] = [op["seen"] for op in summary.operations]
    expect["outcomes"] = [op["outcome"] for op in summary.operations]
    if DESIGNS[run.design].stores_keys:
        expect["keys_in_progress"] = summary.keys_in_progress
    if summary.replay_identical is not None:
        expect["replay_identical"] = summary.replay_identical
    broken = _broken(cx)
    expect["breaks"] = broken
    return {
        "title": f"Counterexample: {run.design} breaks {', '.join(broken)}",
        "summary": f"Found by `{command}`: " + ("; ".join(f.describe() for f in s.faults) or "no fault") + ".",
        "group": "counterexamples",
        "story": ("Faults: " + ("; ".join(f.describe() for f in s.faults) or "none") + ".\nViolated:\n"
                  + "".join(f"- {v}\n" for v in cx.violations)),
        "teaches": ("A schedule found by the property search and shrunk to the fewest faults. The expectation "
                    "records what this counterexample shows (charges, captures, what the client saw) and the "
                    "properties it breaks, so `idemsim run` on this file exits 0 exactly while it reproduces it. "
                    "Run it under another design (`--design`) to try a fix: no expectation is stated for that "
                    "one, so it exits 1 if a property breaks.\n"),
        "design": run.design,
        "seed": run.seed,
        **_sections(s),
        "faults": [f.model_dump(mode="json") for f in s.faults],
        "expect": {run.design: expect},
    }


def _broken(cx: Counterexample) -> list[str]:
    """The properties ``cx``'s run breaks, each once, in report order: all of them, not only those judged
    (``--property``), since ``idemsim run`` judges them all."""
    broken = {v["property"] for v in cx.run.summary.violations}
    return [p for p in PROPERTIES if p in broken]


def _sections(scenario: Scenario) -> dict[str, Any]:
    """The configuration sections of ``scenario`` as TOML can write them (None left out)."""
    return {"client": scenario.client.model_dump(mode="json", exclude_none=True),
            "operations": [op.model_dump(mode="json", exclude_none=True) for op in scenario.operations],
            "network": scenario.network.model_dump(mode="json", exclude_none=True),
            "api": scenario.api.model_dump(mode="json", exclude_none=True),
            "processor": scenario.processor.model_dump(mode="json", exclude_none=True)}


def _check_saveable(scenario: Scenario) -> None:
    """Refuse early a configuration that a scenario file cannot express: a None (``--set field=none``) where
    the model's default is not None, since TOML has no null."""


    again = tomllib.loads(tomli_w.dumps(_sections(scenario)))
    bound = None if scenario._max_time is None else {"max_time": scenario._max_time}  # (as it was validated)
    for section in ("client", "network", "api", "processor"):
        model = getattr(scenario, section)
        reread = type(model).model_validate(again[section], context=bound)
        for name in type(model).model_fields:
            if getattr(reread, name) != getattr(model, name):
                raise InputError("err.save.none", field=f"{section}.{name}", default=repr(getattr(reread, name)))


def save(cx: Counterexample, path: str, command: str) -> str:
    """Write ``cx`` as a scenario file at ``path`` (`idemsim.base.output.write_output`: atomically), then replay
    it and check that the replay is the same run event for event and reproduces what the file states. Returns
    the path."""

    target = Path(path)
    header = (f"# A counterexample found by: {command}\n"
              f"# Replay it with: {shlex.join(_run_words(str(target), cx.run.scenario._max_time))}\n"
              f"# (exit 0 while it reproduces what [expect.{cx.run.design}] states, breaks included)\n"
              f"# Or, with no file: {cx.reproduce_command()}\n\n")
    text = header + tomli_w.dumps(scenario_document(cx, command))
    written = write_output(path, text, f"--save {path}")
    bound = cx.run.scenario._max_time
    if written == "file":
        replay = simulate(load(str(target), max_time=bound))
    else:  # a device, a FIFO or standard output: replayed from what was written there
        raw = parse_toml(text, label(target))
        raw.setdefault("name", target.stem)  # as `load` names a file's story
        replay = simulate(validate(raw, label(target), max_time=bound))
    if replay.trace.to_json() != cx.run.trace.to_json() or replay.summary.story_check != "reproduces":
        raise RuntimeError(f"{target}: the saved counterexample does not replay the same run")
    cx.saved = str(target)
    cx.run = replay
    return str(target)


def _run_words(path: str, max_time: float | None) -> list[str]:
    """``idemsim run PATH``, with the ``--max-time`` the exploration used."""
    return ["idemsim", "run", path] + _max_time_words(max_time)


def command_line(design: str, sets: list[str], seed: int, *, exhaustive_mode: bool, max_faults: int | None,
                 max_examples: int | None, properties: list[str] | None = None,
                 max_time: float | None = None) -> str:
    """The ``idemsim explore`` command that finds this again."""
    words = ["idemsim", "explore", design]
    for s in sets:
        words += ["--set", s]
    for p in properties or ():
        words += ["--property", p]
    words += ["--seed", str(seed)]
    if max_time is not None:
        words += ["--max-time", str(max_time)]
    if exhaustive_mode:
        words += ["--exhaustive", "--max-faults", str(max_faults)]
    else:
        if max_examples is not None:
            words += ["--max-examples", str(max_examples)]
        if max_faults is not None:
            words += ["--max-faults", str(max_faults)]
    return shlex.join(words)


# -- the text view ----------------------------------------------------------------------------------------------
def describe_configuration(scenario: Scenario, lang: str = "en") -> str:
    """The documented defaults (plus ``--set``) in one paragraph: every derived parameter of the exploration."""

    c, a = scenario.client, scenario.api

    def seconds(value: float | None, none: str = "ex.none") -> str:
        return t(none, lang) if value is None else t("ex.seconds", lang, s=value)

    parts = [t("ex.client", lang, key=t(f"ex.key.{c.key_strategy}", lang), timeout=c.timeout,
               attempts=c.max_attempts, backoff=c.backoff, jitter=c.jitter, window=seconds(c.retry_window)),
             t("ex.api", lang, charge=a.charge_seconds, isolation=a.isolation,
               fingerprint=t("ex.on" if a.fingerprint_check else "ex.off", lang),
               ttl=seconds(a.ttl, "ex.forever"), reap=a.reap_every)]
    spec = DESIGNS[scenario.design]
    if spec.lease_recovery:
        parts[-1] += t("ex.lease", lang, lease=seconds(a.lease, "ex.no_recovery"))
    if not spec.stores_keys:
        parts[-1] = t("ex.naive_api", lang, charge=a.charge_seconds)
    if "completer_every" in spec.options:
        every = completer_period(a)
        parts[-1] += t("ex.recovery", lang, lease=recovery_lease(a),
                       completer=t("ex.off", lang) if every is None else t("ex.every", lang, s=every))
    if "processor_key" in spec.options:
        parts[-1] += t("ex.processor_key" if a.processor_key == "request-key" else "ex.processor_no_key", lang)
    parts[-1] += t("ex.processor_timeout", lang, s=a.processor_timeout)
    return ("。" if lang == "ja" else "; ").join(parts)


def describe_network(scenario: Scenario, lang: str = "en") -> str:

    def one(link) -> str:
        lat = link.latency
        said = t(f"ex.latency.{lat.dist}", lang, s=lat.seconds, low=lat.low, high=lat.high, mean=lat.mean)
        return said + (t("ex.loss", lang, loss=link.loss) if link.loss else "")

    return t("ex.network", lang, request=one(scenario.network.request), response=one(scenario.network.response))


def describe_universe(lang: str = "en", points: tuple[str, ...] = CRASH_POINTS) -> str:

    return t("ex.universe", lang, attempts=UNIVERSE_ATTEMPTS, losses=3 * UNIVERSE_ATTEMPTS, points=", ".join(points),
             restart=UNIVERSE_RESTART, crashes=len(points) * UNIVERSE_ATTEMPTS,
             slots=", ".join(f"{s:g}" for s in UNIVERSE_DUPLICATE_SLOTS), dups=len(UNIVERSE_DUPLICATE_SLOTS))


def header_lines(result: Exploration, scenario: Scenario, command: str, lang: str = "en") -> list[str]:
    """What was explored and how: printed before the verdict."""

    if result.mode == "exhaustive":
        what = t("ex.what.exhaustive", lang, k=result.max_faults, n=len(result.universe))
    else:
        what = t("ex.what.search", lang, k=result.max_faults)
    lines = [t("ex.header", lang, design=result.design, what=what, seed=result.seed),
             t("ex.configuration", lang, configuration=describe_configuration(scenario, lang))]
    if result.mode == "exhaustive":
        points = tuple(dict.fromkeys(f.point for f in result.universe if f.kind == "crash"))
        lines.append(t("ex.universe_line", lang, universe=describe_universe(lang, points)))
        lines.append(t("ex.schedules", lang, n=result.schedules, checked=result.examples, effective=result.effective))
    else:
        shrink = t("ex.shrink", lang, n=result.shrink_runs) if result.counterexample else ""
        lines.append(t("ex.examples", lang, n=result.examples, shrink=shrink))
    lines.append(t("ex.again", lang, command=command))
    return lines


def verdict_lines(result: Exploration, lang: str = "en") -> list[str]:

    cx = result.counterexample
    if cx is None:
        names = ", ".join(result.properties or PROPERTIES)
        if result.mode == "exhaustive":
            judged_all = len(result.properties or PROPERTIES) == len(PROPERTIES)
            every = "ex.every_property" if judged_all else "ex.every_judged"
            return [t("ex.proved", lang, every=t(every, lang), names=names)]
        return [t("ex.none_found", lang, n=result.examples, names=names)]
    n = len(cx.faults)
    lines = [t("ex.counterexample", lang, n=n, s="s" if n != 1 else "", colon=":" if n else t("ex.no_fault", lang))]
    lines += [f"  {i}. {f.describe(lang)}" for i, f in enumerate(cx.faults, start=1)]
    lines.append(t("ex.timings", lang, configuration=describe_configuration(cx.run.scenario, lang),
                   network=describe_network(cx.run.scenario, lang)))
    lines.append(t("ex.violated", lang))
    lines += [f"  {describe_violation(v.to_dict(), lang)}" for v in cx.violations]
    return lines
