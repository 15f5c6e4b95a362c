"""``psym projective-analyze``: κ, DCR, |μΔ|, accuracy and judge agreement of projective runs."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from psymetrics_core.analysis.drift import Stat
from psymetrics_core.analysis.sections import AnalysisSection
from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli.bounded import bounded

from .analysis import NEUTRAL, Report, analyse, load_predictions
from .labels import read_labels

__all__ = ["projective_analyze", "format_report", "analyze_section"]


def _f(stat: Stat | None, digits: int = 2) -> str:
    if stat is None or stat.value is None:
        return "null"
    return f"{stat.value:.{digits}f}"


def _num(x: float | None) -> str:
    return "null" if x is None else f"{x:.2f}"


def format_report(report: Report, labels_file: str | None, baseline: str) -> str:
    """The report as plain-text tables (undefined values print ``null`` with their reason)."""
    lines: list[str] = [f"{report.n_predictions} diagnosed cell(s)"]
    if report.reliability:
        lines += ["", f"Reliability against '{baseline}' (Wang et al. 2026, Eq. 12-13)"]
        head = f"{'judge':<22} {'test':<10} {'target':<11} {'condition':<26} {'n':>3} "
        lines.append(
            head + f"{'kappa':>7} {'DCR':>6} dir  {'mu_delta':>8} {'|mu_delta| [95% CI]':<22}"
        )
        for r in report.reliability:
            ci = (
                f"{_num(r.shift.abs_mean)} "
                f"[{_num(r.shift.abs_ci_low)}, {_num(r.shift.abs_ci_high)}]"
                if r.shift.abs_mean is not None
                else "null"
            )
            lines.append(
                f"{r.judge[:22]:<22} {r.task:<10} {r.target:<11} {r.condition[:26]:<26} "
                f"{r.n_targets:>3} {_f(r.kappa):>7} {_num(r.dcr.value):>6} "
                f"{r.dcr.arrow or '-':<4} {_num(r.shift.mean):>8} {ci:<22}"
            )
            why = [
                x for x in (r.kappa.reason, r.dcr.reason) if x and x.startswith(("undefined", "no"))
            ]
            for reason in dict.fromkeys(why):  # each reason once
                lines.append(f"{'':<22}   -> {reason}")
    if report.validity:
        lines += ["", f"Validity against {labels_file} (exact match; MBTI: mean Hamming distance)"]
        lines.append(
            f"{'judge':<22} {'test':<10} {'target':<11} {'condition':<26} {'metric':<9} "
            f"{'value':>6} {'majority':>9} {'n':>4}"
        )
        for v in report.validity:
            lines.append(
                f"{v.judge[:22]:<22} {v.task:<10} {v.target:<11} {v.condition[:26]:<26} "
                f"{v.metric:<9} {_f(v.value):>6} {_f(v.majority):>9} {v.value.n:>4}"
            )
    if report.agreement:
        lines += ["", "Agreement between judges"]
        for a in report.agreement:
            lines.append(
                f"{a.task:<10} {a.target:<11} {a.condition[:26]:<26} "
                f"{a.judges[0]} vs {a.judges[1]}: "
                f"exact {_f(a.exact)} (n={a.exact.n}), kappa {_f(a.kappa)}"
            )
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(line.rstrip() for line in lines)


@click.command("projective-analyze")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path())
@click.option(
    "--labels", "labels_file", default=None, help="ground-truth labels (JSON) per persona"
)
@click.option("--baseline", default=NEUTRAL, show_default=True, help="the reference condition")
@click.option(
    "--n-boot",
    type=bounded("--n-boot"),
    default=2000,
    show_default=True,
    help="bootstrap resamples for |μΔ|",
)
@click.option(
    "--json", "json_out", default=None, type=click.Path(), help="also write the report as JSON"
)
def projective_analyze(
    run_dirs: tuple[str, ...],
    labels_file: str | None,
    baseline: str,
    n_boot: int,
    json_out: str | None,
) -> None:
    """κ, DCR and |μΔ| against the neutral cell, accuracy against labels, judge agreement."""
    try:
        preds = load_predictions(run_dirs)
        if not preds:
            raise PsymError(
                "no diagnoses (dx.* scores) in these runs: run the sct, tat or rorschach task"
            )
        labels = read_labels(labels_file) if labels_file else None
        report = analyse(preds, labels, baseline=baseline, n_boot=n_boot)
    except PsymError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(format_report(report, labels_file, baseline))
    if json_out:
        Path(json_out).write_text(
            json.dumps(asdict(report), indent=2, default=str), encoding="utf-8"
        )


def analyze_section(
    run_dirs: list[Path], labels_file: Path | None, baseline: str | None
) -> AnalysisSection | None:
    """The projective report as a ``psym analyze`` section; ``None`` when no run has diagnoses."""
    preds = load_predictions(run_dirs)
    if not preds:
        return None
    ref = baseline or NEUTRAL
    labels = read_labels(str(labels_file)) if labels_file else None
    report = analyse(preds, labels, baseline=ref)
    data = json.loads(json.dumps(asdict(report), default=str))
    data["baseline"] = ref
    data["labels"] = str(labels_file) if labels_file else None
    return AnalysisSection(
        key="projective",
        title="Projective tests: drift and validity of the diagnoses (Wang et al. 2026)",
        text=format_report(report, str(labels_file) if labels_file else None, ref),
        data=data,
    )
