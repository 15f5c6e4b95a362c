"""Rank-comparison plot of ecological validity (Jung et al. (2026) Fig. 3): one panel per construct,
models placed by their questionnaire rank (x) and behaviour rank (y), rank 1 = most of the
construct. Written as PNG and SVG with matplotlib's Agg backend (no display needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from scipy.stats import rankdata

from psymetrics_core.base.writing import output_dir, write_output

if TYPE_CHECKING:  # ecological writes its plots with rank_plot
    from psymetrics_core.analysis.ecological import PairResult

__all__ = ["rank_plot", "ranks"]


def ranks(values: Sequence[float]) -> list[float]:
    """Rank 1 = highest value; ties get their average rank."""
    return [float(r) for r in rankdata([-v for v in values], method="average")]


def rank_plot(
    results: Sequence[PairResult],
    out_dir: str | Path,
    stem: str = "validity",
    inputs: Sequence[str | Path] = (),
) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` under ``out_dir`` (``base.writing``, never onto
    one of ``inputs``); returns their paths."""
    import matplotlib  # on demand: the [analysis] extra

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # on demand: the [analysis] extra
    from matplotlib.ticker import MaxNLocator  # on demand: the [analysis] extra

    shown = [r for r in results if r.n >= 2]
    n = max(1, len(shown))
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 4.0 * rows), squeeze=False)
    for ax in axes.flat[len(shown) :]:
        ax.axis("off")
    if not shown:
        axes[0][0].text(0.5, 0.5, "fewer than two models per pair", ha="center", va="center")
    for ax, r in zip(axes.flat, shown, strict=False):
        x, y = ranks(r.test_values), ranks(r.behaviour_values)
        ax.plot([1, r.n], [1, r.n], color="0.75", lw=1, ls="--", zorder=0)
        ax.scatter(x, y, color="tab:blue", zorder=2)
        for xi, yi, label in zip(x, y, r.models, strict=True):
            ax.annotate(label, (xi, yi), fontsize=7, xytext=(3, 3), textcoords="offset points")
        rho = "n/a" if r.rho is None else f"{r.rho:.2f}"
        ax.set_title(f"{r.construct}: rho = {rho} (n = {r.n})", fontsize=10)
        ax.set_xlabel(f"rank on {r.test_score} (1 = most)", fontsize=8)
        ax.set_ylabel(f"rank on {r.behaviour_score} (1 = most)", fontsize=8)
        ax.set_xlim(0.5, r.n + 0.5)
        ax.set_ylim(r.n + 0.5, 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    out = output_dir(out_dir, inputs=inputs, what="--output")
    paths = []
    try:
        for fmt, dpi in (("png", 120), ("svg", None)):
            paths.append(
                write_output(
                    out / f"{stem}.{fmt}",
                    partial(fig.savefig, format=fmt, dpi=dpi),
                    inputs=inputs,
                    what="--output",
                )
            )
    finally:
        plt.close(fig)
    return paths
