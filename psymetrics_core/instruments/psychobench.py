"""Convert a PsychoBench ``questionnaires.json`` into psymetrics instrument specs.

The PsychoBench format (Huang et al., 2024) is a JSON list of objects with ``name``,
``questions`` ({"1": text}), ``inner_setting`` (system prompt), ``prompt`` (instruction),
``scale`` (= min + max, used only as ``scale - x`` for reverse keying), ``compute_mode``
(``SUM``/``AVG``), ``reverse`` (item ids as ints) and ``categories`` (subscales with their
``crowd`` norms). Its traps are handled and reported: the response range is read from the
instruction and checked against ``scale``; items in no category become fillers; DTDD's items
9-12, labelled "Neuroticism" in the PsychoBench repo, are the narcissism items; label typos are
corrected; scales without categories (16P) are skipped.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import load_json
from psymetrics_core.base.writing import check_output_dir, write_output

__all__ = ["ImportReport", "import_psychobench", "convert_scale"]

TEMPLATE = "{{ instruction }}\n1. {{ item }}"
_RANGE = re.compile(r"from\s+(-?\d+)\s+to\s+(-?\d+)", re.IGNORECASE)
_LABEL_PATTERNS = (
    re.compile(r"'(\d+)'\s+to\s+indicate\s+'([^']+)'"),
    re.compile(r"(\d+)\s*(?:denotes|means|=|:)\s*['\"\u201c]([^'\"\u201d]+)['\"\u201d]"),
    re.compile(r"(\d+)\s*\(([^)]+)\)"),
    re.compile(r"(\d+)\s+denotes\s+([A-Za-z][A-Za-z ]*[A-Za-z])"),
)
_TYPOS = {"Pschoticism": "Psychoticism", "Iniatives": "Initiatives"}


@dataclass
class ImportReport:
    """What an import wrote and every fix or assumption it made, one line each."""

    tasks: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    """A lower-case identifier: runs of other characters become ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "scale"


def import_psychobench(path: str | Path, output: str | Path, prefix: str = "pbi-") -> ImportReport:
    """Convert every scale of the PsychoBench-format file at ``path`` into ``output/<id>/``."""
    src = Path(path)
    _check_prefix(prefix)
    data = load_json(src, what="PsychoBench file")
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise PsymError(f"{src}: expected a JSON list of questionnaire objects")
    report = ImportReport()
    out_root = check_output_dir(output, inputs=[src])  # created with the first scale
    for i, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise PsymError(f"{src}: entry {i} is not an object")
        converted = convert_scale(obj, src, prefix, report, where=f"entry {i}")
        if converted is None:
            continue
        task_id, spec, rows = converted
        folder = out_root / task_id
        text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)
        write_output(
            folder / "instrument.yaml", text, inputs=[src], what="--output", make_parents=True
        )
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["id", "text", "scale", "reverse", "flag"])
        writer.writerows(rows)
        write_output(folder / "items.csv", buf.getvalue(), inputs=[src], what="--output")
        report.tasks.append(task_id)
        report.written.append(folder)
    if not report.tasks:
        why = "; ".join(report.skipped) or "no scale to convert"
        raise PsymError(f"{src}: nothing imported ({why})")
    return report


MAX_PREFIX = 64


def _check_prefix(prefix: str) -> None:
    """``--prefix``: task ids may hold only letters, digits, '-' and '_' (and name folders)."""
    if len(prefix) > MAX_PREFIX or not all(c.isalnum() or c in "-_" for c in prefix):
        raise PsymError(
            f"--prefix {prefix[:MAX_PREFIX]!r}: a task id prefix may hold only letters, digits, "
            f"'-' and '_' (at most {MAX_PREFIX} characters)"
        )


def _question_texts(questions: dict[str, Any], src: Path, where: str) -> None:
    """Every question text a non-empty string (a null or empty text is no item)."""
    for key, text in questions.items():
        if not isinstance(text, str) or not text.strip():
            raise PsymError(
                f"{src}, {where}: field 'questions', question '{key}': expected a non-empty "
                f"text, got {text!r}"[:300]
            )


def _need(obj: dict[str, Any], key: str, kind: type, src: Path, where: str) -> Any:
    if key not in obj:
        raise PsymError(f"{src}, {where}: missing field '{key}'")
    if not isinstance(obj[key], kind):
        raise PsymError(f"{src}, {where}: field '{key}' should be a {kind.__name__}")
    return obj[key]


