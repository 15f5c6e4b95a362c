"""``psym report`` opened in a real headless Chromium (Debian's ``chromium``, driven by
playwright's Python API through ``executable_path``: no browser download).

Three reports from real SmolLM2 runs: a bfi+mfq run, a condition grid with repeats, and two
answer modes of the model side by side under different ``--label``s. Each must make zero
network requests, log zero console errors, render every figure, and show the scores that
``results.json`` holds. A screenshot of each is saved (``PSYM_REPORT_SCREENSHOTS=DIR`` keeps
them, e.g. ``docs/``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from psymetrics_core.cli import main

# bfi,mfq on the default model: on the worker of test_end_to_end_model's runs, whose session
# response cache answers the first 12 items (tests/scheduling.py)
pytestmark = [
    pytest.mark.model,
    pytest.mark.integration,  # a real browser
    pytest.mark.xdist_group("smollm2-bfi-mfq"),
]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def session():
    from psymetrics_core.pluginsys.session import Session

    return Session()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (requirements-dev.txt)"
    )
    exe = _chromium()
    if exe is None:
        pytest.skip("no chromium binary on PATH (make setup installs Debian's chromium as root)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory, smollm2, session):
    """bfi+mfq in both answer modes (two labelled "models") and a small condition grid.

    ``--limit 12`` keeps the generate runs short on a CPU; the first 12 BFI items already show
    SmolLM2's flat answer pattern. The runs go through ``evaluate`` on the session's loaded
    model, with the response cache on as ``psym eval`` has it (the console script's own run is
    test_end_to_end_model's). The grid is 6 BFI items (one of each scale and a second
    extraversion item), 2 conditions x 2 repeats, its answers cut to 8 tokens (the digit comes
    first).
    """
    from psymetrics_core.administer.runner import evaluate

    base = tmp_path_factory.mktemp("report-runs")
    out = {"gen": base / "gen", "lp": base / "lp", "grid": base / "grid"}
    common = {"backend": smollm2, "session": session, "cache": True, "limit": 12}
    evaluate(["bfi", "mfq"], **common, label="smollm2-generate", output=out["gen"])
    evaluate(["bfi", "mfq"], **common, mode="logprob", label="smollm2-logprob", output=out["lp"])
    evaluate(
        ["bfi"],
        **{**common, "limit": 6},
        conditions=["original", "reversed-options"],
        repeats=2,
        temperature=0.7,
        max_new_tokens=8,
        output=out["grid"],
    )
    return out


def _open(browser, html: Path, shot: Path):
    """Load ``html``; return (page, external requests, console errors)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    external: list[str] = []
    errors: list[str] = []
    page.on(
        "request",
        lambda r: (
            None if r.url.startswith(("file:", "data:", "about:")) else external.append(r.url)
        ),
    )
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html.resolve().as_uri(), wait_until="load")
    page.screenshot(path=str(shot), full_page=False)
    keep = os.environ.get("PSYM_REPORT_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return page, external, errors


def _check(page, run_dirs: list[Path]) -> int:
    """Figures rendered and page scores equal to results.json; returns the figure count."""
    figs = page.query_selector_all("figure.chart")
    assert figs, "no figures"
    for f in figs:
        svg = f.query_selector("svg")
        box = svg.bounding_box()
        assert box and box["width"] > 100 and box["height"] > 50, box
        assert len(svg.query_selector_all("path")) > 5
        assert svg.query_selector("title").text_content().strip()
        assert f.query_selector("[role=img]").get_attribute("aria-label")
        assert f.query_selector("figcaption").text_content().strip()
    by_label = {}
    for d in run_dirs:
        res = json.loads((d / "results.json").read_text())
        by_label[res.get("label") or d.name] = res
    cells = page.query_selector_all("span.score")
    n_expected = sum(len(e["scales"]) for r in by_label.values() for e in r["tasks"].values())
    assert len(cells) == n_expected
    for c in cells:
        res = by_label[c.get_attribute("data-run")]
        want = res["tasks"][c.get_attribute("data-task")]["scales"][c.get_attribute("data-scale")]
        if want["score"] is None:
            assert c.text_content() == "—"
        else:
            assert float(c.get_attribute("data-value")) == want["score"]
            assert c.text_content() == f"{want['score']:.2f}"
    return len(figs)


def _report(session, tmp_path: Path, name: str, dirs: list[Path]) -> Path:
    """``psym report DIRS --output NAME.html``, in this process (test_docs runs the console
    script's ``psym report``)."""
    out = tmp_path / f"{name}.html"
    main(["report", *map(str, dirs), "--output", str(out)], session=session)
    assert out.is_file()
    return out


def test_bfi_mfq_report(browser, runs, session, tmp_path):
    html = _report(session, tmp_path, "report-bfi-mfq", [runs["gen"]])
    page, external, errors = _open(browser, html, tmp_path / "report-bfi-mfq.png")
    assert external == [] and errors == []
    assert _check(page, [runs["gen"]]) >= 4  # 2 profiles + 2 item heatmaps
    # the first-run answer pattern is flagged on the first screen
    warnings = " ".join(
        page.eval_on_selector_all("p.warning", "els => els.map(e => e.textContent)")
    )
    assert "straight-lining" in warnings
    # the sample search filters rows with the inline script
    page.fill("#sample-search", "mfq")
    shown = page.eval_on_selector_all("#sample-table tbody tr:not([hidden])", "r => r.length")
    lines = (runs["gen"] / "samples.jsonl").read_text().splitlines()
    assert shown == sum(json.loads(x)["task"] == "mfq" for x in lines) == 12
    # deterministic: the same runs give the same bytes
    again = _report(session, tmp_path / "again", "report-bfi-mfq", [runs["gen"]])
    assert again.read_bytes() == html.read_bytes()


def test_condition_grid_report(browser, runs, session, tmp_path):
    html = _report(session, tmp_path, "report-conditions", [runs["grid"]])
    page, external, errors = _open(browser, html, tmp_path / "report-conditions.png")
    assert external == [] and errors == []
    _check(page, [runs["grid"]])
    assert page.query_selector("#conditions figure.chart"), "no forest plot"
    rel = page.inner_text("#reliability table")
    assert "administrations" in page.inner_text("#reliability .caveat") and "extraversion" in rel


def test_two_models_side_by_side(browser, runs, session, tmp_path):
    html = _report(session, tmp_path, "report-two-models", [runs["gen"], runs["lp"]])
    page, external, errors = _open(browser, html, tmp_path / "report-two-models.png")
    assert external == [] and errors == []
    _check(page, [runs["gen"], runs["lp"]])
    header = page.inner_text("table.scores thead")
    assert "smollm2-generate" in header and "smollm2-logprob" in header
    assert "mean option probability" in page.inner_text("#items")
