"""Your own design: the handler API, `--design file.py:function`, `register_design`, and the example files of
docs/designs.md, broken by explore and proved once fixed; and the facts a design states of itself, which no module
outside idemsim/model/designs/ reads from its name."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

import idemsim
from idemsim.base.errors import InputError
from idemsim.model.api import ApiConfig, Handler
from idemsim.model.designs import (
    DESIGN_OPTIONS,
    DESIGNS,
    KEY_OPTIONS,
    PROCESSOR_OPTIONS,
    SHIPPED,
    register_design,
    same_tx,
)
from idemsim.runners import explore
from idemsim.runners.simulation import simulate, unique_constraint
from idemsim.scenario.schema import builtin_names, load, runs, validate

PACKAGE = Path(__file__).resolve().parent.parent / "idemsim"
EXAMPLES = PACKAGE.parent / "docs" / "designs"
BUGGY = f"{EXAMPLES / 'for_update.py'}:handler"
FIXED = f"{EXAMPLES / 'for_update_fixed.py'}:handler"


@pytest.fixture(autouse=True)
def forget_registered_designs():
    """Each test starts with the shipped designs only."""
    yield
    for name in [n for n in DESIGNS if n not in SHIPPED]:
        del DESIGNS[name]


def write(tmp_path, body: str, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text("from idemsim.base.http import Response\n\n" + textwrap.dedent(body))
    return path


class TestRegisterFromPython:
    def test_a_registered_handler_runs_like_a_shipped_design(self):
        """register_design makes a name any scenario runs under; the handler's statements go through the model."""
        from idemsim.model.designs import same_tx

        idemsim.register_design("my-same-tx", same_tx, summary="the article's, under my name")
        run = idemsim.run("lost-response", design="my-same-tx")
        assert (run.summary["charges"], run.summary["captures"], run.summary["status"]) == (1, 1, 201)

    def test_an_expectation_may_name_a_registered_design(self):
        """A scenario's [expect.NAME] for a registered design is judged like any other."""
        from idemsim.model.designs import naive

        idemsim.register_design("twice", naive, keyed=False)
        raw = explore.base_raw("same-tx")
        raw["faults"] = [{"kind": "lose", "message": "response"}]
        raw["expect"] = {"twice": {"charges": 2, "captures": 2}}
        assert simulate(validate(raw, "test"), "twice").summary["verdict"] == "held"

    def test_a_shipped_name_cannot_be_taken(self):
        """Registering "same-tx" again is refused: the shipped designs keep their meaning."""
        with pytest.raises(InputError, match="a shipped design has that name"):
            idemsim.register_design("same-tx", lambda h: None)


class TestDesignsFromFiles:
    def test_run_takes_a_file_and_a_function(self, cli):
        """`run --design path.py:handler` loads the handler and runs the story under it, named by that text."""
        result = cli("run", "lost-response", "--design", BUGGY, "--variant", "gateway-504")
        assert result.exit_code == 0, result.output
        assert "charges recorded   1" in result.stdout and "money captured     1" in result.stdout

    def test_compare_takes_designs_too(self, cli):
        """`compare --design …` compares exactly the designs given, a file's among them."""
        out = cli("compare", "crash-after-processor", "--design", "same-tx", "--design", FIXED).stdout
        assert "for_update_fixed.py:handler" in out and "naive" not in out

    def test_a_custom_crash_point_may_be_named_by_a_fault(self, tmp_path):
        """A point the design declares can be a crash fault's point once the design is registered."""
        path = write(tmp_path, """
            from idemsim import design

            @design(points=("before_anything",))
            def handler(h):
                h.point("before_anything")
                return Response(200, {"ok": True})
                yield
            """)
        name = idemsim.model.designs.resolve_design(f"{path}:handler")
        raw = explore.base_raw("same-tx")
        raw["faults"] = [{"kind": "crash", "point": "before_anything"}]
        run = simulate(validate(raw, "test"), name)
        assert run.fired == [0] and run.operations[0].statuses[0] is None


@pytest.mark.slow
class TestTheDocsExample:
    def test_explore_finds_the_double_capture_of_the_buggy_design(self, cli, tmp_path, monkeypatch):
        """docs/designs/for_update.py: explore prints a one-fault counterexample with two captures, exit 1."""
        monkeypatch.chdir(tmp_path)
        result = cli("explore", BUGGY, "--format", "json")
        assert result.exit_code == 1
        import json

        cx = json.loads(result.stdout)["counterexample"]
        assert len(cx["faults"]) == 1 and cx["summary"]["captures"] == 2
        assert "at-most-one-capture" in {v["property"] for v in cx["violations"]}

    def test_the_fixed_design_is_proved_for_every_schedule_of_three_faults(self, cli):
        """docs/designs/for_update_fixed.py survives every schedule of up to 3 faults, on every property."""
        result = cli("explore", FIXED, "--exhaustive", "--max-faults", "3")
        assert result.exit_code == 0, result.output
        assert "verdict: PROVED — every property held" in result.stdout


