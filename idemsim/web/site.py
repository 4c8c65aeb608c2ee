"""``idemsim site DIR``: the static site that runs idemsim in the browser (Pyodide in a Web Worker).

`build_site` writes into DIR: the page (every file of idemsim/web/page), ``engine.json`` (which engine: Pyodide;
where it is, ``pyodide/``; the site's lockfile, the wheels, the files of Pyodide the worker fetches and the bytes
of all these, for the progress bar), ``pyodide/`` (the files of the npm package ``pyodide`` the page loads), ``wheels/``
(simpy, pydantic, the pydantic-core built for Pyodide and their dependencies, idemsim's own wheel made from the
installed package, and ``pyodide-lock.json``: Pyodide's lockfile naming exactly these wheels with their sha256,
so the worker installs them by name, checked, and from nowhere else), ``catalog.en.json`` and
``catalog.ja.json`` (the engine's catalog), and ``stories/SCENARIO.LANG.json`` (the engine's answer for each
shipped scenario's default story, in each language: the first picture, drawn before Pyodide has loaded).

Guarantees: the third-party files are the lockfile's bytes (idemsim/web/downloads.py: hash-checked, cached,
reused offline); nothing in the site refers to another host, so it works from any static server (``python -m
http.server``, no special headers) with the network cut. DIR is written atomically: the site is built in a new
directory beside DIR, then renamed to DIR, so DIR is the old site or the new one, never half of one, and a
failed build leaves no directory behind. An existing DIR is replaced only when it is an earlier site (it holds
``engine.json``) or empty; anything else is refused with one line, before anything is downloaded. Building
twice from the same package writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path
from typing import IO, Any, Callable

from ..base.errors import InputError, Message, os_reason
from ..base.i18n import LANGS
from ..base.readers import label
from ..scenario.schema import builtin_names
from . import engine
from .downloads import Advance, lock, missing_bytes, pyodide_tarball, wheel
from .wheel import idemsim_wheel

PAGE = Path(__file__).with_name("page")
"""The page's files (HTML, CSS, JavaScript modules), shipped in the package."""

MARKER = "engine.json"
"""The file that makes a directory a site (a directory holding it may be replaced by a new build)."""


def build_site(directory: Path, cache: Path | None = None, *,
               progress: Callable[[int, int], None] | None = None) -> Path:
    """Write the static site into ``directory`` (see the module's guarantees); third-party files come from
    ``cache`` (default ``$IDEMSIM_CACHE`` or ``~/.cache/idemsim``). ``progress(done, total)`` is told the bytes
    downloaded so far and the bytes to download (nothing when the cache holds everything). Returns the site's
    directory."""
    shown = label(str(directory))
    try:
        directory = Path(os.path.abspath(directory))  # "." and "a/.." by what they are, for the renames
    except OSError as error:  # the working directory is gone
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    _check_target(directory, shown)
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f"{directory.name[:40]}.tmp-", dir=directory.parent))
    except OSError as error:
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    try:
        _write_site(building, cache, _advance(progress, missing_bytes(cache) if progress is not None else 0))
        os.chmod(building, 0o755)
        _replace(building, directory, shown)
    except OSError as error:
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return directory


def _check_target(directory: Path, shown: str) -> None:
    """Refuse a DIR that is not a directory, or a directory that is neither empty nor an earlier site."""
    try:
        mode = directory.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    if not stat.S_ISDIR(mode):
        raise InputError("err.site.not_directory", dir=shown, kind=Message(_kind(mode)))
    try:
        empty = not any(directory.iterdir())
    except OSError as error:
        raise InputError("err.cannot_write", file=shown, reason=os_reason(error)) from None
    if not empty and not (directory / MARKER).is_file():
        raise InputError("err.site.not_site", dir=shown)


def _kind(mode: int) -> str:
    """The catalogue's word for what a path that is not a directory is."""
    return ("err.kind.file" if stat.S_ISREG(mode) else "err.kind.fifo" if stat.S_ISFIFO(mode)
            else "err.kind.socket" if stat.S_ISSOCK(mode) else "err.kind.special")


