"""The PostgreSQL the DB comparison tests run against, as one fixture.

`postgres_dsn` gives the DSN (`IDEMSIM_PG_DSN`, else a local server's `test` database) when a server answers.
When none does, the tests that use it are skipped with the reason — except under `CI=true`, where a missing
server is a failure: CI must prove the model against PostgreSQL, not skip it.
conftest.py loads it as a plugin (`pytest_plugins = ["pg"]`): a test asks for `postgres_dsn` by name.
"""

from __future__ import annotations

import os

import pytest

from idemsim.proof.postgres import PostgresUnavailable, default_dsn, server_version


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The DSN of a PostgreSQL that answers; skip (or, under CI=true, fail) when there is none."""
    dsn = default_dsn()
    try:
        server_version(dsn)
    except PostgresUnavailable as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no PostgreSQL answers: {error}")
        pytest.skip(f"no PostgreSQL answers at {dsn} (set IDEMSIM_PG_DSN): {error}")
    return dsn
