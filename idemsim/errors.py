"""Errors a user can cause.

`InputError` is the one exception the CLI turns into a one-line message and exit code 2: it must say which
file, which field and what is allowed. It may carry the same message in Japanese (``ja``), which the CLI
prints under ``--lang ja``; without one the English is shown. Anything else escaping the CLI is a bug in
idemsim.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input from the user: a file, a field or a name that idemsim cannot accept."""

    def __init__(self, message: str = "", *, ja: str | None = None) -> None:
        super().__init__(message)
        self.ja = ja
        """The message in Japanese, when it was written in both languages."""

    def said(self, lang: str = "en") -> str:
        """The message in ``lang`` (English when there is no Japanese one)."""
        return self.ja if lang == "ja" and self.ja else str(self)
