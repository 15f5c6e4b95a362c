"""The score tables of ``psym eval``: scores of the first run, validity indicators, and every
run's scores (per condition and repeat), which turns scales into rows when its columns would
not fit the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from psymetrics_core.administer.ranges import range_text, scale_ranges
from psymetrics_core.cli.console import ROW_CAP, add_rows, fmt, stdout, table
from psymetrics_core.cli.population_screen import model_name
from psymetrics_core.instruments.indicators import (
    SHORT_NAMES,
    degenerate_sentence,
    n_scored,
    warnings_of,
)
from psymetrics_core.records.population_summary import fired

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["print_table"]

_HEADER_CAP = 16  # widest condition name kept on one line in the transposed table


def _print_runs(results: dict[str, Any]) -> None:
    """Scores per (condition, repeat) when more than one run was made: one row per run, or,
    when those rows are wider than the terminal, one row per scale in blocks of runs."""
    for task, entry in results["tasks"].items():
        runs = entry.get("runs") or []
        if len(runs) < 2:
            continue
        scales = list(runs[0]["scales"])
        title = f"{task}: scores per condition and repeat"
        t = table(title, ["condition", "seed", *scales])
        rows = (
            [r["condition"], str(r["seed"]), *(fmt(r["scales"][s]["score"]) for s in scales)]
            for r in runs
        )
        add_rows(t, rows, "results.json, runs")
        wide = stdout.options.update(max_width=1_000_000)
        if stdout.measure(t, options=wide).maximum <= stdout.width:
            stdout.print(t)
            continue
        for label, block in _transposed(title, runs, scales, stdout.width):
            stdout.print(label, markup=False, soft_wrap=True)  # a title line, never wrapped
            stdout.print(block)


def _transposed(
    title: str, runs: list[dict[str, Any]], scales: list[str], width: int
) -> list[tuple[str, Table]]:
    """The runs' scores with scales as rows and runs as columns, in blocks of runs that fit
    ``width``, each with its title (the first ``ROW_CAP`` runs, as the wide table shows; a
    caption says where the rest are). The cells are those of the wide table."""
    shown = runs[:ROW_CAP]
    cells = [[fmt(r["scales"][s]["score"]) for s in scales] for r in shown]
    name_w = min(max(len(n) for n in ["condition", *scales]), width // 2)
    widths = [
        max(len(str(r["seed"])), min(len(r["condition"]), _HEADER_CAP), *(len(c) for c in col))
        for r, col in zip(shown, cells, strict=True)
    ]
    blocks = _blocks(widths, width - 1 - (name_w + 3))
    tables: list[tuple[str, Table]] = []
    for block in blocks:
        label = title
        if len(blocks) > 1:
            span = (
                f"runs {block[0] + 1}–{block[-1] + 1}" if len(block) > 1 else f"run {block[0] + 1}"
            )
            label += f", {span} of {len(runs)}"
        t = Table()
        t.add_column("condition", width=name_w, overflow="fold")
        for i in block:
            t.add_column(Text(shown[i]["condition"]), width=widths[i], overflow="fold")
        t.add_row("seed", *(str(shown[i]["seed"]) for i in block), end_section=True)
        for j, scale in enumerate(scales):
            t.add_row(Text(scale), *(cells[i][j] for i in block))
        tables.append((label, t))
    if len(runs) > ROW_CAP:
        last = tables[-1][1]
        last.caption = f"... {len(runs) - ROW_CAP} more runs (all in results.json, runs)"
        last.caption_justify = "left"
    return tables


def _blocks(widths: Sequence[int], room: int) -> list[list[int]]:
    """Consecutive column indices grouped so that each group's columns (each ``width + 3``
    cells: padding and border) fit in ``room``; a column wider than ``room`` is a group alone."""
    blocks: list[list[int]] = []
    used = room + 1
    for i, w in enumerate(widths):
        if used + w + 3 > room:
            blocks.append([])
            used = 0
        blocks[-1].append(i)
        used += w + 3
    return blocks


def print_table(results: dict[str, Any], session: Session) -> None:
    """The first run's scores (one row per scale), the legends and flags under them, the
    validity indicators, then every run's scores when there are several."""
    tasks = results["tasks"]
    scales = [(task, name, s) for task, e in tasks.items() for name, s in e["scales"].items()]
    has_z = any("norm" in s for _, _, s in scales)
    has_ci = any(s.get("ci_low") is not None for _, _, s in scales)
    invalid = {task for task, e in tasks.items() if fired(e.get("indicators"))}
    ranges = scale_ranges(results, session)
    if (cell := _first_cell(tasks)) is not None:
        stdout.print(cell, markup=False, soft_wrap=True)
    t = table(
        f"model: {model_name(results)}  mode: {results['settings']['mode']}  "
        f"seed: {results['seed']}",
        ["task", "scale", "score (range)", "answered"]
        + (["z vs norm"] if has_z else [])
        + (["95% CI"] if has_ci else []),
    )
    t.columns[1].min_width = max((len(name) for _, name, _ in scales), default=5)  # whole names
    notes: list[str] = []
    for task, entry in tasks.items():
        normed = any("norm" in s for s in entry["scales"].values())
        for i, (scale, s) in enumerate(entry["scales"].items()):
            score = fmt(s["score"]) + (" *" if s.get("reason") else "")
            if (task, scale) in ranges:
                score += f" [dim]({range_text(ranges[task, scale])})[/dim]"
            if task in invalid and s["score"] is not None:
                score += " [bold yellow]![/bold yellow]"
            row = [task if i == 0 else "", scale, score, f"{s['n_answered']}/{s['n_items']}"]
            if has_z:
                row.append(_z_cell(s, normed, first=i == 0))
            if has_ci:
                row.append(_ci_cell(s))
            t.add_row(*row)
            if s.get("reason"):
                notes.append(f"* {task}.{scale}: {s['reason']}")
        if entry.get("scoring_note"):  # a task's own line on how its scores read
            notes.append(f"{task}: {entry['scoring_note']}")
        rate = entry.get("parse_rate")
        t.add_row(
            "",
            "[dim]parse rate[/dim]",
            "—" if rate is None else f"{100 * rate:.0f}%",
            f"[dim]{entry['n_answered']}/{entry['n_items']} parsed, "
            f"{entry['n_unparsed']} unparsed, {entry['n_refused']} refused[/dim]",
            *([""] * (has_z + has_ci)),
            end_section=True,
        )
    stdout.print(t)
    for line in _norm_legend(tasks) + notes:
        stdout.print(line, markup=False, soft_wrap=True)
    for task in invalid:
        e = tasks[task]
        sentence = degenerate_sentence(task, n_answered=e.get("n_answered"), n_scored=n_scored(e))
        stdout.print(f"[bold yellow]![/bold yellow] {sentence}", soft_wrap=True)
    _print_indicators(results)
    _print_runs(results)


