"""Scenario files: what a run simulates and what it must show.

A scenario is a TOML file (see ``docs/scenarios.md``): the client and its retry policy, the logical
operations, the network, the API's design and options, the fault schedule, and the expected outcome per
design. ``[variants.NAME]`` tables describe branches of the same story; each is deep-merged onto the base
(its ``expect`` and ``faults`` replace the base's). ``--set section.field=value`` overrides any field.

Guarantees: a file either loads into a fully validated `Scenario` or raises `InputError` with one line
naming the file, the field and what is allowed; nothing about a loaded scenario is checked later.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from .api import ApiConfig
from .client import ClientConfig, Operation
from .errors import InputError
from .faults import Fault
from .http import Outcome
from .network import Link
from .paths import scenarios_dir
from .processor import ProcessorConfig

def _known_design(name: str) -> str:
    """A design the registry knows: a shipped one, one registered from Python, or one named by file."""
    from .designs import DESIGNS

    if name not in DESIGNS:
        raise ValueError(f"unknown design; valid designs: {', '.join(DESIGNS)}")
    return name


DesignName = Annotated[str, AfterValidator(_known_design)]
"""A design's name, checked against `idemsim.designs.DESIGNS` when a scenario is validated."""


class NetworkConfig(BaseModel):
    """The two directions of the network."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request: Link = Link()
    response: Link = Link()


class Expectation(BaseModel):
    """What a run under one design must show. Every field left out is not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    charges: int | None = Field(None, ge=0, description="charge rows at the end")
    captures: int | None = Field(None, ge=0, description="captures in the payment processor's ledger")
    outcome: Outcome | None = Field(None, description="the first operation's final outcome")
    status: int | None = Field(None, description="the first operation's final status")
    seen: list[int | Literal["timeout"]] | None = Field(None, description="statuses of the first operation's "
                                                                            "attempts, in order")
    outcomes: list[Outcome] | None = Field(None, description="every operation's final outcome, in order")
    seen_by_op: list[list[int | Literal["timeout"]]] | None = Field(
        None, description="statuses of every operation's attempts (duplicates included), in order")
    client_believes: int | None = Field(None, ge=0, description="logical operations the client believes done "
                                                                "(one of its copies ended ok)")
    replay_identical: bool | None = Field(None, description="every replayed response equals the first")
    replays: int | None = Field(None, ge=0, description="responses the API replayed from a record")
    wait_seconds: float | None = Field(None, ge=0, description="the longest wait of a statement on the index")
    keys_held: int | None = Field(None, ge=0, description="key records left at the end")
    keys_in_progress: int | None = Field(None, ge=0, description="key records left in_progress")
    balance: int | None = Field(None, description="the balance at the end")
    items: dict[str, Any] | None = Field(None, description="the items at the end")
    log_lines: int | None = Field(None, ge=0, description="requests the API wrote to its access log")


