"""Loopback HTTP server for the renderer pages: three.js, the harness and the asset folders.

ES modules do not load over ``file://``, so the pages fetch everything from here. Only GET
(and HEAD) of files under a few whitelisted roots is served, behind a random token in the
path; anything that resolves outside its root is refused.
"""

from __future__ import annotations

import mimetypes
import secrets
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

STATIC_DIR = Path(__file__).parent / "static"

_CONTENT_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".gltf": "model/gltf+json",
    ".glb": "model/gltf-binary",
    ".bin": "application/octet-stream",
    ".obj": "text/plain; charset=utf-8",
    ".mtl": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
}

# The page may fetch only from this server (plus blob:/data: URLs it makes itself).
_CSP = (
    "default-src 'self' blob: data:; script-src 'self' blob: 'unsafe-inline'; "
    "connect-src 'self' blob: data:; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'"
)


def find_three_root(package_dir: Path | None = None) -> Path:
    """Return the ``node_modules/three`` folder installed next to this package.

    Raises:
        FileNotFoundError: naming the command that installs it.
    """
    candidates = []
    if package_dir is not None:
        candidates.append(package_dir / "node_modules" / "three")
    here = Path(__file__).resolve()
    # src/agentsdk_threejs/_server.py -> tools/threejs/node_modules (a workspace checkout)
    candidates += [parent / "node_modules" / "three" for parent in here.parents[:4]]
    for candidate in candidates:
        if (candidate / "build" / "three.module.js").is_file():
            return candidate
    raise FileNotFoundError(
        "three.js is not installed: run `npm ci` in tools/threejs (scripts/setup.d/threejs.sh does it) "
        "or pass three_dir= pointing at a node_modules/three folder"
    )


def resolve_inside(root: Path, relative: str) -> Path | None:
    """Return ``root/relative`` if it is an existing file inside ``root``, else None."""
    parts = [part for part in relative.split("/") if part]
    if any(part in ("..", ".") or "\\" in part or "\x00" in part for part in parts):
        return None
    root = root.resolve()
    candidate = root.joinpath(*parts).resolve() if parts else root
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


class AssetServer:
    """Serve three.js, the page harness and asset folders on 127.0.0.1 (random port).

    URLs look like ``http://127.0.0.1:<port>/<token>/<root>/<path>`` where root is
    ``harness``, ``three`` or ``assets/<n>`` (the n-th asset folder).
    """

    def __init__(self, three_dir: Path, asset_dirs: Sequence[Path] = ()) -> None:
        self.token = secrets.token_urlsafe(16)
        self.roots: dict[str, Path] = {"harness": STATIC_DIR, "three": Path(three_dir)}
        self.asset_dirs = [Path(directory).resolve() for directory in asset_dirs]
        for index, directory in enumerate(self.asset_dirs):
            self.roots[f"assets/{index}"] = directory
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on (after start)."""
        if self._httpd is None:
            raise RuntimeError("the asset server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/<token>/``."""
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    @property
    def page_url(self) -> str:
        """The harness page the renderer pages load."""
        return self.base_url + "harness/index.html"

    def asset_url(self, path: Path) -> str | None:
        """The URL of a file inside one of the asset folders, or None if it is outside all of them."""
        resolved = Path(path).resolve()
        for index, directory in enumerate(self.asset_dirs):
            if resolved.is_relative_to(directory) and resolved.is_file():
                relative = resolved.relative_to(directory).as_posix()
                return f"{self.base_url}assets/{index}/{relative}"
        return None

    def lookup(self, url_path: str) -> Path | None:
        """Map a request path to a file, or None (not found or refused)."""
        prefix = f"/{self.token}/"
        path = unquote(urlsplit(url_path).path)
        if not path.startswith(prefix):
            return None
        rest = path[len(prefix) :]
        for name, root in self.roots.items():
            if rest.startswith(name + "/"):
                return resolve_inside(root, rest[len(name) + 1 :])
        return None

    def start(self) -> None:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._serve(body=True)

            def do_HEAD(self) -> None:
                self._serve(body=False)

            def _serve(self, body: bool) -> None:
                file = server.lookup(self.path)
                if file is None:
                    self.send_error(HTTPStatus.NOT_FOUND)
                    return
                data = file.read_bytes()
                content_type = _CONTENT_TYPES.get(file.suffix.lower()) or (
                    mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                )
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Content-Security-Policy", _CSP)
                # three.js never changes under a running server; user assets may.
                cache = (
                    "max-age=3600"
                    if self.path.startswith(f"/{server.token}/three/")
                    else "no-cache"
                )
                self.send_header("Cache-Control", cache)
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, name="threejs-asset-server", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving; idempotent."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