def _first_cell(tasks: dict[str, Any]) -> str | None:
    """The label of the score table when a task made several runs (condition levels or
    repeats): its scores are the first run's, named by its condition level (the report's first
    column, "original" when that ran first) and seed."""
    for e in tasks.values():
        runs = e.get("runs") or []
        if len(runs) > 1:
            return (
                f"scores of the first run: condition {runs[0].get('condition')}, seed "
                f"{runs[0].get('seed')} (of {len(runs)} runs; every run: the table of scores "
                "per condition and repeat below)"
            )
    return None


def _z_cell(s: dict[str, Any], normed: bool, *, first: bool) -> str:
    """z against the scale's human norm group, or why there is none."""
    if "norm" in s:
        return f"{fmt(s['z'])} vs {s['norm']['group']}"
    if not normed:
        return "[dim]no human norms[/dim]" if first else ""
    return "[dim]—[/dim]"


def _ci_cell(s: dict[str, Any]) -> str:
    """A score's 95% interval (flagged when built on an empty cell)."""
    if s.get("ci_low") is None or s.get("ci_high") is None:
        return ""
    flag = (
        " [bold yellow]empty cell[/bold yellow]"
        if (s.get("detail") or {}).get("empty_cells")
        else ""
    )
    return f"[{fmt(s['ci_low'])}, {fmt(s['ci_high'])}]{flag}"


