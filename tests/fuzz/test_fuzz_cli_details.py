"""Malformed inputs of ``psym docs`` (--site, --port) and ``psym install --find-links``: one
line naming the input, exit 1, nothing served or installed (issue 31, item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli


def _no_site(d: Path) -> None:
    pass


def _index_only(d: Path) -> None:
    (d / "index.html").write_text("<html></html>")


def _a_file(d: Path) -> None:
    (d / "dist").write_text("not a folder")


CASES = [
    (_no_site, ["docs", "--site", "{d}/nothing"], ["nothing", "make docs"]),
    (_index_only, ["docs", "--site", "{d}"], ["search"]),
    (_a_file, ["docs", "--site", "{d}/dist"], ["dist"]),
    (_no_site, ["docs", "--port", "-1"], ["--port"]),
    (_no_site, ["docs", "--port", "99999"], ["--port"]),
    (_no_site, ["docs", "--port", "x"], ["--port"]),
    (_no_site, ["install", "asi", "--find-links", "{d}/missing"], ["--find-links", "missing"]),
    (_a_file, ["install", "asi", "--find-links", "{d}/dist"], ["--find-links", "dist"]),
    (_no_site, ["install", "asi", "--find-links", ""], ["--find-links"]),
    (_no_site, ["install", "no-such-plugin", "--find-links", "{d}"], ["no-such-plugin"]),
]


@pytest.mark.parametrize("make, argv, names", CASES, ids=[" ".join(c[1]) for c in CASES])
def test_malformed_cli_detail_inputs_are_one_line(tmp_path: Path, make, argv, names) -> None:
    make(tmp_path)
    args = [a.replace("{d}", str(tmp_path)) for a in argv]
    expect_clean_error(lambda: run_cli(args), names, label=" ".join(args))
