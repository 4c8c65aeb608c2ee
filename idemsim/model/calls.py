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
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Generator
from typing import Any


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
