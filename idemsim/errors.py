"""Errors a user can cause.

`InputError` is the one exception the CLI turns into a one-line message and exit code 2: it must say which
file, which field and what is allowed. Anything else escaping the CLI is a bug in idemsim.
"""


class InputError(Exception):
    """Bad input from the user: a file, a field or a name that idemsim cannot accept."""
