"""``psym analyze --responses FILE.csv [--task TASK]``: analyse answers that did not come from
``psym eval`` (human data, other tools' outputs, your own survey) with the same statistics.

With ``--task`` the file is the long format of ``psym score``: ``respondent,item,response``
plus optional columns (e.g. ``model``, ``context``) to group by, read by
``administer.answer_files``. Without it the file is your own survey (``population.survey``):
numeric answers, wide or long, the items named by ``--cfa-model`` (or every column), no
instrument file. Per group: scale descriptives over respondents (n, mean, SD, skew, excess
kurtosis), Cronbach's alpha (rows used of rows given), McDonald's omega, and each item's mean
and variance of its keyed values. Items of a task are keyed by ``spec_scoring.keyed_values``
(the scorer's own keying); MRAT-centred scales subtract each respondent's mean rating over their
answered scored items. A survey's scale score is the mean of the answered items of the scale
(``diagnostics.scale_scores``), its items taken as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from psymetrics_core.administer.answer_files import (
    RATING_COLUMNS,
    Rating,
    read_ratings,
    read_ratings_table,
)
from psymetrics_core.analysis import reliability
from psymetrics_core.analysis.population.data import Responses
from psymetrics_core.analysis.population.diagnostics import scale_scores
from psymetrics_core.analysis.population.long import (
    CLUSTER_DEFAULT,
    ItemKey,
    check_grouping,
    check_population,
    invariance_across,
    population_data,
    population_report,
    respondent_columns,
)
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.structure import check_model_items
from psymetrics_core.analysis.population.structure_options import StructureOptions
from psymetrics_core.analysis.population.survey import (
    check_categories,
    check_criterion,
    read_survey,
    survey_key,
)
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import CsvTable
from psymetrics_core.base.types import Answer, Instrument
from psymetrics_core.instruments.scoring import keyed_values, mrat_term

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["read_long", "analyze_responses", "responses_json", "describe"]


def read_long(
    path: str | Path, inst: Instrument, form: str = "original", group: str | None = None
) -> pd.DataFrame:
    """Rows ``group, respondent, item, response`` (response None when empty), as read and
    checked by ``answer_files.read_ratings`` (errors name the CSV line)."""
    return _long_frame(read_ratings(path, inst, form, group=group))


def _long_frame(ratings: list[Rating]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group": [r.group for r in ratings],
            "respondent": [r.respondent for r in ratings],
            "item": [r.item for r in ratings],
            "response": pd.array([r.response for r in ratings], dtype="Float64"),
        }
    ).astype({"response": float})


def describe(values: pd.Series) -> dict[str, Any]:
    """n, mean, SD (ddof 1), skew and excess kurtosis (pandas' bias-adjusted G1 and G2, as
    SPSS and Excel report them); a statistic with too few values is None with a note."""
    v = values.dropna().astype(float)
    n = int(len(v))
    out: dict[str, Any] = {"n": n, "mean": None, "sd": None, "skew": None, "excess_kurtosis": None}
    notes = []
    if n >= 1:
        out["mean"] = float(v.mean())
    if n >= 2:
        out["sd"] = float(v.std(ddof=1))
    else:
        notes.append("SD needs 2+ respondents")
    flat = n >= 2 and not v.std(ddof=1) > 0
    if n >= 3 and not flat:
        out["skew"] = float(v.skew())
    else:
        notes.append("skew needs 3+ respondents whose scores vary")
    if n >= 4 and not flat:
        out["excess_kurtosis"] = float(v.kurt())
    else:
        notes.append("kurtosis needs 4+ respondents whose scores vary")
    if notes:
        out["note"] = "; ".join(notes)
    return out


def _keyed(inst: Instrument, form: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (respondent, item, scale): the keyed value, MRAT-centred where the scale is.
    The keying depends on the item and the answer only: computed once per distinct pair."""

    by_id = {it.id: it for it in inst.forms[form]}
    pairs = frame.loc[frame["response"].notna(), ["item", "response"]].drop_duplicates()
    table = []
    for item, response in zip(pairs["item"], pairs["response"], strict=True):
        it, value = by_id[str(item)], int(response)
        term = mrat_term(inst, it, value)
        table += [
            (item, response, scale, v, term)
            for scale, v in keyed_values(inst, form, it, value).items()
        ]
    lookup = pd.DataFrame(table, columns=["item", "response", "scale", "value", "mrat_term"])
    keyed = frame[["respondent", "item", "response"]].merge(lookup, on=["item", "response"])
    keyed = keyed.drop(columns="response")
    centred = {n for n, s in inst.scales.items() if s.centre == "mrat"}
    if centred and not keyed.empty:
        mrat = keyed.drop_duplicates(["respondent", "item"]).groupby("respondent")["mrat_term"]
        keyed = keyed.join(mrat.mean().rename("mrat"), on="respondent")
        keyed["value"] -= keyed["mrat"].where(keyed["scale"].isin(centred), 0.0)
    return keyed


