"""``psym projective-analyze``: κ, DCR, |μΔ|, accuracy and judge agreement of projective runs."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from psymetrics_core.api import (
    AnalysisRequest,
    AnalysisSection,
    PsymError,
    bounded,
    check_target,
    run_inputs,
    write_output,
)

from .analysis import NEUTRAL, UNPARSED, Report, analyse, load_predictions
from .drift import Stat
from .labels import read_labels

__all__ = ["projective_analyze", "format_report", "analyze_section"]


def _f(stat: Stat | None, digits: int = 2) -> str:
    if stat is None or stat.value is None:
        return "null"
    return f"{stat.value:.{digits}f}"


def _num(x: float | None) -> str:
    return "null" if x is None else f"{x:.2f}"


def format_report(report: Report, labels_file: str | None, baseline: str) -> str:
    """The report as plain-text tables (undefined values print ``null`` with their reason).

    Every row names its repeat (``rep``); with several repeats a table of each statistic's
    spread across them follows.
    """
    lines: list[str] = [
        f"{report.n_predictions} diagnosed cell(s); repeats: "
        f"{', '.join(map(str, report.repeats)) or '-'}; unparsed diagnoses: {report.unparsed}"
    ]
    if report.reliability:
        lines += ["", *_reliability_lines(report, baseline)]
    if report.validity:
        lines += ["", *_validity_lines(report, labels_file)]
    if report.agreement:
        lines += ["", "Agreement between judges"]
        for a in report.agreement:
            lines.append(
                f"{a.task:<10} {a.target:<11} {a.condition[:26]:<26} {a.repeat:>3} "
                f"{a.judges[0]} vs {a.judges[1]}: "
                f"exact {_f(a.exact)} (n={a.exact.n}), kappa {_f(a.kappa)}"
            )
    if report.spread:
        lines += ["", *_spread_lines(report)]
    if report.excluded:
        lines += ["", "Questionnaire profiles left out (the authors' minimum answered items)"]
        for e in report.excluded[:MAX_LISTED]:
            lines.append(
                f"{e.task:<10} {e.persona[:20]:<20} {e.condition[:26]:<26} {e.repeat:>3} {e.reason}"
            )
        if len(report.excluded) > MAX_LISTED:
            lines.append(f"... and {len(report.excluded) - MAX_LISTED} more (see --json)")
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(line.rstrip() for line in lines)


MAX_LISTED = 20  # excluded profiles printed (all are in the JSON)


def _reliability_lines(report: Report, baseline: str) -> list[str]:
    lines = [f"Reliability against '{baseline}' (Wang et al. 2026, Eq. 12-13)"]
    head = f"{'judge':<22} {'test':<10} {'target':<11} {'condition':<26} {'rep':>3} {'n':>3} "
    lines.append(head + f"{'kappa':>7} {'DCR':>6} dir  {'mu_delta':>8} {'|mu_delta| [95% CI]':<22}")
    for r in report.reliability:
        ci = (
            f"{_num(r.shift.abs_mean)} [{_num(r.shift.abs_ci_low)}, {_num(r.shift.abs_ci_high)}]"
            if r.shift.abs_mean is not None
            else "null"
        )
        lines.append(
            f"{r.judge[:22]:<22} {r.task:<10} {r.target:<11} {r.condition[:26]:<26} "
            f"{r.repeat:>3} {r.n_targets:>3} {_f(r.kappa):>7} {_num(r.dcr.value):>6} "
            f"{r.dcr.arrow or '-':<4} {_num(r.shift.mean):>8} {ci:<22}"
        )
        why = [x for x in (r.kappa.reason, r.dcr.reason) if x and x.startswith(("undefined", "no"))]
        for reason in dict.fromkeys(why):  # each reason once
            lines.append(f"{'':<22}   -> {reason}")
    return lines


def _validity_lines(report: Report, labels_file: str | None) -> list[str]:
    lines = [
        f"Validity against {labels_file} (exact match; MBTI: mean Hamming distance; "
        "macro_f1, mae, all_five, type_acc, axis_acc: the authors' extra metrics)",
        f"{'judge':<22} {'test':<10} {'target':<11} {'condition':<26} {'rep':>3} "
        f"{'metric':<11} {'value':>6} {'majority':>9} {'n':>4}",
    ]
    for v in report.validity:
        lines.append(
            f"{v.judge[:22]:<22} {v.task:<10} {v.target:<11} {v.condition[:26]:<26} "
            f"{v.repeat:>3} {v.metric:<11} {_f(v.value):>6} {_f(v.majority):>9} {v.value.n:>4}"
        )
        if v.value.value is None and v.value.reason:
            lines.append(f"{'':<22}   -> {v.metric}: {v.value.reason}")
    return lines


def _spread_lines(report: Report) -> list[str]:
    lines = [
        "Across repeats (mean, SD with ddof 1, min-max over the repeats where defined)",
        f"{'judge':<22} {'test':<10} {'target':<11} {'condition':<26} {'statistic':<15} "
        f"{'reps':>5} {'mean':>6} {'sd':>6} {'min':>6} {'max':>6}",
    ]
    for s in report.spread:
        lines.append(
            f"{s.judge[:22]:<22} {s.task:<10} {s.target:<11} {s.condition[:26]:<26} "
            f"{s.metric:<15} {f'{s.n_defined}/{s.n_repeats}':>5} {_num(s.mean):>6} "
            f"{_num(s.sd):>6} {_num(s.low):>6} {_num(s.high):>6}"
            + (f"  ({s.reason})" if s.reason else "")
        )
    return lines


class _UnparsedChoice(click.Choice):  # type: ignore[type-arg]
    """``click.Choice`` whose error quotes at most 40 characters of a bad value."""

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> object:
        if value in self.choices:
            return value
        shown = repr(value)[:40] + ("…" if len(repr(value)) > 40 else "")
        self.fail(f"{shown} is not one of {', '.join(map(repr, self.choices))}", param, ctx)


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
    "--unparsed",
    type=_UnparsedChoice(UNPARSED),
    default="missing",
    show_default=True,
    help="an unparsed diagnosis: 'missing' (left out, wrong where hits are counted) or "
    "'authors' (the authors' code's defaults: Big Five 3, MBTI E/S/T/J, risks 0)",
)
@click.option(
    "-o",
    "--json",
    "json_out",
    default=None,
    type=click.Path(),
    help="also write the report as JSON to this file",
)
def projective_analyze(
    run_dirs: tuple[str, ...],
    labels_file: str | None,
    baseline: str,
    n_boot: int,
    unparsed: str,
    json_out: str | None,
) -> None:
    """κ, DCR and |μΔ| against the neutral cell, accuracy and the authors' extra metrics
    against labels, judge agreement; every repeat, with the spread across repeats.

    The same report is the projective section of `psym analyze RUN... [--labels FILE]`; this
    command adds --unparsed, --n-boot and the JSON file.
    """
    inputs: list[str | Path] = [*run_inputs(run_dirs), *([labels_file] if labels_file else [])]
    try:
        if json_out is not None:
            check_target(json_out, inputs=inputs, what="--json")  # before the analysis
        preds = load_predictions(run_dirs)
        if not preds:
            raise PsymError(
                "no diagnoses (dx.* scores) in these runs: run the sct, tat or rorschach task"
            )
        labels = read_labels(labels_file) if labels_file else None
        report = analyse(preds, labels, baseline=baseline, n_boot=n_boot, unparsed=unparsed)
    except PsymError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(format_report(report, labels_file, baseline))
    click.echo("(the same report is a section of `psym analyze RUN...`)", err=True)
    if json_out is not None:
        text = json.dumps(asdict(report), indent=2, default=str)
        try:
            write_output(json_out, text, inputs=inputs, what="--json")
        except PsymError as exc:
            raise click.ClickException(str(exc)) from None


def analyze_section(request: AnalysisRequest) -> AnalysisSection | None:
    """The projective report as a ``psym analyze`` section (its run directories, ``--labels``
    and ``--reference``); ``None`` when no run has diagnoses (questionnaire profiles alone, e.g.
    a population run of the BFI, are GenPT's baselines only beside projective diagnoses or
    ground-truth ``--labels``)."""
    labels_file = request.labels
    preds = load_predictions(list(request.run_dirs))
    if not preds or (labels_file is None and all(p.origin != "diagnosis" for p in preds)):
        return None
    ref = request.reference or NEUTRAL
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
