"""``psym contamination tables``: runs of two "models" (loopback servers, tests/oracle_server.py)
laid out as Han et al.'s Tables 1-6, every number checked by hand.

Model "oracle" knows BFI-44 and MFQ perfectly. Model "lazy" answers every verbatim prompt with
the same refusal and ignores reverse keying in option-score mapping (it answers 1..R). Both probe
the first 6 items of each inventory (--limit 6):

- option-score MAE of "lazy": BFI items 1-6 hold two reversed items (2, 6), each answered
  1..5 against 5..1 = 12 points: 2 x 12 / (6 x 5) = 0.8; MFQ items 1-6 are 5 scored items
  (6 is an attention check), none reversed, coded 0-5 (score_base native) and answered 1..6:
  1 point per option, 30 / 30 = 1.0;
- verbatim AED of "lazy": Σ Levenshtein(item, refusal) / Σ len(item) over the 6 items
  (attention check included), by an independent dynamic programme;
- keyword success (both): the BFI items 1 and 6 ("is talkative", "is reserved") share one
  masked prompt, so one of the two is lost: 5/6; MFQ 6/6.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from oracle_server import OracleServer
from psymetrics_plugin_contamination.options import ProbeOptions
from psymetrics_plugin_contamination.run import contamination
from psymetrics_plugin_contamination.tables import load_runs, paper_tables, to_markdown
from test_instruments import key_for
from test_loopback import REFUSAL, _levenshtein

from psymetrics_core.api import session_or_default
from psymetrics_core.cli import cli

FIVE = ("verbatim", "keyword", "item-dimension", "option-score", "target-score")


def make_run(out: Path, *, lazy: bool, tasks: tuple[str, ...] = ("bfi", "mfq")) -> Path:
    """One contamination run of the oracle ("lazy": refuses verbatim, ignores reverse keying)."""
    keys = [key_for(t) for t in tasks]
    extra = {"ignore_reverse": True, "refusal": REFUSAL} if lazy else {}
    with OracleServer(keys, **extra) as srv:  # type: ignore[arg-type]
        contamination(
            list(tasks),
            probes=FIVE,
            model="openai-chat",
            model_args=f"base_url={srv.base_url},model={'lazy' if lazy else 'oracle'},"
            "concurrency=8",
            options=ProbeOptions(bootstrap=20, verbatim_control="none"),
            limit=6,
            output=out,
            session=session_or_default(),
        )
    return out


def _aed(task: str) -> float:
    texts = [it.text for it in key_for(task).items[:6]]
    return sum(_levenshtein(t, REFUSAL) for t in texts) / sum(len(t) for t in texts)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The runs of "oracle" and "lazy", made once for the tests of this module (read only)."""
    base = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:  # an empty response cache of their own
        mp.setenv("PSYM_CACHE_DIR", str(base / "psymcache"))
        return make_run(base / "oracle", lazy=False), make_run(base / "lazy", lazy=True)