def convert_scale(
    obj: dict[str, Any], src: Path, prefix: str, report: ImportReport, where: str = ""
) -> tuple[str, dict[str, Any], list[list[Any]]] | None:
    """One questionnaire object as (task id, spec dict, item rows); None if it is skipped."""
    name = str(_need(obj, "name", str, src, where))
    where = f"scale '{name}'"
    _check_fields(obj, src, where)
    questions = _need(obj, "questions", dict, src, where)
    _question_texts(questions, src, where)
    categories = obj.get("categories") or []
    if not isinstance(categories, list):
        raise PsymError(f"{src}, {where}: field 'categories' should be a list")
    if not categories:
        report.skipped.append(f"{name}: no categories (nothing to score; e.g. 16P) - skipped")
        return None
    inner = str(obj.get("inner_setting") or "")
    prompt = str(_need(obj, "prompt", str, src, where))
    lo, hi = _response_range(obj, name, inner, prompt, src, where, report)
    mode = str(obj.get("compute_mode", "AVG")).upper()
    if mode not in ("SUM", "AVG"):
        raise PsymError(f"{src}, {where}: compute_mode must be SUM or AVG, got {mode!r}")
    ids = [str(k) for k in questions]
    reverse = _matched_reverse(obj, name, ids, src, where, report)
    scales, member = _categories(name, categories, ids, src, where, report)
    fillers = [i for i in ids if i not in member]
    if fillers:
        report.fixes.append(
            f"{name}: item(s) {', '.join(fillers)} belong to no category: flagged filler "
            "(administered, not scored)"
        )
    labels = _labels(prompt, lo, hi)
    missing = [str(v) for v, lab in zip(range(lo, hi + 1), labels, strict=True) if lab == str(v)]
    if missing:
        report.fixes.append(
            f"{name}: no label found in the instruction for value(s) {', '.join(missing)}; "
            "the number itself is the label"
        )
    task_id = prefix + slug(name).replace("_", "-")
    rows = [
        [
            i,
            str(questions[i]).strip(),
            ";".join(member.get(i, [])),
            int(i in reverse),
            "" if i in member else "filler",
        ]
        for i in ids
    ]
    for sdef in scales.values():
        sdef["method"] = "sum" if mode == "SUM" else "mean"
    prompt_spec = {"system": inner, "instruction": prompt, "template": TEMPLATE}
    if not inner:
        del prompt_spec["system"]
    spec = _spec(task_id, name, src, obj.get("scale"), mode, labels, (lo, hi), scales, prompt_spec)
    return task_id, spec, rows


def _response_range(
    obj: dict[str, Any],
    name: str,
    inner: str,
    prompt: str,
    src: Path,
    where: str,
    report: ImportReport,
) -> tuple[int, int]:
    """The response range read from the instruction; PsychoBench's 'scale' must be min+max."""
    m = _RANGE.search(inner) or _RANGE.search(prompt)
    if m is None:
        raise PsymError(f"{src}, {where}: no 'from MIN to MAX' in inner_setting or prompt")
    lo, hi = int(m.group(1)), int(m.group(2))
    scale_field = obj.get("scale")
    if scale_field != lo + hi:
        raise PsymError(
            f"{src}, {where}: 'scale' is {scale_field!r} but the instruction's range {lo}-{hi} "
            f"needs min+max = {lo + hi} (PsychoBench reverse-keys as scale - x)"
        )
    report.fixes.append(
        f"{name}: response range {lo}-{hi} read from the instruction; 'scale' {scale_field} "
        f"taken as min+max (reverse keying x' = {lo + hi} - x), not as a number of points"
    )
    return lo, hi


def _matched_reverse(
    obj: dict[str, Any], name: str, ids: list[str], src: Path, where: str, report: ImportReport
) -> set[str]:
    """The reverse-keyed item ids, matched to the question keys (every one must exist)."""
    reverse = _reverse_ids(obj.get("reverse"), src, where)
    unknown = sorted(reverse - set(ids))
    if unknown:
        raise PsymError(f"{src}, {where}: reverse lists unknown item id(s) {', '.join(unknown)}")
    if obj.get("reverse"):
        report.fixes.append(
            f"{name}: reverse ids (JSON numbers) matched to question keys (strings) - the "
            "mismatch that silently disabled reverse keying in PsychoBench (Huang et al., 2024)"
        )
    return reverse


def _spec(
    task_id: str,
    name: str,
    src: Path,
    scale_field: Any,
    mode: str,
    labels: list[str],
    bounds: tuple[int, int],
    scales: dict[str, dict[str, Any]],
    prompt: dict[str, str],
) -> dict[str, Any]:
    """The instrument.yaml of an imported scale."""
    return {
        "schema_version": 1,
        "id": task_id,
        "name": f"{name} (imported from {src.name})",
        "version": "1.0.0",
        "citation": f"Imported from the PsychoBench-format file {src.name}, scale '{name}'. "
        "Add the instrument's own citation before publishing.",
        "license": {
            "status": "unknown: imported file; check the instrument's terms before sharing",
            "redistributable": None,
        },
        "item_source": f"{src.name}: 'questions' of scale '{name}' (texts as in the file)",
        "forms": {"original": "items.csv"},
        "response_scales": {"default": {"min": bounds[0], "max": bounds[1], "labels": labels}},
        "scales": scales,
        "prompt": prompt,
        "parser": "indexed_score",
        "psychobench": {"name": name, "compute_mode": mode, "scale": scale_field},
    }


