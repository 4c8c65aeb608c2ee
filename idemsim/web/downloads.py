"""The third-party files of the static site: pinned by idemsim/web/lock.json, downloaded once into a cache.

Guarantees: a file is used only when its hash is the lockfile's (the npm tarball's sha512 integrity, a wheel's
sha256), checked each time it is used, so a cached file that was changed or cut short is never used: it is
downloaded again, and a download that still does not match is refused. A file already in the cache with the
right hash is used without the network. A download goes to a temporary file beside its place in the cache and
is renamed there only once complete and verified: a reader never sees half a file. Every failure is one
`InputError` line naming the URL (``URL: cannot download: REASON``, ``URL: sha256 is …, the lockfile says …``)
or the cache (``DIR: cannot write: REASON``).

The cache is ``$IDEMSIM_CACHE``, else ``~/.cache/idemsim``; this module keeps its files in ``web/`` under it.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any, Callable

from ..base.errors import InputError, os_reason
from ..base.readers import label

LOCK = Path(__file__).with_name("lock.json")
"""The lockfile: Pyodide's npm tarball (URL, integrity, the files the site needs) and each wheel (URL, sha256)."""

TIMEOUT = 60.0
"""Seconds a download may wait for the server (to connect, or between two reads) before it is given up."""

_CHUNK = 1 << 16


@cache
def lock() -> dict[str, Any]:
    """The lockfile, read once."""
    return json.loads(LOCK.read_text(encoding="utf-8"))


def cache_dir(cache: Path | None = None) -> Path:
    """Where the downloads are kept: ``cache`` if given, else ``$IDEMSIM_CACHE``, else ``~/.cache/idemsim``;
    then ``web/`` under it."""
    if cache is None:
        chosen = os.environ.get("IDEMSIM_CACHE")
        cache = Path(chosen) if chosen else Path.home() / ".cache" / "idemsim"
    return Path(cache).expanduser() / "web"


def digest(path: Path, algorithm: str) -> str:
    """The hex digest of a file's bytes."""
    hasher = hashlib.new(algorithm)
    with open(path, "rb") as source:
        while block := source.read(_CHUNK):
            hasher.update(block)
    return hasher.hexdigest()


def integrity_hex(integrity: str) -> tuple[str, str]:
    """An npm integrity string (``sha512-BASE64``) as (algorithm, hex digest)."""
    algorithm, _, encoded = integrity.partition("-")
    return algorithm, base64.b64decode(encoded).hex()


Advance = Callable[[int], None]
"""Told the number of bytes each time a download receives some (for a progress bar)."""


def pyodide_pin() -> tuple[str, str, str]:
    """Pyodide's tarball: its URL, and its hash as (algorithm, hex digest)."""
    entry = lock()["pyodide"]
    return (entry["url"], *integrity_hex(entry["integrity"]))


def pyodide_tarball(cache: Path | None = None, advance: Advance | None = None) -> Path:
    """Pyodide's npm tarball, in the cache and verified (downloaded when missing or not the locked bytes)."""
    url, algorithm, expected = pyodide_pin()
    return fetched(url, cache_dir(cache) / Path(url).name, algorithm, expected, advance)


def wheel(entry: dict[str, Any], cache: Path | None = None, advance: Advance | None = None) -> Path:
    """A locked wheel (an entry of the lockfile's ``wheels``), in the cache and verified."""
    return fetched(entry["url"], cache_dir(cache) / entry["file"], "sha256", entry["sha256"], advance)


def missing_bytes(cache: Path | None = None) -> int:
    """How many bytes a build must download: the lockfile's sizes of the files not in the cache as locked."""
    url, algorithm, expected = pyodide_pin()
    pins = [(cache_dir(cache) / Path(url).name, algorithm, expected, lock()["pyodide"]["size"])]
    pins += [(cache_dir(cache) / entry["file"], "sha256", entry["sha256"], entry["size"]) for entry in lock()["wheels"]]
    return sum(size for path, algorithm, expected, size in pins if not _verified(path, algorithm, expected))


def fetched(url: str, path: Path, algorithm: str, expected: str, advance: Advance | None = None) -> Path:
    """``path``, holding the bytes of ``url`` whose ``algorithm`` digest is ``expected``: the file already
    there when it matches, else a fresh download (which must match); ``advance`` is told of each block."""
    if _verified(path, algorithm, expected):
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".part", dir=path.parent)
    except OSError as error:
        raise InputError("err.cannot_write", file=label(str(path.parent)), reason=os_reason(error)) from None
    try:
        with os.fdopen(fd, "wb") as out:
            got = _download(url, out, algorithm, advance or (lambda count: None))
        if got != expected:
            raise InputError("err.site.hash", url=url, algorithm=algorithm, got=got, expected=expected)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as error:
        raise InputError("err.cannot_write", file=label(str(path)), reason=os_reason(error)) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def _verified(path: Path, algorithm: str, expected: str) -> bool:
    """Whether ``path`` is a file with the expected digest."""
    try:
        return path.is_file() and digest(path, algorithm) == expected
    except OSError:
        return False


def _download(url: str, out, algorithm: str, advance: Advance) -> str:
    """Copy ``url``'s body into ``out``; its hex digest. A failure of the network is one `InputError` naming
    the URL; a failure to write ``out`` is the `OSError` itself."""
    hasher = hashlib.new(algorithm)
    request = urllib.request.Request(url, headers={"User-Agent": "idemsim-site"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            while block := response.read(_CHUNK):
                hasher.update(block)
                advance(len(block))
                try:
                    out.write(block)
                except OSError as error:
                    raise _WriteFailed(error) from None
    except _WriteFailed as failed:
        raise failed.error from None
    except urllib.error.HTTPError as error:
        raise InputError("err.site.download", url=url, reason=f"HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise InputError("err.site.download", url=url, reason=_reason(error.reason)) from None
    except (OSError, http.client.HTTPException, ValueError) as error:  # a timeout, a reset, a body cut short
        raise InputError("err.site.download", url=url, reason=_reason(error)) from None
    return hasher.hexdigest()


class _WriteFailed(Exception):
    """Writing a download into the cache failed (not the network): carries the `OSError`."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


def _reason(reason: object) -> Any:
    """Why a connection failed, in words: the system's reason when it is an `OSError` with an error number,
    "timed out" for a timeout, else the exception's own words (or its name)."""
    if isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, OSError) and reason.errno is not None:
        return os_reason(reason)
    return str(reason) or type(reason).__name__