class TestABadHandlerIsOneLine:
    @pytest.mark.parametrize("body, message", [
        ("""
         def handler(h):
             yield from h.sql("register_key", key=h.key, fingerprint=h.fingerprint)
             return 1 / 0
         """, "failed in request 1.1, at statement 'register_key' at 0.050 s (mine.py:6): ZeroDivisionError: "
            "division by zero"),
        ("""
         def handler(h):
             yield from h.sql("frobnicate", key=h.key)
         """, "at statement 'frobnicate' at 0.050 s (mine.py:5): ValueError: unknown op 'frobnicate'"),
        ("""
         def handler(h):
             yield from h.sql("select_key", key=h.key)
             return 200
         """, "the handler of request 1.1 returned 200, not an idemsim.base.http.Response, at 0.050 s"),
        ("""
         def handler(h):
             while True:
                 yield from h.work(3600)
         """, "the run did not settle: api#1 (request 1.1), api#2 (request 1.2)"),
        pytest.param("""
         def handler(h):
             while True:
                 yield from h.sql("select_key", key=h.key)
         """, "sent more than 10000 statements (a loop that never answers?)", marks=pytest.mark.slow),
    ])
    def test_it_names_the_design_the_request_the_statement_and_the_time(self, cli, one_line, tmp_path, body,
                                                                        message):
        """An exception, an unknown statement, a wrong answer, or never answering: one error line, exit 2."""
        path = write(tmp_path, body)
        line = one_line(cli("run", "lost-response", "--variant", "gateway-504", "--design", f"{path}:handler"))
        assert line.startswith(f"error: design '{path}:handler'") and message in line

    @pytest.mark.parametrize("spec, message", [
        ("nowhere.py:handler", "no such file 'nowhere.py'"),
        ("{dir}/mine.py:missing", "has no function 'missing'; it has: handler"),
        ("{dir}/broken.py:handler", "importing {dir}/broken.py failed at broken.py:1: NameError"),
        ("magic", "unknown design 'magic'; valid designs: naive"),
    ])
    def test_a_design_that_cannot_be_loaded_is_one_line(self, cli, one_line, tmp_path, spec, message):
        """A missing file or function, a file that fails to import, an unknown name: one line, exit 2."""
        write(tmp_path, "def handler(h):\n    return Response(200)\n")
        (tmp_path / "broken.py").write_text("undefined_name\n")
        line = one_line(cli("run", "lost-response", "--design", spec.format(dir=tmp_path)))
        assert message.format(dir=tmp_path) in line


class TestDesignFacts:
    def test_the_shipped_designs_keep_their_order(self):
        """The six shipped designs come first, in the order of every comparison table."""
        assert SHIPPED == ("naive", "check-then-insert", "same-tx", "committed-first", "split-tx", "recovery-points")
        assert tuple(DESIGNS)[:6] == SHIPPED

    @pytest.mark.parametrize("name", SHIPPED)
    def test_each_shipped_design_is_one_file(self, name):
        """A shipped design's handler lives in its own module of idemsim/model/designs/, named after it."""
        module = f"idemsim.model.designs.{name.replace('-', '_')}"
        assert DESIGNS[name].handler.__module__ == module
        assert (PACKAGE / "model" / "designs" / f"{name.replace('-', '_')}.py").is_file()

    def test_the_options_are_api_fields(self):
        """Every design option is a field of [api], and a design's options are design options."""
        assert set(DESIGN_OPTIONS) <= set(ApiConfig.model_fields)
        assert all(DESIGNS[name].options <= set(DESIGN_OPTIONS) for name in SHIPPED)

    def test_the_shipped_facts(self):
        """naive keeps no keys, check-then-insert has no unique constraint, committed-first has lease recovery."""
        facts = {name: (d.keyed, d.stores_keys, d.unique_key, d.lease_recovery, d.completer is not None)
                 for name, d in DESIGNS.items()}
        assert facts == {"naive": (False, False, True, False, False),
                         "check-then-insert": (True, True, False, False, False),
                         "same-tx": (True, True, True, False, False),
                         "committed-first": (True, True, True, True, False),
                         "split-tx": (True, True, True, False, False),
                         "recovery-points": (True, True, True, False, True)}

    def test_a_registered_design_gets_the_documented_defaults(self):
        """A registered design keeps keys, has a unique key, no lease recovery, the processor's and key's options."""
        keyed = register_design("mine", same_tx)
        unkeyed = register_design("mine-unkeyed", same_tx, keyed=False)
        assert (keyed.custom, keyed.stores_keys, keyed.unique_key, keyed.lease_recovery) == (True, True, True, False)
        assert keyed.options == PROCESSOR_OPTIONS | KEY_OPTIONS and unkeyed.options == PROCESSOR_OPTIONS

    def test_facts_given_at_registration_are_kept(self, tmp_path):
        """register_design and @design take every fact; the simulation reads them (here: the unique key)."""
        mine = register_design("mine", same_tx, unique_key=False, options=("isolation",))
        assert mine.options == frozenset({"isolation"})
        assert unique_constraint(load("lost-response"), "mine") is False
        path = write(tmp_path, """
            from idemsim import design

            @design(stores_keys=False, lease_recovery=True, options=["lease"])
            def handler(h):
                return Response(200, {"ok": True})
                yield
            """)
        spec = DESIGNS[idemsim.model.designs.resolve_design(f"{path}:handler")]
        assert (spec.stores_keys, spec.lease_recovery, spec.options) == (False, True, frozenset({"lease"}))


