"""Shared test set-up: Hypothesis settings profiles, the in-process CLI fixtures, the PostgreSQL fixture.

Profiles: ``dev`` (default, quick), ``ci`` (what CI runs; CI=true selects it) and ``thorough`` (a larger
budget for a local soak). Choose with IDEMSIM_HYPOTHESIS_PROFILE=thorough.
"""

import os

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

pytest_plugins = ["pg", "browser"]
"""tests/pg.py: the `postgres_dsn` fixture, for every test that needs a real PostgreSQL; tests/browser.py: the
browser tests' fixtures (a headless Chromium, `idemsim serve`, the static site)."""

settings.register_profile("dev", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("IDEMSIM_HYPOTHESIS_PROFILE",
                                     "ci" if os.environ.get("CI") == "true" else "dev"))


@pytest.fixture
def cli():
    """``cli("run", "lost-response")``: invoke idemsim in-process; arguments may be paths."""
    from idemsim.cli.app import app

    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke


@pytest.fixture
def one_line():
    """The single line a bad input must produce on stderr, with exit code 2 and no traceback."""

    def check(result) -> str:
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        return lines[0]

    return check
