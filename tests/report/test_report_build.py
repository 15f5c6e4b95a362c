"""``psym report`` page building without a browser: determinism, escaping, panels, labels.

Runs come from ``evaluate()`` with a scripted backend (unit tests; the browser test in
test_report_browser.py uses the real model).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.report import build_report, load_runs_for_report, write_report


class _Scripted:
    """Answers prompts from a fixed list, cycling (a fake model for unit tests only)."""

    def __init__(self, answers):
        self.answers = answers
        self.i = 0

    def generate(self, prompts, settings, reporter=None):
        from psymetrics_core.base.types import Completion

        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
        return out

    def identity(self):
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two scripted runs, made once for the module's tests (none of them writes into them)."""
    from psymetrics_core import evaluate

    tmp_path = tmp_path_factory.mktemp("runs")
    a, b = tmp_path / "flat", tmp_path / "varied"
    evaluate(["bfi"], backend=_Scripted([1, 1, 1, "<script>alert(1)</script>"]), output=a)
    evaluate(
        ["bfi"],
        backend=_Scripted([4, 2, 5, 1, 3]),
        output=b,
        limit=10,
        conditions=["original", "reversed-options"],
        repeats=2,
    )
    return [a, b]


LABELS = ["model A", "model B"]


@pytest.fixture(scope="module")
def written(runs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """The report of the two runs (labelled LABELS) written twice, each time from the run
    folders and a fresh session; the tests below read the same pages."""
    out = tmp_path_factory.mktemp("reports")
    return (
        write_report(runs, out / "1.html", LABELS, session=Session()).read_bytes(),
        write_report(runs, out / "2.html", LABELS, session=Session()).read_bytes(),
    )


def test_same_runs_same_bytes_and_no_external_references(written):
    one, two = written
    assert one == two
    html = one.decode()
    # nothing is fetched: no src/href to another origin, no @import or url() to one
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and not re.search(r"url\(\s*['\"]?(https?:)?//", html)
    # the model's text is escaped, never executed
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script>") == 1  # the inline sample search only


def test_flat_pattern_warned_and_labels_side_by_side(runs, written):
    html = written[0].decode()
    assert "Warning</b> model A · bfi: straight-lining" in html
    assert "model B · bfi: straight-lining" not in html
    head = html[
        html.index('<table class="scores">') : html.index(
            "</thead>", html.index('<table class="scores">')
        )
    ]
    assert "model A" in head and "model B" in head
    # every scale score of results.json is in the page with its exact value
    for path, label in zip(runs, LABELS, strict=True):
        res = json.loads((path / "results.json").read_text())
        for scale, s in res["tasks"]["bfi"]["scales"].items():
            cell = re.search(
                rf'data-run="{label}" data-task="bfi" data-scale="{scale}" data-value="([^"]*)"',
                html,
            )
            assert cell and float(cell.group(1)) == s["score"]


def test_panels_render_from_their_json(fresh_plugins, runs, tmp_path):
    panel = {"model": "x", "tasks": [{"task": "bfi", "probe": "item_recall", "score": 0.25}]}
    flat = shutil.copytree(runs[0], tmp_path / "flat")  # the shared run stays as it was
    (flat / "contamination.json").write_text(json.dumps(panel))
    only = tmp_path / "contamination-only"
    only.mkdir()
    (only / "contamination.json").write_text(json.dumps(panel))
    html = build_report(load_runs_for_report([flat, only]), session=fresh_plugins)
    section = html[html.index('data-panel="contamination.json"') : html.index('id="projective"')]
    assert "item_recall" in section and "0.250" in section
    assert "No <code>projective.json</code>" in html


def test_bad_inputs_are_one_line(tmp_path):
    with pytest.raises(PsymError, match="results.json: no such file"):
        load_runs_for_report([tmp_path])
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(PsymError, match="results.json, line 1: invalid JSON"):
        load_runs_for_report([tmp_path])
    with pytest.raises(PsymError, match="--label given 2 times for 1"):
        load_runs_for_report([tmp_path], ["a", "b"])