def test_two_runs_as_the_papers_tables(two_runs: tuple[Path, Path]) -> None:
    oracle, lazy = two_runs
    runs = load_runs([oracle, lazy])
    assert [r.label for r in runs] == ["oracle", "lazy"]  # the model each run recorded
    t1, t2, t3, t4 = paper_tables(runs)
    aed_bfi, aed_mfq = _aed("bfi"), _aed("mfq")
    v = {label: [c.value for c in cells] for label, cells in t3.rows}
    assert v["oracle"] == [0.0, pytest.approx(5 / 6), 1.0, 0.0, 0.0]
    assert v["lazy"] == [pytest.approx(aed_bfi), pytest.approx(5 / 6), 1.0, 0.8, 0.0]
    assert t3.title == "Table 3: Big Five Inventory (BFI-44)" and t3.digits == 2
    v = {label: [c.value for c in cells] for label, cells in t4.rows}
    assert v["lazy"] == [pytest.approx(aed_mfq), 1.0, 1.0, 1.0, 0.0]
    assert t4.title == "Table 4: Moral Foundations Questionnaire (MFQ-30)"
    # Table 1: each model's mean over the two inventories, then the mean of the model rows
    v = {label: [c.value for c in cells] for label, cells in t1.rows}
    assert list(v) == ["oracle", "lazy", "Average"]
    assert v["lazy"][0] == pytest.approx((aed_bfi + aed_mfq) / 2)
    assert v["lazy"][1] == pytest.approx((5 / 6 + 1) / 2)
    assert v["lazy"][3] == pytest.approx((0.8 + 1.0) / 2)
    assert v["Average"][3] == pytest.approx((0 + 0.9) / 2)
    # Table 2: each inventory's mean over the two models, 3 decimals
    v = {label: [c.value for c in cells] for label, cells in t2.rows}
    assert v["Big Five Inventory (BFI-44)"][3] == pytest.approx(0.4)
    assert v["Moral Foundations Questionnaire (MFQ-30)"][3] == pytest.approx(0.5)
    assert v["Big Five Inventory (BFI-44)"][0] == pytest.approx(aed_bfi / 2)
    assert t2.digits == 3
    md = to_markdown(paper_tables(runs), runs)
    assert (
        "| Model | Verbatim AED ↓ | Key-info success rate ↑ | Item-dimension F1 ↑ | "
        "Option-score MAE ↓ | Target-score MAE ↓ |" in md
    )
    assert f"| lazy | {aed_bfi:.2f} | 0.83 | 1.00 | 0.80 | 0.00 |" in md
    assert "| Moral Foundations Questionnaire (MFQ-30) | " in md and "| 0.500 |" in md


def test_the_command_writes_markdown_and_csv(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    oracle, lazy = two_runs
    runner = CliRunner()
    out_csv = tmp_path / "t.csv"
    res = runner.invoke(
        cli,
        [
            "contamination",
            "tables",
            str(oracle),
            str(lazy),
            "-o",
            str(out_csv),
            "--label",
            "=HYPERLINK(1)",
            "--label",
            "lazy",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.reader(io.StringIO(out_csv.read_text(encoding="utf-8"))))
    assert rows[0] == [
        "table",
        "row",
        "Verbatim AED ↓",
        "Key-info success rate ↑",
        "Item-dimension F1 ↑",
        "Option-score MAE ↓",
        "Target-score MAE ↓",
    ]
    bfi = [r for r in rows if r[0].startswith("Table 3")]
    assert [r[1] for r in bfi] == ["'=HYPERLINK(1)", "lazy"]  # a formula is not run
    assert float(bfi[1][5]) == pytest.approx(0.8)  # unrounded
    out_md = tmp_path / "t.md"
    res = runner.invoke(cli, ["contamination", "tables", str(oracle), str(lazy), "-o", str(out_md)])
    assert res.exit_code == 0, res.output
    assert "## Table 4: Moral Foundations Questionnaire (MFQ-30)" in out_md.read_text()
    # Markdown on stdout without -o; a probe a run did not run is "—", explained in the notes,
    # and so is every mean over it (never the mean of the rest)
    fewer = tmp_path / "fewer"
    with OracleServer([key_for("bfi"), key_for("mfq")]) as srv:
        contamination(
            ["bfi", "mfq"],
            probes=("verbatim",),
            model="openai-chat",
            model_args=f"base_url={srv.base_url},model=few,concurrency=8",
            options=ProbeOptions(bootstrap=20, verbatim_control="none"),
            limit=6,
            output=fewer,
            session=session_or_default(),
        )
    res = runner.invoke(cli, ["contamination", "tables", str(fewer), str(lazy)])
    assert res.exit_code == 0, res.output
    assert "| few | 0.00 | — | — | — | — |" in res.output
    assert "Table 3, few, keyword: not run" in res.output
    assert "| Average | " in res.output and "| — |" in res.output


def test_the_run_command_still_needs_tasks(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["contamination", "--output", str(tmp_path / "x")])
    assert res.exit_code != 0 and "Missing option '--tasks'" in res.output
