"""The engine's tricks, in one room: every place idemsim relies on SimPy's or CPython's internals.

The model (`idemsim.model`) and the runners read as plain SimPy (``env.now``, ``env.timeout(...)``,
``env.process(...)``, ``yield``); what makes a run fast without changing one event of it lives here, behind
small named functions and classes, each module saying what it relies on:

- `idemsim.kernel.waits`: `FirstOf` (``a | b`` with less work), `timeout`, `soon`, `later`, `Task` (a process
  nothing waits for), `Deferred` (events kept out of the schedule until they are the next of their kind).
- `idemsim.kernel.loop`: `BoundedEnvironment` (SimPy's ``step``/``run`` loop with a bound on time and events),
  `let_go` (empty a finished run's schedule), `events_processed`.
- `idemsim.kernel.starts`: `Starts` (start many processes, each made only when it is due).
- `idemsim.kernel.collector`: `quiet` (Python's cyclic collector during a run, in a process idemsim owns),
  `own_process`, `before_exit`.

What they rely on, in SimPy 4.1 (``simpy.core`` and ``simpy.events``, none of it public API):

- the schedule is ``env._queue``, a `heapq` of ``(time, priority, sequence number, event)`` tuples, the
  sequence numbers drawn from ``env._eid`` (an `itertools.count`), priorities ``URGENT`` (0) before ``NORMAL``
  (1); the clock is ``env._now`` (``env.now`` is a property that returns it), set by ``step`` as it pops;
- an event is pending while its ``_value`` is ``PENDING``; triggering sets ``_ok`` and ``_value`` and schedules
  it; processing sets ``callbacks`` to None and calls each callback once; a failed event (``_ok`` false) crashes
  the run unless it has a ``_defused`` attribute; a `Timeout` keeps its delay in ``_delay``;
- a `Process` keeps its generator in ``_generator`` and what it waits for in ``_target``, is started by an
  `Initialize` event (urgent, now) whose callback is its ``_resume``, and ``_resume(event)`` sends the event's
  value into the generator until it yields an event not yet processed; ``env._active_proc`` names the process
  being resumed; `simpy.events._describe_frame` words an invalid yield;
- ``Environment.step`` and ``Environment.run`` are `BoundedEnvironment`'s, copied (with `StopSimulation`,
  `EmptySchedule` and ``StopSimulation.callback``).

In CPython (``gc``, CPython-specific behaviour): three generations with thresholds (``gc.set_threshold``),
``gc.callbacks`` called with ``"start"``/``"stop"`` and ``info["generation"]``, ``gc.freeze`` moving every
tracked object to the permanent generation and ``gc.unfreeze`` moving them back to the oldest one.

Checked against SimPy 4.1.2 on CPython 3.11.7: the fingerprints of every run (``tests/fingerprints.py``) and
`tests/test_waits.py` / `tests/test_kernel.py`, which hold each piece against what plain SimPy does. The
project pins ``simpy>=4.1.2,<4.2`` (pyproject.toml), and `tests/test_kernel.py` fails when the installed SimPy's
major.minor is not `SIMPY_CHECKED`: a new SimPy means reading its ``core.py`` and ``events.py`` against the list
above, then moving the pin and these constants. (This package imports nothing: ``idemsim run`` loads what it
uses only.)
"""

SIMPY_CHECKED = "4.1"
"""The SimPy release (major.minor) the kernel was written for and checked against (4.1.2)."""
PYTHON_CHECKED = "3.11"
"""The CPython release (major.minor) the collector's tricks were checked against (3.11.7)."""
