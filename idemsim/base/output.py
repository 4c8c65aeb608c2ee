"""Writing the files a user asks for (``-o``, ``--plot``, ``--save``): that file, whole, and nothing else.

Guarantees of `write_output`:

- a regular file, new or existing, is written atomically: a temporary file beside it, then a rename, so that a
  reader sees the old file or the new one, never half of one; an existing file keeps its permissions, a new
  one gets those the umask gives; on a failure the old file is as it was and no temporary file is left;
- a symbolic link is followed: its target is written so, and the link stays a link;
- what is not a regular file is written through, never replaced: a FIFO, a character device (``/dev/null``,
  ``/dev/full``, a terminal), and the command's own streams (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
  ``/proc/self/fd/N``), which are written where the command's output already goes, in order with it (a
  standard output with a ``write_bytes`` method, the CLI's, is given the bytes, and reports its own errors);
- every failure is one `InputError`, ``FILE: cannot write: REASON``, the reason in the catalogue's words for
  the system's error (a full disk, a file-size limit, ``/proc`` or ``/sys``, a read-only file system, a name
  or a path too long), the file named as `idemsim.base.readers.label` names it (cut to fit a line).

`check_output` refuses, before anything runs, what can be told without writing: an empty name, a directory,
a folder that does not exist, a name or path too long, a folder no file can be made in.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from typing import Literal

from .errors import InputError, os_reason
from .readers import label

Written = Literal["file", "device", "standard output"]
"""Where `write_output` put the data: a regular file, a device or FIFO written through, or the command's own
standard output (where the caller then prints nothing more, such as the file's name)."""

_OWN_STREAM = re.compile(r"/dev/(stdout|stderr|fd/(\d+))|/proc/(self|\d+)/fd/(\d+)")
"""The paths of a process's open files: written through the file descriptor they name."""


def check_output(path: str, name: str | None = None) -> None:
    """Refuse now a path `write_output` could not write: empty, a directory, in a folder that does not exist,
    a name or a path too long, or in a folder where no file can be made (``/proc``, ``/sys``, a read-only file
    system). ``name`` is how the file is named in the error (default: the path)."""
    shown = label(path if name is None else name)
    if not path.strip():
        raise InputError("err.give_file_name", file=repr(path) if name is None else shown)
    mode = _mode(path, shown)
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError("err.is_directory", file=shown)
    if mode is not None and not stat.S_ISREG(mode) or _own_stream(path) is not None:
        return  # written through
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise InputError("err.no_such_directory", file=shown, directory=repr(label(os.path.dirname(path) or ".")))
    fd, temporary = _create_beside(target, shown)  # a file can be made there (and is removed at once)
    os.close(fd)
    os.unlink(temporary)


def write_output(path: str, data: str | bytes, name: str | None = None) -> Written:
    """Write ``data`` (text is written as UTF-8) to ``path`` as the module's guarantees say; ``name`` is how the
    file is named in an error (default: the path). Returns where it went."""
    shown = label(path if name is None else name)
    if not path:
        raise InputError("err.give_file_name", file=repr(path) if name is None else shown)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    stream = _own_stream(path)
    try:
        if stream is not None:
            return _write_stream(stream, payload)
        mode = _mode(path, shown)
        if mode is not None and stat.S_ISDIR(mode):
            raise InputError("err.is_directory", file=shown)
        if mode is not None and not stat.S_ISREG(mode):
            with open(path, "wb", buffering=0) as device:  # a FIFO or a device: no O_CREAT needed, none done
                _write_all(device.fileno(), payload)
            return "device"
        _replace(os.path.realpath(path), payload, mode, shown)
    except OSError as error:
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    return "file"


def writes_through(path: str) -> bool:
    """Whether `write_output` writes ``path`` through rather than replacing a file: a FIFO, a device, one of
    the command's own streams. (A file type such as a figure's is then not told by the name: ``/dev/stdout``.)"""
    if _own_stream(path) is not None:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_standard_output(path: str) -> bool:
    """Whether ``path`` names the command's own standard output (``/dev/stdout``, ``/dev/fd/1``, …): a command
    that writes its file there prints nothing else there, such as the file's name."""
    return _own_stream(path) == 1


def _mode(path: str, shown: str) -> int | None:
    """The mode of what ``path`` names (a link followed), None when nothing is there yet."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:  # a name or a path too long, a loop of links, a folder that is a file
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    except ValueError:  # a NUL in the name: no file has it
        raise InputError("err.give_file_name", file=shown) from None


def _own_stream(path: str) -> int | None:
    """The file descriptor a path such as ``/dev/stdout`` names, or None."""
    match = _OWN_STREAM.fullmatch(os.path.normpath(os.path.abspath(path)))
    if match is None or (match[3] is not None and match[3] != "self" and int(match[3]) != os.getpid()):
        return None
    named = match[1]
    return {"stdout": 1, "stderr": 2}.get(named) or int(match[2] or match[4])


def _write_stream(fd: int, payload: bytes) -> Written:
    """Write to file descriptor ``fd``; to standard output or error through Python's stream, after what it
    holds, so that the order is kept."""
    stream = {1: sys.stdout, 2: sys.stderr}.get(fd)
    if hasattr(stream, "write_bytes"):  # a stream that keeps its write errors for the end (the CLI's stdout)
        stream.write_bytes(payload)
        return "standard output" if fd == 1 else "device"
    if stream is not None:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        own = _fileno(stream)
        if own is None and buffer is not None:  # a stream that is not a file (a test's): its bytes
            buffer.write(payload)
            buffer.flush()
            return "standard output" if fd == 1 else "device"
        fd = own if own is not None else fd
    _write_all(fd, payload)
    return "standard output" if fd == 1 else "device"


def _fileno(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _replace(target: str, payload: bytes, mode: int | None, shown: str) -> None:
    """Write ``target`` atomically: a temporary file beside it, then a rename."""
    fd, temporary = _create_beside(target, shown)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _create_beside(target: str, shown: str) -> tuple[int, str]:
    """A new file in ``target``'s folder, open for writing; its name short whatever the target's is."""
    directory, base = os.path.split(target)
    try:
        return tempfile.mkstemp(prefix=f".{base[:40]}.", suffix=".tmp", dir=directory or ".")
    except OSError as error:
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that what Python still holds for standard output, after a write
    to it failed, is flushed there at exit instead of failing again (a closed pipe, a full disk)."""
    if sys.__stdout__ is None:  # file descriptor 1 was closed: nothing is pending
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.__stdout__.fileno())
    finally:
        os.close(devnull)