ALLOWED_NAMES = {("scenario/schema.py", "same-tx"): 1, ("bench.py", "same-tx"): 1,
                 ("course/lesson3.py", "committed-first"): 1, ("course/lesson6.py", "naive"): 1,
                 ("course/lesson6.py", "committed-first"): 1}
"""Where a shipped design's name may appear outside idemsim/model/designs/, and how often: the scenario schema's
default design, the bench's load (the design it measures), and the exercises of the course that ask about a
design by name (3.2: same-tx-wait under committed-first; 6.1: explore naive; 6.2: explore committed-first)."""


class TestNoNameComparisons:
    def test_no_module_outside_the_designs_names_a_shipped_design(self):
        """Outside idemsim/model/designs/ no string literal is a shipped design's name, but the listed defaults."""
        found: dict[tuple[str, str], int] = {}
        for path in sorted(PACKAGE.rglob("*.py")):
            where = path.relative_to(PACKAGE).as_posix()
            if where.startswith("model/designs/"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in SHIPPED:
                    found[(where, node.value)] = found.get((where, node.value), 0) + 1
        assert found == ALLOWED_NAMES


def crash_fires(raw: dict, design: str, point: str) -> bool:
    """Whether a crash at ``point`` of attempt 1, added to the scenario ``raw``, happens in its run under ``design``."""
    faults = [{"kind": "crash", "point": point, "attempt": 1, "restart_after": 1.0}]
    return simulate(validate({**raw, "faults": faults}, "test"), design).fired == [0]


class TestDeclaredPoints:
    @pytest.mark.parametrize("design", SHIPPED)
    def test_explore_reaches_every_point_a_shipped_design_declares(self, design):
        """On explore's configuration of each shipped design, a crash at each point it declares happens."""
        raw = explore.base_raw(design)
        assert [p for p in DESIGNS[design].points if not crash_fires(raw, design, p)] == []

    @pytest.mark.parametrize("order", ["key-first", "charge-first"])
    def test_split_tx_reaches_its_four_points_in_either_order(self, order):
        """split-tx declares no before_commit (no transaction spans its work) and reaches its four points either way."""
        raw = explore.base_raw("split-tx")
        raw["api"] = {**raw["api"], "order": order}
        assert DESIGNS["split-tx"].points == ("after_key", "after_processor", "after_charge", "before_response_stored")
        assert [p for p in DESIGNS["split-tx"].points if not crash_fires(raw, "split-tx", p)] == []

    def test_every_declared_point_is_reached_by_a_shipped_story(self, monkeypatch):
        """Each point a shipped design declares is reached by some shipped story or variant run under that design."""
        reached: set[tuple[str, str]] = set()
        point = Handler.point

        def recording(h: Handler, name: str) -> None:
            reached.add((h.api.design, name))
            point(h, name)

        monkeypatch.setattr(Handler, "point", recording)
        for name in builtin_names():
            for story in runs(load(name)):
                for design in SHIPPED:
                    simulate(story, design)
        assert {(d, p) for d in SHIPPED for p in DESIGNS[d].points} - reached == set()
