"""``psym docs`` serves the built site so that its search works (issue 31: opened from disk the
theme's search worker is refused by the browser). A real HTTP server on a free local port."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

from psymetrics_core.base.docsite import site_server
from tests.fuzz.harness import expect_clean_error, run_cli


def _site(folder: Path) -> Path:
    (folder / "search").mkdir(parents=True)
    (folder / "index.html").write_text("<html><body>psymetrics</body></html>")
    index = {"docs": [{"location": "index.html", "title": "Home", "text": "psymetrics"}]}
    (folder / "search" / "search_index.json").write_text(json.dumps(index))
    return folder


def test_the_site_and_its_search_index_are_served_over_http(tmp_path: Path) -> None:
    server = site_server(_site(tmp_path / "site"), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(f"{base}/search/search_index.json", timeout=10) as r:
            assert r.status == 200
            assert json.load(r)["docs"][0]["title"] == "Home"
        with urllib.request.urlopen(f"{base}/index.html", timeout=10) as r:
            assert b"psymetrics" in r.read()
    finally:
        server.shutdown()
        server.server_close()


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    busy = site_server(_site(tmp_path / "site"), port=0)
    try:
        port = str(busy.server_address[1])
        args = ["docs", "--site", str(tmp_path / "site"), "--port", port]
        expect_clean_error(lambda: run_cli(args), [port], label="port in use")
    finally:
        busy.server_close()
