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

Limits, checked before anything runs (`plan`), each refusal one `InputError` naming the option and what is
allowed: at most `MAX_POINTS` values an axis (a range or a list), each field varied once, at most `MAX_SEEDS`
seeds, at most `MAX_RUNS` runs in all (points × designs × seeds), at most `max_workers()` worker processes;
a Dask address is checked, and its scheduler asked for an answer within `CONNECT_TIMEOUT` seconds, before
Dask is even imported (`check_dask`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import select
import shutil
import socket
import tempfile
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from ..base.errors import InputError, Message, os_reason
from ..base.i18n import LANGS
from ..base.printable import point_text, shorten  # noqa: F401 (point_text: sweeps are read with it)
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
    """``START:STOP:STEP``, STOP included when a step lands on it; at most `MAX_POINTS` values (a step so small
    that the count is not even a finite number is refused the same way)."""
    parts = spec.split(":")
    if len(parts) != 3:
        raise InputError("err.vary.range", field=field, spec=_short(spec))
    start, stop, step = (_number(p) for p in parts)
    if step <= 0 or stop < start:
        raise InputError("err.vary.step", field=field, spec=_short(spec))
    span = (stop - start) / step
    if not math.isfinite(span):
        raise InputError("err.vary.uncountable", field=field, spec=_short(spec), most=MAX_POINTS)
    count = int(math.floor(span + 1e-9)) + 1
    if count > MAX_POINTS:
        raise InputError("err.vary.count", field=field, spec=_short(spec), count=f"{count:,}", most=MAX_POINTS)
    integral = all(float(p).is_integer() for p in (start, stop, step)) and "." not in spec
    return tuple(str(int(start + i * step)) if integral else repr(round(start + i * step, 10)) for i in range(count))


def _short(text: str) -> str:
    """An echoed value cut to a readable length (a 30,000-value list is not repeated whole)."""
    return shorten(text, 60)


MAX_POINTS = 1000
"""Values one axis may have, a range's or a list's."""
MAX_SEEDS = 100_000
"""Runs per point and design at most (``--seeds``, ``[sweep] seeds``)."""
MAX_RUNS = 200_000
"""Runs a sweep may make in all, points × designs × seeds: the shipped loss sweep makes 4,400 runs a second
on the 2-core development machine (two workers), so the largest sweep of a scenario that small takes about
a minute there, and one of a heavier scenario (the herd: a thousand clients a run) proportionally longer.
docs/sweeps.md says so."""


def parse_vary(text: str) -> Axis:
    """``FIELD=V1,V2,…`` (each value read as ``--set`` reads it) or ``FIELD=START:STOP:STEP``; at most
    `MAX_POINTS` values."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise InputError("err.vary.form", text=repr(_short(text)))
    if not values.strip():
        raise InputError("err.vary.no_values", text=repr(_short(text)))
    if values.count(":") == 2 and "," not in values and not values.strip().startswith(("'", '"')):
        return Axis(name, _range(name, values.strip()))
    texts = tuple(v.strip() for v in values.split(",", MAX_POINTS))
    if len(texts) > MAX_POINTS:
        raise InputError("err.vary.count", field=name, spec=_short(values), count=f"{values.count(',') + 1:,}",
                         most=MAX_POINTS)
    if any(not t for t in texts):
        raise InputError("err.vary.empty", text=repr(_short(text)))
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


def axes_of(vary: dict[str, Any], source: Any = "[sweep]") -> list[Axis]:
    """A scenario's ``[sweep] vary`` table: field -> a list of values (at least one, at most `MAX_POINTS`), or
    a ``"START:STOP:STEP"`` text."""
    axes = []
    for name, values in vary.items():
        if isinstance(values, str):
            axes.append(Axis(name, _range(name, values)))
            continue
        if not values or len(values) > MAX_POINTS:
            raise InputError("err.sweep.values", source=source, field=name, count=len(values), most=MAX_POINTS)
        axes.append(Axis(name, tuple(toml_value(v) for v in values)))
    return axes


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
    importable, so that any executor, a process pool or a Dask worker, can run it; a design from a file,
    ``path/to/file.py:function``, is loaded there first, since a Dask worker's process has not seen it.)"""
    design = resolve_design(design)
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


MEASURES = (*FLAGS, "attempts", "keys_held", "time_to_answer.p50", "time_to_answer.p95", "wait.p50", "wait.p95",
            "waiting_peak.p50", "waiting_peak.max", "pool_wait_max.p50", "pool_wait_max.p95",
            "peak_after_outage.p50", "peak_after_outage.p95", "peak_after_outage.max")
"""What a ``[sweep] measures`` may name: a rate (a flag), or a number of a row (``time_to_answer.p95``).
``pool_wait_max`` is measured only with ``api.pool_size``, ``peak_after_outage`` only with an outage."""


def plan(scenario, vary: list[str] | None = None, designs: list[str] | None = None, seeds: int | None = None,
         seed: int = 1, sets: list[str] | None = None, variant: str | None = None) -> Sweep:
    """The sweep a command or ``idemsim.sweep`` asked for, every limit checked before anything runs:
    ``vary`` as ``--vary`` takes them (default: the scenario's ``[sweep] vary``), each field once, each axis
    at most `MAX_POINTS` values; ``designs`` (default: ``[sweep] designs``, which may not be empty, else all);
    ``seeds`` at most `MAX_SEEDS`; at most `MAX_RUNS` runs in all; the ``[sweep] measures`` known. Every point
    is validated last, once the product is known to be small enough."""
    config = scenario.sweep
    source = scenario._source or scenario.name
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise InputError("err.sweep.seeds", n=seeds, most=MAX_SEEDS)
    if config is not None:
        if config.designs is not None and not config.designs:
            raise InputError("err.sweep.no_designs", source=source)
        for name in config.measures:
            if name not in MEASURES:
                raise InputError("err.sweep.measure", source=source, name=repr(_short(name)),
                                 allowed=", ".join(MEASURES))
    axes = [parse_vary(v) for v in vary] if vary else axes_of(config.vary if config else {}, source)
    if not axes:
        raise InputError("err.nothing_to_vary", scenario=scenario.name)
    seen: set[str] = set()
    for axis in axes:
        if axis.field in seen:
            raise InputError("err.vary.twice", field=axis.field)
        seen.add(axis.field)
    names = list(designs) if designs else (list(config.designs) if config and config.designs else list(DESIGNS))
    count = seeds or (config.seeds if config else 100)
    points = math.prod(len(a.texts) for a in axes)
    runs = points * len(names) * count
    if runs > MAX_RUNS:
        raise InputError("err.sweep.runs", points=points, designs=len(names), seeds=count, runs=runs,
                         most=MAX_RUNS)
    spec = Sweep(scenario, axes, names, count, seed, list(sets or []), variant)
    spec.points()  # every point validated before anything runs
    return spec


def check_measured(result: SweepResult, measures: list[str], source: Any) -> None:
    """Refuse a ``[sweep] measures`` name the finished sweep's rows do not hold (``pool_wait_max`` without a
    pool, ``peak_after_outage`` without an outage), instead of failing while drawing or printing."""
    for name in measures:
        if result.rows and name.partition(".")[0] not in result.rows[0]:
            raise InputError("err.sweep.unmeasured", source=source, name=name)


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
CONNECT_TIMEOUT = 3.0
"""Seconds a Dask scheduler has to accept a connection and say its first word (a scheduler speaks at once)."""


def max_workers() -> int:
    """Worker processes a command may start on this machine: four a core."""
    return 4 * (os.cpu_count() or 1)


def check_workers(workers: int | None, dask: str | None = None) -> None:
    """``--workers``: at least 1, at most `max_workers`, and with ``--dask`` only for ``local`` (a remote
    cluster's workers are its own)."""
    if workers is None:
        return
    if not 1 <= workers <= max_workers():
        raise InputError("err.workers.count", n=workers, most=max_workers(), cores=os.cpu_count() or 1)
    if dask is not None and dask != "local":
        raise InputError("err.workers.remote", n=workers, address=_short(dask))


def check_dask(address: str, timeout: float = CONNECT_TIMEOUT) -> str:
    """A ``--dask`` scheduler address, checked without Dask: ``HOST:PORT`` or ``tcp://HOST:PORT`` (the only
    protocol idemsim speaks: ``tls://`` needs certificates it does not take, ``ucx://`` and ``inproc://`` are
    not a remote scheduler's), a port from 1 to 65535, and a scheduler there: a refused connection is
    refused at once; one that accepts and says nothing within ``timeout`` seconds (a Dask scheduler sends
    its handshake as soon as it accepts) is refused then. Returns ``tcp://HOST:PORT``."""
    shown = _short(address)
    if not address.strip():
        raise InputError("err.dask.empty")
    scheme, sep, rest = address.strip().partition("://")
    if not sep:
        scheme, rest = "tcp", address.strip()
    if scheme != "tcp":
        raise InputError("err.dask.scheme", address=shown, scheme=_short(scheme))
    host, _, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not (port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535):
        raise InputError("err.dask.address", address=shown)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as probe:
            spoke, _, _ = select.select([probe], [], [], timeout)
    except TimeoutError:
        spoke = []
    except (OSError, UnicodeError) as error:
        reason = os_reason(error) if isinstance(error, OSError) else str(error)
        raise InputError("err.dask.unreachable", address=shown, error=reason) from None
    if not spoke:
        raise InputError("err.dask.silent", address=shown, seconds=timeout)
    return f"tcp://{rest}"


class _Started(Executor):
    """A process pool whose failure to start a worker (a process limit: ``EAGAIN``) is one `InputError`."""

    def __init__(self, pool: ProcessPoolExecutor, workers: int) -> None:
        self.pool, self.workers = pool, workers

    def submit(self, fn, /, *args, **kwargs) -> Future:
        try:
            return self.pool.submit(fn, *args, **kwargs)
        except OSError as error:
            raise InputError("err.workers.start", n=self.workers, reason=os_reason(error)) from None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait, cancel_futures=cancel_futures)