def _norm_legend(tasks: dict[str, Any]) -> list[str]:
    """One line per task and norm group: the group named in full, with its source and size."""
    lines = []
    for task, entry in tasks.items():
        seen = {}
        for s in entry["scales"].values():
            norm = s.get("norm")
            if norm and norm["group"] not in seen:
                seen[norm["group"]] = norm
        for group, norm in seen.items():
            size = f"n = {norm['n']:,}" if norm.get("n") else "n not reported"
            lines.append(f'human norm {task} "{group}": {norm.get("source", "")} ({size})')
    return lines


_SHOWN = ("straight_lining", "acquiescence", "reverse_keyed_inconsistency", "parse_rate")
_EXTRA = ("judge_parse_rate", "option_order_sensitivity")


def _print_indicators(results: dict[str, Any]) -> None:
    """Validity indicators of each questionnaire task (one row per task, or, when that row is
    wider than the terminal, one row per indicator in blocks of tasks), then one warning line
    per fired one."""

    rows = [(task, e["indicators"]) for task, e in results["tasks"].items() if e.get("indicators")]
    if not rows:
        return
    names = [n for n in _SHOWN + _EXTRA if any(n in ind for _, ind in rows)]
    # the title stays one line on the narrowest table (one task, one column: sct's judge parse
    # rate); the legend goes under the table, where the terminal wraps it like any text
    t = table("validity indicators", ["task", *(SHORT_NAMES.get(n, n) for n in names)])
    for task, ind in rows:
        t.add_row(task, *(_indicator_cell(ind.get(n)) for n in names))
    wide = stdout.options.update(max_width=1_000_000)
    if stdout.measure(t, options=wide).maximum <= stdout.width:
        stdout.print(t)
    else:
        for label, block in _indicators_by_row(rows, names, stdout.width):
            stdout.print(label, markup=False, soft_wrap=True)  # a title line, never wrapped
            stdout.print(block)
    stdout.print("! = beyond its threshold (docs: guides/report.md)", markup=False, soft_wrap=True)
    for task, ind in rows:
        for line in warnings_of(ind):
            stdout.print(f"[bold yellow]warning[/bold yellow] {task}: {line}", soft_wrap=True)


def _indicators_by_row(
    rows: list[tuple[str, dict[str, Any]]], names: list[str], width: int
) -> list[tuple[str, Table]]:
    """The indicators with one row per indicator (named whole) and one column per task, in
    blocks of tasks that fit ``width``, each with its title. The cells are those of the table
    with one row per task."""
    labels = [SHORT_NAMES.get(n, n) for n in names]
    cells = [[_indicator_cell(ind.get(n)) for n in names] for _, ind in rows]
    name_w = min(max(len(n) for n in ["task", *labels]), width // 2)
    widths = [
        max(min(len(task), _HEADER_CAP), *(Text.from_markup(c).cell_len for c in col))
        for (task, _), col in zip(rows, cells, strict=True)
    ]
    blocks = _blocks(widths, width - 1 - (name_w + 3))
    tables: list[tuple[str, Table]] = []
    for block in blocks:
        label = "validity indicators"
        if len(blocks) > 1:
            span = (
                f"tasks {block[0] + 1}–{block[-1] + 1}"
                if len(block) > 1
                else f"task {block[0] + 1}"
            )
            label += f", {span} of {len(rows)}"
        t = Table()
        t.add_column("task", width=name_w, overflow="fold")
        for i in block:
            t.add_column(Text(rows[i][0]), width=widths[i], overflow="fold")
        for j, name in enumerate(labels):
            t.add_row(Text(name), *(cells[i][j] for i in block))
        tables.append((label, t))
    return tables


def _indicator_cell(ind: dict[str, Any] | None) -> str:
    if not ind:
        return ""
    if ind.get("value") is None:
        return "[dim]—[/dim]"
    text = f"{ind['value']:.2f}"
    return f"[bold yellow]{text} ![/bold yellow]" if ind["fired"] else text
