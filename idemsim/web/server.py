"""``idemsim serve``: the page on this machine, its runs made by this Python process.

`make_server` binds a `http.server.ThreadingHTTPServer` (on 127.0.0.1 unless told otherwise; port 0 picks a free
one) that answers ``GET`` and ``HEAD``:

- ``/engine.json``: ``{"engine": "serve"}``, which tells the page to ask this server for its runs;
- ``/api/catalog``, ``/api/run``, ``/api/compare`` with the page's query: the engine's JSON
  (`idemsim.web.engine.handle`), 400 with ``{"error": line}`` for bad input;
- any other path: the file of that name under ``idemsim/web/page/`` (``/`` is ``index.html``), or 404.

Guarantees: nothing outside the page's folder is served (no ``..``, no hidden name, no path that a symbolic link
leads out of the folder, no backslash or NUL, percent-escapes decoded before they are checked); every answer says
``Cache-Control: no-store``; nothing is logged per request; a client that goes away mid-answer is no error;
`serve` ends on Ctrl-C without a traceback.
"""

from __future__ import annotations

import json
import mimetypes
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qs, unquote, urlsplit

from ..base.errors import InputError, os_reason
from ..base.i18n import text
from . import engine

PAGE = Path(__file__).resolve().parent / "page"
"""The page's files, shipped in the package."""
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
         ".json": "application/json; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".txt": "text/plain; charset=utf-8", ".wasm": "application/wasm"}
"""Content types by extension (others: `mimetypes`, else ``application/octet-stream``)."""
JSON_TYPE = "application/json; charset=utf-8"


def page_file(path: str, root: Path | None = None) -> Path | None:
    """The file under ``root`` (default `PAGE`) that the URL path ``path`` names, or None: nothing outside
    ``root`` (the path is decoded first, then every part must be a plain name, and the file found must resolve
    inside ``root``)."""
    decoded = unquote(path, errors="strict") if "%" in path else path
    if not decoded.startswith("/") or "\\" in decoded or "\x00" in decoded:
        return None
    parts = decoded[1:].split("/")
    if parts[-1] == "":
        parts[-1] = "index.html"
    if any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        return None
    base = (root or PAGE).resolve()
    try:
        found = base.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None
    if not found.is_relative_to(base) or not found.is_file():
        return None
    return found


def _content_type(file: Path) -> str:
    known = TYPES.get(file.suffix.lower())
    if known is not None:
        return known
    guessed, _ = mimetypes.guess_type(file.name)
    return guessed or "application/octet-stream"


class PageHandler(BaseHTTPRequestHandler):
    """One request: the engine's JSON, ``engine.json``, a page file, or 404."""

    server_version = "idemsim"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        try:
            url = urlsplit(self.path)
        except ValueError:
            return self._json(HTTPStatus.NOT_FOUND, self._not_found(), body)
        if url.path == "/engine.json":
            return self._json(HTTPStatus.OK, {"engine": "serve"}, body)
        if url.path.startswith("/api/"):
            query = {key: values[0] for key, values in parse_qs(url.query, keep_blank_values=True).items()}
            status, data = engine.handle(url.path, query)
            return self._json(HTTPStatus(status), data, body)
        try:
            file = page_file(url.path)
        except UnicodeDecodeError:
            file = None
        if file is None:
            return self._json(HTTPStatus.NOT_FOUND, self._not_found(), body)
        try:
            content = file.read_bytes()
        except OSError:
            return self._json(HTTPStatus.NOT_FOUND, self._not_found(), body)
        self._send(HTTPStatus.OK, _content_type(file), content, body)

    def _not_found(self) -> dict[str, str]:
        return {"error": text("error", "en", message=text("err.web.not_found", "en", path=repr(self.path[:200])))}

    def _json(self, status: HTTPStatus, data: Any, body: bool) -> None:
        content = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._send(status, JSON_TYPE, content, body)

    def _send(self, status: HTTPStatus, content_type: str, content: bytes, body: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if body:
            self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a teacher's terminal shows the URL, not every request."""


class PageServer(ThreadingHTTPServer):
    """The threads serving requests are daemons; a client that goes away is not reported."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        print(f"idemsim serve: {type(error).__name__}: {error}", file=sys.stderr)


class _PageServer6(PageServer):
    address_family = socket.AF_INET6


def make_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> PageServer:
    """A server bound to ``host`` and ``port`` (0: a free one), not yet serving (``serve_forever`` does, on any
    thread; ``shutdown`` from another one stops it). A host or port it cannot bind is an `InputError`."""
    kind = _PageServer6 if ":" in host else PageServer
    try:
        return kind((host, port), PageHandler)
    except (OSError, OverflowError, UnicodeError) as error:
        reason = os_reason(error) if isinstance(error, OSError) else str(error)
        raise InputError("err.serve.listen", host=repr(host), port=port, reason=reason) from None


def url_of(server: PageServer) -> str:
    """The URL the server answers at."""
    host, port = server.server_address[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(server: PageServer, lang: str = "en", out: TextIO | None = None) -> None:
    """Print the server's URL, serve until Ctrl-C, and close it (no traceback)."""
    print(text("serve.url", lang, url=url_of(server)), file=out or sys.stdout, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
