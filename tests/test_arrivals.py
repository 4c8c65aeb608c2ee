"""A load's ``[arrivals]`` (`idemsim.scenario.schema.Arrivals`): its process sets every arrival's time."""

import textwrap

SCENARIO = '''
name = "arr"
title = "An arrival with a time of its own"
summary = "The template operation of [arrivals] names an 'at', which the arrival process would overrule."
[arrivals]
process = "burst"
count = 3
[arrivals.operation]
at = 5.0
'''


class TestArrivals:
    def test_a_template_operation_with_a_time_is_refused(self, cli, one_line, tmp_path):
        """An ``at`` in ``[arrivals.operation]`` is refused in one line, exit 2: the process sets every time."""
        path = tmp_path / "arr.toml"
        path.write_text(textwrap.dedent(SCENARIO))
        assert one_line(cli("run", path)) == (
            f"error: {path}: field 'arrivals': an arrival's time comes from its process: leave 'at' out of "
            "[arrivals.operation] (start sets the first) (got {'process': 'burst', 'count': 3, 'operation': "
            "{'at': 5.0}})")
