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
import math
import tomllib
from array import array
from collections.abc import Sequence
from itertools import chain, repeat
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, Field, PrivateAttr, ValidationError, model_validator

from ..base.errors import InputError, Message
from ..base.fields import (
    MAX_NESTING,
    Alternatives,
    Count,
    InputModel,
    Integer,
    JsonObject,
    PositiveSeconds,
    Problem,
    Seconds,
    dotted,
    invalid,
)
from ..base.http import Outcome
from ..base.paths import scenarios_dir
from ..base.printable import shown
from ..base.readers import check_document, file_kind, kind_said, label, parse_toml, read_text
from ..model.api import ApiConfig
from ..model.client import ClientConfig, Operation
from ..model.designs import DESIGNS
from ..model.faults import Fault
from ..model.network import Link
from ..model.processor import ProcessorConfig


def _known_design(name: str) -> str:
    """A design the registry knows: a shipped one, one registered from Python, or one named by file."""

    if name not in DESIGNS:
        raise invalid("unknown_design", designs=", ".join(DESIGNS))
    return name


DesignName = Annotated[str, AfterValidator(_known_design)]
"""A design's name, checked against `idemsim.model.designs.DESIGNS` when a scenario is validated."""


class NetworkConfig(InputModel):
    """The two directions of the network."""

    request: Link = Link()
    response: Link = Link()


Status = Integer | Literal["timeout"]

PROPERTY_IDS = ("at-most-one-charge", "at-most-one-capture", "exactly-one-on-success", "ledger-agrees",
                "replay-identical", "no-stuck-key", "client-view", "customer-can-find-out", "no-lost-update")
"""Every property a run is judged on, in report order: the names of `idemsim.judge.properties.PROPERTIES`,
here for a scenario file's ``breaks`` (the judge is a floor above; a test holds the two lists equal)."""

PropertyId = Literal[PROPERTY_IDS]


class Expectation(InputModel):
    """What a run under one design must show. Every field left out is not checked."""

    charges: Count | None = Field(None, description="charge rows at the end")
    captures: Count | None = Field(None, description="captures in the payment processor's ledger")
    outcome: Outcome | None = Field(None, description="the first operation's final outcome")
    status: Integer | None = Field(None, description="the first operation's final status")
    seen: list[Status] | None = Field(None, description="statuses of the first operation's attempts, in order")
    outcomes: list[Outcome] | None = Field(None, description="every operation's final outcome, in order")
    seen_by_op: list[list[Status]] | None = Field(
        None, description="statuses of every operation's attempts (duplicates included), in order")
    client_believes: Count | None = Field(None, description="logical operations the client believes done "
                                                            "(one of its copies ended ok)")
    replay_identical: bool | None = Field(None, description="every replayed response equals the first")
    replays: Count | None = Field(None, description="responses the API replayed from a record")
    wait_seconds: float | None = Field(None, ge=0, description="the longest wait of a statement on the index")
    keys_held: Count | None = Field(None, description="key records left at the end")
    keys_in_progress: Count | None = Field(None, description="key records left in_progress")
    balance: Integer | None = Field(None, description="the balance at the end")
    items: JsonObject | None = Field(None, description="the items at the end")
    log_lines: Count | None = Field(None, description="requests the API wrote to its access log")
    breaks: list[PropertyId] | None = Field(
        None, description="the properties the article says this story breaks under this design ([]: the design "
                          "is correct on it); left out, they are not checked")

    def stated(self) -> dict[str, Any]:
        """The measured fields this expectation checks (those not None, ``breaks`` aside: it is checked against
        the properties, not a measure), in order: what ``model_dump(exclude_none=True, exclude={"breaks"})``
        gives, without building a serializer for this model alone (a few ms of every run's start-up)."""
        return {name: value for name, value in self if value is not None and name != "breaks"}


Name = Annotated[str, Field(min_length=1)]


