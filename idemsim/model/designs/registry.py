"""The registry of designs: the six shipped ones, in a fixed order, and any a user registers.

`DESIGNS` maps every design's name to its `Design`: first the shipped ones, in the order of `SHIPPED` (the order
of every comparison table and of ``idemsim list``), then those registered with `register_design` or named by
file (``--design path/to/file.py:function``, `resolve_design`). A shipped name cannot be taken; registering
another name again replaces it.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ...base.errors import InputError, os_reason
from ...base.printable import shorten, shown
from ..calls import DesignCode, Overran, defined_at, described, place, without_addresses
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


class _Designs(dict):
    """The registry's dict: a design named by file that this process has not registered yet (a worker of a sweep
    or an exploration, started afresh, is given the name only) is imported and registered on first use, as
    `resolve_design` does; any other unknown name is a `KeyError`."""

    def __missing__(self, name: str) -> Design:
        if not isinstance(name, str) or not _BY_FILE.fullmatch(name):
            raise KeyError(name)
        return self[resolve_design(name)]


_BY_FILE = re.compile(r".+\.py:[^:]+", re.S)
"""A design named by its file: ``path/to/file.py:function``."""

DESIGNS: dict[str, Design] = _Designs({d.name: d for d in shipped_designs()})
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
    points = (points,) if isinstance(points, str) else tuple(points)
    for point in points:
        if not (isinstance(point, str) and _POINT.fullmatch(point)):
            raise InputError("err.design.points", name=repr(name), place=defined_at(handler), point=shown(point))
    design = Design(name, handler, summary or (handler.__doc__ or "").strip().split("\n")[0] or name, keyed,
                    points, completer, abandoned or (_older_than_the_lease if completer else None),
                    custom=True, stores_keys=stores_keys, unique_key=unique_key, lease_recovery=lease_recovery,
                    options=default_options(keyed) if options is None else frozenset(options))
    DESIGNS[name] = design
    return design


_POINT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
"""A crash point's name: a word of letters, digits, ``_``, ``.`` and ``-`` (at most 64 characters)."""


def resolve_design(name: str) -> str:
    """The registered name of ``name``: a known design, or ``path/to/file.py:function``, which is imported
    (once) and registered under that very text, so that it reproduces. Anything else is an `InputError`.

    The file is the user's code: its import runs inside `idemsim.model.calls.DesignCode` (what it prints goes
    to standard error; a command line's watchdog may stop it), and whatever it raises, `SystemExit` and
    `KeyboardInterrupt` included, is one `InputError` naming the file's line. The name must be a function the
    file defines: a class, or a function the file imported from elsewhere, is refused."""
    if name in DESIGNS:
        return name
    path, sep, function = name.rpartition(":")
    if not sep or not path.endswith(".py") or not function:
        raise InputError("err.design.unknown", name=shown(name), designs=", ".join(DESIGNS))
    source = Path(path)
    try:
        found = source.is_file()
        module_name = f"idemsim_design_{abs(hash(str(source.resolve()))):x}"
    except (OSError, ValueError) as error:  # a name too long, a NUL: no such file either
        reason = os_reason(error) if isinstance(error, OSError) else str(error)
        raise InputError("err.design.no_file", name=shorten(name, 200),
                         path=f"'{shorten(path, 200)}' ({reason})") from None
    if not found:
        raise InputError("err.design.no_file", name=name, path=repr(path))
    spec = importlib.util.spec_from_file_location(module_name, source)
    module = importlib.util.module_from_spec(spec)
    code = DesignCode(name)
    try:
        with code:
            spec.loader.exec_module(module)
    except Overran as stopped:
        raise InputError("err.design.import_overran", name=name, path=path, seconds=stopped.seconds,
                         place=place(stopped, spec.origin, os.path.basename(path))) from None
    except BaseException as error:  # the user's file, whatever it raised: one line, never idemsim's traceback
        raise InputError("err.design.import", name=name, path=path,
                         place=place(error, spec.origin, os.path.basename(path)),
                         error=_shorten(described(error))) from None
    finally:
        code.printed.end()
    handler = getattr(module, function, None)
    if handler is None or not callable(handler):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module_name and not inspect.isclass(v))
        raise InputError("err.design.no_function", name=name, path=path, function=repr(function),
                         names=", ".join(names))
    if inspect.isclass(handler):
        raise InputError("err.design.a_class", name=name, path=path, function=repr(function))
    if (inspect.isfunction(handler) or inspect.isbuiltin(handler)) and handler.__module__ != module_name:
        raise InputError("err.design.imported", name=name, path=path, function=repr(function),
                         module=handler.__module__)
    register_design(name, handler, **{fact: getattr(handler, fact) for fact in FACTS if hasattr(handler, fact)})
    return name


def _shorten(text: str, limit: int = 200) -> str:
    """What a design's file raised, said in one line of at most ``limit`` characters, without memory addresses."""
    text = " ".join(without_addresses(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


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
