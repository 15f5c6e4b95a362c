"""``psym eval``'s screen for a verbalized run: the distributions the model stated, not scores.

A verbalized administration (``--condition verbalized``; Meister et al., 2024) asks what share
of people choose each option; its items have no answer, so its scales have no score. The screen
says so and lists each item's stated shares, or why the reply did not parse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psymetrics_core.administer.distribution import StatedItem, has_verbalized, stated_items
from psymetrics_core.cli.console import add_rows, stdout, table

__all__ = ["print_stated"]

NO_SCORES = (
    "verbalized (Meister et al., 2024): the model stated each item's distribution (the share of "
    "people it says choose each option); there is no answer to score, so no scale scores. "
    "Compare the distributions with people's: psym fidelity {run} HUMAN_FILE, or psym report "
    "{run} --human HUMAN_FILE."
)


def print_stated(results: dict[str, Any], output: Path) -> None:
    """The stated distributions of the run in ``output`` (nothing when it has none)."""
    if not has_verbalized(results):
        return
    rows = stated_items(output / "samples.jsonl")
    several = len({(r.condition, r.repeat) for r in rows}) > 1
    t = table(
        "stated distributions (verbalized): share of people per option",
        ["task", "item"] + (["condition", "repeat"] if several else []) + ["stated shares"],
    )
    add_rows(t, [_row(r, several) for r in rows], where="samples.jsonl")
    stdout.print(t)
    ok = sum(r.status == "ok" for r in rows)
    stdout.print(
        f"{ok} of {len(rows)} replies parsed"
        + (
            "; the others did not name every option once with shares summing to 90-110% "
            "(each reason above, and in samples.jsonl data.reason)"
            if ok < len(rows)
            else ""
        ),
        markup=False,
        soft_wrap=True,
    )
    stdout.print(NO_SCORES.format(run=output), markup=False, soft_wrap=True)


def _row(r: StatedItem, several: bool) -> list[str]:
    where = [r.condition, str(r.repeat)] if several else []
    if r.shares is None:
        text = f"[yellow]{r.status}[/yellow]: {r.reason or 'no reason recorded'}"
    else:
        text = "  ".join(f"{value}: {100 * r.shares[value]:.1f}%" for value, _ in r.options)
    return [r.task, r.item, *where, text]