class Arrivals(InputModel):
    """Many operations without writing each: a template operation, started ``count`` times by a process.

    ``poisson``: gaps drawn from an exponential with mean ``gap`` (or 1/``rate``), from the run's random
    numbers; ``uniform``: every ``gap`` seconds; ``burst``: all at ``start``; ``sequential``: one at a time, the
    first at ``start``, each when the one before has ended (a single client working through a list). The operations
    are numbered after the written ``[[operations]]``, as if written out, so faults and expectations can name them.
    """

    process: Literal["poisson", "uniform", "burst", "sequential"] = Field(
        "poisson", description="how arrivals are spaced")
    count: int = Field(ge=1, le=1_000_000, description="how many operations arrive")
    rate: float | None = Field(None, gt=0, description="arrivals per second (poisson, uniform)")
    gap: PositiveSeconds | None = Field(None, description="seconds between arrivals, the mean for poisson "
                                                          "(instead of rate)")
    start: Seconds = Field(0.0, description="when the first may arrive")
    operation: Operation = Field(default_factory=Operation, description="the template of every arrival")

    @model_validator(mode="after")
    def _one_spacing(self) -> "Arrivals":
        if self.rate is not None and self.gap is not None:
            raise invalid("rate_and_gap")
        if self.process in ("poisson", "uniform") and self.rate is None and self.gap is None:
            raise invalid("needs_spacing", process=self.process)
        if "at" in self.operation.model_fields_set:
            raise invalid("arrival_at")
        return self

    def mean_gap(self) -> float:
        return self.gap if self.gap is not None else (1.0 / self.rate if self.rate else 0.0)

    def times(self, rng) -> list[float]:
        """When each operation starts; poisson gaps come from ``rng`` (one draw each)."""
        if self.process in ("burst", "sequential"):
            return [self.start] * self.count  # sequential: none earlier, each after the one before
        gap = self.mean_gap()
        if self.process == "uniform":
            return [self.start + i * gap for i in range(self.count)]

        t, out = self.start, []
        for _ in range(self.count):
            out.append(t)
            t += -gap * math.log(1.0 - rng.random())
        return out