class executor_for:
    """The executor a command asked for, as a context manager: None (run here) for one worker, a process
    pool of ``workers`` processes on this machine, or a Dask cluster's executor (``dask``: a scheduler's
    address, checked by `check_dask` before Dask is imported, or ``"local"`` for a `distributed.LocalCluster`
    of ``workers`` processes on loopback, its scratch space in a temporary folder removed at the end).
    ``workers`` is checked by `check_workers` (and unused with a remote cluster); a failure to start the
    workers is one `InputError`.

    The worker processes it starts (a pool's, a local cluster's) run nothing but idemsim: they are idemsim's,
    and their runs keep Python's collector out of their way (`idemsim.kernel.collector.own_process`); a remote
    cluster's workers are not, and are left as they are."""

    def __init__(self, workers: int | None = None, dask: str | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        check_workers(workers)  # (the command refuses --workers with a remote --dask; here it is unused)
        self.workers = workers or os.cpu_count() or 1
        self.dask = dask
        self.connect_timeout = connect_timeout
        """Seconds a remote scheduler has to answer (`check_dask`)."""
        self._close: list[Callable[[], None]] = []

    def __enter__(self) -> Executor | None:
        try:
            return self._start()
        except BaseException:
            self.__exit__()
            raise

    def _start(self) -> Executor | None:
        if self.dask is not None:
            address = None if self.dask == "local" else check_dask(self.dask, self.connect_timeout)
            try:
                from distributed import Client, LocalCluster  # (lazy: Dask is an optional extra, and slow to load)
            except ImportError:
                raise InputError("err.dask.missing") from None
            if address is None:
                scratch = tempfile.mkdtemp(prefix="idemsim-dask-")
                self._close.append(lambda: shutil.rmtree(scratch, ignore_errors=True))
                try:
                    cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None, local_directory=scratch)
                except (OSError, RuntimeError, TimeoutError) as error:
                    reason = os_reason(error) if isinstance(error, OSError) else str(error)
                    raise InputError("err.dask.start", n=self.workers, reason=reason) from None
                self._close.insert(0, cluster.close)
                client = Client(cluster)
                client.run(collector.own_process)
            else:
                try:
                    client = Client(address, timeout=self.connect_timeout)
                except (OSError, TimeoutError) as error:
                    raise InputError("err.dask.unreachable", address=_short(self.dask), error=str(error)) from None
            self._close.insert(0, client.close)
            return client.get_executor()
        if self.workers <= 1:
            return None
        try:
            pool = ProcessPoolExecutor(max_workers=self.workers, initializer=collector.own_process)
        except OSError as error:
            raise InputError("err.workers.start", n=self.workers, reason=os_reason(error)) from None
        self._close.append(lambda: pool.shutdown(cancel_futures=True))  # after an error, the queued runs are dropped
        return _Started(pool, self.workers)

    def __exit__(self, *exc) -> None:
        for close in self._close:
            close()
        self._close = []


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
    if not vary and (loaded.sweep is None or not loaded.sweep.vary):
        raise InputError("err.nothing_to_vary_api", scenario=scenario)
    spec = plan(loaded, vary, [resolve_design(d) for d in designs or ()], seeds, seed, sets, variant)
    return run(spec, executor)


class _CallableModule(type(json)):
    """This module, callable: ``idemsim.sweep(...)`` is `sweep`, and ``idemsim.runners.sweep.run`` … stay reachable."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResult:
        return sweep(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule

