"""Serve the built documentation site on a local address (``psym docs``).

Opened from disk (``file://``), the site's search does not work: browsers refuse the web worker
that runs it. Served over ``http://127.0.0.1`` it does, with nothing fetched from the network.
"""

from __future__ import annotations

import functools
import http.server
from pathlib import Path

from psymetrics_core.base.errors import PsymError

__all__ = ["SITE", "check_site", "site_server"]

SITE = Path("build") / "site"  # where `make docs` (mkdocs build) writes the site


def check_site(folder: Path) -> Path:
    """``folder`` when it holds a built site (``index.html`` and the search index), else a
    one-line ``PsymError`` saying how to build it."""
    if not (folder / "index.html").is_file():
        raise PsymError(
            f"{folder}: no built documentation site (index.html missing); build it in a "
            "checkout with `make docs` (or mkdocs build), or pass --site DIR"
        )
    if not (folder / "search" / "search_index.json").is_file():
        raise PsymError(f"{folder}: the site has no search index (search/search_index.json)")
    return folder


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def site_server(folder: Path, port: int = 8000) -> http.server.ThreadingHTTPServer:
    """An HTTP server for the built site in ``folder`` on 127.0.0.1:``port`` (0: any free
    port), not yet serving: call ``serve_forever()``. A port in use is a ``PsymError``."""
    handler = functools.partial(_QuietHandler, directory=str(check_site(folder)))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise PsymError(
            f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror})"
        ) from None
