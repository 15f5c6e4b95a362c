"""The report of a population run in a real headless Chromium (issue 31, items 1 and 3): the
first table's cells are the population entry's means (what ``psym eval`` printed), each with its
SD and n; a population whose every respondent straight-lines is marked ``!`` in the table and
drawn grey and hatched; no network request, no console error, every figure rendered.

The run is made against the loopback test server (answers from the persona, a fake model for
this test only), so this test needs no model and runs in the default suite where playwright
and chromium are installed.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.latency_server import LatencyServer  # noqa: E402

pytestmark = pytest.mark.integration  # a real browser: make test-integration


def _by_extraversion(messages: list[dict[str, str]]) -> str:
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    return "5" if "extroverted" in system else "1"


def test_population_report_in_chromium(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("no chromium binary on PATH")
    pop, run, page_file = tmp_path / "big5.jsonl", tmp_path / "run", tmp_path / "pop.html"
    res = CliRunner().invoke(cli, ["population", "build", "--generate", "binary", "-o", str(pop)])
    assert res.exit_code == 0, res.output
    with LatencyServer(latency=0.0, answer=_by_extraversion) as srv:
        args = ["eval", "--tasks", "bfi", "--population", str(pop), "--model", "openai-chat"]
        args += ["--model-args", f"base_url={srv.base_url},model=m", "--limit", "16", "-o"]
        res = CliRunner().invoke(cli, [*args, str(run)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["report", str(run), "-o", str(page_file)])
    assert res.exit_code == 0, res.output
    (group,) = json.loads((run / "results.json").read_text())["tasks"]["bfi"]["population"]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        external: list[str] = []
        errors: list[str] = []
        page.on(
            "request",
            lambda r: None if r.url.startswith(("file:", "data:")) else external.append(r.url),
        )
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(page_file.resolve().as_uri(), wait_until="load")
        cells = page.query_selector_all("table.scores span.score")
        shown = {c.get_attribute("data-scale"): c for c in cells}
        assert set(shown) == set(group["scales"])
        for scale, s in group["scales"].items():
            assert float(shown[scale].get_attribute("data-value")) == s["mean"]
            assert shown[scale].text_content() == f"{s['mean']:.2f}"
        marks = page.query_selector_all("table.scores b.warn")
        assert len(marks) == len(group["scales"])  # every respondent straight-lines: all marked
        caption = " ".join(f.text_content() for f in page.query_selector_all("figcaption"))
        assert "Grey hatched squares: m" in caption and "Grey hatched bars" in caption
        for svg in page.query_selector_all("figure.chart svg"):
            box = svg.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50
        browser.close()
    assert not external and not errors, (external, errors)
