"""Run records as frames for ``psym analyze`` and ``psym validity`` (files are read by the run
reader of ``psymetrics_core.records.read``, which ``psym report`` and ``psym export`` share).

A run directory holds ``results.json`` (scores per administration) and ``samples.jsonl`` (one
line per administered item, typed by ``psymetrics_core.records.SampleRecord``). Three frames
come out of a run:

- ``items``: one row per administered item (run, task, condition, facets, repeat, seed, item,
  raw answer, parse status, scale membership; ``keyed`` = the item's value after reverse
  keying and its own rescale map, as recorded in ``mrat_term``);
- ``keyed``: one row per (administered item, scale it counts towards) with the RECORDED keyed
  value of that scale (``samples.jsonl`` ``keyed``: reverse keying, rescaling, inversion) and,
  for MRAT-centred scales, minus the administration's mean ``mrat_term`` over its answered
  scored items. Keys are never re-derived here;
- ``scores``: one row per (run, task, condition, repeat, scale) with the scale score.

Unit of analysis across runs (convergent and ecological validity): a MODEL, named by
``unit_label`` (the results' ``label`` if set, else the backend name plus its model
arguments), split further by the level of a ``persona`` facet when a run varies one. A unit's
score is the mean over all of its administrations (seeded repeats, and run directories of the
same model) at the default level of every other facet (e.g. original option order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from psymetrics_core.base.errors import PsymError
from psymetrics_core.records import SampleRecord
from psymetrics_core.records.read import load_run_data, read_results, unit_label

__all__ = [
    "Run",
    "load_run",
    "load_runs",
    "read_results",
    "score_rows",
    "unit_label",
    "unit_scores",
    "DEFAULT_FACET",
    "PERSONA_FACET",
]

DEFAULT_FACET = "default"
PERSONA_FACET = "facet:persona"


@dataclass
class Run:
    """One run directory: its label, unit, results, and item, keyed and score frames."""

    label: str
    path: Path
    results: dict[str, Any]
    items: pd.DataFrame
    keyed: pd.DataFrame
    scores: pd.DataFrame

    @property
    def unit(self) -> str:
        """The model this run measured (see ``unit_label``)."""
        return unit_label(self.results)

    @property
    def facets(self) -> list[str]:
        """The facets that vary in this run (columns ``facet:<name>``)."""
        return sorted(c.split(":", 1)[1] for c in self.items.columns if c.startswith("facet:"))


def _kind(results: Mapping[str, Any], task: str) -> str:
    entry = (results.get("tasks") or {}).get(task) or {}
    return str(entry.get("kind", "questionnaire")) if isinstance(entry, dict) else "questionnaire"


def _item_rows(
    label: str, results: dict[str, Any], path: Path, samples: Iterable[SampleRecord]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    items, keyed = [], []
    for n, s in enumerate(samples, start=1):
        meta = s.item_meta
        questionnaire = s.kind == "questionnaire" and _kind(results, s.task) == "questionnaire"
        if questionnaire and s.answer is not None and meta.scored and s.keyed is None:
            raise PsymError(
                f"{path}, line {n}: no recorded 'keyed' values (written by a psymetrics before "
                "run-record schema 1, which re-derived keys at analysis time); re-run "
                "`psym eval`, or analyse the answers with `psym analyze --task TASK "
                "--responses FILE.csv`"
            )
        base = {
            "run": label,
            "task": s.task,
            "condition": s.condition,
            "repeat": s.repeat,
            "seed": s.seed,
            "item": s.item,
        }
        facets = {f"facet:{k}": v for k, v in s.facets.items()}
        items.append(
            {
                **base,
                "answer": s.answer,
                "keyed": s.mrat_term,
                "status": s.parse_status,
                "scales": tuple(meta.scales),
                "scored": meta.scored,
                "reverse": meta.reverse,
                "min": meta.min,
                "max": meta.max,
                **facets,
            }
        )
        for scale, value in (s.keyed or {}).items():
            keyed.append(
                {
                    **base,
                    "scale": scale,
                    "uncentred": value,
                    "mrat_term": s.mrat_term,
                    "centred": scale in meta.centred,
                    **facets,
                }
            )
    return items, keyed


def _fill_facets(frame: pd.DataFrame) -> pd.DataFrame:
    for c in frame.columns:
        if c.startswith("facet:"):
            frame[c] = frame[c].fillna(DEFAULT_FACET)
    return frame


def _centre(keyed: pd.DataFrame) -> pd.DataFrame:
    """``value``: the recorded keyed value, minus the administration's MRAT where centred."""
    if keyed.empty:
        return keyed.assign(value=pd.Series(dtype=float))
    admin = ["task", "condition", "repeat"]
    terms = keyed.drop_duplicates([*admin, "item"])
    mrat = terms.groupby(admin)["mrat_term"].mean().rename("mrat")
    keyed = keyed.join(mrat, on=admin)
    keyed["value"] = keyed["uncentred"] - keyed["mrat"].where(keyed["centred"], 0.0)
    return keyed


