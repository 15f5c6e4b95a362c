"""Matplotlib figures of the report, rendered as deterministic inline SVG.

Same data, same bytes: a fixed ``svg.hashsalt``, no creation date in the metadata, the Agg
backend and a fixed font family. Every figure carries a ``<title>`` (its alt text).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

__all__ = [
    "Figure",
    "svg_of",
    "profile_figure",
    "distribution_figure",
    "forest_figure",
    "population_figure",
]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")


@dataclass(frozen=True)
class Figure:
    """An inline SVG with its caption and alt text."""

    svg: str
    caption: str
    alt: str


def _plt() -> Any:
    import matplotlib  # on demand: the [analysis] extra

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt  # on demand: the [analysis] extra

    plt.rcParams.update(
        {
            "svg.hashsalt": "psymetrics-report",
            "svg.fonttype": "path",
            "font.family": "DejaVu Sans",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def svg_of(fig: Any, alt: str) -> str:
    """``fig`` as an SVG element (no XML prolog), with ``alt`` as its ``<title>``."""
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "psymetrics"})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    head_end = text.index(">") + 1
    return text[:head_end] + f"\n <title>{escape(alt)}</title>" + text[head_end:]


DEGENERATE = "degenerate answer pattern (not a personality)"
DEGENERATE_COLOR = "#9a9a9a"


def profile_figure(
    scales: Sequence[str],
    runs: Sequence[str],
    points: dict[tuple[str, str], tuple[float, float | None, float | None] | None],
    norms: dict[str, tuple[float, float, str]],
    lo: float,
    hi: float,
    degenerate: frozenset[str] = frozenset(),
) -> Any:
    """One panel per scale: norm mean +- 1 SD band, each run's mean with its interval.

    ``points[(run, scale)]`` = (mean, low, high) over administrations; ``norms[scale]`` =
    (mean, sd, group). The top axis of each panel shows z against that scale's norm. Runs in
    ``degenerate`` (their answer pattern flagged by a validity indicator) are drawn grey with
    hatched square markers and named in a legend.
    """
    plt = _plt()
    height = 0.55 + 0.42 * len(runs) * len(scales) + 0.5 * len(scales) + 0.3 * bool(degenerate)
    fig, axes = plt.subplots(len(scales), 1, figsize=(7.0, height), squeeze=False)
    for ax, scale in zip(axes[:, 0], scales, strict=True):
        ax.set_xlim(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo))
        ax.set_ylim(-0.7, len(runs) - 0.3)
        norm = norms.get(scale)
        if norm is not None:
            _norm_band(ax, *norm)
        for i, run in enumerate(runs):
            p = points.get((run, scale))
            if p is not None:
                _profile_point(ax, i, p, PALETTE[i % len(PALETTE)], run in degenerate)
        ax.set_yticks(range(len(runs)), list(runs))
        ax.invert_yaxis()
        ax.set_title(scale, loc="left", fontsize=9, fontweight="bold")
    band = " (grey band: human norm mean ± 1 SD)" if norms else ""
    axes[-1, 0].set_xlabel("scale score" + band)
    if degenerate:
        mark = plt.Line2D([], [], marker="s", ls="none", mfc="white", mec=DEGENERATE_COLOR, ms=7)
        fig.legend([mark], [DEGENERATE], loc="lower right", fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0.04, 1, 1))
    else:
        fig.tight_layout()
    return fig


def _norm_band(ax: Any, m: float, sd: float, group: str) -> None:
    """The human norm's mean ± 1 SD band and mean line, with a top axis of z against it."""
    ax.axvspan(m - sd, m + sd, color="#bbbbbb", alpha=0.45, lw=0)
    ax.axvline(m, color="#555555", lw=1, ls="--")
    if sd > 0:
        sec = ax.secondary_xaxis(
            "top",
            functions=(lambda x, m=m, sd=sd: (x - m) / sd, lambda z, m=m, sd=sd: m + z * sd),
        )
        sec.set_xlabel(f"z vs {group}", fontsize=7, labelpad=1)
        sec.tick_params(labelsize=7)


def _profile_point(
    ax: Any, i: int, p: tuple[float, float | None, float | None], color: str, degenerate: bool
) -> None:
    """One run's mean (and interval) on row ``i``; a degenerate pattern's grey and hatched."""
    mean, low, high = p
    if degenerate:
        color = DEGENERATE_COLOR
        ax.scatter(
            [mean],
            [i],
            marker="s",
            s=60,
            facecolor="white",
            edgecolor=color,
            hatch="////",
            zorder=3,
        )
    if low is None or high is None:  # one administration: the point, no interval
        if not degenerate:
            ax.plot([mean], [i], marker="o", mfc="none", color=color, ms=5)
        return
    style = "none" if degenerate else "o"
    err = [[mean - low], [high - mean]]
    ax.errorbar([mean], [i], xerr=err, fmt=style, color=color, capsize=3, ms=5)


