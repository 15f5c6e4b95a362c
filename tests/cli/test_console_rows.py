"""Per-cell tables on screen are capped (a population run has one cell per respondent): the
first ``ROW_CAP`` rows, then one row saying how many more there are and where they all are."""

from __future__ import annotations

from rich.console import Console

from psymetrics_core.cli.console import ROW_CAP, add_rows, table


def _render(n: int) -> str:
    t = table("t", ["cell", "score"])
    add_rows(t, ([f"respondent=p{i:04}", str(i)] for i in range(n)), "results.json")
    console = Console(width=120, record=True)
    console.print(t)
    return console.export_text()


def test_short_tables_are_whole() -> None:
    text = _render(ROW_CAP)
    assert f"respondent=p{ROW_CAP - 1:04}" in text and "more rows" not in text


def test_long_tables_show_the_cap_and_count_the_rest() -> None:
    text = _render(1250)
    assert f"respondent=p{ROW_CAP - 1:04}" in text and f"respondent=p{ROW_CAP:04}" not in text
    flat = " ".join(text.split())  # the caption wraps at the table's width
    assert f"... {1250 - ROW_CAP} more rows (all in results.json)" in flat