def _group_report(
    inst: Instrument, form: str, frame: pd.DataFrame, deletion: str, hook: Any
) -> dict[str, Any]:

    respondents = list(dict.fromkeys(frame["respondent"]))
    score_rows = []
    for who, sub in frame.groupby("respondent", sort=False):
        answers = {
            str(i): (None if pd.isna(v) else int(v))
            for i, v in zip(sub["item"], sub["response"], strict=True)
        }
        given = {k: Answer(v, "ok" if v is not None else "unparsed") for k, v in answers.items()}
        scores = hook.score(instrument=inst, responses=answers, form=form, answers=given)
        score_rows += [
            {"respondent": who, "scale": s, "score": sc.score} for s, sc in scores.items()
        ]
    scores_frame = pd.DataFrame(score_rows)
    keyed = dict(tuple(_keyed(inst, form, frame).groupby("scale", sort=False)))
    scores_by = dict(tuple(scores_frame.groupby("scale", sort=False)))
    out: dict[str, Any] = {"n_respondents": len(respondents), "scales": {}}
    for scale in inst.scales:
        vals = pd.to_numeric(scores_by[scale]["score"], errors="coerce")
        members = [it.id for it in inst.scale_items(scale, form)]
        sub = keyed.get(scale, pd.DataFrame(columns=["respondent", "item", "value"]))
        mat = (
            sub.pivot(index="respondent", columns="item", values="value")
            .reindex(index=respondents, columns=members)
            .astype(float)
        )
        out["scales"][scale] = _scale_block(vals, mat, deletion)
    return out


def _survey_report(key: ItemKey, frame: pd.DataFrame, deletion: str) -> dict[str, Any]:
    """``_group_report`` of your own survey: scale scores are item means (``scale_scores``)."""
    respondents = list(dict.fromkeys(frame["respondent"]))
    values = (
        frame.pivot(index="respondent", columns="item", values="response")
        .reindex(index=respondents, columns=list(key.items))
        .astype(float)
    )
    scores = scale_scores(Responses(values), key.structure)
    return {
        "n_respondents": len(respondents),
        "scales": {
            scale: _scale_block(pd.Series(scores[scale]), values.loc[:, list(items)], deletion)
            for scale, items in key.structure.scales.items()
        },
    }


def _scale_block(scores: pd.Series, mat: pd.DataFrame, deletion: str) -> dict[str, Any]:
    """A scale's descriptives (of its ``scores``), alpha, omega and item statistics (``mat``:
    respondents x the scale's items, keyed)."""
    return {
        "descriptives": describe(scores),
        "alpha": reliability.cronbach_alpha(mat, deletion),
        "omega": reliability.mcdonald_omega(mat),
        "items": {
            str(i): {
                "n": int(mat[i].notna().sum()),
                "mean": _num(mat[i].mean()),
                "variance": _num(mat[i].var(ddof=1)),
            }
            for i in mat.columns
        },
    }