def _replace(built: Path, directory: Path, shown: str) -> None:
    """Put the finished site at ``directory``: a rename when nothing is there, else the old site is renamed
    aside first (checked again: it must still be a site or empty) and removed once the new one is in place."""
    if not directory.exists():
        os.rename(built, directory)
        return
    _check_target(directory, shown)
    old = Path(tempfile.mkdtemp(prefix=f"{directory.name[:40]}.old-", dir=directory.parent))
    os.rename(directory, old / "site")
    try:
        os.rename(built, directory)
    except OSError:
        os.rename(old / "site", directory)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _advance(progress: Callable[[int, int], None] | None, total: int) -> Advance | None:
    """A download's `Advance` that tells ``progress`` the bytes received by all downloads, out of ``total``."""
    if progress is None or total == 0:
        return None
    done = [0]
    progress(0, total)

    def advance(count: int) -> None:
        done[0] += count
        progress(done[0], max(total, done[0]))

    return advance


def _write_site(site: Path, cache: Path | None, advance: Advance | None) -> None:
    """Every file of the site, into the new directory ``site``."""
    for path in sorted(PAGE.rglob("*")):
        relative = path.relative_to(PAGE)
        if path.is_file() and not any(part == "__pycache__" or part.startswith(".") for part in relative.parts):
            (site / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, site / relative)
    packaged = _pyodide(site / "pyodide", cache, advance)
    wheels = _wheels(site / "wheels", cache, packaged, advance)
    fetch = [name for name in lock()["pyodide"]["files"] if name != "package.json"]
    size = sum((site / "pyodide" / name).stat().st_size for name in fetch)
    size += sum((site / "wheels" / name).stat().st_size for name in wheels)
    _write_json(site / MARKER, {"engine": "pyodide", "pyodide": "pyodide/", "lock": "wheels/pyodide-lock.json",
                                "wheels": [f"wheels/{name}" for name in wheels], "fetch": fetch, "bytes": size})
    for lang in LANGS:
        _write_json(site / f"catalog.{lang}.json", engine.catalog(lang))
    for name in builtin_names():
        for lang in LANGS:
            _write_json(site / "stories" / f"{name}.{lang}.json", engine.answer({"scenario": name, "lang": lang}))


def _pyodide(target: Path, cache: Path | None, advance: Advance | None) -> dict[str, Any]:
    """Copy the lockfile's files of Pyodide's npm package into ``target``; the package's own lockfile (read for
    its ``info``: the Python and ABI the wheels are built for; the site has its own lockfile, in wheels/)."""
    target.mkdir()
    with tarfile.open(pyodide_tarball(cache, advance), "r:gz") as tarball:
        for name in lock()["pyodide"]["files"]:
            with _member(tarball, name) as source, open(target / name, "wb") as out:
                shutil.copyfileobj(source, out)
        with _member(tarball, "pyodide-lock.json") as source:
            return json.load(source)


def _member(tarball: tarfile.TarFile, name: str) -> IO[bytes]:
    """A regular file of the npm package (its files are under ``package/``)."""
    member = tarball.getmember(f"package/{name}")
    source = tarball.extractfile(member) if member.isfile() else None
    if source is None:
        raise KeyError(f"package/{name} is not a file")
    return source


def _wheels(target: Path, cache: Path | None, packaged: dict[str, Any], advance: Advance | None) -> list[str]:
    """Copy the locked wheels and write idemsim's own into ``target``, with the lockfile Pyodide installs them
    by; their file names, in the order they are installed (each after what it depends on, idemsim last)."""
    target.mkdir()
    entries = []
    for entry in lock()["wheels"]:
        shutil.copyfile(wheel(entry, cache, advance), target / entry["file"])
        entries.append(entry)
    name, data = idemsim_wheel()
    (target / name).write_bytes(data)
    entries.append({"name": "idemsim", "version": _version(name), "file": name,
                    "sha256": hashlib.sha256(data).hexdigest(), "depends": ["simpy", "pydantic"],
                    "imports": ["idemsim"]})
    packages = {_canonical(entry["name"]): {
        "name": entry["name"], "version": entry["version"], "file_name": entry["file"], "install_dir": "site",
        "sha256": entry["sha256"], "package_type": "package", "imports": entry["imports"],
        "depends": [_canonical(name) for name in entry["depends"]], "unvendored_tests": False, "tool": {}}
        for entry in entries}
    _write_json(target / "pyodide-lock.json", {"info": packaged["info"], "packages": packages})
    return [entry["file"] for entry in entries]


def _version(wheel_name: str) -> str:
    return wheel_name.split("-")[1]


def _canonical(name: str) -> str:
    """A distribution's name as Pyodide's lockfile keys it (PEP 503: lower case, runs of ``-_.`` one ``-``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _write_json(path: Path, value: Any) -> None:
    """One JSON file of the site: UTF-8, compact, its keys in the order the engine gives them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
