"""Ecological validity: questionnaire scores against downstream behaviour scores across models.

``psym validity RUN_DIR...`` reads each run's ``results.json``, averages every score per model over
its runs (seeds), pairs the scores of each construct (pairing table: ``validity_pairs.yaml`` here
or ``--pairs FILE``), and computes Spearman's rho (average ranks for ties) across models with a
Fisher-z interval, tanh(atanh(rho) ± z/sqrt(n - 3)) (Jung et al., 2026). Runs are read and
pooled into units of analysis by ``analysis.records``, the reader ``psym analyze`` uses, and
the statistic is ``analysis.validity.spearman_fisher``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from psymetrics_core.analysis.ecological_plot import rank_plot
from psymetrics_core.analysis.records import read_results, unit_label, unit_scores
from psymetrics_core.analysis.validity import spearman_fisher
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import parse_yaml, read_text
from psymetrics_core.base.writing import check_output_dir, csv_cell, output_dir, write_output
from psymetrics_core.contracts.analyses import AnalysisSection
from psymetrics_core.records.inputs import run_inputs

__all__ = [
    "Pair",
    "PairResult",
    "ValidityReport",
    "ecological_validity",
    "load_pairs",
    "read_runs",
    "model_label",
    "spearman",
    "validity",
]


@dataclass(frozen=True)
class Side:
    """Candidate score names (``task.scale``) with the sign that makes higher = more construct."""

    candidates: tuple[tuple[str, float], ...]

    def pick(self, scores: Mapping[str, float]) -> tuple[str, float] | None:
        """The first candidate present in ``scores``: (name, signed value)."""
        for name, sign in self.candidates:
            if name in scores:
                return name, sign * scores[name]
        return None


@dataclass(frozen=True)
class Pair:
    """One construct's questionnaire side and behaviour side."""

    construct: str
    test: Side
    behaviour: Side


@dataclass
class PairResult:
    """Spearman's rho of one pair across the models that have both scores."""

    construct: str
    test_score: str | None
    behaviour_score: str | None
    models: list[str] = field(default_factory=list)
    test_values: list[float] = field(default_factory=list)
    behaviour_values: list[float] = field(default_factory=list)
    rho: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None

    @property
    def n(self) -> int:
        """Number of models paired."""
        return len(self.models)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able row."""
        return {
            "construct": self.construct,
            "test_score": self.test_score,
            "behaviour_score": self.behaviour_score,
            "n": self.n,
            "rho": self.rho,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "models": {
                m: {"test": t, "behaviour": b}
                for m, t, b in zip(
                    self.models, self.test_values, self.behaviour_values, strict=True
                )
            },
        }


def _side(path: str, raw: Any, where: str) -> Side:
    entries = raw if isinstance(raw, list) else [raw]
    out = []
    for e in entries:
        if isinstance(e, str):
            e = {"score": e}
        if not isinstance(e, dict) or "." not in str(e.get("score", "")):
            raise PsymError(f"{path}: {where}: expected score: TASK.SCALE, got {e!r}")
        sign = e.get("sign", 1)
        if sign not in (1, -1):
            raise PsymError(f"{path}: {where}: sign must be 1 or -1, got {sign!r}")
        out.append((str(e["score"]), float(sign)))
    return Side(tuple(out))


def load_pairs(path: str | Path | None = None) -> list[Pair]:
    """The pairing table: ``path`` or the shipped ``validity_pairs.yaml``."""
    if path is None:
        shipped = resources.files("psymetrics_core.analysis") / "validity_pairs.yaml"
        text = shipped.read_text(encoding="utf-8")
        where = "validity_pairs.yaml"
    else:
        p = Path(path)
        if not p.is_file():
            raise PsymError(f"{p}: no such pairing file")
        text, where = read_text(p, what="pairing file"), str(p)
    raw = parse_yaml(text, where)
    if not isinstance(raw, dict) or not isinstance(raw.get("pairs"), list):
        raise PsymError(f"{where}: expected a mapping with a 'pairs' list")
    pairs = []
    for i, e in enumerate(raw["pairs"], start=1):
        if not isinstance(e, dict) or not {"construct", "test", "behaviour"} <= set(e):
            raise PsymError(f"{where}: pair {i} needs construct, test and behaviour")
        pairs.append(
            Pair(
                str(e["construct"]),
                _side(where, e["test"], f"pair {i} test"),
                _side(where, e["behaviour"], f"pair {i} behaviour"),
            )
        )
    return pairs


def model_label(results: Mapping[str, Any]) -> str:
    """A run's model (the unit of analysis; see ``analysis.records.unit_label``)."""

    return unit_label(results)


