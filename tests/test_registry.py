"""The designs' registry (`idemsim.model.designs.registry`): a shipped design is one file, found by itself."""

import ast
from pathlib import Path

from idemsim.model.designs import DESIGNS, SHIPPED
from idemsim.model.designs.registry import shipped_designs

PACKAGE = Path(__file__).resolve().parent.parent / "idemsim" / "model" / "designs"


def modules_with_a_design() -> set[str]:
    """The modules of the designs' package that assign ``DESIGN`` at their top level, read from their source."""
    return {path.stem for path in PACKAGE.glob("*.py")
            if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DESIGN" for t in node.targets)
                   for node in ast.parse(path.read_text(encoding="utf-8")).body)}


class TestShippedDesigns:
    def test_every_module_with_a_design_is_shipped_and_nothing_else(self):
        """The shipped designs are exactly the modules that define a ``DESIGN``: a new one is found by itself."""
        assert {design.name.replace("-", "_") for design in shipped_designs()} == modules_with_a_design()

    def test_they_come_in_the_articles_order(self):
        """Each has its own rank, and `DESIGNS` lists them by rank, as every comparison table does."""
        assert [design.rank for design in shipped_designs()] == list(range(1, len(SHIPPED) + 1))
        assert SHIPPED == ("naive", "check-then-insert", "same-tx", "committed-first", "split-tx", "recovery-points")
        assert list(DESIGNS)[:len(SHIPPED)] == list(SHIPPED)
