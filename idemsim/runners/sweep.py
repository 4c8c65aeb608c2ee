"""Sweeps: one scenario run over a grid of parameters, every design, many seeds; rates with their intervals.

A sweep takes a scenario, a grid (`Axis` per varied field: ``--vary FIELD=V1,V2,…`` or
``FIELD=START:STOP:STEP``, the same dotted fields as ``--set``; several axes make a product), the designs, and
a number of replicates per point. Every (point, design, replicate) is one ordinary run: the point's values are
applied to the scenario as ``--set`` would apply them, and its seed is derived from the base seed, the point,
the design and the replicate by a stable hash (`derive_seed`; never Python's ``hash()``). Each run is reduced
to `idemsim.judge.measures.of_run`'s few numbers, and each (point, design) to a row: the rate of each flag with its
95 % Wilson interval, attempts, the time to the final answer and the wait on the index (p50/p95), key records
held.

Guarantees: the result depends only on the scenario, the grid, the designs, the seeds and the base seed, never
on what ran it: inline, a `concurrent.futures.ProcessPoolExecutor`, or a Dask cluster (any
`concurrent.futures.Executor`) give byte-identical JSON, which holds no executor, worker count or timing.
Rows come in grid order, designs in the order given, whatever order the work finished in.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ..base.errors import InputError, Message
from ..base.i18n import LANGS
from ..base.printable import point_text  # noqa: F401 (sweeps are read with it)
from ..judge.measures import FLAGS, of_run
from ..judge.statistics import Z95, percentile, wilson  # noqa: F401 (sweeps are read with them)
from ..kernel import collector
from ..model.designs import DESIGNS, resolve_design
from ..scenario.schema import apply_sets, load, validate
from ..scenario.schema import variant as pick
from .simulation import simulate

FORMAT_VERSION = 1

# -- the grid ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Axis:
    """One varied field and its values, each kept as the text ``--set`` would take and as its value."""

    field: str
    texts: tuple[str, ...]

    @property
    def values(self) -> list[Any]:
        return [_parse_point({self.field: text})[0] for text in self.texts]


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError("err.range.number", text=repr(text)) from None
    if not math.isfinite(value):
        raise InputError("err.range.finite", text=repr(text))
    return value


def _range(field: str, spec: str) -> tuple[str, ...]:
    """``START:STOP:STEP``, STOP included when a step lands on it."""
    parts = spec.split(":")
    if len(parts) != 3:
        raise InputError("err.vary.range", field=field, spec=spec)
    start, stop, step = (_number(p) for p in parts)
    if step <= 0 or stop < start:
        raise InputError("err.vary.step", field=field, spec=spec)
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_POINTS:
        raise InputError("err.vary.count", field=field, spec=spec, count=count, most=MAX_POINTS)
    integral = all(float(p).is_integer() for p in (start, stop, step)) and "." not in spec
    return tuple(str(int(start + i * step)) if integral else repr(round(start + i * step, 10)) for i in range(count))


MAX_POINTS = 1000
"""Values one axis may have."""


def parse_vary(text: str) -> Axis:
    """``FIELD=V1,V2,…`` (each value read as ``--set`` reads it) or ``FIELD=START:STOP:STEP``."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name or not values.strip():
        raise InputError("err.vary.form", text=repr(text))
    if values.count(":") == 2 and "," not in values and not values.strip().startswith(("'", '"')):
        return Axis(name, _range(name, values.strip()))
    texts = tuple(v.strip() for v in values.split(","))
    if any(not t for t in texts):
        raise InputError("err.vary.empty", text=repr(text))
    return Axis(name, texts)


def toml_value(value: Any) -> str:
    """``value`` as a TOML inline value, as ``--set`` reads it (tables inline, strings quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise InputError("err.vary.value", value=repr(value))


def axes_of(vary: dict[str, Any]) -> list[Axis]:
    """A scenario's ``[sweep] vary`` table: field -> a list of values, or a ``"START:STOP:STEP"`` text."""
    return [Axis(name, _range(name, values)) if isinstance(values, str) else
            Axis(name, tuple(toml_value(v) for v in values)) for name, values in vary.items()]


def grid(axes: list[Axis]) -> list[dict[str, str]]:
    """Every point of the product of ``axes``, in order (the last axis varies fastest), as field -> text."""
    return [dict(zip((a.field for a in axes), combo)) for combo in itertools.product(*(a.texts for a in axes))]


def derive_seed(base: int, point: dict[str, Any], design: str, replicate: int) -> int:
    """A run's seed from the base seed, the point, the design and the replicate: a stable hash (SHA-256)."""
    text = json.dumps([base, point, design, replicate], sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:6], "big")


# -- running ----------------------------------------------------------------------------------------------------
def run_batch(scenario, design: str, seeds: list[int]) -> list[dict[str, Any]]:
    """Run ``scenario`` under ``design`` once per seed; each run reduced to its measures. (Top level and
    importable, so that any executor, a process pool or a Dask worker, can run it.)"""

    return [of_run(simulate(scenario, design, seed, trace=False)) for seed in seeds]


