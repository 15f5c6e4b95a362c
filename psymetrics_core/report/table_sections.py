"""The report's table sections: reliability, behaviour tasks, panels, samples and provenance,
as plain rows for the template (scores and indicators: ``score_sections``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psymetrics_core.analysis.report import analyze
from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.read import PANEL_FILES, RunData
from psymetrics_core.report.values import cell, fmt, is_questionnaire, num

__all__ = [
    "MAX_SAMPLES",
    "analysis_tables",
    "behaviour_rows",
    "panel_blocks",
    "sample_rows",
    "provenance_rows",
]

MAX_SAMPLES = 4000  # rows in the sample drill-down (the rest are counted, not shown)


def analysis_tables(runs: Sequence[RunData], session: Session) -> dict[str, Any]:
    """Reliability (α, ω, ICC) and response styles from ``psym analyze``'s functions."""

    rel, styles, notes = [], [], []
    q_runs = [r for r in runs if any(is_questionnaire(e) for e in r.tasks.values())]
    for r in q_runs:
        try:
            rep = analyze([r.path], session=session)
        except (PsymError, KeyError, TypeError, ValueError) as exc:
            notes.append(f"{r.label}: reliability not computed ({exc})")
            continue
        for tasks in rep["analyses"].values():
            for task, a in tasks.items():
                if not is_questionnaire(r.tasks.get(task) or {}):
                    continue
                icc = a.get("icc") or {}
                for scale, x in (a.get("reliability") or {}).items():
                    ci = x.get("ci95") or [None, None]
                    icc_txt = "; ".join(_icc_text(c, v or {}) for c, v in sorted(icc.items()))
                    rel.append(
                        {
                            "run": r.label,
                            "task": task,
                            "scale": scale,
                            "alpha": fmt(x.get("alpha")),
                            "ci": f"[{fmt(ci[0])}, {fmt(ci[1])}]" if num(ci[0]) else "",
                            "omega": fmt((x.get("omega") or {}).get("omega")),
                            "n": x.get("n"),
                            "k": x.get("k"),
                            "icc": icc_txt or "— (needs 2+ repeats)",
                            "note": x.get("note") or (x.get("omega") or {}).get("note", ""),
                        }
                    )
                for cond, m in (a.get("response_styles") or {}).get("mean", {}).items():
                    styles.append(
                        {
                            "run": r.label,
                            "task": task,
                            "condition": cond,
                            **{k: fmt(v) for k, v in m.items()},
                        }
                    )
    return {"reliability": rel, "styles": styles, "notes": notes}


def _icc_text(cond: str, v: dict[str, Any]) -> str:
    """ICC(A,1) (Shrout-Fleiss ICC2, absolute agreement of item answers across repeats)."""
    if num(v.get("ICC2")) is None:
        return f"{cond}: — ({v.get('note', 'not computable')})"
    return f"{cond}: {fmt(v['ICC2'])} ({v.get('n_targets')} items × {v.get('k')} repeats)"


def behaviour_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """Scores of behaviour (free-text, judged, probe) tasks, rendered generically."""
    out = []
    for r in runs:
        for task, e in r.tasks.items():
            if is_questionnaire(e):
                continue
            scores = e.get("scores") or e.get("scales") or {}
            rows = []
            for name, s in scores.items():
                s = s if isinstance(s, dict) else {"value": s}
                value = s.get("value", s.get("score"))
                low, high = s.get("ci_low"), s.get("ci_high")
                rows.append(
                    {
                        "name": name,
                        "value": fmt(value, 3),
                        "ci": f"[{fmt(low, 3)}, {fmt(high, 3)}]" if num(low) is not None else "",
                        "n": s.get("n", s.get("n_answered", "")),
                        "reason": s.get("reason") or s.get("note") or "",
                    }
                )
            judge = r.results.get("judge") or {}
            who = (e.get("facets") or {}).get("respondent")
            out.append(
                {
                    "run": r.label,
                    "respondent": who.split("=", 1)[-1] if who else None,
                    "task": task,
                    "kind": e.get("kind"),
                    "rows": rows,
                    "judge": judge.get("model") if judge else None,
                    "parse": fmt(e.get("parse_rate")),
                    "citation": (e.get("instrument") or {}).get("citation", ""),
                }
            )
    return out


