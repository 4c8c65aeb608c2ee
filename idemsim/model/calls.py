"""What a user's design asked for: each statement, capture, lookup or work its code called, and the line it
called it from.

``h.sql(...)`` makes a generator; only ``yield from`` runs it. A design that forgets ``yield from`` makes one that
nothing runs, and the statement silently never happens. So a user's design gets each statement, capture, lookup and
work wrapped in a `Call`, which remembers the file and line of the design's code that made it and whether anything
ran it; `idemsim.model.api` asks, when the design's code returns or fails, for the first call it made and never ran
(`Calls.first_unrun`) and reports it as the design's error.

Guarantees: ``yield from call`` is ``yield from`` the generator it wraps (the same events, result and exceptions);
making a call costs one frame lookup and one list append, and only a user's design makes them (the shipped designs'
handlers get their generators as they are).

A user's design runs inside `DesignCode` (its import, and each step of its handler or completer: from being resumed
to its next ``yield``): what it prints goes to standard error, each line marked with the design, never into
idemsim's own output (``--format json`` stays JSON); and a watchdog, when a command line installed one (`watch`,
`idemsim.cli.watchdog`), may stop a step that runs too long by raising `Overran` into it. The model itself never
reads a clock: without a watchdog nothing is timed. `place` finds the line of the design's own file that an error,
a step or a function stands at, and `without_addresses` takes memory addresses out of what is said of it, so that
the same input gives the same line.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import re
import sys
import traceback
from collections.abc import Generator
from typing import Any

from ..base.printable import safe


class Call:
    """One statement, capture, lookup or work a design's code asked for: ``yield from`` it to run it."""

    __slots__ = ("work", "party", "kind", "argument", "file", "line", "ran")

    def __init__(self, work: Generator, party: str, kind: str, argument: Any, file: str, line: int) -> None:
        self.work = work
        """The generator that does it."""
        self.party = party
        """How the design's code names who it asked: ``h`` (its handler) or ``w`` (its completer's worker)."""
        self.kind = kind
        """What it asked for: ``sql``, ``capture``, ``lookup`` or ``work``."""
        self.argument = argument
        """The first argument it gave (the statement's name, the amount, the key, the seconds)."""
        self.file = file
        self.line = line
        """Where the design's code made the call."""
        self.ran = False
        """Whether anything has started it (``yield from`` does)."""

    def __iter__(self) -> Generator:
        self.ran = True
        return self.work

    @property
    def call(self) -> str:
        """The call as the design's code wrote it, arguments after the first left out: ``h.sql('insert_charge')``."""
        argument = repr(self.argument)
        return f"{self.party}.{self.kind}({argument if len(argument) <= 60 else argument[:59] + '…'})"

    @property
    def place(self) -> str:
        """The design's file (its name) and line: ``mine.py:12``."""
        return f"{os.path.basename(self.file)}:{self.line}"

    def __repr__(self) -> str:
        return f"<{self.call} at {self.place}>"


class Calls(list):
    """The calls one run of a design's code made, in the order it made them."""

    def asked(self, work: Generator, party: str, kind: str, argument: Any) -> Call:
        """``work`` as a `Call` made by the design's code, which is two calls up: it called the method of ``h`` or
        ``w`` that calls this."""
        caller = inspect.currentframe().f_back.f_back
        call = Call(work, party, kind, argument, caller.f_code.co_filename, caller.f_lineno)
        self.append(call)
        return call

    def first_unrun(self) -> Call | None:
        """The first call that nothing ran (a forgotten ``yield from``), or None."""
        return next((call for call in self if not call.ran), None)


# -- a design's code, running ---------------------------------------------------------------------------------------
class Overran(BaseException):
    """Raised into a design's code by a watchdog when one step of it ran longer than ``seconds`` of wall-clock
    time without yielding. A `BaseException`, as `KeyboardInterrupt` is, so that the design's own ``except
    Exception`` does not swallow it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds
        """The limit the step ran past."""


class Watchdog:
    """What watches a design's code: `start` when a step begins, `stop` when it ends. This one watches nothing; a
    command line installs its own with `watch`."""

    def start(self) -> None:
        """A step of a design's code begins."""

    def stop(self) -> None:
        """It ended (returned, yielded or raised)."""


_WATCHDOG: list[Watchdog] = [Watchdog()]
"""The watchdog in force (one process, one watchdog)."""


def watch(watchdog: Watchdog | None) -> None:
    """Put ``watchdog`` in force around every step of a design's code (None: nothing watches)."""
    _WATCHDOG[0] = watchdog if watchdog is not None else Watchdog()


MAX_PENDING = 10_000
"""Characters of an unfinished printed line kept before they are written anyway."""