@dataclass
class Sweep:
    """What a sweep runs: the scenario (main story or a variant), the grid, the designs and the seeds."""

    scenario: Any
    """The validated base scenario (`idemsim.scenario.schema.Scenario`)."""
    axes: list[Axis]
    designs: list[str]
    seeds: int
    base_seed: int = 1
    sets: list[str] = field(default_factory=list)
    variant: str | None = None

    def points(self) -> list[tuple[dict[str, str], Any]]:
        """Each point of the grid and the scenario it runs (the point applied as ``--set`` assignments)."""

        out = []
        for point in grid(self.axes):
            assignments = self.sets + [f"{name}={text}" for name, text in point.items()]
            story = pick(self.scenario, self.variant, assignments) if self.variant else \
                _with_sets(self.scenario, assignments)
            out.append((point, story))
        return out


def _with_sets(scenario, assignments: list[str]):

    raw = {k: v for k, v in scenario._raw.items()}
    source = Message("err.where.with_sets", source=scenario._source or scenario.name,
                     sets=" ".join("--set " + a for a in assignments))
    return validate(apply_sets(raw, assignments), source, max_time=scenario._max_time)


@dataclass
class SweepResult:
    """The rows of a sweep and what produced them."""

    scenario: str
    seeds: int
    base_seed: int
    axes: list[Axis]
    designs: list[str]
    rows: list[dict[str, Any]]
    title: str = ""
    titles: dict[str, str] = field(default_factory=dict)
    """The scenario's title in every language (the figure's, under ``--lang``); JSON keeps the English one."""

    def to_json(self) -> dict[str, Any]:
        return {"version": FORMAT_VERSION, "scenario": self.scenario, "title": self.title, "seeds": self.seeds,
                "seed": self.base_seed, "vary": {a.field: a.values for a in self.axes}, "designs": self.designs,
                "rows": self.rows}


def run(spec: Sweep, executor: Executor | None = None,
        progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Run every (point, design) of ``spec``, on ``executor`` (None: here, one after another)."""
    tasks = []
    for point, story in spec.points():
        parsed = {name: value for name, value in zip(point, _parse_point(point))}
        for design in spec.designs:
            seeds = [derive_seed(spec.base_seed, parsed, design, r) for r in range(spec.seeds)]
            tasks.append((parsed, design, story, seeds))
    total = len(tasks)
    if executor is None:
        results = []
        for i, (_, design, story, seeds) in enumerate(tasks):
            results.append(run_batch(story, design, seeds))
            if progress:
                progress(i + 1, total)
    else:
        futures = [executor.submit(run_batch, story, design, seeds) for _, design, story, seeds in tasks]
        results = []
        for i, future in enumerate(futures):
            results.append(future.result())
            if progress:
                progress(i + 1, total)
    rows = [aggregate(design, point, measures) for (point, design, _, _), measures in zip(tasks, results)]
    return SweepResult(spec.scenario.name, spec.seeds, spec.base_seed, spec.axes, spec.designs, rows,
                       spec.scenario.title, {lang: spec.scenario.text("title", lang) for lang in LANGS})


def _parse_point(point: dict[str, str]) -> list[Any]:
    """The point's values as the scenario gets them (``none`` is None where a field may be unset)."""

    out = []
    for name, text in point.items():
        node: Any = apply_sets({}, [f"{name}={text}"])
        for part in name.split("."):
            node = node[part]
        out.append(node)
    return out


# -- aggregating --------------------------------------------------------------------------------------------------
def aggregate(design: str, point: dict[str, Any], measures: list[dict[str, Any]]) -> dict[str, Any]:
    """One row: the point, the design, the runs, each flag's rate and interval, and the numbers' summaries."""
    n = len(measures)
    row: dict[str, Any] = {"design": design, **point, "runs": n}
    for flag in FLAGS:
        row[flag] = wilson(sum(1 for m in measures if m[flag]), n)
    times = [t for m in measures for t in m["times"]]
    waits = [m["wait"] for m in measures]
    row["attempts"] = round(sum(m["attempts"] for m in measures) / n, 6) if n else 0.0
    row["time_to_answer"] = {"p50": percentile(times, 50), "p95": percentile(times, 95)}
    row["wait"] = {"p50": percentile(waits, 50), "p95": percentile(waits, 95)}
    row["keys_held"] = round(sum(m["keys_held"] for m in measures) / n, 6) if n else 0.0
    row["waiting_peak"] = {"p50": percentile((m["waiting_peak"] for m in measures), 50),
                           "max": max((m["waiting_peak"] for m in measures), default=0)}
    if any("pool_wait_max" in m for m in measures):
        row["pool_wait_max"] = {"p50": percentile((m["pool_wait_max"] for m in measures), 50),
                                "p95": percentile((m["pool_wait_max"] for m in measures), 95)}
    if measures:
        row["attempts_per_second"] = mean_series([m["attempts_per_second"] for m in measures])
    if any("peak_after_outage" in m for m in measures):
        peaks = [m["peak_after_outage"] for m in measures]
        row["peak_after_outage"] = {"p50": percentile(peaks, 50), "p95": percentile(peaks, 95), "max": max(peaks)}
    return row


def mean_series(series: list[dict[str, Any]]) -> dict[str, Any]:
    """The mean of several runs' attempts-per-second series (same window), and the peak of the mean (a run's
    own peak is higher when the runs' peaks fall in different windows: see ``peak_after_outage``)."""
    window = series[0]["window"]
    length = max(len(s["counts"]) for s in series)
    totals = [0.0] * length
    for s in series:
        for i, count in enumerate(s["counts"]):
            totals[i] += count
    counts = [round(total / len(series) / window, 6) for total in totals]
    return {"window": window, "per_second": counts, "peak": max(counts, default=0.0)}


# -- output -------------------------------------------------------------------------------------------------------
def flat_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row with its nested figures flattened (``double_charge.rate``), as CSV columns."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict) and key != "attempts_per_second":
            for sub, v in value.items():
                out[f"{key}.{sub}"] = v
        elif key == "attempts_per_second":
            out[f"{key}.peak"] = value["peak"]
        else:
            out[key] = value
    return out


def to_csv(result: SweepResult) -> str:

    rows = [flat_row(r) for r in result.rows]
    columns = list(rows[0]) if rows else ["design"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict, bool)) or v is None else v
                         for k, v in r.items()})
    return out.getvalue()


