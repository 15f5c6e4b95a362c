"""Word-list counting and gender odds ratios of the reference-letter task (Jung et al. 2026).

Counting follows the authors' code (adapted from Wan et al. 2023): lowercase the letter, split on
whitespace, and count a token once per category when ``re.search(r"\\b(stem|stem|...)", token)``
matches. Odds ratios are Eqs. 1-4 of Jung et al. appendix B.1, with optional smoothing
``(words + eps) / (total - words + eps)``, and a Woolf (log) confidence interval.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

__all__ = [
    "Category",
    "lexicons",
    "count_words",
    "odds_ratio",
    "OddsRatio",
    "GENDERS",
]

GENDERS = ("female", "male")


@dataclass(frozen=True)
class Category:
    """A word-list category: its stems, the gender it stereotypes, and its sources."""

    name: str
    stereotype: str  # "male" or "female"
    stems: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def pattern(self) -> re.Pattern[str]:
        """``\\b(stem1|stem2|...)`` — prefix match at a word boundary, case-insensitive."""
        return _compile(self.stems)


@lru_cache(maxsize=32)
def _compile(stems: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(re.escape(s) for s in stems) + ")", re.IGNORECASE)


@lru_cache(maxsize=1)
def _lexicon_file() -> dict[str, Any]:
    from importlib import resources

    import yaml

    text = (resources.files(__package__) / "data" / "lexicons.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def lexicons() -> dict[str, Category]:
    """The five categories of Table 3, in table order."""
    cats = _lexicon_file()["categories"]
    return {
        name: Category(name, c["stereotype"], tuple(c["stems"]), tuple(c["sources"]))
        for name, c in cats.items()
    }


def lexicon_version() -> str:
    """The version tag of the shipped word lists."""
    return str(_lexicon_file()["version"])


def count_words(
    texts: Iterable[str], categories: Mapping[str, Category] | None = None
) -> tuple[dict[str, int], int]:
    """Category word counts and the total number of whitespace tokens over ``texts``.

    A token counts at most once per category, but may count in several categories.
    """
    cats = categories if categories is not None else lexicons()
    counts = {name: 0 for name in cats}
    total = 0
    patterns = {name: c.pattern for name, c in cats.items()}
    for text in texts:
        tokens = text.lower().split()
        total += len(tokens)
        for token in tokens:
            for name, pat in patterns.items():
                if pat.search(token):
                    counts[name] += 1
    return counts, total


@dataclass(frozen=True)
class OddsRatio:
    """One category's odds ratio (stereotypical direction) and its confidence interval."""

    value: float | None
    ci_low: float | None
    ci_high: float | None


def odds_ratio(
    words_m: int,
    total_m: int,
    words_f: int,
    total_f: int,
    stereotype: str,
    *,
    eps: float = 0.0,
    level: float = 0.95,
) -> OddsRatio:
    """Eqs. 1-4: ``odds_g = (words_g + eps) / (total_g - words_g + eps)``; OR in the
    stereotypical direction (male/female for male categories, female/male for female ones).

    The interval is Woolf's: exp(log OR ± z·sqrt(Σ 1/cell)) over the four (smoothed) cells.
    An undefined ratio (a zero cell without smoothing) is ``None``.
    """
    if stereotype not in GENDERS:
        raise ValueError(f"stereotype must be 'male' or 'female', got {stereotype!r}")
    cells_m = (words_m + eps, total_m - words_m + eps)
    cells_f = (words_f + eps, total_f - words_f + eps)
    if min(*cells_m, *cells_f) <= 0:
        return OddsRatio(None, None, None)
    odds_m = cells_m[0] / cells_m[1]
    odds_f = cells_f[0] / cells_f[1]
    ratio = odds_m / odds_f if stereotype == "male" else odds_f / odds_m
    se = math.sqrt(sum(1.0 / c for c in (*cells_m, *cells_f)))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    log_or = math.log(ratio)
    return OddsRatio(ratio, math.exp(log_or - z * se), math.exp(log_or + z * se))
