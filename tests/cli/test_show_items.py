"""``psym show TASK`` prints every item's id and text (issue 31: the commands page said it did;
only ``--json`` had them). The expected texts are read from the plugin's items.csv directly."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from psymetrics_core.cli import cli

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


def _show(task: str) -> str:
    res = CliRunner().invoke(cli, ["show", task], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return res.output


def test_show_prints_every_item_text_with_its_id() -> None:
    path = PLUGINS / "psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi/items.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 44
    lines = _show("bfi").splitlines()
    shown: list[list[str]] = []  # [id, text] per table row, a wrapped text joined again
    for line in lines:
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) < 2:
            continue
        if cells[0] or not shown:
            shown.append(cells[:2])
        elif cells[1]:
            shown[-1][1] += " " + cells[1]
    for row in rows:
        assert [row["id"], row["text"]] in shown, row


def test_show_says_where_texts_are_not_shipped() -> None:
    out = _show("pvq40")
    assert out.count("not shipped: --items") == 40