class Arrived(Sequence):
    """A scenario's operations with its ``[arrivals]`` written out, numbered as `Arrivals` says: the written
    ones, then one per arrival time. It reads as the list of them would (index, slice, iterate, compare), but a
    generated operation is made when read, the template with its ``at``: a load keeps a float per arrival, not
    a model (equal to the list's, not the same object on each read)."""

    __slots__ = ("written", "template", "times", "_fields_set")

    def __init__(self, written: list[Operation], template: Operation, times: list[float]) -> None:
        self.written = written
        self.template = template
        """Every generated operation is this one but for its ``at``."""
        self.times = array("d", times)
        self._fields_set = template.model_fields_set | {"at"}

    def __len__(self) -> int:
        return len(self.written) + len(self.times)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if 0 <= i < len(self.written):
            return self.written[i]
        if i < 0:
            raise IndexError(i)
        return _copy_at(self.template, self.times[i - len(self.written)], self._fields_set)

    def __iter__(self):
        yield from self.written
        for at in self.times:
            yield _copy_at(self.template, at, self._fields_set)

    def shapes(self):
        """Each operation, a generated one as its template: what every field but ``at`` says, made for none."""
        return chain(self.written, repeat(self.template, len(self.times)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, Arrived)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"Arrived({len(self.written)} written, {len(self.times)} from {self.template!r})"


def shapes(operations):
    """``operations`` (a list or `Arrived`), a generated one as its template: for what does not read ``at``."""
    return operations.shapes() if isinstance(operations, Arrived) else operations


def _copy_at(template: Operation, at: float, fields_set: set[str]) -> Operation:
    """``template.model_copy(update={"at": at})``, the copies sharing one set of fields set (pydantic copies it
    for each, and a load has many): pydantic's public ``model_construct``, which takes the set as it is."""
    return type(template).model_construct(fields_set, **{**dict(template), "at": at})


class SweepMark(InputModel):
    """A vertical line on a sweep's figure at a value of the varied field (``{at = 40, label = "…"}``), or a
    band from ``at`` to ``until``; ``ja`` is the label in Japanese (``--lang ja``)."""

    at: float
    until: float | None = None
    label: str
    ja: str | None = None

    def text(self, lang: str) -> str:
        """The label in ``lang`` (the English one when there is no Japanese)."""
        return self.ja if lang == "ja" and self.ja else self.label


class SweepConfig(InputModel):
    """A scenario's default sweep (``idemsim sweep NAME``): the grid, the seeds, the designs, the figure."""

    vary: dict[str, list[Any] | str] = Field(default_factory=dict, description="field -> its values, or "
                                                                               "\"START:STOP:STEP\"")
    seeds: int = Field(100, ge=1, le=100_000, description="replicates per point")
    designs: list[DesignName] | None = Field(None, description="the designs swept (default all)")
    measures: list[str] = Field(default_factory=lambda: ["double_charge"], description="what the figure shows: "
                                                                                        "rates, or numbers")
    plot: Literal["rate", "series"] = Field("rate", description="rate: each measure against the varied field; "
                                                                "series: attempts per second over time")
    marks: list[SweepMark] = Field([], description="vertical lines drawn on the figure")


class Texts(InputModel):
    """A story's words for the reader in another language (``[ja]``): each field the English one's
    translation, in the article's terms (docs/ja/glossary.md)."""

    title: str | None = None
    summary: str | None = None
    group: str | None = None
    story: str | None = None
    teaches: str | None = None


class Scenario(InputModel):
    """One story of the article, ready to run."""

    name: Name
    title: str
    summary: str = Field(description="one line for `idemsim list`")
    group: str = "other"
    story: str = ""
    teaches: str = ""
    article: str = ""
    diagrams: list[str] = Field([], description="the article's own Mermaid diagrams for "
                                                                  "this story, verbatim")
    ja: Texts | None = Field(None, description="the title, summary, group, story and lesson in Japanese")
    variant: str | None = Field(None, description="set on a variant: its name")
    design: DesignName = "same-tx"
    compare: list[DesignName] | None = Field(None, min_length=1, description="designs `idemsim compare` runs "
                                                                             "(default all)")
    seed: Integer = 1
    client: ClientConfig = ClientConfig()
    operations: list[Operation] = Field(default_factory=lambda: [Operation()])
    arrivals: Arrivals | None = Field(None, description="many operations from a template")
    sweep: SweepConfig | None = Field(None, description="the default grid of `idemsim sweep`")
    network: NetworkConfig = NetworkConfig()
    api: ApiConfig = ApiConfig()
    processor: ProcessorConfig = ProcessorConfig()
    faults: list[Fault] = Field([])
    expect: dict[DesignName, Expectation] = Field(default_factory=dict)
    variants: dict[Name, dict[str, Any]] = Field(default_factory=dict)
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)
    _source: str | Message = PrivateAttr("")
    _max_time: float | None = PrivateAttr(None)
    """The bound on simulated time it was validated against (``--max-time``), or None for the default."""

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
            raise invalid("no_operations")
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

    @model_validator(mode="after")
    def _duplicates_copy_an_operation(self) -> "Scenario":
        """A duplicate copies one of the operations, so its ``op`` must name one (a lost message of an attempt
        that never happens is legal: the run reports that fault as never happened)."""
        for i, fault in enumerate(self.faults):
            if fault.kind == "duplicate" and fault.op > self.operation_count():
                n = self.operation_count()
                raise invalid("duplicate_op", at=f"faults.{i}.op", n=str(n), op=str(fault.op),
                              s="s" if n != 1 else "")
        return self

    def variant_names(self) -> list[str]:
        return list(self.variants)


