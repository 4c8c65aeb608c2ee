"""idemsim's own wheel for the browser, made from the installed package (not from a source checkout's build
files: idemsim may have come from PyPI).

Guarantees: `idemsim_wheel` returns a valid ``py3-none-any`` wheel holding every file of the installed
``idemsim`` package (its ``.py`` files and its data: the catalogues, the page) but no ``__pycache__``, no
compiled or hidden file, and the shipped scenarios as ``idemsim/scenarios`` (where `scenarios_dir` finds them
inside a wheel); its METADATA names idemsim's version and requires only simpy and pydantic (what a run needs:
the browser installs no more); its RECORD gives each file's sha256 and size. The bytes depend only on those
files: the entries are sorted and dated 1980-01-01, so two builds of the same package are byte for byte the
same.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import re
import zipfile
from io import BytesIO
from pathlib import Path

from ..base.paths import scenarios_dir

PACKAGE = Path(__file__).resolve().parents[1]
"""The installed ``idemsim`` package's directory."""

NEEDS = ("simpy", "pydantic")
"""The distributions a run needs, the only ones the wheel requires."""

_EPOCH = (1980, 1, 1, 0, 0, 0)


def version() -> str:
    """idemsim's version: the installed distribution's, else the package's ``__version__`` as written."""
    try:
        return importlib.metadata.version("idemsim")
    except importlib.metadata.PackageNotFoundError:
        found = re.search(r'^__version__ = "([^"]+)"', (PACKAGE / "__init__.py").read_text(encoding="utf-8"), re.M)
        return found[1] if found else "0"


def wheel_name() -> str:
    """The wheel's file name: ``idemsim-VERSION-py3-none-any.whl``."""
    return f"idemsim-{_escaped(version())}-py3-none-any.whl"


def idemsim_wheel() -> tuple[str, bytes]:
    """The wheel's file name and bytes."""
    files = package_files()
    dist_info = f"idemsim-{_escaped(version())}.dist-info"
    files[f"{dist_info}/METADATA"] = _metadata().encode("utf-8")
    files[f"{dist_info}/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: idemsim site\nRoot-Is-Purelib: true\n"
                                   "Tag: py3-none-any\n").encode("utf-8")
    record = "".join(f"{name},sha256={_urlsafe(data)},{len(data)}\n" for name, data in files.items())
    files[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode("utf-8")
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the permissions below are read
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return wheel_name(), buffer.getvalue()


def package_files() -> dict[str, bytes]:
    """The package's files and the shipped scenarios, by their name in the wheel, sorted (dist-info after)."""
    files = {f"idemsim/{path.relative_to(PACKAGE).as_posix()}": path.read_bytes()
             for path in _files(PACKAGE) if path.relative_to(PACKAGE).parts[0] != "scenarios"}
    scenarios = scenarios_dir()
    files |= {f"idemsim/scenarios/{path.relative_to(scenarios).as_posix()}": path.read_bytes()
              for path in _files(scenarios)}
    return dict(sorted(files.items()))


def _files(root: Path) -> list[Path]:
    """Every file under ``root``, but caches, compiled and hidden files."""
    return [path for path in sorted(root.rglob("*"))
            if path.is_file() and not any(part == "__pycache__" or part.startswith(".")
                                          for part in path.relative_to(root).parts)
            and path.suffix not in (".pyc", ".pyo")]


def _metadata() -> str:
    """The wheel's METADATA: the installed distribution's name, version and summary, and its requirements on
    `NEEDS` only (as the installed distribution states them, when it is installed)."""
    try:
        installed = importlib.metadata.metadata("idemsim")
        summary = installed.get("Summary") or ""
        python = installed.get("Requires-Python")
        requires = importlib.metadata.requires("idemsim") or []
    except importlib.metadata.PackageNotFoundError:
        summary, python, requires = "", None, []
    needed = [line for line in requires if ";" not in line and _requirement_name(line) in NEEDS]
    named = {_requirement_name(line) for line in needed}
    needed += [name for name in NEEDS if name not in named]
    lines = ["Metadata-Version: 2.1", "Name: idemsim", f"Version: {version()}"]
    lines += [f"Summary: {summary}"] if summary else []
    lines += [f"Requires-Python: {python}"] if python else []
    lines += [f"Requires-Dist: {line}" for line in sorted(needed)]
    return "\n".join(lines) + "\n"


def _requirement_name(requirement: str) -> str:
    """A requirement's distribution name, normalized (``Typing_Extensions>=4`` → ``typing-extensions``)."""
    name = re.match(r"\s*([A-Za-z0-9._-]+)", requirement)
    return re.sub(r"[-_.]+", "-", name[1]).lower() if name else ""


def _escaped(text: str) -> str:
    """A name or version as a wheel's file name writes it."""
    return re.sub(r"[^\w\d.]+", "_", text)


def _urlsafe(data: bytes) -> str:
    """RECORD's hash: sha256, urlsafe base64 without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
