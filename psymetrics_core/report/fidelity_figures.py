"""The figures of the report's human-fidelity section (``fidelity_section``): each item's
fidelity with its interval against the human ceiling band, and model-vs-human stacked bars of
the items that diverge most. Deterministic SVG through ``figures.svg_of``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from psymetrics_core.report.figures import PALETTE, Figure, _plt, svg_of

if TYPE_CHECKING:
    from psymetrics_core.analysis.fidelity.records import Estimate, ItemFidelity

__all__ = ["item_figure", "divergent_bars", "most_divergent", "fidelity_of_item"]

CEILING_COLOR = "#bbbbbb"


def fidelity_of_item(it: ItemFidelity) -> tuple[float | None, float | None, float | None]:
    """An item's fidelity, 1 - W1 (OpinionQA's per-item representativeness), with its interval
    (None where W1 is undefined)."""
    w = it.w1
    if w.value is None:
        return None, None, None
    low = None if w.high is None else 1.0 - w.high
    high = None if w.low is None else 1.0 - w.low
    return 1.0 - w.value, low, high


def item_figure(
    items: Sequence[ItemFidelity],
    band: Estimate | None,
    overall: Estimate,
    title: str,
) -> Figure | None:
    """Each item's 1 - W1 with its interval (one row per item, instrument order), the human
    ceiling's representativeness interval as a grey band and the model's overall value as a
    dashed line; None when no item has a defined W1."""
    rows = [(it.item, *fidelity_of_item(it)) for it in items]
    rows = [r for r in rows if r[1] is not None]
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 1.0 + 0.22 * len(rows)))
    ys = list(range(len(rows)))[::-1]
    if band is not None and band.low is not None and band.high is not None:
        ax.axvspan(
            band.low,
            band.high,
            color=CEILING_COLOR,
            alpha=0.5,
            lw=0,
            label="human ceiling (two halves), 95% interval",
        )
    if overall.value is not None:
        ax.axvline(
            overall.value,
            color=PALETTE[1],
            ls="--",
            lw=1,
            label=f"model overall {overall.value:.3f}",
        )
    for y, (_, value, low, high) in zip(ys, rows, strict=True):
        assert value is not None
        if low is not None and high is not None:
            ax.plot([low, high], [y, y], color=PALETTE[0], lw=1.2)
        ax.plot([value], [y], "o", color=PALETTE[0], ms=3.5)
    ax.set_yticks(ys, [r[0] for r in rows])
    ax.set_xlim(0, 1)
    ax.set_xlabel("fidelity = 1 - W1 / (position range)   (1 = the human distribution)")
    ax.legend(loc="lower left", fontsize=7, frameon=False)
    fig.tight_layout()
    alt = f"{title}: {len(rows)} items"
    caption = (
        f"{title}. Dots: the item's 1 - normalised W1 (Santurkar et al., 2023) with its "
        "bootstrap interval; grey band: what a second human sample would score (two random "
        "halves of the human file); dashed: the model's representativeness."
    )
    return Figure(svg_of(fig, alt), caption, alt)


def most_divergent(items: Sequence[ItemFidelity], k: int) -> list[ItemFidelity]:
    """The ``k`` items with the largest defined W1, largest first (ties: item order)."""
    defined = [it for it in items if it.w1.value is not None]
    return sorted(defined, key=lambda it: -(it.w1.value or 0.0))[:k]


def divergent_bars(items: Sequence[ItemFidelity], k: int, label: str) -> Figure | None:
    """Model and human stacked bars of the ``k`` most divergent items (substantive shares;
    the non-substantive share of each side in its bar's label); None without any."""
    chosen = most_divergent(items, k)
    if not chosen:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.2, 0.9 + 0.55 * len(chosen)))
    names, ys = [], []
    width = max(len(it.model.shares) for it in chosen)
    colors = _ordinal_colors(plt, width)
    for i, it in enumerate(chosen):
        for j, (side, d) in enumerate((("model", it.model), ("human", it.human))):
            y = 3 * (len(chosen) - 1 - i) + (1 - j)
            left = 0.0
            for o, share in enumerate(d.shares):
                ax.barh(y, share, left=left, color=colors[o], height=0.9, lw=0)
                left += share
            other = sum(d.nonsub)
            extra = f", {other:.0%} other" if other > 0 else ""
            w1 = f"W1 {it.w1.value:.2f}, " if side == "model" else ""
            names.append(f"{it.item} {side} ({w1}{d.n} answering{extra})")
            ys.append(y)
    ax.set_yticks(ys, names, fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of substantive answers")
    first = chosen[0].model.options
    labels = first.labels or first.values
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[o]) for o in range(len(labels))]
    rows = math.ceil(len(labels) / 3)
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.05 + 0.25 * rows / fig.get_figheight(), 1, 1))
    alt = f"{label}: model vs human answer shares on the {len(chosen)} most divergent items"
    caption = (
        f"{alt} (largest W1 first); colours run from the lowest to the highest option of the "
        f"first item ({', '.join(labels)})."
    )
    return Figure(svg_of(fig, alt), caption, alt)


def _ordinal_colors(plt: object, n: int) -> list[tuple[float, float, float, float]]:
    """``n`` colours of a diverging map, lowest option first."""
    cmap = plt.get_cmap("RdYlBu")  # type: ignore[attr-defined]
    return [cmap(0.1 + 0.8 * i / max(1, n - 1)) for i in range(n)]
