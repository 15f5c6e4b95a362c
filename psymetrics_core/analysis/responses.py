"""``psym analyze --task TASK --responses FILE.csv``: analyse answers that did not come from
``psym eval`` (human data, other tools' outputs) with the same statistics.

The file is the long format of ``psym score``: ``respondent,item,response`` plus optional
columns (e.g. ``model``, ``context``) to group by, read by ``administer.answer_files``. Per
group: scale descriptives over respondents (n, mean, SD, skew, excess kurtosis), Cronbach's
alpha (rows used of rows given), McDonald's omega, and each item's mean and variance of its
keyed values. Items are keyed by
``spec_scoring.keyed_values`` (the scorer's own keying); MRAT-centred scales subtract each
respondent's mean rating over their answered scored items.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from psymetrics_core.administer.answer_files import read_ratings
from psymetrics_core.analysis import reliability
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Instrument
from psymetrics_core.instruments.scoring import keyed_values, mrat_term

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["read_long", "analyze_responses", "describe"]


def read_long(
    path: str | Path, inst: Instrument, form: str = "original", group: str | None = None
) -> pd.DataFrame:
    """Rows ``group, respondent, item, response`` (response None when empty), as read and
    checked by ``answer_files.read_ratings`` (errors name the CSV line)."""
    rows = [
        {"group": r.group, "respondent": r.respondent, "item": r.item, "response": r.response}
        for r in read_ratings(path, inst, form, group=group)
    ]
    return pd.DataFrame(rows)


def describe(values: pd.Series) -> dict[str, Any]:
    """n, mean, SD (ddof 1), skew and excess kurtosis (pandas' bias-adjusted G1 and G2, as
    SPSS and Excel report them); a statistic with too few values is None with a note."""
    v = values.dropna().astype(float)
    n = int(len(v))
    out: dict[str, Any] = {"n": n, "mean": None, "sd": None, "skew": None,
                           "excess_kurtosis": None}  # fmt: skip
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
    """One row per (respondent, item, scale): the keyed value, MRAT-centred where the scale is."""

    by_id = {it.id: it for it in inst.forms[form]}
    rows = []
    for r in frame.itertuples(index=False):
        value = None if pd.isna(r.response) else int(r.response)
        it = by_id[str(r.item)]
        term = mrat_term(inst, it, value)
        for scale, v in keyed_values(inst, form, it, value).items():
            rows.append({"respondent": r.respondent, "item": r.item, "scale": scale,
                         "value": v, "mrat_term": term})  # fmt: skip
    keyed = pd.DataFrame(rows, columns=["respondent", "item", "scale", "value", "mrat_term"])
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
    for who in respondents:
        sub = frame[frame["respondent"] == who]
        answers = {
            str(i): (None if pd.isna(v) else int(v))
            for i, v in zip(sub["item"], sub["response"], strict=True)
        }
        given = {k: Answer(v, "ok" if v is not None else "unparsed") for k, v in answers.items()}
        scores = hook.score(instrument=inst, responses=answers, form=form, answers=given)
        score_rows += [{"respondent": who, "scale": s, "score": sc.score}
                       for s, sc in scores.items()]  # fmt: skip
    scores_frame = pd.DataFrame(score_rows)
    keyed = _keyed(inst, form, frame)
    out: dict[str, Any] = {"n_respondents": len(respondents), "scales": {}}
    for scale in inst.scales:
        vals = pd.to_numeric(
            scores_frame.loc[scores_frame["scale"] == scale, "score"], errors="coerce"
        )
        members = [it.id for it in inst.scale_items(scale, form)]
        mat = (
            keyed[keyed["scale"] == scale]
            .pivot_table(index="respondent", columns="item", values="value", aggfunc="first")
            .reindex(index=respondents, columns=members)
            .astype(float)
        )
        out["scales"][scale] = {
            "descriptives": describe(vals),
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
    return out


def _num(x: Any) -> float | None:
    return None if x is None or pd.isna(x) else float(x)


def analyze_responses(
    task: str,
    path: str | Path,
    session: Session,
    *,
    form: str = "original",
    group: str | None = None,
    deletion: str = "listwise",
) -> dict[str, Any]:
    """The report for a long-format response file, one section per ``group`` value (``task``
    and its scoring hooks from ``session``)."""

    if deletion not in reliability.DELETION:
        raise PsymError(f"--deletion must be one of {', '.join(reliability.DELETION)}")
    inst = session.get_instrument(task)
    if inst.kind != "questionnaire":
        raise PsymError(f"task '{task}' is not a questionnaire (kind {inst.kind})")
    if form not in inst.forms:
        raise PsymError(f"task '{task}' has no form '{form}' (forms: {', '.join(inst.forms)})")
    frame = read_long(path, inst, form, group)
    return {
        "task": task,
        "form": form,
        "responses": str(path),
        "group_by": group,
        "alpha_deletion": deletion,
        "respondents": "rows are the file's respondents (within each group)",
        "groups": {
            str(g): _group_report(inst, form, sub, deletion, session.hook)
            for g, sub in frame.groupby("group", sort=False)
        },
    }
