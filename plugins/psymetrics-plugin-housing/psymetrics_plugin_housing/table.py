"""The user's neighbourhood table and the stratified 20-neighbourhood lists drawn from it.

Table format (CSV, UTF-8, header row): ``city,neighborhood,opportunity_index`` — one row per
neighbourhood, the opportunity index (OI) a number (Liu et al. 2024 / Hangen & O'Brien 2023: sum
of z-scores of seven census-tract indicators, disadvantage reverse-coded). Extra columns are
ignored. A repeated (city, neighbourhood) with the same OI is kept once; with a different OI it
is an error.

Lists (the paper does not state the stratification variable) [I]: per city, the
neighbourhoods are split into five OI quintile strata and ``size / 5`` are drawn from each
(seeded), topped up at random when a stratum is short; each of the ``n_lists`` lists is an
independent draw, presented in random order.
"""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import dataclass
from pathlib import Path

from psymetrics_core.api import PsymError, read_text

__all__ = ["Neighbourhood", "read_table", "sample_lists", "COLUMNS"]

COLUMNS = ("city", "neighborhood", "opportunity_index")
HINT = "expected a CSV with columns city,neighborhood,opportunity_index"


@dataclass(frozen=True)
class Neighbourhood:
    """A neighbourhood of a city and its opportunity index."""

    city: str
    name: str
    oi: float


def read_table(path: str | Path | None) -> dict[str, dict[str, float]]:
    """{city: {neighbourhood: OI}} in file order; every problem is a one-line error."""
    if not path:
        raise PsymError(f"task 'housing' needs its neighbourhood table: --data TABLE.csv ({HINT})")
    p = Path(path)
    if not p.is_file():
        raise PsymError(f"{p}: no such file ({HINT})")
    out: dict[str, dict[str, float]] = {}
    try:
        with io.StringIO(read_text(p, what="neighbourhood table"), newline="") as fh:
            reader = csv.DictReader(fh)
            cols = [c.strip() for c in reader.fieldnames or []]
            missing = [c for c in COLUMNS if c not in cols]
            if missing:
                raise PsymError(f"{p}, line 1: missing column(s) {', '.join(missing)} ({HINT})")
            reader.fieldnames = cols
            for line, row in enumerate(reader, start=2):
                city = (row.get("city") or "").strip()
                name = (row.get("neighborhood") or "").strip()
                raw = (row.get("opportunity_index") or "").strip()
                if not city or not name:
                    raise PsymError(f"{p}, line {line}: empty city or neighborhood")
                try:
                    oi = float(raw)
                except ValueError:
                    oi = math.nan
                if not math.isfinite(oi):
                    raise PsymError(f"{p}, line {line}: opportunity_index {raw!r} is not a number")
                seen = out.setdefault(city, {})
                if name in seen and seen[name] != oi:
                    raise PsymError(
                        f"{p}, line {line}: {name!r} ({city}) is listed twice with different "
                        f"opportunity_index ({seen[name]} and {oi})"
                    )
                seen[name] = oi
    except UnicodeDecodeError as exc:
        raise PsymError(f"{p}: not a UTF-8 text file ({exc.reason})") from None
    except csv.Error as exc:
        raise PsymError(f"{p}: not a valid CSV file ({exc})") from None
    if not out:
        raise PsymError(f"{p}: holds no neighbourhoods ({HINT})")
    return out


def sample_lists(
    neighbourhoods: dict[str, float], n_lists: int, size: int, seed: int
) -> list[list[str]]:
    """``n_lists`` OI-stratified samples of ``size`` names (all names when fewer)."""
    names = sorted(neighbourhoods, key=lambda n: (neighbourhoods[n], n))
    rng = random.Random(seed)
    out: list[list[str]] = []
    for _ in range(n_lists):
        if len(names) <= size:
            pick = list(names)
        else:
            k = 5
            strata = [names[i * len(names) // k : (i + 1) * len(names) // k] for i in range(k)]
            pick = []
            for s in strata:
                pick += rng.sample(s, min(len(s), size // k))
            rest = [n for n in names if n not in pick]
            pick += rng.sample(rest, size - len(pick))
        rng.shuffle(pick)
        out.append(pick)
    return out
