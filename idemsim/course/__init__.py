"""The course's checks, a public submodule of idemsim: each exercise of the six lesson notebooks judged in code.

``idemsim.course.check("6.3", my_design)`` judges one answer and returns a `Checked` (``.right``, ``.hint``);
printed, it is the one line a notebook's checking cell shows, ``right: …`` or ``not yet: …``, in the notebook's
language (``lang``, else ``IDEMSIM_LANG``, else English: the Japanese notebooks answer in Japanese).
`EXERCISES` lists every exercise by id (``"1.1"`` … ``"6.4"``, the notebooks' numbering) with the kind of answer
it takes and the cell that asks it.

>>> from idemsim import course
>>> course.check("1.1", 3).right, course.check("1.1", "3").right
(True, False)
>>> print(course.check("2.4", 1))
not yet: fewer than that: the process died between the two transactions, key first. Which one had committed?

Guarantees: `check` never raises (an answer it cannot judge is "not yet", with the reason as the hint); the
right answer comes from a run of the simulator, never from a constant written beside the question; an answer is
judged on runs that tell it from the plausible wrong ones (a function on runs where "no property broke" and
"as many rows as captures" differ, a design on several purchases and on every schedule of up to two faults);
every word is the catalogue's (``course.*``), in English and Japanese; the same answer always gets the same
verdict. A design is registered only while it is judged.
"""

from .check import check
from .checked import Checked
from .exercises import EXERCISES, Exercise

__all__ = [  # noqa: RUF022 (as docs/python.md lists them)
    "check",      # judge one answer to one exercise: a Checked, printed as "right: …" or "not yet: …"
    "EXERCISES",  # every exercise by id ("1.1" … "6.4"): its kind of answer, its notebook and prompt cell
    "Exercise",   # one exercise: id, kind, notebook, prompt, name
    "Checked",    # what check returns: .right, .hint, .lang; str() is the line a notebook prints
]