def distribution_figure(
    items: Sequence[str],
    reverse: Sequence[bool],
    codes: Sequence[int],
    shares: Sequence[Sequence[float]],
    title: str,
    what: str,
) -> Any:
    """Heatmap of items (rows) x answer codes (columns); reverse-keyed items end in ``(R)``."""
    plt = _plt()
    n = len(items)
    fig, ax = plt.subplots(figsize=(1.6 + 0.55 * len(codes), 0.9 + 0.17 * n))
    import numpy as np  # on demand: the [analysis] extra

    data = np.asarray(shares, dtype=float).reshape(n, len(codes))
    im = ax.imshow(data, aspect="auto", cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
    ax.set_xticks(range(len(codes)), [str(c) for c in codes])
    ax.set_yticks(
        range(n), [f"{i} (R)" if r else str(i) for i, r in zip(items, reverse, strict=True)]
    )
    for lbl, r in zip(ax.get_yticklabels(), reverse, strict=True):
        if r:
            lbl.set_color("#b2182b")
            lbl.set_fontweight("bold")
    ax.tick_params(axis="y", labelsize=6 if n > 30 else 8)
    ax.set_xlabel("answer code")
    ax.set_ylabel("item ((R) = reverse-keyed)")
    ax.set_title(title, loc="left", fontsize=9)
    cb = fig.colorbar(im, ax=ax, fraction=0.08, pad=0.04)
    cb.set_label(what, fontsize=7)
    fig.tight_layout()
    return fig


def forest_figure(
    rows: Sequence[tuple[str, float, float | None, float | None]], xlabel: str
) -> Any:
    """Forest plot: one row per (label, difference, ci_low, ci_high); CI None = no interval."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.0, 0.8 + 0.28 * len(rows)))
    for i, (_, d, low, high) in enumerate(rows):
        if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
            ax.plot([low, high], [i, i], color="#1f77b4", lw=1.5)
            ax.plot([d], [i], "s", color="#1f77b4", ms=5)
        else:
            ax.plot([d], [i], "D", mfc="white", mec="#d62728", ms=5)
    ax.axvline(0, color="#555555", lw=1, ls="--")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.tick_params(axis="y", labelsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    fig.tight_layout()
    return fig


def population_figure(
    panels: Sequence[tuple[str, Sequence[float], tuple[float, float, str] | None]],
    lo: float,
    hi: float,
    flagged: Mapping[str, Sequence[float]] | None = None,
) -> Any:
    """One small panel per scale: a histogram (density) of the respondents' scale scores and,
    where the scale has a human norm (mean, sd, group), its normal curve and mean ± 1 SD band.

    ``panels`` = (scale, scores, norm); ``lo``..``hi`` is the common score axis;
    ``flagged[scale]``: the scores of respondents with a degenerate answer pattern, drawn as
    their share of each bar, grey and hatched, with a legend entry.
    """
    plt = _plt()
    import numpy as np  # on demand: the [analysis] extra

    cols = min(len(panels), 3)
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 1.9 * rows), squeeze=False)
    bins = np.linspace(lo, hi, 21)
    grid = np.linspace(lo, hi, 200)
    for ax, (scale, scores, norm) in zip(axes.flat, panels, strict=False):
        top = 0.0
        if len(scores):
            dens, _, _ = ax.hist(
                scores, bins=bins, density=True, color=PALETTE[0], alpha=0.75, lw=0
            )
            top = float(np.max(dens))
            bad = (flagged or {}).get(scale) or []
            if bad:
                width = float(bins[1] - bins[0])
                ax.hist(
                    bad,
                    bins=bins,
                    weights=[1 / (len(scores) * width)] * len(bad),
                    facecolor="white",
                    edgecolor=DEGENERATE_COLOR,
                    hatch="////",
                    lw=0.5,
                )
        if norm is not None:
            m, sd, _ = norm
            ax.axvspan(m - sd, m + sd, color="#bbbbbb", alpha=0.35, lw=0)
            pdf = np.exp(-0.5 * ((grid - m) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
            ax.plot(grid, pdf, color="#555555", lw=1.2, ls="--")
            peak = float(np.max(pdf))
            if top > 4 * peak:  # a spike (no spread) would flatten the norm curve: clip it
                ax.set_ylim(0, 4 * peak)
                ax.text(
                    0.98,
                    0.95,
                    "bar clipped",
                    transform=ax.transAxes,
                    ha="right",
                    va="top",
                    fontsize=6,
                    color="#b2182b",
                )
        ax.set_xlim(lo, hi)
        ax.set_yticks([])
        ax.tick_params(labelsize=7)
        ax.set_title(f"{scale} (n {len(scores)})", loc="left", fontsize=8, fontweight="bold")
        ax.set_xlabel("scale score", fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    if any((flagged or {}).values()):
        key = plt.Rectangle(
            (0, 0), 1, 1, facecolor="white", edgecolor=DEGENERATE_COLOR, hatch="////"
        )
        fig.legend([key], [DEGENERATE], loc="lower right", fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0.06, 1, 1))
    else:
        fig.tight_layout()
    return fig