def read_runs(run_dirs: Iterable[str | Path]) -> dict[str, dict[str, float]]:
    """{unit: {task.scale: mean score}} from ``RUN_DIR/results.json`` files, read and pooled by
    the reader ``psym analyze`` uses (``analysis.records``: one unit per model, split by
    persona; the mean over its administrations at default facet levels)."""

    dirs = list(run_dirs)
    if not dirs:
        raise PsymError("give at least one run directory")
    units = unit_scores([(str(d), read_results(d)) for d in dirs])
    out: dict[str, dict[str, float]] = {}
    for row in units.itertuples(index=False):
        out.setdefault(str(row.unit), {})[str(row.score_id)] = float(row.score)
    return out


def spearman(
    x: Sequence[float], y: Sequence[float], level: float = 0.95
) -> tuple[float | None, float | None, float | None, float | None]:
    """(rho, ci_low, ci_high, two-sided p) by ``analysis.validity.spearman_fisher``."""

    res = spearman_fisher(x, y, 0, level)
    ci = res["ci"] or (None, None)
    return res["rho"], ci[0], ci[1], res["p"]


def validity(
    scores: Mapping[str, Mapping[str, float]],
    pairs: Sequence[Pair],
    exclude: Iterable[str] = (),
    level: float = 0.95,
) -> list[PairResult]:
    """One ``PairResult`` per pair that at least one model has both sides of."""
    skip = set(exclude)
    out = []
    for pair in pairs:
        res = PairResult(pair.construct, None, None)
        for model in sorted(scores):
            if model in skip:
                continue
            t, b = pair.test.pick(scores[model]), pair.behaviour.pick(scores[model])
            if t is None or b is None:
                continue
            res.test_score = res.test_score or t[0]
            res.behaviour_score = res.behaviour_score or b[0]
            res.models.append(model)
            res.test_values.append(t[1])
            res.behaviour_values.append(b[1])
        if res.models:
            res.rho, res.ci_low, res.ci_high, res.p_value = spearman(
                res.test_values, res.behaviour_values, level
            )
            out.append(res)
    return out


@dataclass(frozen=True)
class ValidityReport:
    """``psym validity``'s result: one row per construct pair, and the files written."""

    n_models: int
    results: list[PairResult]
    table: Path
    plots: list[Path]

    def rows(self) -> list[dict[str, Any]]:
        """The JSON rows (``validity.json``, ``psym validity --json``)."""
        return [r.to_json() for r in self.results]


CSV_COLUMNS = (
    "construct",
    "test_score",
    "behaviour_score",
    "n",
    "rho",
    "ci_low",
    "ci_high",
    "p_value",
)


def ecological_validity(
    run_dirs: Sequence[str | Path],
    output: str | Path,
    *,
    pairs: str | Path | None = None,
    exclude: Iterable[str] = (),
) -> ValidityReport:
    """Rho of every construct pair across the models of ``run_dirs`` (pairing table ``pairs``,
    default the shipped one; models in ``exclude`` left out), written to ``output`` as
    validity.json, validity.csv, validity.png and validity.svg."""
    inputs = [*run_inputs(run_dirs), *([pairs] if pairs is not None else [])]
    check_output_dir(output, inputs=inputs)  # before the work
    scores = read_runs(run_dirs)
    results = validity(scores, load_pairs(pairs), exclude)
    if not results:
        raise PsymError(
            f"no construct pair found in {len(run_dirs)} run(s): each pair needs a "
            "questionnaire and a behaviour score (see --pairs)"
        )
    output = output_dir(output, inputs=inputs, what="--output")
    rows = [r.to_json() for r in results]
    text = json.dumps(rows, indent=2) + "\n"
    write_output(output / "validity.json", text, inputs=inputs, what="--output")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for r in results:
        w.writerow([_cell(getattr(r, c)) for c in CSV_COLUMNS])
    table = write_output(output / "validity.csv", buf.getvalue(), inputs=inputs, what="--output")
    return ValidityReport(len(scores), results, table, rank_plot(results, output, inputs=inputs))


def _cell(value: Any) -> Any:
    return csv_cell(value) if isinstance(value, str) else value


VALIDITY_TITLE = "Ecological validity (questionnaire vs behaviour, Spearman's rho across models)"


def validity_section(run_dirs: Sequence[Path]) -> AnalysisSection | None:
    """``psym analyze``'s ecological-validity section (what ``psym validity`` prints, with the
    shipped pairing table): None unless some model's runs hold both sides of a pair."""
    runs = [d for d in run_dirs if (Path(d) / "results.json").is_file()]
    results = validity(read_runs(runs), load_pairs(None)) if runs else []
    if not results:
        return None
    lines = [f"{'construct':<24} {'questionnaire':<28} {'behaviour':<28} {'n':>3} {'rho':>6}"]
    for r in results:
        rho = "—" if r.rho is None else f"{r.rho:.2f}"
        lines.append(
            f"{r.construct:<24} {str(r.test_score):<28} {str(r.behaviour_score):<28} "
            f"{r.n:>3} {rho:>6}"
        )
    lines.append("(psym validity RUN... -o DIR writes the same table with rank plots)")
    data = {"pairs": [r.to_json() for r in results]}
    return AnalysisSection("validity", VALIDITY_TITLE, "\n".join(lines), data)
