"""The generation-free order test and its positive controls.

After Oren et al. (2023, "Proving test set contamination in black box language models"): if a
model never saw an inventory, every ordering of its items is equally likely to it
(exchangeability), so the log-likelihood of the published order is just one draw from the
distribution over permutations. A model that memorised the inventory gives the published order a
higher log-likelihood than almost every permutation.

Statistics, with N seeded permutations (never the published order itself):
- permutation p = (1 + #{perm >= canonical}) / (N + 1) (one-sided; smallest possible 1/(N+1));
- z = (canonical - mean(perm)) / sd(perm) (sample sd; None with a reason when sd is 0);
- percentile = share of permutations strictly below the canonical log-likelihood.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean, stdev
from typing import Any

import yaml

__all__ = [
    "OrderedList",
    "OrderStats",
    "permutations",
    "order_stats",
    "positive_controls",
    "joined",
]


@dataclass(frozen=True)
class OrderedList:
    """A sequence whose published order is tested: a name, a context prompt and the items."""

    name: str
    context: str
    items: tuple[str, ...]
    control: bool = False


@dataclass(frozen=True)
class OrderStats:
    """Result of one order test."""

    canonical: float
    permuted: tuple[float, ...]
    p: float
    z: float | None
    z_reason: str | None
    percentile: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view (the permutation log-likelihoods summarised)."""
        return {
            "canonical_loglik": self.canonical,
            "n_permutations": len(self.permuted),
            "permuted_mean": mean(self.permuted) if self.permuted else None,
            "permuted_sd": stdev(self.permuted) if len(self.permuted) > 1 else None,
            "permuted_max": max(self.permuted) if self.permuted else None,
            "p": self.p,
            "z": self.z,
            "z_reason": self.z_reason,
            "percentile": self.percentile,
        }


def joined(items: Sequence[str]) -> str:
    """The scored continuation: one item per line."""
    return "\n".join(items)


def permutations(n_items: int, n: int, seed: int) -> list[tuple[int, ...]]:
    """``n`` seeded random orderings of ``range(n_items)``, none equal to the identity.

    Orderings may repeat when few exist; fewer than 2 items have no other ordering and give [].
    """
    if n_items < 2:
        return []
    rng = random.Random(seed)
    ident = tuple(range(n_items))
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        perm = list(ident)
        rng.shuffle(perm)
        if tuple(perm) != ident:
            out.append(tuple(perm))
    return out


def order_stats(canonical: float, permuted: Sequence[float]) -> OrderStats:
    """Permutation p, z and percentile of ``canonical`` among ``permuted`` log-likelihoods."""
    perm = tuple(float(x) for x in permuted)
    if not perm:
        raise ValueError("the order test needs at least one permutation")
    at_least = sum(1 for x in perm if x >= canonical)
    p = (1 + at_least) / (len(perm) + 1)
    z: float | None = None
    reason: str | None = None
    if len(perm) < 2:
        reason = "fewer than 2 permutations"
    else:
        sd = stdev(perm)
        if sd == 0:
            reason = "every permutation has the same log-likelihood (sd 0)"
        else:
            z = (canonical - mean(perm)) / sd
    pct = sum(1 for x in perm if x < canonical) / len(perm)
    return OrderStats(canonical, perm, p, z, reason, pct)


def positive_controls() -> list[OrderedList]:
    """The shipped positive-control sequences (months, planets, weekdays)."""
    from importlib import resources

    ref = resources.files(__package__).joinpath("controls", "sequences.yaml")
    data = yaml.safe_load(ref.read_text(encoding="utf-8"))
    return [
        OrderedList(name, str(d["context"]), tuple(str(x) for x in d["items"]), control=True)
        for name, d in data.items()
    ]
