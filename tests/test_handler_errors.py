"""A forgotten ``yield from`` in a user's design: a statement, capture, lookup or work that the design's code
called and never ran is one error naming the design and the line that made it, from Python and from the command
line (one line, exit 2); a call kept and run later with ``yield from`` runs as if run at once."""

from __future__ import annotations

import textwrap

import pytest

import idemsim
from idemsim.base.errors import InputError
from idemsim.base.http import Response
from idemsim.model.designs import DESIGNS, SHIPPED, register_design
from idemsim.model.designs.recovery_points import abandoned, complete_abandoned, recovery_points


@pytest.fixture(autouse=True)
def forget_registered_designs():
    """Each test starts with the shipped designs only."""
    yield
    for name in [n for n in DESIGNS if n not in SHIPPED]:
        del DESIGNS[name]


def handler_from(source: str, name: str = "handler"):
    """The function ``name`` of ``source``, compiled as the file ``mine.py`` (the line after the opening quotes is
    its line 2), where ``Response`` and recovery-points' completer are known."""
    namespace = {"Response": Response, "complete_abandoned": complete_abandoned}
    exec(compile(textwrap.dedent(source), "mine.py", "exec"), namespace)
    return namespace[name]


def error_of(design: str, story: str = "lost-response") -> str:
    """The error ``idemsim.run(story, design=design)`` raises, in English."""
    with pytest.raises(InputError) as raised:
        idemsim.run(story, design=design)
    return str(raised.value)


class TestAForgottenYieldFromIsNamed:
    @pytest.mark.parametrize("source, message", [
        ("""
         def handler(h):
             yield from h.sql("begin")
             h.sql("insert_charge", amount=h.amount, key=h.key)
             yield from h.sql("commit")
             return Response(201, {})
         """, "called h.sql('insert_charge') at mine.py:4 without yield from: the statement never ran"),
        ("""
         def handler(h):
             yield from h.sql("select_key", key=h.key)
             h.capture(2000, key=h.key)
             return Response(201, {})
         """, "called h.capture(2000) at mine.py:4 without yield from: the capture never ran"),
        ("""
         def handler(h):
             h.sql("register_key", key=h.key, fingerprint=h.fingerprint)
             return Response(201, {})
         """, "called h.sql('register_key') at mine.py:3 without yield from: the statement never ran"),
        ("""
         def handler(h):
             yield h.sql("register_key", key=h.key, fingerprint=h.fingerprint)
             return Response(201, {})
         """, "called h.sql('register_key') at mine.py:3 without yield from: the statement never ran"),
        ("""
         def handler(h):
             found = h.sql("select_key", key=h.key)
             return Response(200 if found.rows else 201, {})
         """, "called h.sql('select_key') at mine.py:3 without yield from: the statement never ran"),
        ("""
         def handler(h):
             yield from h.sql("select_key", key=h.key)
             h.work(0.5)
             return Response(201, {})
         """, "called h.work(0.5) at mine.py:4 without yield from: the work never ran"),
    ], ids=["sql", "capture", "no-generator", "yield-not-yield-from", "result-read", "work"])
    def test_a_call_never_run_names_the_design_and_the_line(self, source, message):
        """In a generator or a plain function, yielded or read as its result: the first call never run, and where."""
        register_design("forgetful", handler_from(source))
        assert error_of("forgetful") == f"design 'forgetful' {message}"

    def test_a_completer_call_never_run_is_named_too(self):
        """A custom completer's w.lookup (or w.sql) without yield from: the same error, at the completer's line."""
        forgetful = handler_from("""
            def completer(w, key):
                w.lookup(key)
                return (yield from complete_abandoned(w, key))
            """, "completer")
        register_design("forgetful", recovery_points, completer=forgetful, abandoned=abandoned)
        assert error_of("forgetful", "completer-finishes") == (
            "design 'forgetful' called w.lookup('k-8f3a') at mine.py:3 without yield from: the lookup never ran")

    def test_a_yield_of_anything_but_an_event_is_the_designs_error(self):
        """``yield 5``: one error naming the design, the request, the time and the line, not SimPy's traceback."""
        register_design("yields", handler_from("""
            def handler(h):
                yield 5
            """))
        assert error_of("yields") == ("design 'yields' yielded 5 in request 1.1 at 0.050 s (mine.py:3), not an "
                                      "event: run a statement, capture or work with yield from")

    def test_the_command_line_says_it_in_one_line(self, cli, one_line, tmp_path):
        """``run --design file.py:handler``: one line, exit 2, in the chosen language."""
        path = tmp_path / "mine.py"
        path.write_text("def handler(h):\n    yield from h.sql('begin')\n    h.sql('insert_charge', amount=1)\n")
        design = f"{path}:handler"
        assert one_line(cli("run", "lost-response", "--design", design)) == (
            f"error: design '{design}' called h.sql('insert_charge') at mine.py:3 without yield from: the statement "
            "never ran")
        assert one_line(cli("run", "lost-response", "--design", design, "--lang", "ja")) == (
            f"エラー: 設計 '{design}' は mine.py:3 で h.sql('insert_charge') を yield from なしで呼びました: "
            "その SQL 文は一度も実行されていません")


class TestACallKeptForLaterRuns:
    def test_a_call_run_later_with_yield_from_is_the_same_run(self):
        """Statements and a capture made first and run later with yield from: the run of the design that runs each
        at once, event for event."""
        at_once = handler_from("""
            def handler(h):
                yield from h.sql("begin")
                paid = yield from h.capture(h.amount)
                charge = yield from h.sql("insert_charge", amount=h.amount, key=h.key)
                yield from h.sql("commit")
                return Response(201, {"charge": charge.id, "paid": paid.outcome})
            """)
        later = handler_from("""
            def handler(h):
                begin, capture = h.sql("begin"), h.capture(h.amount)
                charge, commit = h.sql("insert_charge", amount=h.amount, key=h.key), h.sql("commit")
                yield from begin
                paid = yield from capture
                charge = yield from charge
                yield from commit
                return Response(201, {"charge": charge.id, "paid": paid.outcome})
            """)
        register_design("at-once", at_once)
        register_design("later", later)
        runs = [idemsim.run("lost-response", design=name) for name in ("at-once", "later")]
        assert list(runs[0].trace) == list(runs[1].trace)
        assert runs[0].ledger == runs[1].ledger and len(runs[0].ledger) == 2