# -- loading --------------------------------------------------------------------------------------------
def builtin_dir() -> Path:
    """Where the shipped scenarios are (`idemsim.base.paths.scenarios_dir`)."""
    return scenarios_dir()


def builtin_names() -> list[str]:
    """The built-in stories (``scenarios/*.toml``; the sweeps in ``scenarios/sweeps/`` are not stories)."""
    return sorted(p.stem for p in builtin_dir().glob("*.toml"))


def sweep_names() -> list[str]:
    """The built-in sweeps (``scenarios/sweeps/*.toml``), runnable by name with ``idemsim sweep``."""
    return sorted(p.stem for p in (builtin_dir() / "sweeps").glob("*.toml"))


def resolve(name_or_path: str) -> Path:
    """A built-in scenario's or sweep's name, or a path to a TOML file. Nothing is opened here: a directory, a
    FIFO or a device is named as what it is."""
    if not name_or_path:
        raise InputError("err.empty_scenario")
    path = Path(name_or_path)
    kind = file_kind(path)
    if path.suffix == ".toml" or kind is not None:
        if kind is None:
            raise InputError("err.no_scenario_file", file=label(name_or_path))
        if kind != "a file":
            raise InputError("err.is_not", file=label(name_or_path), kind=kind_said(kind),
                             what=Message("err.what.scenario"))
        return path
    if "/" not in name_or_path:
        for candidate in (builtin_dir() / f"{name_or_path}.toml", builtin_dir() / "sweeps" / f"{name_or_path}.toml"):
            if file_kind(candidate) == "a file":
                return candidate
    raise InputError("err.unknown_scenario", name=shown(name_or_path), names=", ".join(builtin_names()))


def read_raw(path: Path, source: str | Message | None = None) -> dict[str, Any]:
    """The TOML document in the scenario file ``path`` (`idemsim.base.readers`: UTF-8, nesting bounded)."""
    return parse_toml(read_text(path), source or str(path))


def parse_set(assignment: str) -> tuple[list[str], Any]:
    """``"network.request.loss=0.3"`` -> (["network", "request", "loss"], 0.3); values are TOML, else text."""
    field, sep, text = assignment.partition("=")
    where = f"--set {shown(assignment)}"
    if not sep or not field.strip():
        raise InputError("err.set.form", set=shown(assignment))
    path = [part.strip() for part in field.strip().split(".")]
    if not all(path):
        raise InputError("err.set.empty_name", set=shown(assignment))
    if len(path) > MAX_NESTING:
        raise InputError("err.at", where=where, problem=Message("err.nested", n=MAX_NESTING))
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    except RecursionError:
        raise InputError("err.too_deep", file=where, n=MAX_NESTING) from None
    except ValueError:  # an integer longer than Python reads (sys.get_int_max_str_digits)
        raise InputError("err.too_many_digits", file=where) from None
    check_document(value, where)
    return path, value


def apply_sets(raw: dict[str, Any], sets: list[str], *, variants: bool = True) -> dict[str, Any]:
    """``raw`` with each ``section.field=value`` applied. TOML cannot write "no value", so ``none`` (or
    ``null``) sets a field that may be unset, such as ``api.lease``, to None; where ``none`` is one of a
    field's allowed words (``client.key_strategy=none``) it stays that word. ``variants.NAME.…`` must name a
    variant of ``raw``; with ``variants=False`` (a variant's own story) such sets are left out."""
    raw = copy.deepcopy(raw)
    for assignment in sets:
        path, value = parse_set(assignment)
        if path[0] == "variants":
            if not variants:
                continue
            known = raw.get("variants") if isinstance(raw.get("variants"), dict) else {}
            if len(path) > 1 and path[1] not in known:
                raise InputError("err.set.no_variant", set=shown(assignment), name=shown(path[1]),
                                 variants=", ".join(known) or Message("err.none"))
        if value in ("none", "null") and _accepts_none(path):
            value = None
        node = raw
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InputError("err.set.not_table", set=shown(assignment), part=shown(part))
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


