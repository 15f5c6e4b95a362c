"""Tables for ``psym analyze`` (rendering only; the numbers and files come from analysis)."""

from __future__ import annotations

import math
from typing import Any

import click

from psymetrics_core.analysis.population.runs import task_text
from psymetrics_core.analysis.population.structure import invariance_text
from psymetrics_core.cli.console import add_rows, stdout, table

__all__ = ["print_report", "print_responses_report"]


def _f(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def print_report(report: dict[str, Any]) -> None:
    """Print every analysis as rich tables on stdout."""
    t = table("runs", ["run", "model", "conditions", "repeats", "temperature"])
    for r in report["runs"]:
        t.add_row(
            r["label"],
            str(r["model"]),
            ", ".join(r["conditions"]),
            str(r["repeats"]),
            str(r["temperature"]),
        )
    stdout.print(t)
    stdout.print(f"[dim]Note: {report['respondents']}.[/dim]")
    for run, tasks in report["analyses"].items():
        for task, a in tasks.items():
            _task_tables(f"{run} · {task}", a)
    _convergent(report["convergent_validity"])


def _task_tables(title: str, a: dict[str, Any]) -> None:
    """Every table of one task in one run."""
    _consistency(title, a["consistency"])
    _reliability(title, a["reliability"])
    _icc(title, a["icc"])
    _styles(title, a["response_styles"])
    _mbti(title, a["mbti_metrics"])
    _facets(title, a["facets"])
    _norms(title, a["norms"])


def _consistency(title: str, c: dict[str, Any]) -> None:
    if not c["per_seed"]:
        return
    cols = ["condition", f"consistency vs {c['versus']} (mean)", "per seed"]
    if "human_fences" in c:
        cols.append("outside human fences")
    t = table(f"{title}: answer consistency (Jung et al., 2026)", cols)
    by_cond: dict[str, list[dict[str, Any]]] = {}
    for r in c["per_seed"]:
        by_cond.setdefault(r["condition"], []).append(r)

    def row(cond: str, mean: float | None) -> list[str]:
        seeds = by_cond.get(cond, [])
        out = [cond, _f(mean), " ".join(f"{r['seed']}:{_f(r['consistency'])}" for r in seeds)]
        if "human_fences" in c:
            out.append(f"{sum(r.get('outside_fences', False) for r in seeds)}/{len(seeds)}")
        return out

    add_rows(t, (row(cond, mean) for cond, mean in c["mean"].items()))
    stdout.print(t)
    if "human_fences" in c:
        h = c["human_fences"]
        stdout.print(
            f"[dim]human fences: [{_f(h['lower'])}, {_f(h['upper'])}] "
            f"(Q1 {_f(h['q1'])}, Q3 {_f(h['q3'])}, n {h['n']})[/dim]"
        )


def _reliability(title: str, rel: dict[str, Any]) -> None:
    t = table(
        f"{title}: internal consistency",
        ["scale", "alpha", "omega", "respondents", "items", "note"],
    )
    for scale, r in rel.items():
        om = r["omega"]
        notes = (r.get("note"), om.get("note"), *om.get("warnings", ()))
        note = "; ".join(dict.fromkeys(x for x in notes if x))
        t.add_row(scale, _f(r["alpha"]), _f(om.get("omega")), r["respondents"], str(r["k"]), note)
    stdout.print(t)


def _icc(title: str, icc: dict[str, Any]) -> None:
    if not icc:
        return
    t = table(
        f"{title}: test-retest across repeats (targets = items)",
        ["condition", "ICC(A,1)", "ICC(C,1)", "ICC(A,k)", "items", "repeats"],
    )
    add_rows(
        t,
        (
            [
                cond,
                _f(r.get("ICC(A,1)")),
                _f(r.get("ICC(C,1)")),
                _f(r.get("ICC(A,k)")),
                str(r["n_targets"]),
                str(r["k"]),
            ]
            for cond, r in icc.items()
        ),
    )
    stdout.print(t)


_STYLES = {
    "acquiescence": "acq",
    "extreme": "extreme",
    "midpoint": "mid",
    "straightlining": "straight",
    "refusal_rate": "refused",
    "invalid_rate": "invalid",
}


def _styles(title: str, styles: dict[str, Any]) -> None:
    t = table(f"{title}: response styles (mean over repeats)", ["condition", *_STYLES.values()])
    add_rows(t, ([cond, *(_f(r[k]) for k in _STYLES)] for cond, r in styles["mean"].items()))
    stdout.print(t)
    stdout.print(
        "[dim]acq: mean (x - mid)/half-range, -1..1; extreme/mid: share at the ends/middle; "
        "straight: longest identical run / answered; refused/invalid: share of items[/dim]"
    )


def _mbti(title: str, m: dict[str, Any]) -> None:
    if not m.get("dimensions"):
        return
    t = table(
        f"{title}: Rao et al. (2023) metrics (alpha = 100, scores as 0-100)",
        ["metric", "condition(s)", "value"],
    )
    names = ("consistency", "robustness", "fairness")
    add_rows(
        t, ([name, cond, _f(v, 3)] for name in names for cond, v in (m.get(name) or {}).items())
    )
    stdout.print(t)


def _facets(title: str, facets: dict[str, Any]) -> None:
    names = sorted({k for r in facets.values() for k in r["shares"]} - {"residual"})
    t = table(
        f"{title}: variance of scale scores by facet (share of total)",
        ["scale", *names, "residual", "note"],
    )
    for scale, r in facets.items():
        sh = r["shares"]
        t.add_row(scale, *(_f(sh.get(n)) for n in names), _f(sh.get("residual")), r.get("note", ""))
    stdout.print(t)


def _norms(title: str, n: dict[str, Any]) -> None:
    if not n.get("scales"):
        if n.get("note"):
            stdout.print(f"[dim]norms: {n['note']}[/dim]")
        return
    t = table(
        f"{title}: human norms (condition {n.get('condition', '?')})",
        ["scale", "group", "model", "z", "pct", "Hedges g [95% CI]", "PsychoBench p"],
    )
    notes: set[str] = set()
    for scale, rows in n["scales"].items():
        for r in rows:
            g = r["hedges_g"]
            pb = r["psychobench_test"]
            notes.update(x["note"] for x in (g, pb) if "note" in x)
            t.add_row(
                scale,
                f"{r['group']['name']} {_f(r['group']['mean'])}±{_f(r['group']['sd'])}",
                f"{_f(r['model_mean'])}±{_f(r['model_sd'])} "
                f"(n {r['model_n']} of {r.get('model_n_total', r['model_n'])})",
                _f(r["z"]),
                _f(r["percentile"], 0),
                f"{_f(g['g'])} [{_f(g['ci_low'])}, {_f(g['ci_high'])}]" if "g" in g else "—",
                _f(pb.get("p"), 4) if "p" in pb else "—",
            )
    stdout.print(t)
    for note in sorted(notes):
        stdout.print(f"[dim]—: {note}[/dim]")
    stdout.print(f"[dim]{n['caveat']}[/dim]")


def _convergent(cv: dict[str, Any]) -> None:
    if not cv.get("rows"):
        stdout.print(f"[dim]convergent validity: {cv.get('note', 'no hypotheses')}[/dim]")
        return
    kind = (
        "declared hypotheses"
        if cv["declared"]
        else (
            "exploratory, no declared sign"
            if cv["exploratory"]
            else "Jung et al. (2026) hypotheses"
        )
    )
    t = table(
        f"convergent validity across {len(cv['units'])} units ({kind})",
        ["score A", "score B", "expected", "rho", "95% CI (Fisher z)", "p", "n", "strength"],
    )
    for r in cv["rows"]:
        exp = {1: "+", -1: "−", 0: "?"}[r["expected"]]
        ci = r.get("ci") or [None, None]
        t.add_row(
            r["a"],
            r["b"],
            exp,
            _f(r.get("rho")),
            f"[{_f(ci[0])}, {_f(ci[1])}]",
            _f(r.get("p"), 3),
            str(r.get("n", "")),
            r.get("strength", r.get("note", "")),
        )
    stdout.print(t)
    stdout.print(f"[dim]units: {', '.join(cv['units'])}[/dim]")


def print_responses_report(rep: dict[str, Any]) -> None:
    """Print the ``--responses`` report: one table per group, notes as numbered footnotes."""
    notes: list[str] = []

    def ref(texts: list[str]) -> str:
        marks = []
        for x in texts:
            if x not in notes:
                notes.append(x)
            marks.append(str(notes.index(x) + 1))
        return ",".join(marks)

    name = rep["task"] or rep["survey"]["name"]
    if rep["task"] is None:
        sv = rep["survey"]
        scales = "; ".join(f"{s}: {', '.join(its)}" for s, its in sv["scales"].items())
        click.echo(
            f"{name}: your own survey ({sv['layout']}), {len(sv['items'])} items; scales {scales}"
        )
    for grp, g in rep["groups"].items():
        title = f"{name} · {rep['group_by'] or 'all respondents'}"
        title += f" = {grp}" if rep["group_by"] else ""
        t = table(
            f"{title} ({g['n_respondents']} respondents)",
            ["scale", "n", "mean", "SD", "skew", "kurt", "alpha", "rows", "omega", "notes"],
        )
        for scale, r in g["scales"].items():
            d, a, om = r["descriptives"], r["alpha"], r["omega"]
            texts = [
                x
                for x in (d.get("note"), a.get("note"), om.get("note"), *om.get("warnings", ()))
                if x
            ]
            t.add_row(
                scale,
                str(d["n"]),
                _f(d["mean"]),
                _f(d["sd"]),
                _f(d["skew"]),
                _f(d["excess_kurtosis"]),
                _f(a["alpha"]),
                a["rows_used"],
                _f(om.get("omega")),
                ref(texts),
            )
        stdout.print(t)
    for i, text in enumerate(notes, start=1):
        stdout.print(f"[dim]{i}: {text}[/dim]")
    stdout.print(
        f"[dim]kurt: excess kurtosis; rows: rows used by alpha (--missing "
        f"{rep['alpha_deletion']}) of rows given; item means and variances: --json[/dim]"
    )
    for grp, entry in rep["population"].items():
        title = (
            f"Population psychometrics ({rep['group_by']} = {grp})"
            if rep["group_by"]
            else "Population psychometrics"
        )
        click.echo(f"\n{title}\n" + "\n".join(task_text(name, entry)))
    if "invariance" in rep:
        title = f"Measurement invariance ({name}, one factor per scale)"
        click.echo(f"\n{title}\n" + "\n".join(invariance_text(rep["invariance"])))