def _num(x: Any) -> float | None:
    return None if x is None or pd.isna(x) else float(x)


def analyze_responses(
    task: str | None,
    path: str | Path,
    session: Session,
    *,
    form: str = "original",
    group: str | None = None,
    deletion: str = "listwise",
    cluster: str | None = None,
    population: PopulationOptions | None = None,
    human: str | Path | None = None,
) -> dict[str, Any]:
    """The report for a response file, one section per ``group`` value (``task`` and its
    scoring hooks from ``session``; None: your own survey, ``population.survey``), and per group
    the population analyses (``population``: diagnostics, reliability with naive and
    ``cluster``-clustered bootstrap intervals, one CFA per scale, criterion validity against
    label columns, parallel analysis, and what ``population`` asks for: EFA, a CFA model, a
    graded response model per scale). ``human``: a second file of human answers in the same
    layout; the groups are then the source (llm, human).
    With groups, ``invariance`` is the ladder across them (one factor per scale). The
    population parts are typed records (``PopulationEntry``, ``InvarianceEntry``):
    ``responses_json`` gives the report's JSON."""

    if deletion not in reliability.DELETION:
        raise PsymError(f"--missing must be one of {', '.join(reliability.DELETION)}")
    if human is not None and group is not None:
        raise PsymError(
            f"--human: the groups are the source (llm, human); not with --group {group}"
        )
    population = population or PopulationOptions()
    check_grouping(path, group, cluster)
    if task is None:
        key, parts = _survey_parts(path, group, cluster, population, human)
    else:
        key, parts = _task_parts(task, path, session, form, group, cluster, population, human)
    cluster = parts[0].cluster
    groups = {g: (p, sub, p.labels(sub, group)) for p in parts for g, sub in p.groups().items()}
    pops = {g: population_data(key, sub, lab, p.cluster) for g, (p, sub, lab) in groups.items()}
    check_population(key, pops, population)  # a bad option: one line before any analysis
    by = "source" if human is not None else group
    rep: dict[str, Any] = {
        "task": task,
        "form": form if task is not None else None,
        "responses": str(path),
        "group_by": by,
        "alpha_deletion": deletion,
        "missing": deletion,
        "respondents": "rows are the file's respondents (within each group)",
        "groups": {
            g: _group_report(key.instrument, form, sub, deletion, session.hook)
            if key.instrument is not None
            else _survey_report(key, sub, deletion)
            for g, (_, sub, _) in groups.items()
        },
        "population": {g: population_report(key, *pops[g], population) for g in groups},
        "cluster": cluster,
    }
    if task is None:
        rep["survey"] = _survey_json(key, parts[0].skip)
    if human is not None:
        rep["human"] = str(human)
    if by is not None:
        rep["invariance"] = invariance_across(by, pops, population.missing)
    return rep


def _task_parts(
    task: str,
    path: str | Path,
    session: Session,
    form: str,
    group: str | None,
    cluster: str | None,
    population: PopulationOptions,
    human: str | Path | None,
) -> tuple[ItemKey, list[_Part]]:
    """The key of ``task`` and its response files read (checked against its instrument)."""
    inst = session.get_instrument(task)
    if inst.kind != "questionnaire":
        raise PsymError(f"task '{task}' is not a questionnaire (kind {inst.kind})")
    if form not in inst.forms:
        raise PsymError(f"task '{task}' has no form '{form}' (forms: {', '.join(inst.forms)})")
    structure = population.structure
    if structure is not None and structure.cfa_model is not None:
        if structure.cfa_model.task not in (None, task):
            raise PsymError(
                f"--cfa-model {structure.cfa_model.task}={structure.cfa_model.path}: "
                f"the responses are of task {task}"
            )
        check_model_items(structure.cfa_model, task, [it.id for it in inst.forms[form]])
    parts = [_part(path, inst, form, group, cluster, None if human is None else "llm")]
    if human is not None:
        parts.append(_part(human, inst, form, None, cluster, "human"))
    return ItemKey.of(inst, form), parts