def validate(raw: dict[str, Any], source: str | Message, *, max_time: float | None = None,
             sets: list[str] | None = None, variant: str | None = None) -> Scenario:
    """``raw`` as a `Scenario`, every time checked against ``max_time`` (default: the usual bound), or one
    `InputError` line naming ``source`` (and the ``--set`` among ``sets`` that gave the bad field, read as the
    variant ``variant`` sees it), the field, the value and what is allowed."""
    check_document(raw, source)
    try:
        scenario = Scenario.model_validate(raw, context=None if max_time is None else {"max_time": max_time})
    except ValidationError as e:
        culprit = _culprit(e, sets or [], variant)
        where = Message("err.where.set", source=source, set=shown(culprit)) if culprit else source
        raise InputError("err.at", where=where, problem=describe_error(e)) from None
    scenario._raw, scenario._source, scenario._max_time = raw, source, max_time
    return scenario


# -- one line per error ---------------------------------------------------------------------------------
_SAYS_ITS_VALUE = frozenset({"body_field", "uniform_range", "duplicate_op", "json_value"})
"""Errors whose message already shows the value (or where the whole input would be noise)."""


def describe_error(e: ValidationError) -> Message:
    """The first validation error as one line: the field as the user writes it, the problem and what is
    allowed, and the value given, cut to fit the line. The alternatives of a union are said together
    (``Input should be greater than or equal to 0.001 or 'off'``). The problem is said in the reader's language
    (`idemsim.base.fields.Problem`)."""
    errors = e.errors()
    err = errors[0]
    path, _ = _walk(err["loc"])
    extra = (err.get("ctx") or {}).get("at")
    field = shown(extra or dotted(tuple(path))) if extra or path else Message("err.pyd.whole")
    if err["type"] == "extra_forbidden":
        parent, node = _walk(err["loc"][:-1])
        allowed = list(node.model_fields) if _is_model(node) else []
        unknown = shown(dotted((*parent, err["loc"][-1])))
        if allowed:
            return Message("err.pyd.unknown_field_allowed", field=unknown, allowed=", ".join(allowed))
        return Message("err.pyd.unknown_field", field=unknown)
    if err["type"] == "missing":
        return Message("err.pyd.required", field=field)
    problems = [Problem(err)]
    said = [problems[0].english]
    for other in errors[1:]:
        if _walk(other["loc"])[0] == path and other["type"] not in ("extra_forbidden", "missing"):
            alternative = other["msg"].removeprefix("Input should be ")
            if alternative != other["msg"] and alternative not in said:
                problems.append(Problem(other))
                said.append(alternative)
    problem = problems[0] if len(problems) == 1 else Alternatives(problems)
    if err["type"] in _SAYS_ITS_VALUE:
        return Message("err.pyd.field", field=field, problem=problem)
    return Message("err.pyd.field_got", field=field, problem=problem, value=shown(err.get("input")))


def _culprit(e: ValidationError, sets: list[str], variant: str | None) -> str | None:
    """The last of ``sets`` that set the first error's field, or a table holding it, or a field inside it."""
    err = e.errors()[0]
    at = (err.get("ctx") or {}).get("at")
    field = at.split(".") if at else _walk(err["loc"])[0] + (
        [str(err["loc"][-1])] if err["type"] == "extra_forbidden" else [])
    for assignment in reversed(sets):
        path, _ = parse_set(assignment)
        if path[0] == "variants":
            if variant is None or len(path) < 3 or path[1] != variant:
                continue
            path = path[2:]
        n = min(len(path), len(field))
        if path[:n] == field[:n]:
            return assignment
    return None


def _is_model(node: Any) -> bool:
    return isinstance(node, type) and issubclass(node, BaseModel)


