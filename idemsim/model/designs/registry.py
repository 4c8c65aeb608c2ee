"""The registry of designs: the six shipped ones, in a fixed order, and any a user registers.

`DESIGNS` maps every design's name to its `Design`: first the shipped ones, in the order of `SHIPPED` (the order
of every comparison table and of ``idemsim list``), then those registered with `register_design` or named by
file (``--design path/to/file.py:function``, `resolve_design`). A shipped name cannot be taken; registering
another name again replaces it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable
from pathlib import Path

from ...base.errors import InputError
from ...base.printable import shown
from ...base.readers import label
from .spec import SHIPPED_POINTS, Design, default_options, recovery_lease


def shipped_designs() -> list[Design]:
    """Every module of this package that defines a ``DESIGN`` is a shipped design, in the order of their ranks:
    a new design is one file here (its handler and its `Design`), found without being named anywhere else."""
    found = []
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        design = getattr(importlib.import_module(f"{__package__}.{module.name}"), "DESIGN", None)
        if isinstance(design, Design):
            found.append(design)
    return sorted(found, key=lambda design: design.rank)


DESIGNS: dict[str, Design] = {d.name: d for d in shipped_designs()}
"""Every design by name: the shipped ones in the article's order, then any registered with `register_design` or
named by file."""

SHIPPED = tuple(DESIGNS)

FACTS = ("summary", "keyed", "points", "completer", "abandoned", "stores_keys", "unique_key", "lease_recovery",
         "options")
"""What the `design` decorator marks a handler with, and `resolve_design` registers it with."""


def _older_than_the_lease(row: dict, now: float, config) -> bool:
    """A custom design's default: a key in progress for longer than the lease (10 s unless ``api.lease``)."""
    return row["status"] == "in_progress" and row["created_at"] < now - recovery_lease(config)


def register_design(name: str, handler: Callable, *, summary: str = "", keyed: bool = True,
                    points: tuple[str, ...] = SHIPPED_POINTS, completer: Callable | None = None,
                    abandoned: Callable | None = None, stores_keys: bool = True, unique_key: bool = True,
                    lease_recovery: bool = False, options: Iterable[str] | None = None) -> Design:
    """Make ``handler`` a design named ``name``, for `idemsim.simulate`, ``--design`` and ``[expect.NAME]``.

    ``handler(h)`` receives the `idemsim.model.api.Handler` of one ``POST /charges`` and returns its
    `idemsim.base.http.Response`; it may ``yield from h.sql(statement, **fields)`` (the statements of
    ``docs/designs.md``), ``yield from h.capture(amount, key)`` (the payment processor), ``h.point(name)`` at the
    crash points it declares in ``points``, and read ``h.request``, ``h.key``, ``h.fingerprint``, ``h.amount``
    and ``h.config``. A ``completer(w, key)`` generator, if given, is run every ``api.completer_every`` seconds
    (1 s) on each key ``abandoned(row, now, config)`` says was left (default: in progress for longer than the
    lease, 10 s unless ``api.lease``); ``w`` offers ``w.sql``, ``w.lookup(key)`` (what the processor did with
    the key) and ``w.finished(key, response)`` / ``w.released(key, point)`` for the trace. Registering a
    shipped design's name is refused; registering a name again replaces it.

    The facts the simulation reads of a design (`idemsim.model.designs.spec.Design`) default to: ``keyed``
    (a request without a key follows ``api.missing_key``), ``stores_keys`` (it writes key records: with
    ``api.ttl`` a reaper runs; explore's client sends a key), ``unique_key`` (the key table has a unique
    constraint unless ``api.unique`` says otherwise), no ``lease_recovery`` (the API's own deletion of stale
    ``in_progress`` records, committed-first's), and ``options``, the ``[api]`` options that change what it does
    (for ``compare``'s option rows and explore's description), the processor's (``processor_key``,
    ``processor_timeout``) and, if it is keyed, the key's (``fingerprint_check``, ``ttl``, ``reap_every``,
    ``missing_key``, ``replay_errors``).
    """
    if name in SHIPPED:
        raise InputError("err.design.shipped_name", name=repr(name))
    if not callable(handler):
        raise InputError("err.design.not_function", name=repr(name), type=type(handler).__name__)
    if isinstance(options, str):
        options = (options,)
    design = Design(name, handler, summary or (handler.__doc__ or "").strip().split("\n")[0] or name, keyed,
                    tuple(points), completer, abandoned or (_older_than_the_lease if completer else None),
                    custom=True, stores_keys=stores_keys, unique_key=unique_key, lease_recovery=lease_recovery,
                    options=default_options(keyed) if options is None else frozenset(options))
    DESIGNS[name] = design
    return design


def resolve_design(name: str) -> str:
    """The registered name of ``name``: a known design, or ``path/to/file.py:function``, which is imported
    (once) and registered under that very text, so that it reproduces. Anything else is an `InputError`."""
    if name in DESIGNS:
        return name
    path, sep, function = name.rpartition(":")
    if not sep or not path.endswith(".py") or not function:
        raise InputError("err.design.unknown", name=shown(name), designs=", ".join(DESIGNS))
    source = Path(path)
    try:
        found = source.is_file()
    except (OSError, ValueError):  # a name or a path too long for any file
        found = False
    if not found:
        raise InputError("err.design.no_file", name=label(name), path=repr(label(path)))
    module_name = f"idemsim_design_{abs(hash(str(source.resolve()))):x}"
    spec = importlib.util.spec_from_file_location(module_name, source)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file: report it, never a traceback from inside idemsim
        raise InputError("err.design.import", name=name, path=path, error_type=type(error).__name__,
                         error=str(error)) from None
    handler = getattr(module, function, None)
    if handler is None or not callable(handler):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module_name)
        raise InputError("err.design.no_function", name=name, path=path, function=repr(function),
                         names=", ".join(names))
    register_design(name, handler, **{fact: getattr(handler, fact) for fact in FACTS if hasattr(handler, fact)})
    return name


def design(*, summary: str = "", keyed: bool = True, points: tuple[str, ...] = SHIPPED_POINTS,
           completer: Callable | None = None, abandoned: Callable | None = None, stores_keys: bool = True,
           unique_key: bool = True, lease_recovery: bool = False,
           options: Iterable[str] | None = None) -> Callable:
    """A decorator that tells ``--design file.py:function`` how to register the function it names (the
    parameters of `register_design`)."""
    facts = {"summary": summary, "keyed": keyed, "points": tuple(points), "completer": completer,
             "abandoned": abandoned, "stores_keys": stores_keys, "unique_key": unique_key,
             "lease_recovery": lease_recovery, "options": options}

    def mark(handler: Callable) -> Callable:
        for fact, value in facts.items():
            setattr(handler, fact, value)
        return handler

    return mark


def known_points() -> set[str]:
    """Every crash point some design declares."""
    return {p for d in DESIGNS.values() for p in d.points}