def panel_blocks(runs: Sequence[RunData]) -> dict[str, list[dict[str, Any]]]:
    """Panels written by other commands, rendered generically from their JSON."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in PANEL_FILES}
    for r in runs:
        for name, data in r.panels.items():
            out[name].append({"run": r.label, "tables": _tables(data)})
    return out


def _tables(data: Any, title: str = "") -> list[dict[str, Any]]:
    """JSON as tables: a mapping of scalars -> key/value; a list of mappings -> rows."""
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        cols = list(dict.fromkeys(k for x in data for k in x))
        rows = [[cell(x.get(c)) for c in cols] for x in data]
        return [{"title": title, "columns": cols, "rows": rows}]
    if isinstance(data, dict):
        scalars = [[k, cell(v)] for k, v in data.items() if not isinstance(v, dict | list)]
        out = [{"title": title, "columns": ["field", "value"], "rows": scalars}] if scalars else []
        for k, v in data.items():
            if isinstance(v, dict | list):
                out += _tables(v, f"{title}.{k}" if title else str(k))
        return out
    return [{"title": title, "columns": ["value"], "rows": [[cell(data)]]}]


def sample_rows(runs: Sequence[RunData]) -> tuple[list[dict[str, Any]], int]:
    """Rows of the drill-down (prompt, completion, parsed answer) and how many were left out."""
    rows: list[dict[str, Any]] = []
    total = 0
    for r in runs:
        for s in r.samples:
            total += 1
            if len(rows) >= MAX_SAMPLES:
                continue
            rows.append(
                {
                    "run": r.label,
                    "task": s.get("task"),
                    "item": s.get("item"),
                    "condition": s.get("condition", "original"),
                    "repeat": s.get("repeat", 0),
                    "prompt": s.get("rendered_prompt") or "",
                    "completion": s.get("completion") or "",
                    "answer": "—" if s.get("answer") is None else s.get("answer"),
                    "status": s.get("parse_status", ""),
                }
            )
    return rows, total - len(rows)


def provenance_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """What produced each run: command, commit, versions, model identity, file hashes."""
    out = []
    for r in runs:
        res = r.results
        fields = [
            ("label", r.label),
            ("run directory", r.path.name),
            ("model", res.get("model")),
            ("mode", r.mode),
            ("seed(s)", ", ".join(str(s) for s in res.get("seeds") or [res.get("seed")])),
            ("conditions", ", ".join(res.get("conditions") or ["original"])),
            ("repeats", res.get("repeats", 1)),
            ("limit", res.get("limit")),
            ("psymetrics", res.get("psymetrics")),
            ("python", res.get("python")),
            ("platform", res.get("platform")),
            ("created", res.get("created")),
        ]
        prov = res.get("provenance") or {}
        if prov.get("command"):
            fields.append(("command line", " ".join(prov["command"])))
        if prov.get("git_commit"):
            fields.append(("git commit", prov["git_commit"]))
        rows = [{"key": k, "value": cell(v)} for k, v in fields]
        backend = [
            {"key": k, "value": cell(v)} for k, v in sorted((res.get("backend") or {}).items())
        ]
        plugins = [
            {"key": k, "value": f"{(v or {}).get('distribution')} {(v or {}).get('version')}"}
            for k, v in sorted((res.get("plugins") or {}).items())
        ]
        files = [
            {"key": f.get("path", ""), "value": f"{f.get('role', '')} sha256 {f.get('sha256', '')}"}
            for f in prov.get("files") or []
        ]
        cites = [
            {"key": t, "value": (e.get("instrument") or {}).get("citation", "")}
            for t, e in r.tasks.items()
        ]
        out.append(
            {
                "run": r.label,
                "fields": rows,
                "backend": backend,
                "plugins": plugins,
                "files": files,
                "citations": cites,
            }
        )
    return out