class Arrivals(BaseModel):
    """Many operations without writing each: a template operation, started ``count`` times by a process.

    ``poisson``: gaps drawn from an exponential with mean ``gap`` (or 1/``rate``), from the run's random
    numbers; ``uniform``: every ``gap`` seconds; ``burst``: all at ``start``. The operations are numbered after
    the written ``[[operations]]``, as if written out, so faults and expectations can name them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    process: Literal["poisson", "uniform", "burst"] = Field("poisson", description="how arrivals are spaced")
    count: int = Field(ge=1, le=1_000_000, description="how many operations arrive")
    rate: float | None = Field(None, gt=0, description="arrivals per second (poisson, uniform)")
    gap: float | None = Field(None, gt=0, description="seconds between arrivals, the mean for poisson "
                                                      "(instead of rate)")
    start: float = Field(0.0, ge=0, description="when the first may arrive")
    operation: Operation = Field(default_factory=Operation, description="the template of every arrival")

    @model_validator(mode="after")
    def _one_spacing(self) -> "Arrivals":
        if self.rate is not None and self.gap is not None:
            raise ValueError("give rate or gap, not both")
        if self.process != "burst" and self.rate is None and self.gap is None:
            raise ValueError(f"a {self.process} process needs rate or gap")
        return self

    def mean_gap(self) -> float:
        return self.gap if self.gap is not None else (1.0 / self.rate if self.rate else 0.0)

    def times(self, rng) -> list[float]:
        """When each operation starts; poisson gaps come from ``rng`` (one draw each)."""
        if self.process == "burst":
            return [self.start] * self.count
        gap = self.mean_gap()
        if self.process == "uniform":
            return [self.start + i * gap for i in range(self.count)]
        import math

        t, out = self.start, []
        for _ in range(self.count):
            out.append(t)
            t += -gap * math.log(1.0 - rng.random())
        return out


class SweepMark(BaseModel):
    """A vertical line on a sweep's figure at a value of the varied field (``{at = 40, label = "…"}``), or a
    band from ``at`` to ``until``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: float
    until: float | None = None
    label: str


class SweepConfig(BaseModel):
    """A scenario's default sweep (``idemsim sweep NAME``): the grid, the seeds, the designs, the figure."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vary: dict[str, list[Any] | str] = Field(default_factory=dict, description="field -> its values, or "
                                                                               "\"START:STOP:STEP\"")
    seeds: int = Field(100, ge=1, le=100_000, description="replicates per point")
    designs: list[DesignName] | None = Field(None, description="the designs swept (default all)")
    measures: list[str] = Field(default_factory=lambda: ["double_charge"], description="what the figure shows: "
                                                                                        "rates, or numbers")
    plot: Literal["rate", "series"] = Field("rate", description="rate: each measure against the varied field; "
                                                                "series: attempts per second over time")
    marks: list[SweepMark] = Field(default_factory=list, description="vertical lines drawn on the figure")


class Texts(BaseModel):
    """A story's words for the reader in another language (``[ja]``): each field the English one's
    translation, in the article's terms (docs/ja/glossary.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str | None = None
    summary: str | None = None
    group: str | None = None
    story: str | None = None
    teaches: str | None = None