def _categories(
    name: str,
    categories: list[Any],
    ids: list[str],
    src: Path,
    where: str,
    report: ImportReport,
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    scales: dict[str, dict[str, Any]] = {}
    member: dict[str, list[str]] = {}
    for j, cat in enumerate(categories):
        if not isinstance(cat, dict) or "cat_name" not in cat:
            raise PsymError(f"{src}, {where}: category {j} needs a 'cat_name'")
        label = str(cat["cat_name"])
        for bad, good in _TYPOS.items():
            if bad in label:
                report.fixes.append(f"{name}: category label '{label}' spelled '{good}'")
                label = label.replace(bad, good)
        raw_items = cat.get("cat_questions") or []
        if not isinstance(raw_items, list):
            raise PsymError(
                f"{src}, {where}: category '{label}': 'cat_questions' should be a list of item "
                f"ids, got {type(raw_items).__name__} {raw_items!r}"[:300]
            )
        items = [str(q) for q in raw_items]
        if name.upper() == "DTDD" and label == "Neuroticism" and items == ["9", "10", "11", "12"]:
            report.fixes.append(
                f"{name}: category 'Neuroticism' (items 9-12) renamed 'narcissism': they are the "
                "Dirty Dozen's narcissism items, mislabelled in PsychoBench (Huang et al., 2024)"
            )
            label = "Narcissism"
        unknown = [q for q in items if q not in ids]
        if unknown:
            raise PsymError(
                f"{src}, {where}: category '{label}' lists unknown item(s) {', '.join(unknown)}"
            )
        key = slug(label)
        while key in scales:
            key += "_2"
        norms = []
        for crowd in _crowds(cat.get("crowd"), src, f"{where}: category '{label}'"):
            group = str(crowd.get("crowd_name", "Crowd"))
            std, n = crowd["std"], crowd.get("n")
            if std <= 0:
                report.fixes.append(f"{name}/{label}: crowd '{group}' has SD {std!r}: norm dropped")
                continue
            norm: dict[str, Any] = {
                "group": group,
                "mean": crowd.get("mean"),
                "sd": std,
                "source": f"{src.name}, scale '{name}', category '{cat['cat_name']}'",
            }
            if isinstance(n, int) and n > 0:
                norm["n"] = n
            norms.append(norm)
        scales[key] = {"description": label, **({"norms": norms} if norms else {})}
        for q in items:
            member.setdefault(q, []).append(key)
    return scales, member


def _crowds(raw: Any, src: Path, where: str) -> list[dict[str, Any]]:
    """A category's ``crowd`` norms: a list of objects, each with a numeric ``mean`` and
    ``std`` (absent or null: no norms); anything else is one error naming the crowd field."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PsymError(
            f"{src}, {where}: field 'crowd' should be a list of norm objects, got "
            f"{type(raw).__name__}"
        )
    for j, crowd in enumerate(raw, start=1):
        if not isinstance(crowd, dict):
            raise PsymError(f"{src}, {where}: crowd {j}: each crowd must be an object")
        for key in ("mean", "std"):
            if not _finite(crowd.get(key)):
                got = f"{crowd[key]!r}" if key in crowd else "nothing"
                raise PsymError(
                    f"{src}, {where}: crowd {j}, field '{key}': expected a number, got {got}"[:300]
                )
    return raw


_FIELDS = (
    "name",
    "questions",
    "inner_setting",
    "prompt",
    "scale",
    "compute_mode",
    "reverse",
    "categories",
)


def _check_fields(obj: dict[str, Any], src: Path, where: str) -> None:
    """A misspelt known field (e.g. 'catagories') is an error, not a silently skipped scale."""

    for key in obj:
        if key in _FIELDS:
            continue
        close = difflib.get_close_matches(str(key), _FIELDS, n=1, cutoff=0.8)
        if close and close[0] not in obj:
            raise PsymError(f"{src}, {where}: unknown field '{key}' (did you mean '{close[0]}'?)")


def _reverse_ids(raw: Any, src: Path, where: str) -> set[str]:
    """``reverse`` as a set of item ids: a JSON list of numbers or strings (not one string)."""
    if raw is None:
        return set()
    if not isinstance(raw, list) or not all(
        isinstance(r, str) or (isinstance(r, int) and not isinstance(r, bool)) for r in raw
    ):
        raise PsymError(
            f"{src}, {where}: field 'reverse' should be a list of item ids such as [2, 5], "
            f"got {raw!r}"[:300]
        )
    return {str(r).strip() for r in raw}


def _finite(x: Any) -> TypeGuard[float]:

    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _labels(prompt: str, lo: int, hi: int) -> list[str]:
    """Verbal anchors per value found in the instruction; the number itself where none is."""
    found: dict[int, str] = {}
    for pattern in _LABEL_PATTERNS:
        for m in pattern.finditer(prompt):
            value = int(m.group(1))
            if lo <= value <= hi and value not in found:
                found[value] = m.group(2).strip()
    return [found.get(v, str(v)) for v in range(lo, hi + 1)]