# -- executors ------------------------------------------------------------------------------------------------------
class executor_for:
    """The executor a command asked for, as a context manager: None (run here) for one worker, a process
    pool of ``workers`` processes on this machine, or a Dask cluster's executor (``dask``: a scheduler's
    address, or ``"local"`` for a `distributed.LocalCluster` of ``workers`` processes on loopback).

    The worker processes it starts (a pool's, a local cluster's) run nothing but idemsim: they are idemsim's,
    and their runs keep Python's collector out of their way (`idemsim.kernel.collector.own_process`); a remote
    cluster's workers are not, and are left as they are."""

    def __init__(self, workers: int | None = None, dask: str | None = None, connect_timeout: float = 10.0) -> None:

        self.workers = workers or os.cpu_count() or 1
        self.dask = dask
        self.connect_timeout = connect_timeout
        """Seconds to wait for a remote scheduler to answer."""
        self._close: list[Callable[[], None]] = []

    def __enter__(self) -> Executor | None:
        if self.dask is not None:
            try:
                from distributed import Client, LocalCluster
            except ImportError:
                raise InputError("err.dask.missing") from None
            if self.dask == "local":
                cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
                self._close.append(cluster.close)
                client = Client(cluster)
                client.run(collector.own_process)
            else:
                try:
                    client = Client(self.dask, timeout=self.connect_timeout)
                except OSError as error:
                    raise InputError("err.dask.unreachable", address=self.dask, error=str(error)) from None
            self._close.insert(0, client.close)
            return client.get_executor()
        if self.workers <= 1:
            return None

        pool = ProcessPoolExecutor(max_workers=self.workers, initializer=collector.own_process)
        self._close.append(pool.shutdown)
        return pool

    def __exit__(self, *exc) -> None:
        for close in self._close:
            close()


# -- from Python: idemsim.sweep(...) ------------------------------------------------------------------------------
def sweep(scenario: str, vary: list[str] | None = None, designs: list[str] | None = None, seeds: int | None = None,
          seed: int = 1, sets: list[str] | None = None, variant: str | None = None,
          executor: Executor | None = None) -> SweepResult:
    """Sweep a shipped sweep, a scenario's name or a file: ``vary`` as ``--vary`` takes them (default: the
    scenario's ``[sweep]`` grid), on ``executor`` (any `concurrent.futures.Executor`; None runs here).

    >>> import idemsim
    >>> result = idemsim.sweep("loss", vary=["network.response.loss=0,0.5"], designs=["naive"], seeds=20)
    >>> [row["double_charge"]["rate"] > 0 for row in result.rows]
    [False, True]
    """

    loaded = load(scenario, sets)
    config = loaded.sweep
    axes = [parse_vary(v) for v in vary] if vary else axes_of(config.vary if config else {})
    if not axes:
        raise InputError("err.nothing_to_vary_api", scenario=scenario)
    names = [resolve_design(d) for d in designs] if designs else \
        (list(config.designs) if config and config.designs else list(DESIGNS))
    spec = Sweep(loaded, axes, names, seeds or (config.seeds if config else 100), seed, list(sets or []), variant)
    return run(spec, executor)


class _CallableModule(type(json)):
    """This module, callable: ``idemsim.sweep(...)`` is `sweep`, and ``idemsim.runners.sweep.run`` … stay reachable."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResult:
        return sweep(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule

