"""Faults named in a scenario file (`idemsim.model.faults`): each refused input is one line and exit 2."""

import textwrap
from pathlib import Path

from idemsim.model.designs import DESIGNS

DESIGN = '''
import idemsim
from idemsim import Response


@idemsim.design(points=("my_point",))
def handler(h):
    h.point("my_point")
    return Response(201, {"ok": True})
    yield
'''

SCENARIO = '''
name = "mine"
title = "a crash at a point no design declares"
summary = "The scenario names a crash point that neither the shipped designs nor the registered one declare."
[[operations]]
at = 0.0
[[faults]]
kind = "crash"
point = "nowhere"
'''


class TestCrashPoints:
    def test_an_unknown_point_beside_a_registered_designs_own_points_is_one_line(self, cli, one_line, tmp_path):
        """A crash at a point nobody declares, run under a design that declares its own points, is refused in one
        line naming the field, the shipped points and the design's own, with exit code 2."""
        (tmp_path / "mine.py").write_text(textwrap.dedent(DESIGN))
        (tmp_path / "crash.toml").write_text(textwrap.dedent(SCENARIO))
        try:
            result = cli("run", str(tmp_path / "crash.toml"), "--design", f"{tmp_path / 'mine.py'}:handler")
        finally:
            DESIGNS.pop(f"{tmp_path / 'mine.py'}:handler", None)
        assert result.exit_code == 2
        assert one_line(result) == (
            f"error: {Path(tmp_path / 'crash.toml')}: field 'faults.0.point': unknown crash point; allowed: after_key, "
            "after_processor, after_charge, before_response_stored, before_commit, or a registered design's: "
            "my_point (got 'nowhere')")