def score_rows(label: str, results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (task, condition, repeat, scale) from ``results.json`` (each task's
    ``runs``; a task entry without ``runs`` counts as one administration)."""
    rows = []
    for task, entry in (results.get("tasks") or {}).items():
        if not isinstance(entry, dict):
            continue
        runs = entry.get("runs") or [
            {
                "condition": entry.get("condition", "original"),
                "facets": entry.get("facets") or {},
                "repeat": 0,
                "seed": results.get("seed"),
                "scales": entry.get("scales") or {},
            }
        ]
        for r in runs:
            for scale, sc in (r.get("scales") or {}).items():
                value = sc.get("score") if isinstance(sc, dict) else None
                row = {
                    "run": label,
                    "task": task,
                    "condition": r.get("condition", "original"),
                    "repeat": int(r.get("repeat", 0)),
                    "seed": r.get("seed"),
                    "scale": scale,
                    "score": value if isinstance(value, int | float) else None,
                    "n_items": sc.get("n_items") if isinstance(sc, dict) else None,
                    "n_answered": sc.get("n_answered") if isinstance(sc, dict) else None,
                    "method": (sc.get("method") if isinstance(sc, dict) else None) or "mean",
                }
                for facet, level in (r.get("facets") or {}).items():
                    row[f"facet:{facet}"] = level
                rows.append(row)
    return rows


def load_run(path: str | Path, label: str | None = None) -> Run:
    """Load one run directory; missing or malformed files (``results.json`` checked against
    ``ResultsRecord``, each ``samples.jsonl`` line against ``SampleRecord``) are a one-line
    ``PsymError`` naming the file, line and field."""
    p = Path(path)
    data = load_run_data(p, samples_required=True)  # the reader of report and export
    results = data.results
    label = label or p.name
    item_rows, keyed_rows = _item_rows(label, results, p / "samples.jsonl", data.samples.records())
    items = pd.DataFrame(item_rows)
    if items.empty:
        raise PsymError(f"{p / 'samples.jsonl'}: no samples")
    items["answer"] = pd.to_numeric(items["answer"], errors="coerce")
    items["keyed"] = pd.to_numeric(items["keyed"], errors="coerce")
    keyed = _centre(_fill_facets(pd.DataFrame(keyed_rows)))
    scores = _fill_facets(pd.DataFrame(score_rows(label, results)))
    if not scores.empty:
        scores["score"] = pd.to_numeric(scores["score"], errors="coerce")
    return Run(label, p, results, _fill_facets(items), keyed, scores)


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
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


def unit_scores(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> pd.DataFrame:
    """Scores per unit of analysis (see the module docstring): columns unit, score_id
    (``task.scale``), score, n (administrations averaged).

    ``runs`` are (run label, results) pairs; runs of the same model are pooled.
    """
    frames = []
    for label, results in runs:
        sc = _fill_facets(pd.DataFrame(score_rows(label, results)))
        if sc.empty:
            continue
        sc["score"] = pd.to_numeric(sc["score"], errors="coerce")
        sc = sc.dropna(subset=["score"])
        sc["model"] = unit_label(results)
        frames.append(sc)
    if not frames:
        return pd.DataFrame(columns=["unit", "score_id", "score", "n"])
    sc = _fill_facets(pd.concat(frames, ignore_index=True))
    persona = PERSONA_FACET if PERSONA_FACET in sc else None
    others = [c for c in sc.columns if c.startswith("facet:") and c != persona]
    rows = []
    keys = ["model", persona] if persona else ["model"]
    for key, grp in sc.groupby(keys, sort=True):
        model, level = (
            (key if persona else (key[0], None)) if isinstance(key, tuple) else (key, None)
        )
        base = grp
        for c in others:
            base = base[base[c] == DEFAULT_FACET]
        use = base if not base.empty else grp
        unit = str(model) if level in (None, DEFAULT_FACET) else f"{model}/{level}"
        for (task, scale), g in use.groupby(["task", "scale"]):
            rows.append(
                {
                    "unit": unit,
                    "score_id": f"{task}.{scale}",
                    "score": float(g["score"].mean()),
                    "n": int(len(g)),
                }
            )
    return pd.DataFrame(rows, columns=["unit", "score_id", "score", "n"])