def _survey_parts(
    path: str | Path,
    group: str | None,
    cluster: str | None,
    population: PopulationOptions,
    human: str | Path | None,
) -> tuple[ItemKey, list[_Part]]:
    """Your own survey (no ``--task``): its key and files (``population.survey``)."""
    model = (population.structure or StructureOptions()).cfa_model
    if model is not None and model.task is not None:
        raise PsymError(
            f"--cfa-model {model.task}={model.path}: TASK= names a task's items; "
            "without --task the model's names are the file's columns"
        )
    labels = [fld for _, fld in population.criterion or ()]
    first = read_survey(path, model, group=group, cluster=cluster, labels=labels)
    files = [(first, None if human is None else "llm")]
    if human is not None:
        second = read_survey(human, cluster=cluster, labels=labels, items=first.items)
        files.append((second, "human"))
    if population.irt:
        for sf, _ in files:
            check_categories(sf)
    key = survey_key(Path(path).name, first.items, model)
    check_criterion(population.criterion or (), key, first)  # before any analysis
    parts = [
        _Part(sf.frame, sf.table, _cluster_of(sf.table, cluster, source, group), sf.skip)
        for sf, source in files
    ]
    for part, (_, source) in zip(parts, files, strict=True):
        if source is not None:
            part.frame["group"] = source
    return key, parts


def _survey_json(key: ItemKey, skip: frozenset[str]) -> dict[str, Any]:
    """What the survey's layout, items and scales were taken to be."""
    return {
        "name": key.task,
        "layout": "long" if {"item", "response"} <= skip else "wide",
        "items": list(key.items),
        "scales": {s: list(its) for s, its in key.structure.scales.items()},
    }


def responses_json(rep: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON of an ``analyze_responses`` report (its typed population parts as JSON)."""
    out = dict(rep)
    out["population"] = {g: e.to_json() for g, e in rep["population"].items()}
    if "invariance" in rep:
        out["invariance"] = rep["invariance"].to_json()
    return out


@dataclass
class _Part:
    """One response file read: its long frame (its index: the row's position in the CSV
    table), the CSV table, the persona column and the columns that are not labels."""

    frame: pd.DataFrame
    table: CsvTable
    cluster: str | None
    skip: frozenset[str] = frozenset(RATING_COLUMNS)

    def groups(self) -> dict[str, pd.DataFrame]:
        return {str(g): sub for g, sub in self.frame.groupby("group", sort=False)}

    def labels(self, sub: pd.DataFrame, group: str | None) -> pd.DataFrame:
        rows = [self.table.rows[i] for i in sub.index]
        who = sub["respondent"].tolist()
        skip = {*self.skip, group or ""}
        return respondent_columns(self.table.columns, rows, skip, who, self.cluster)


def _cluster_of(
    table: CsvTable, cluster: str | None, source: str | None, group: str | None
) -> str | None:
    """The persona column: ``cluster`` (a human file without it: none, clustered by
    respondent), else ``persona`` where the file has one."""
    if cluster is not None and cluster not in table.columns:
        if source != "human":
            raise PsymError(f"--cluster {cluster}: {table.path} has no column {cluster!r}")
        cluster = None
    if cluster is None and CLUSTER_DEFAULT in table.columns and CLUSTER_DEFAULT != group:
        cluster = CLUSTER_DEFAULT
    return cluster


def _part(
    path: str | Path,
    inst: Instrument,
    form: str,
    group: str | None,
    cluster: str | None,
    source: str | None,
) -> _Part:
    """Read ``path``; ``source`` (llm, human) replaces the group when comparing with humans
    (a file without the ``--cluster`` column is then clustered by respondent)."""
    ratings, table = read_ratings_table(path, inst, form, group=group)
    cluster = _cluster_of(table, cluster, source, group)
    frame = _long_frame(ratings)  # row i of the frame is row i of the table
    if source is not None:
        frame["group"] = source
    return _Part(frame, table, cluster)
