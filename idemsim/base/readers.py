"""Reading what a user hands idemsim: a file, TOML text, and the document it holds.

Guarantees: `file_kind` says what is at a path without opening it (a FIFO is never opened: reading it would
block); `read_text` returns the text of a regular file written in UTF-8, with or without a byte order mark,
and refuses anything else with one line naming the file and what it is instead (a directory, a FIFO, a
device, UTF-16 or UTF-32, bytes that are not UTF-8); `parse_toml` returns a document or refuses it in one line
(not TOML, nested too deeply for the parser, an integer too long to read); `check_document` refuses a
document nested deeper than `idemsim.base.fields.MAX_NESTING` or holding text that is not valid Unicode. No input
exhausts the stack: the parser's RecursionError is turned into that one line, and every walk is iterative.
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from .errors import InputError, Message, os_reason
from .fields import MAX_NESTING, dotted, first_problem
from .printable import shorten, shown

PATH_LENGTH = 120
"""How much of a path an error message shows at most."""

_KINDS = ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))


def label(path: Path | str) -> str:
    """A path as error messages name it: cut to `PATH_LENGTH` characters."""
    return shorten(str(path), PATH_LENGTH)


def file_kind(path: Path) -> str | None:
    """What is at ``path`` ("a file", "a directory", "a FIFO (named pipe)", …), or None when nothing is.

    Never opens it. A path too long for any file is nothing; one the system cannot look up (an unreadable
    directory) is an `InputError`."""
    try:
        mode = os.stat(path).st_mode
    except ValueError:  # a NUL in the path: no file can have that name
        return None
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
            return None
        raise InputError("err.cannot_read", file=label(path), reason=os_reason(e)) from None
    return next((kind for test, kind in _KINDS if test(mode)), "a special file")


_KIND_MESSAGES = {"a file": "err.kind.file", "a directory": "err.kind.directory",
                  "a FIFO (named pipe)": "err.kind.fifo", "a socket": "err.kind.socket",
                  "a character device": "err.kind.chardev", "a block device": "err.kind.blockdev",
                  "a special file": "err.kind.special"}


def kind_said(kind: str) -> Message:
    """What `file_kind` found, as words of the catalogue (said in the reader's language)."""
    return Message(_KIND_MESSAGES[kind])


SCENARIO_FILE = Message("err.what.scenario")
"""What a scenario file is called in messages ("a scenario file")."""


def read_text(path: Path, what: Message = SCENARIO_FILE) -> str:
    """The text of the regular file ``path``, decoded as UTF-8 (a byte order mark removed)."""
    kind = file_kind(path)
    if kind is None:
        raise InputError("err.no_such_file", file=label(path))
    if kind != "a file":
        raise InputError("err.is_not", file=label(path), kind=kind_said(kind), what=what)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError("err.cannot_read", file=label(path), reason=os_reason(e)) from None
    return decode(raw, label(path), what)


def decode(raw: bytes, source: str | Message, what: Message = SCENARIO_FILE) -> str:
    """``raw`` as UTF-8 text, a byte order mark removed; UTF-16, UTF-32 and invalid UTF-8 are refused."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            raise InputError("err.bom", file=source, encoding=encoding, what=what)
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        text = raw[skip:].decode("utf-8")
    except UnicodeDecodeError as e:
        offset = skip + e.start
        raise InputError("err.not_utf8", file=source, byte=raw[offset], offset=offset, what=what) from None
    if "\x00" in text:
        raise InputError("err.nul", file=source, what=what)
    return text


_TOML_AT = r"(?s)(.*) \(at (?:line (\d+), column (\d+)|end of document)\)"
_TOML_REASONS = (
    (r"Cannot overwrite a value", "toml.overwrite"),
    (r"Escaped character is not a Unicode scalar value", "toml.scalar"),
    (r"Expected '=' after a key in a key/value pair", "toml.equals"),
    (r"Expected '\]' at the end of a table declaration", "toml.table_end"),
    (r"Expected '\]\]' at the end of an array declaration", "toml.array_end"),
    (r"Expected newline or end of document after a statement", "toml.newline"),
    (r"Invalid date or datetime", "toml.date"),
    (r"Invalid hex value", "toml.hex"),
    (r"Invalid initial character for a key part", "toml.key_start"),
    (r"Invalid statement", "toml.statement"),
    (r"Invalid value", "toml.value"),
    (r"Unclosed array", "toml.unclosed_array"),
    (r"Unclosed inline table", "toml.unclosed_table"),
    (r"Unescaped '\\' in a string", "toml.backslash"),
    (r"Unterminated string", "toml.unterminated"),
    (r"Cannot declare (?P<key>.+) twice", "toml.twice"),
    (r"Cannot mutate immutable namespace (?P<key>.+)", "toml.immutable"),
    (r"Cannot redefine namespace (?P<key>.+)", "toml.redefine"),
    (r"Duplicate inline table key (?P<key>.+)", "toml.duplicate"),
    (r"Expected (?P<what>.+)", "toml.expected"),
    (r"Found invalid character (?P<char>.+)", "toml.found"),
    (r"Illegal character (?P<char>.+)", "toml.illegal"),
)
"""tomllib's reasons (Python 3.11's parser), each with its message of the catalogue, the general ones last (as
patterns `re` compiles when a document is first refused, not at every start)."""


def toml_reason(error: Exception) -> Message | str:
    """Why TOML's parser refused a document, as words of the catalogue (its own English, and Japanese) with where
    it stopped; a reason the catalogue lacks (another version of the parser) stays the parser's words."""
    said = str(error)
    at = re.fullmatch(_TOML_AT, said)
    if at is None:
        return said
    for pattern, id in _TOML_REASONS:
        found = re.fullmatch(pattern, at[1])
        if found:
            reason = Message(id, **found.groupdict())
            return Message("toml.at", reason=reason, line=at[2], column=at[3]) if at[2] else \
                Message("toml.at_end", reason=reason)
    return said