def _shape(annotation: Any) -> tuple[str, Any]:
    """What a field's annotation holds: ("model", M), ("models", [M, …]) for a tagged union, ("list", item),
    ("dict", value), or ("leaf", None)."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if _is_model(annotation):
        return "model", annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is list:
        return "list", args[0] if args else Any
    if origin is dict:
        return "dict", args[1] if len(args) == 2 else Any
    if origin is Union or type(annotation).__name__ == "UnionType":
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return _shape(members[0])
        shapes = [_shape(a) for a in members]
        if all(kind == "model" for kind, _ in shapes):
            return "models", [m for _, m in shapes]
    return "leaf", None


def _walk(loc: tuple) -> tuple[list[str], Any]:
    """A pydantic error location as the user's path (union members' tags and ``[key]`` left out), and the
    annotation found at its end."""
    node: Any = Scenario
    path: list[str] = []
    for part in loc:
        kind, inner = _shape(node)
        name = _field_named(inner, part) if kind == "model" else None
        if name is not None:
            path.append(str(part))
            node = inner.model_fields[name].annotation
        elif kind == "models":
            node = next((m for m in inner if part in (m.__name__, m.model_fields["kind"].default)), node)
        elif kind == "list" and isinstance(part, int):
            path.append(str(part))
            node = inner
        elif kind == "dict" and part != "[key]":
            path.append(str(part))
            node = inner
    kind, inner = _shape(node)
    return path, inner if kind == "model" else node


def _field_named(model: Any, part: Any) -> str | None:
    """The field of ``model`` that ``part`` names, by its name or its alias (``from`` for an outage's start)."""
    if not isinstance(part, str):
        return None
    if part in model.model_fields:
        return part
    return next((name for name, info in model.model_fields.items() if info.alias == part), None)


def _accepts_none(path: list[str]) -> bool:
    """Whether the Scenario field at ``path`` may be None."""
    parent_path, parent = _walk(tuple(path[:-1]))
    if parent_path != path[:-1] or not _is_model(parent) or path[-1] not in parent.model_fields:
        return False
    return type(None) in get_args(parent.model_fields[path[-1]].annotation)


def load(name_or_path: str, sets: list[str] | None = None, *, max_time: float | None = None) -> Scenario:
    """Load a built-in scenario or a file; ``sets`` are ``section.field=value`` overrides; ``max_time`` the
    bound on a run's simulated time that every time is checked against (default: the usual bound)."""
    path = resolve(name_or_path)
    builtin = path.parent == builtin_dir() and name_or_path == path.stem
    source = Message("err.where.scenario", name=repr(name_or_path)) if builtin else label(path)
    raw = read_raw(path, source)
    raw.setdefault("name", path.stem)
    scenario = validate(apply_sets(raw, sets or []), source, max_time=max_time, sets=sets)
    for name in scenario.variants:  # validate every variant now, so a bad one fails before anything runs
        variant(scenario, name, sets, source=source)
    return scenario


def variant(scenario: Scenario, name: str, sets: list[str] | None = None, *, source: str | Message = "") -> Scenario:
    """The scenario as variant ``name`` tells it."""
    if name not in scenario.variants:
        raise InputError("err.no_variant", name=shown(scenario.name), variant=shown(name),
                         variants=", ".join(scenario.variants) or Message("err.none"))
    source = source or scenario._source or scenario.name
    base = {k: v for k, v in scenario._raw.items() if k != "variants"}
    over = scenario.variants[name]
    if "variants" in over:
        raise InputError("err.at_field", where=source, field=shown(f"variants.{name}.variants"),
                         problem=Message("err.variant_variants"))
    merged = apply_sets(deep_merge(base, over), sets or [], variants=False)
    merged["variant"] = name
    return validate(merged, Message("err.where.variant", source=source, name=shown(name)),
                    max_time=scenario._max_time, sets=sets, variant=name)


def runs(scenario: Scenario, sets: list[str] | None = None) -> list[Scenario]:
    """The base story and then every variant, each ready to simulate."""
    return [scenario] + [variant(scenario, name, sets) for name in scenario.variants]
