"""Read run directories (``results.json`` + ``samples.jsonl``) into tidy tables.

Two frames come out of a run: ``items`` (one row per administered item: run, task, condition,
facets, repeat, seed, item, raw answer, keyed answer, parse status, scale membership) and
``scores`` (one row per (run, task, condition, repeat, scale) with the scale score).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import PsymError
from ..safe_io import load_json, parse_json, read_text

__all__ = ["Run", "load_run", "load_runs", "DEFAULT_FACET"]

DEFAULT_FACET = "default"


@dataclass
class Run:
    """One run directory: its label, results, item-level frame and scale-score frame."""

    label: str
    path: Path
    results: dict[str, Any]
    items: pd.DataFrame
    scores: pd.DataFrame

    @property
    def facets(self) -> list[str]:
        """The facets that vary in this run (columns ``facet:<name>``)."""
        return sorted(c.split(":", 1)[1] for c in self.items.columns if c.startswith("facet:"))


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise PsymError(f"{path}: no such file (is {path.parent} a `psym eval` run directory?)")
    data = load_json(path, what="results file")
    if not isinstance(data, dict) or "tasks" not in data:
        raise PsymError(f"{path}: not a psym results file (no 'tasks')")
    return data


def _samples(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise PsymError(f"{path}: no such file (run `psym eval --output DIR` to record samples)")
    rows = []
    for n, line in enumerate(read_text(path, what="samples file").splitlines(), start=1):
        if not line.strip():
            continue
        row = parse_json(line, path, line=n)
        if not isinstance(row, dict):
            raise PsymError(f"{path}, line {n}: expected a JSON object (one sample per line)")
        rows.append(row)
    return rows


def load_run(path: str | Path, label: str | None = None) -> Run:
    """Load one run directory; missing or malformed files are a one-line ``PsymError``."""
    p = Path(path)
    results = _read_json(p / "results.json")
    raw = _samples(p / "samples.jsonl")
    label = label or p.name
    item_rows = []
    for n, s in enumerate(raw, start=1):
        meta = s.get("item_meta")
        if meta is None:
            raise PsymError(
                f"{p / 'samples.jsonl'}, line {n}: no item_meta (recorded by psym eval "
                "0.1 with conditions support; re-run the evaluation)"
            )
        answer = s.get("answer")
        keyed = None
        if answer is not None:
            keyed = meta["min"] + meta["max"] - answer if meta["reverse"] else answer
            rescale = dict((int(k), float(v)) for k, v in (meta.get("rescale") or []))
            keyed = rescale.get(int(keyed), keyed) if rescale else keyed
        row = {
            "run": label,
            "task": s["task"],
            "condition": s.get("condition", "original"),
            "repeat": int(s.get("repeat", 0)),
            "seed": s.get("seed", results.get("seed")),
            "item": str(s["item"]),
            "answer": answer,
            "keyed": keyed,
            "status": s.get("parse_status"),
            "scales": tuple(meta["scales"]),
            "scored": bool(meta["scored"]),
            "reverse": bool(meta["reverse"]),
            "min": meta["min"],
            "max": meta["max"],
        }
        for facet, level in (s.get("facets") or {}).items():
            row[f"facet:{facet}"] = level
        item_rows.append(row)
    items = pd.DataFrame(item_rows)
    if items.empty:
        raise PsymError(f"{p / 'samples.jsonl'}: no samples")
    items["answer"] = pd.to_numeric(items["answer"], errors="coerce")
    items["keyed"] = pd.to_numeric(items["keyed"], errors="coerce")
    for c in items.columns:
        if c.startswith("facet:"):
            items[c] = items[c].fillna(DEFAULT_FACET)
    score_rows = []
    for task, entry in results["tasks"].items():
        runs = entry.get("runs") or [
            {"condition": "original", "facets": {}, "repeat": 0, "seed": results.get("seed"),
             "scales": entry.get("scales", {})}
        ]  # fmt: skip
        for r in runs:
            for scale, sc in r["scales"].items():
                row = {
                    "run": label,
                    "task": task,
                    "condition": r["condition"],
                    "repeat": int(r["repeat"]),
                    "seed": r["seed"],
                    "scale": scale,
                    "score": sc.get("score"),
                    "n_items": sc.get("n_items"),
                    "n_answered": sc.get("n_answered"),
                    "method": sc.get("method", "mean"),
                }
                for facet, level in (r.get("facets") or {}).items():
                    row[f"facet:{facet}"] = level
                score_rows.append(row)
    scores = pd.DataFrame(score_rows)
    for c in scores.columns:
        if c.startswith("facet:"):
            scores[c] = scores[c].fillna(DEFAULT_FACET)
    if not scores.empty:
        scores["score"] = pd.to_numeric(scores["score"], errors="coerce")
    return Run(label, p, results, items, scores)


def load_runs(paths: list[str | Path]) -> list[Run]:
    """Load several run directories; labels are the directory names, made unique if needed."""
    if not paths:
        raise PsymError("give at least one run directory")
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for path in paths:
        name = Path(path).resolve().name
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}#{seen[name]}"
        runs.append(load_run(path, label))
    return runs
