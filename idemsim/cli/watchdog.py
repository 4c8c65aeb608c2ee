"""The command line's watchdog over a user's design: a step of its code that runs too long is stopped.

A design's code runs inside `idemsim.model.calls.DesignCode`: its import, and each step of its handler or completer
(from being resumed to its next ``yield``). A step that runs longer than ``IDEMSIM_DESIGN_SECONDS`` seconds of
wall-clock time (5 unless told; ``off``: no limit) is a loop that will not end: the watchdog raises
`idemsim.model.calls.Overran` into it, and the harness turns that into one line naming the design, the request
and the line it was running (exit 2). The clock is the operating system's (``setitimer`` and ``SIGALRM``), armed
when a step begins and disarmed when it ends; the simulation itself never reads it, and nothing is timed where no
command installed the watchdog (a notebook's ``idemsim.run``).

Guarantees: only the command's main thread is watched (a signal is handled there); a timer or a ``SIGALRM``
handler set before the command is kept: the watchdog's own alarm never ends it, an earlier one still rings at its
time (its handler called), and both are put back when the command ends (`installed`). A worker process forked
from the command inherits the watchdog; a Dask worker, started afresh, is not watched.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from ..base.errors import InputError
from ..model.calls import Overran, Watchdog, watch

ENV = "IDEMSIM_DESIGN_SECONDS"
DEFAULT_SECONDS = 5.0
"""Seconds of wall-clock time one step of a design's code may run without yielding, unless ``ENV`` says."""


def seconds_allowed(environ: Any = os.environ) -> float | None:
    """The limit ``IDEMSIM_DESIGN_SECONDS`` sets: a number > 0 (finite), ``off`` (None: no limit), or the
    default when it is unset or empty; anything else is an `InputError`."""
    value = environ.get(ENV, "").strip()
    if not value:
        return DEFAULT_SECONDS
    if value.lower() == "off":
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= 86400):
        raise InputError("err.design.seconds", value=repr(value))
    return seconds


class Alarm(Watchdog):
    """A watchdog on ``SIGALRM``: `start` arms the real-time timer for ``seconds`` (sooner if an earlier timer is
    due first), `stop` disarms it and puts the earlier timer back with what is left of it."""

    def __init__(self, seconds: float, previous: Any) -> None:
        self.seconds = seconds
        self.previous = previous
        """The ``SIGALRM`` handler before this one: called for an alarm that is not the watchdog's."""
        self.armed = False
        self.outer: float | None = None
        """When an earlier timer was due (`time.monotonic`), or None."""
        self.main = threading.main_thread()

    def start(self) -> None:
        if threading.current_thread() is not self.main:
            return
        left, _ = signal.setitimer(signal.ITIMER_REAL, self.seconds)
        self.outer = None
        if left > 0:
            self.outer = time.monotonic() + left
            if left < self.seconds:
                signal.setitimer(signal.ITIMER_REAL, left)
        self.armed = True

    def stop(self) -> None:
        if not self.armed:
            return
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        if self.outer is not None:
            signal.setitimer(signal.ITIMER_REAL, max(self.outer - time.monotonic(), 1e-6))
            self.outer = None

    def ring(self, signum: int, frame: Any) -> None:
        """``SIGALRM``: the watchdog's own alarm stops the design's step; an earlier timer's goes to its handler."""
        if self.armed and (self.outer is None or time.monotonic() < self.outer):
            self.armed = False
            raise Overran(self.seconds)
        if self.armed:  # the earlier timer, due first: it is no longer ours to put back
            self.outer = None
        if callable(self.previous):
            self.previous(signum, frame)


@contextmanager
def installed() -> Iterator[None]:
    """The watchdog in force while the block runs (a command), if this is the main thread of a system with
    ``setitimer`` and ``IDEMSIM_DESIGN_SECONDS`` is not ``off``; what was there before is put back after."""
    seconds = seconds_allowed()
    if seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    alarm = Alarm(seconds, signal.getsignal(signal.SIGALRM))
    signal.signal(signal.SIGALRM, alarm.ring)
    watch(alarm)
    try:
        yield
    finally:
        alarm.stop()
        watch(None)
        signal.signal(signal.SIGALRM, alarm.previous if alarm.previous is not None else signal.SIG_DFL)
