"""How a run gives each item's answer distribution: ``results.json``'s ``distribution``.

Meister et al. (2024) name three ways to get a distribution over an item's options out of a
model, and a run records which one each of its administration modes gives (keyed by mode):

- ``sampled``: the shares of the parsed answers (``samples.jsonl`` ``answer``) per item, pooled
  over the run's repeats (``--repeats N``, seeds SEED..SEED+N-1, at ``--temperature T``) and its
  cells (a population's respondents, the conditions); at temperature 0 a cell repeats one answer,
  so the shares vary only across cells;
- ``logprob`` (``--mode logprob``): per prompt, the probabilities of the options' tokens
  renormalised over the options (``option_probs``), the mass they had together before that
  recorded as ``option_mass``;
- ``verbalized`` (``--condition verbalized``): the shares the model states when asked what
  percentage of people choose each option (``stated_shares``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.contracts.conditions import Cell
from psymetrics_core.records.read import iter_records
from psymetrics_core.records.samples import SampleRecord

if TYPE_CHECKING:
    from psymetrics_core.contracts.kinds import SessionView

__all__ = [
    "distribution_methods",
    "StatedItem",
    "stated_items",
    "is_verbalized_only",
    "has_verbalized",
]


def distribution_methods(
    cells: Sequence[Cell], mode: str, repeats: int, temperature: float, session: SessionView
) -> dict[str, dict[str, Any]]:
    """Per administration mode of ``cells``: the distribution method, the ``samples.jsonl``
    field it reads, how many samples per item it pools and a sentence saying so."""
    by_mode: dict[str, int] = {}
    for cell in cells:
        by_mode[cell.administration] = by_mode.get(cell.administration, 0) + 1
    out: dict[str, dict[str, Any]] = {}
    for name, n_cells in by_mode.items():
        per_item = n_cells * repeats
        if session.administration(name).states_distribution:
            method, field = "verbalized", "stated_shares"
            text = (
                "the shares the model states per item when asked what percentage of people "
                f"choose each option, {per_item} statement(s) per item"
            )
        elif mode == "logprob":
            method, field = "logprob", "option_probs"
            text = (
                "per prompt, the option tokens' probabilities renormalised over the options "
                f"(option_mass: their total before), {per_item} prompt(s) per item"
            )
        else:
            method, field = "sampled", "answer"
            text = (
                f"the shares of parsed answers per item over {n_cells} cell(s) x {repeats} "
                f"repeat(s) at temperature {temperature:g}"
            )
            if temperature == 0:
                text += " (greedy: a cell repeats one answer; shares vary only across cells)"
        out[name] = {
            "method": method,
            "field": field,
            "cells": n_cells,
            "repeats": repeats,
            "per_item": per_item,
            "temperature": temperature,
            "description": text,
        }
    return out


@dataclass(frozen=True)
class StatedItem:
    """One verbalized sample as the screens show it: the stated shares (option value -> share)
    or why they did not parse."""

    task: str
    item: str
    condition: str
    repeat: int
    options: tuple[tuple[int, str], ...]  # (value, label) as presented
    shares: dict[int, float] | None
    status: str
    reason: str | None


def is_verbalized_only(results: Mapping[str, Any]) -> bool:
    """Whether every administration mode of the run stated distributions (no scale scores)."""
    modes = results.get("distribution") or {}
    return bool(modes) and all(d["method"] == "verbalized" for d in modes.values())


def has_verbalized(results: Mapping[str, Any]) -> bool:
    """Whether some administration mode of the run stated distributions."""
    return any(d["method"] == "verbalized" for d in (results.get("distribution") or {}).values())


def stated_items(samples: Path) -> list[StatedItem]:
    """The verbalized samples of ``samples`` (a run's samples.jsonl), in file order."""
    out = []
    for _, row, s in iter_records(samples, SampleRecord, what="samples file", schema="samples"):
        if s.stated_shares is None and "stated_shares" not in row:
            continue  # not a verbalized sample
        data = s.data or {}
        out.append(
            StatedItem(
                s.task,
                s.item,
                s.condition,
                s.repeat,
                tuple((o.value, o.label) for o in s.prompt.options),
                s.stated_shares,
                s.parse_status,
                data.get("reason") if isinstance(data.get("reason"), str) else None,
            )
        )
    return out