class Printed(io.TextIOBase):
    """Standard output while a design's code runs: each line it prints goes to standard error, after
    ``[label]`` (the design and the request), escaped as any echo of the input is; a line not yet finished waits
    for its end (`end`)."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label
        self.pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        if len(self.pending) > MAX_PENDING:
            lines.append(self.pending)
            self.pending = ""
        for line in lines:
            self._say(line)
        return len(text)

    def end(self) -> None:
        """The design's code has finished: an unfinished line is written now."""
        if self.pending:
            pending, self.pending = self.pending, ""
            self._say(pending)

    def _say(self, line: str) -> None:
        stderr = sys.stderr
        if stderr is None:
            return
        try:
            stderr.write(f"[{safe(self.label, keep='')}] {safe(line, keep='')}\n")
        except (OSError, ValueError):  # standard error gone: what the design printed is lost, not its run
            pass


class DesignCode:
    """The surroundings of one stretch of a user's design's code: ``with code:`` around its import, and around each
    step of a handler or completer. Inside, standard output is `Printed` (whatever the code does to
    ``sys.stdout``, it is put back after), and the watchdog in force watches."""

    __slots__ = ("printed", "stdout")

    def __init__(self, label: str) -> None:
        self.printed = Printed(label)
        """Where the code's prints go, kept from step to step so that a line may span steps."""
        self.stdout: Any = None

    def __enter__(self) -> "DesignCode":
        self.stdout = sys.stdout
        sys.stdout = self.printed
        _WATCHDOG[0].start()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            _WATCHDOG[0].stop()
        finally:
            sys.stdout = self.stdout


def file_of(code: Any) -> str | None:
    """The file a design's function (or a partial of one, or an object's ``__call__``) was written in."""
    code = getattr(code, "func", code)
    found = getattr(code, "__code__", None) or getattr(getattr(type(code), "__call__", None), "__code__", None)
    return found.co_filename if found is not None else None


def defined_at(code: Any) -> str:
    """Where a design's function starts: ``mine.py:3`` (``?`` when it has no source, a builtin)."""
    function = getattr(code, "func", code)
    found = getattr(function, "__code__", None) or getattr(getattr(type(function), "__call__", None), "__code__", None)
    return f"{os.path.basename(found.co_filename)}:{found.co_firstlineno}" if found is not None else "?"


_NOT_THE_DESIGNS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(os.__file__),
                    "<frozen")
"""Where code that is not a design's lives: idemsim, Python's own library (its site-packages too)."""


def place(error: BaseException, file: str | None, fallback: str) -> str:
    """The line of the design's code that ``error`` came from: the last frame of its traceback in ``file`` (the
    design's file), else the last outside idemsim and Python's own library, else ``fallback``. A syntax error
    names its own line."""
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        return f"{os.path.basename(error.filename)}:{error.lineno}"
    mine = outside = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        name = frame.f_code.co_filename
        if name == file:
            mine = f"{os.path.basename(name)}:{line}"
        elif not name.startswith(_NOT_THE_DESIGNS) and "site-packages" not in name:
            outside = f"{os.path.basename(name)}:{line}"
    return mine or outside or fallback


def suspended_at(work: Generator, file: str | None) -> str | None:
    """The line a suspended generator of a design's code stands at (its ``yield``): the innermost of the
    generators it delegates to that is in ``file``, else its own."""
    found = None
    while inspect.isgenerator(work) and work.gi_frame is not None:
        if found is None or work.gi_code.co_filename == file:
            found = f"{os.path.basename(work.gi_code.co_filename)}:{work.gi_frame.f_lineno}"
        work = work.gi_yieldfrom
    return found


_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def without_addresses(text: str) -> str:
    """``text`` without the memory addresses of default reprs (``<object object at 0x7f…>`` is
    ``<object object>``): they change from run to run."""
    return _ADDRESS.sub("", text) if " at 0x" in text else text


def described(error: BaseException) -> str:
    """An exception as one says it: ``ValueError: no``, or its type alone when it says nothing
    (``KeyboardInterrupt``); ``SystemExit: 3`` for ``sys.exit(3)``."""
    said = str(error)
    return f"{type(error).__name__}: {said}" if said else type(error).__name__


def not_json(value: Any) -> str | None:
    """What in ``value`` JSON cannot hold (the name of its type, ``nan``, a value that holds itself), or None when
    ``json.dumps`` takes it (strictly: no NaN or infinity)."""
    try:
        json.dumps(value, allow_nan=False)
        return None
    except (TypeError, ValueError, RecursionError):
        pass
    stack, containers = [value], set()
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (bool, int, str)):
            continue
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return repr(item)
            continue
        if isinstance(item, (list, tuple, dict)):
            if id(item) in containers:
                continue
            containers.add(id(item))
            if isinstance(item, dict):
                odd = next((k for k in item if not (k is None or isinstance(k, (str, int, float)))), None)
                if odd is not None:
                    return f"{type(odd).__name__} as a key"
            stack.extend(item.values() if isinstance(item, dict) else item)
            continue
        return type(item).__name__
    return "a value that holds itself"
