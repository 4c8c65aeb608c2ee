"""Text from the input made safe to print, and short enough for one line.

Guarantees: `safe` returns text in which no character can move the cursor, clear a terminal or change its
colours (every non-printable character — ESC, NUL, DEL, the C1 controls, bidirectional overrides, a lone
surrogate — is shown as its Python escape); `one_line` does the same to newlines too, so that an error message
is exactly one line; `shown` is a value as a user would write it, cut to fit a line. Nothing here imports
anything heavy: the CLI uses it for every error message.
"""

from __future__ import annotations

from typing import Any

SHOWN_LENGTH = 60
"""How many characters of a value an error message shows at most."""


def safe(text: Any, keep: str = "\n") -> str:
    """``text`` with every non-printable character except those in ``keep`` shown as an escape (``\\x1b``)."""
    text = str(text)
    if text.isprintable():  # the common case, at C speed
        return text
    return "".join(ch if ch.isprintable() or ch in keep else repr(ch)[1:-1] for ch in text)


def one_line(text: Any) -> str:
    """``text`` as one safe line: newlines are escaped too."""
    return safe(text, keep="")


def shorten(text: str, length: int = SHOWN_LENGTH) -> str:
    """``text`` cut to ``length`` characters, an ellipsis marking the cut."""
    return text if len(text) <= length else text[:length - 1] + "…"


def shown(value: Any, length: int = SHOWN_LENGTH) -> str:
    """A value for an error message: its repr, made one safe line and cut to ``length`` characters. A huge
    container is cut before its repr is built, so a 1 MB value costs no more than a short one."""
    return shorten(one_line(_repr(value, length * 2)), length)


def _repr(value: Any, budget: int, depth: int = 0) -> str:
    """``repr(value)``, or a prefix of it at least ``budget`` characters long when it would be longer (and
    ``…`` for what is nested deeper than a line could show)."""
    if depth > 10 and isinstance(value, (list, tuple, dict)):
        return "…"
    if isinstance(value, str) and len(value) > budget:
        return repr(value[:budget]) + "…"
    if isinstance(value, (list, tuple)):
        parts, size = [], 0
        for item in value:
            if size > budget:
                return "[" + ", ".join(parts) + ", …]"
            parts.append(_repr(item, budget - size, depth + 1))
            size += len(parts[-1]) + 2
        return "[" + ", ".join(parts) + "]"
    if isinstance(value, dict):
        parts, size = [], 0
        for key, item in value.items():
            if size > budget:
                return "{" + ", ".join(parts) + ", …}"
            parts.append(f"{_repr(key, budget - size, depth + 1)}: {_repr(item, budget - size, depth + 1)}")
            size += len(parts[-1]) + 2
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * budget:
        return f"an integer of about {int(value.bit_length() * 0.30103):,} digits"
    return repr(value)


def point_text(value: Any) -> str:
    """A point's value where space is short (a table cell, a legend): a table, such as a retry budget, is
    ``on``; None is ``none``."""
    if value is None:
        return "none"
    if isinstance(value, dict):
        return "on"
    return str(value)
