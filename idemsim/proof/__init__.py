"""The PostgreSQL proof, a public submodule of idemsim: a DB schedule run on the model and on a real PostgreSQL,
and the rule that holds the two results against each other (docs/db-model.md).

>>> from idemsim import proof
>>> run = proof.run_on_model(proof.load("article-wait-commit"))
>>> step = run.document["sessions"]["s2"][0]
>>> round(step["end"] - step["start"], 3), step["rows"]
(4.0, 0)

Its public names are `__all__`, each loaded from its module (`schedule`, `postgres`, `agreement`) on first use:
importing ``idemsim.proof`` or one of its modules imports nothing more than that module needs, and psycopg is
imported only when a PostgreSQL run starts.
"""

import importlib

__all__ = [  # noqa: RUF022 (grouped by what they are for, as docs/python.md lists them)
    "load",                 # a schedule, by a shipped schedule's name or a file's path, validated: a Schedule
    "shipped",              # the shipped schedules: {name: path}
    "run_on_model",         # run a schedule on the DB model: a ModelRun (its .document, the spec's result)
    "run_postgres",         # run a schedule on a real PostgreSQL (needs the extra: pip install 'idemsim[pg]')
    "compare",              # judge a PostgreSQL result against the model under every order PostgreSQL may choose
    "default_dsn",          # the PostgreSQL to use: $IDEMSIM_PG_DSN, else a local test database
    "server_version",       # the server's version string; raises PostgresUnavailable when none answers
    "PostgresUnavailable",  # no psycopg, or no server: an InputError, one line
    "Schedule",             # a validated schedule: its sessions and their steps
]

_WHERE = {
    "load": "schedule",
    "shipped": "schedule",
    "run_on_model": "schedule",
    "Schedule": "schedule",
    "run_postgres": "postgres",
    "default_dsn": "postgres",
    "server_version": "postgres",
    "PostgresUnavailable": "postgres",
    "compare": "agreement",
}
"""Each public name's module in this package."""


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'idemsim.proof' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