_JSON_REASONS = {"Expecting value": "json.value", "Expecting property name enclosed in double quotes": "json.name",
                 "Expecting ':' delimiter": "json.colon", "Expecting ',' delimiter": "json.comma",
                 "Unterminated string starting at": "json.unterminated", "Invalid control character at": "json.control",
                 "Invalid \\escape": "json.escape", "Invalid \\uXXXX escape": "json.unicode",
                 "Extra data": "json.extra"}
"""The reasons Python's JSON parser gives, each with its message of the catalogue."""


def json_reason(error: json.JSONDecodeError) -> Message | str:
    """Why JSON's parser refused a document (a schedule file), as words of the catalogue (its own English, and
    Japanese) with where it stopped; a reason the catalogue lacks (another version of the parser) stays the
    parser's words."""
    id = _JSON_REASONS.get(error.msg)
    if id is None:
        return str(error)
    return Message("json.at", reason=Message(id), line=error.lineno, column=error.colno, char=error.pos)


def parse_toml(text: str, source: str | Message) -> dict[str, Any]:
    """The TOML document in ``text``, checked by `check_document`."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError("err.not_toml", file=source, reason=toml_reason(e)) from None
    except RecursionError:
        raise InputError("err.too_deep", file=source, n=MAX_NESTING) from None
    except ValueError:  # an integer longer than Python reads (sys.get_int_max_str_digits)
        raise InputError("err.too_many_digits", file=source) from None
    check_document(document, source)
    return document


def check_document(document: Any, source: str | Message) -> None:
    """Refuse a document nested deeper than `MAX_NESTING` levels, or holding text that is not valid Unicode."""
    problem = first_problem(document)
    if problem is not None:
        path, what = problem
        if path:
            raise InputError("err.at_field", where=source, field=shown(dotted(path)), problem=what)
        raise InputError("err.at", where=source, problem=what)
