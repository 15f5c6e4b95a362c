"""A run directory (a single run or a persona population) as the MODEL side of ``psym fidelity``.

The model's distribution per item comes from its samples, by the run's administration:

- verbalized (results.json's ``distribution`` records it): the mean over administrations of
  the shares the model stated (Meister et al., 2024, "express the distribution"); a reply that
  did not parse is that administration's unparsed answer;
- logprob (samples carry ``option_probs``): the mean of the option probabilities renormalised
  over the options; the mean 1 - ``option_mass`` is reported as the mass outside the options;
- sampled (otherwise): the share of parsed answers across respondents and repeats; refused and
  unparsed answers are kept apart.

Each administration (respondent x condition cell x repeat) is one unit; in a population the
resampling cluster is the persona, so its prompt variants and repeats are not counted as
independent people. The persona's labels become the unit's group labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psymetrics_core.analysis.fidelity.records import OptionSet, SideAnswers
from psymetrics_core.base.errors import PsymError
from psymetrics_core.records.read import RunData, iter_records, load_run_data
from psymetrics_core.records.samples import SampleRecord

__all__ = ["read_run_side"]

_Row = tuple[str, str, str, float, int, float | None]


def read_run_side(path: Path, task: str | None) -> SideAnswers:
    """The questionnaire samples of ``task`` (the run's only questionnaire task when None)."""
    run = load_run_data(path, samples_required=True)
    records = [
        rec
        for _, _, rec in iter_records(
            run.path / "samples.jsonl", SampleRecord, what="samples file", schema="samples"
        )
        if rec.kind == "questionnaire"
    ]
    tasks = sorted({r.task for r in records})
    if task is None:
        if len(tasks) != 1:
            have = ", ".join(tasks) or "none"
            raise PsymError(f"{path}: questionnaire tasks {have}: choose one with --task")
        task = tasks[0]
    elif task not in tasks:
        raise PsymError(
            f"{path}: --task {task}: the run has no samples of it "
            f"(tasks: {', '.join(tasks) or 'none'})"
        )
    mine = [r for r in records if r.task == task]
    return _side(path, task, mine, _method(run, mine))


def _method(run: RunData, records: list[SampleRecord]) -> str:
    # verbalized as results.json records it (administer.distribution), also where no reply parsed
    recorded = run.record.distribution if run.record is not None else None
    if recorded and any(d.method == "verbalized" for d in recorded.values()):
        return "verbalized"
    if any(r.option_probs is not None for r in records):
        return "logprob"
    return "sampled"


def _who(rec: SampleRecord) -> tuple[str | None, dict[str, Any]]:
    for value in rec.condition_info.values():
        if isinstance(value, Mapping) and isinstance(value.get("respondent"), str):
            return value["respondent"], dict(value.get("labels") or {})
    return None, {}


def _contributions(rec: SampleRecord, method: str, unit: str) -> list[_Row]:
    shares: Mapping[int, float] | None = None
    if method == "verbalized":
        shares = rec.stated_shares
    elif method == "logprob":
        shares = rec.option_probs
    elif rec.answer is not None:
        shares = {rec.answer: 1.0}
    if shares is None:
        return [
            (
                unit,
                rec.item,
                rec.parse_status if rec.parse_status != "ok" else "unparsed",
                1.0,
                0,
                None,
            )
        ]
    return [(unit, rec.item, str(v), float(s), 0, None) for v, s in shares.items()]


def _side(path: Path, task: str, records: list[SampleRecord], method: str) -> SideAnswers:
    rows: list[_Row] = []
    cluster: dict[str, str] = {}
    labels: dict[str, dict[str, str]] = {}
    options: dict[str, OptionSet] = {}
    scales: dict[str, tuple[str, ...]] = {}
    outside: list[float] = []
    for rec in records:
        who, lab = _who(rec)
        unit = f"{who or ''}|{'+'.join(rec.conditions) or rec.condition}|{rec.repeat}"
        cluster[unit] = who if who is not None else unit
        labels[cluster[unit]] = {k: _label(v) for k, v in lab.items()}
        rows += _contributions(rec, method, unit)
        if rec.item not in options and rec.prompt.options:
            opts = sorted(rec.prompt.options, key=lambda o: o.value)
            options[rec.item] = OptionSet(
                tuple(str(o.value) for o in opts),
                tuple(float(o.value) for o in opts),
                tuple(o.label for o in opts),
            )
        scales.setdefault(rec.item, tuple(rec.item_meta.scales))
        if rec.option_mass is not None:
            outside.append(1.0 - rec.option_mass)
    frame = pd.DataFrame(rows, columns=["unit", "item", "key", "mass", "line", "position"])
    units = pd.Index(frame["unit"].unique())
    clusters = pd.Series([cluster[u] for u in units], index=units)
    lab = pd.DataFrame.from_dict(labels, orient="index", dtype=object)
    return SideAnswers(
        path=path,
        kind="run",
        method=method,
        frame=frame,
        cluster=clusters,
        labels=lab.reindex(pd.Index(clusters.unique())),
        options=options,
        scales=scales,
        task=task,
        outside_mass=float(np.mean(outside)) if outside else None,
        rows=len(records),
    )


def _label(value: Any) -> str:
    """A label as text (an integral number in its shortest form, so 1.0 matches "1")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
