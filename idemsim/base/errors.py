"""Errors a user can cause, said in the reader's language.

`InputError` is the one exception the CLI turns into a one-line message and exit code 2: it must say which
file, which field and what is allowed. It is raised with a message of the catalogue (`idemsim.base.i18n`), never
with a sentence: ``InputError("err.no_such_file", file=path)`` names the message's id and fills its fields.
``said(lang)`` renders it in English or Japanese; ``str()`` is the English. Its one argument is the `Message`,
so that a copy made from its arguments (SimPy re-raises a failed process's error that way; pickle too) is
the same error. A field may itself be a `Message`
(a phrase of the catalogue, such as what a path is: ``Message("err.kind.directory")``; anything with a
``said(lang)`` method), or a list of values and messages (said one by one and joined with ", "); it is said in
the same language as the message holding it.
Anything else escaping the CLI is a bug in idemsim.
"""

from __future__ import annotations

import errno
from typing import Any

from .i18n import MESSAGES, text


class Message:
    """A message of the catalogue, not yet said in any language: its id and the values of its fields."""

    __slots__ = ("id", "fields")

    def __init__(self, id: str, /, **fields: Any) -> None:
        self.id = id
        """The message's id in `idemsim.base.i18n.MESSAGES`."""
        self.fields = fields
        """Its fields: values, or `Message` objects (anything with ``said``) said in the same language."""

    def said(self, lang: str = "en") -> str:
        """The message in ``lang``, every field that is a `Message` said in ``lang`` too."""

        return text(self.id, lang, **{name: _said(value, lang) for name, value in self.fields.items()})

    def __str__(self) -> str:
        return self.said("en")

    def __repr__(self) -> str:
        fields = "".join(f", {name}={value!r}" for name, value in self.fields.items())
        return f"Message({self.id!r}{fields})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and (self.id, self.fields) == (other.id, other.fields)

    def __hash__(self) -> int:
        return hash(self.id)

    def __reduce__(self):
        return _message, (self.id, self.fields)


def _said(value: Any, lang: str) -> Any:
    """A field's value in ``lang``: a message said, a list said item by item and joined, anything else as it is."""
    if hasattr(value, "said"):
        return value.said(lang)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(_said(item, lang)) for item in value)
    return value


def choices(expected: str) -> Message | str:
    """pydantic's list of allowed values (``"'a', 'b' or 'c'"``) as a message: "or" in English, a comma in
    Japanese."""
    items, sep, last = expected.rpartition(" or ")
    return Message("err.choices", items=items, last=last) if sep else expected


def os_reason(error: OSError) -> Message | str:
    """Why the system refused (an `OSError`), as words of the catalogue when it has them (``os.ENOENT``: the
    system's own English, and Japanese), else the system's own words."""

    name = errno.errorcode.get(error.errno or 0)
    if name is not None and f"os.{name}" in MESSAGES:
        return Message(f"os.{name}")
    return error.strerror or str(error)


def _message(id: str, fields: dict[str, Any]) -> Message:
    return Message(id, **fields)


class InputError(Exception):
    """Bad input from the user: a file, a field or a name that idemsim cannot accept."""

    def __init__(self, id: str | Message, /, **fields: Any) -> None:
        self.message = id if isinstance(id, Message) else Message(id, **fields)
        """What went wrong, as a message of the catalogue."""
        super().__init__(self.message)  # the only argument: a copy (SimPy re-raising it, pickle) keeps it whole

    def said(self, lang: str = "en") -> str:
        """The message in ``lang`` (``en`` or ``ja``)."""
        return self.message.said(lang)