class Scenario(BaseModel):
    """One story of the article, ready to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    summary: str = Field(description="one line for `idemsim list`")
    group: str = "other"
    story: str = ""
    teaches: str = ""
    article: str = ""
    diagrams: list[str] = Field(default_factory=list, description="the article's own Mermaid diagrams for "
                                                                  "this story, verbatim")
    ja: Texts | None = Field(None, description="the title, summary, group, story and lesson in Japanese")
    variant: str | None = Field(None, description="set on a variant: its name")
    design: DesignName = "same-tx"
    compare: list[DesignName] | None = Field(None, description="designs `idemsim compare` runs (default all)")
    seed: int = 1
    client: ClientConfig = ClientConfig()
    operations: list[Operation] = Field(default_factory=lambda: [Operation()])
    arrivals: Arrivals | None = Field(None, description="many operations from a template")
    sweep: SweepConfig | None = Field(None, description="the default grid of `idemsim sweep`")
    network: NetworkConfig = NetworkConfig()
    api: ApiConfig = ApiConfig()
    processor: ProcessorConfig = ProcessorConfig()
    faults: list[Fault] = Field(default_factory=list)
    expect: dict[DesignName, Expectation] = Field(default_factory=dict)
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)
    _source: str = PrivateAttr("")

    @model_validator(mode="before")
    @classmethod
    def _complete_operation_retry(cls, raw: Any) -> Any:
        """An operation's ``retry`` table names only what differs from ``[client]``; fill in the rest. With
        ``[arrivals]`` and no ``[[operations]]``, there is no default operation."""
        if not isinstance(raw, dict):
            return raw
        if "arrivals" in raw and "operations" not in raw:
            raw = {**raw, "operations": []}
        if not isinstance(raw.get("operations"), list):
            return raw
        client = raw.get("client") if isinstance(raw.get("client"), dict) else {}

        def complete(op: Any) -> Any:
            if isinstance(op, dict) and isinstance(op.get("retry"), dict):
                return {**op, "retry": {**client, **op["retry"]}}
            return op

        out = {**raw, "operations": [complete(op) for op in raw["operations"]]}
        if isinstance(raw.get("arrivals"), dict) and isinstance(raw["arrivals"].get("operation"), dict):
            out["arrivals"] = {**raw["arrivals"], "operation": complete(raw["arrivals"]["operation"])}
        return out

    @model_validator(mode="after")
    def _some_operation(self) -> "Scenario":
        if not self.operations and self.arrivals is None:
            raise ValueError("a scenario needs [[operations]] or [arrivals]")
        return self

    def operation_count(self) -> int:
        """Operations as numbered: the written ones, then the arrivals."""
        return len(self.operations) + (self.arrivals.count if self.arrivals else 0)

    def text(self, field: str, lang: str = "en") -> str:
        """The reader-facing ``field`` (title, summary, group, story, teaches) in ``lang``: the Japanese one when
        asked and present, else the English."""
        if lang == "ja" and self.ja is not None and getattr(self.ja, field):
            return getattr(self.ja, field)
        return getattr(self, field)

    def variant_names(self) -> list[str]:
        return list(self.variants)


# -- loading --------------------------------------------------------------------------------------------
def builtin_dir() -> Path:
    """Where the shipped scenarios are (`idemsim.paths.scenarios_dir`)."""
    return scenarios_dir()


def builtin_names() -> list[str]:
    """The built-in stories (``scenarios/*.toml``; the sweeps in ``scenarios/sweeps/`` are not stories)."""
    return sorted(p.stem for p in builtin_dir().glob("*.toml"))


def sweep_names() -> list[str]:
    """The built-in sweeps (``scenarios/sweeps/*.toml``), runnable by name with ``idemsim sweep``."""
    return sorted(p.stem for p in (builtin_dir() / "sweeps").glob("*.toml"))


def resolve(name_or_path: str) -> Path:
    """A built-in scenario's or sweep's name, or a path to a TOML file."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise InputError(f"{name_or_path}: no such scenario file")
        return path
    for candidate in (builtin_dir() / f"{name_or_path}.toml", builtin_dir() / "sweeps" / f"{name_or_path}.toml"):
        if candidate.is_file():
            return candidate
    raise InputError(f"unknown scenario {name_or_path!r}; valid names: {', '.join(builtin_names())} "
                     f"(or a path to a .toml file)")


def read_raw(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None


def parse_set(assignment: str) -> tuple[list[str], Any]:
    """``"network.request.loss=0.3"`` -> (["network", "request", "loss"], 0.3); values are TOML, else text."""
    field, sep, text = assignment.partition("=")
    if not sep or not field.strip():
        raise InputError(f"--set {assignment!r}: expected section.field=value")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    return field.strip().split("."), value


def apply_sets(raw: dict[str, Any], sets: list[str]) -> dict[str, Any]:
    """``raw`` with each ``section.field=value`` applied. TOML cannot write "no value", so ``none`` (or
    ``null``) sets a field that may be unset, such as ``api.lease``, to None; where ``none`` is one of a
    field's allowed words (``client.key_strategy=none``) it stays that word."""
    raw = copy.deepcopy(raw)
    for assignment in sets:
        path, value = parse_set(assignment)
        if value in ("none", "null") and _accepts_none(path):
            value = None
        node = raw
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InputError(f"--set {assignment!r}: {part!r} is not a table")
            node = child
        node[path[-1]] = value
    return raw


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k != "expect":
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def validate(raw: dict[str, Any], source: str) -> Scenario:
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as e:
        raise InputError(f"{source}: {describe_error(e)}") from None
    scenario._raw, scenario._source = raw, source
    return scenario


def describe_error(e: ValidationError) -> str:
    """The first validation error as one line: field, problem, and what is allowed."""
    err = e.errors()[0]
    loc = [str(p) for p in err["loc"] if not str(p).startswith(("function-", "tagged-union")) and p != "[key]"]
    field = ".".join(loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        allowed = _allowed_fields(err["loc"][:-1])
        hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
        return f"unknown field {field!r}{hint}"
    if err["type"] == "missing":
        return f"field {field!r} is required"
    if err["type"] == "value_error":
        return f"field {field!r}: {err['msg'].removeprefix('Value error, ')} (got {err.get('input')!r})"
    return f"field {field!r}: {err['msg']} (got {err.get('input')!r})"


def _allowed_fields(loc: tuple) -> list[str]:
    from typing import get_args

    model: Any = Scenario
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        if isinstance(model, type) and issubclass(model, BaseModel):
            if part not in model.model_fields:
                # a tagged union member or dict key: find the model among the annotation's arguments
                model = next((a for a in _models_in(model) if getattr(a, "__name__", "") == part), None)
                continue
            model = _first_model(model.model_fields[part].annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []


def _accepts_none(path: list[str]) -> bool:
    """Whether the Scenario field at ``path`` may be None."""
    from typing import get_args

    model: Any = Scenario
    for part in path[:-1]:
        if not (isinstance(model, type) and issubclass(model, BaseModel) and part in model.model_fields):
            return False
        model = _first_model(model.model_fields[part].annotation)
    if not (isinstance(model, type) and issubclass(model, BaseModel) and path[-1] in model.model_fields):
        return False
    return type(None) in get_args(model.model_fields[path[-1]].annotation)


def _models_in(annotation: Any) -> list[type]:
    from typing import get_args

    found = []
    for a in get_args(annotation) or (annotation,):
        if isinstance(a, type) and issubclass(a, BaseModel):
            found.append(a)
        else:
            found.extend(_models_in(a) if get_args(a) else [])
    return found


def _first_model(annotation: Any) -> Any:
    models = _models_in(annotation)
    if len(models) == 1:
        return models[0]
    return annotation if not models else models  # type: ignore[return-value]


def load(name_or_path: str, sets: list[str] | None = None) -> Scenario:
    """Load a built-in scenario or a file; ``sets`` are ``section.field=value`` overrides."""
    path = resolve(name_or_path)
    raw = read_raw(path)
    source = str(path) if Path(name_or_path).suffix == ".toml" or Path(name_or_path).exists() else \
        f"scenario {name_or_path!r}"
    raw.setdefault("name", path.stem)
    scenario = validate(apply_sets(raw, sets or []), source)
    for name in scenario.variants:  # validate every variant now, so a bad one fails before anything runs
        variant(scenario, name, sets, source=source)
    return scenario


def variant(scenario: Scenario, name: str, sets: list[str] | None = None, *, source: str = "") -> Scenario:
    """The scenario as variant ``name`` tells it."""
    if name not in scenario.variants:
        raise InputError(f"scenario {scenario.name!r} has no variant {name!r}; variants: "
                         f"{', '.join(scenario.variants) or 'none'}")
    source = source or scenario._source or scenario.name
    base = {k: v for k, v in scenario._raw.items() if k != "variants"}
    over = scenario.variants[name]
    if "variants" in over:
        raise InputError(f"{source}: field 'variants.{name}.variants': a variant cannot have variants")
    merged = apply_sets(deep_merge(base, over), sets or [])
    merged["variant"] = name
    return validate(merged, f"{source} (variant {name!r})")


def runs(scenario: Scenario, sets: list[str] | None = None) -> list[Scenario]:
    """The base story and then every variant, each ready to simulate."""
    return [scenario] + [variant(scenario, name, sets) for name in scenario.variants]
