"""Answers made elsewhere as a run (``psym import answers``): a ratings CSV becomes an ordinary
run directory (``results.json``, ``samples.jsonl``, provenance) that every analysis reads.

The CSV is the long format of ``psym score`` (``respondent,item,response`` and optionally
``condition``; read and checked by ``answer_files.read_ratings_table``). Each respondent is one
administration of the model (repeat 0, 1, ... in the order the file first names them: repeated
samples of one model, e.g. seeds); each condition is a cell built from the session's conditions
(``original``, ``reversed-options``, a persona, ...), so the option-order indicators and every
per-condition analysis read an import as they read ``psym eval``'s run. An item a respondent has
no row for, or an empty response, is a missing answer (``parse_status`` ``unparsed``, reason
recorded), never imputed. Scores come from the instrument's key through the ``score`` and
``aggregate`` hooks, as in ``psym eval``; no prompt was seen, so each sample's prompt is empty
and ``rendered_prompt`` says the answer was imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.administer.answer_files import Rating, read_answer_table, read_ratings_table
from psymetrics_core.administer.conditions import Cell, cells_for
from psymetrics_core.administer.kinds.base import instrument_record
from psymetrics_core.administer.kinds.questionnaire import questionnaire_sample
from psymetrics_core.administer.runner import run_summary
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Instrument, Item, Prompt
from psymetrics_core.instruments.indicators import add_run_indicators
from psymetrics_core.pluginsys.loader import plugin_versions
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.digest import file_digest, record_digests
from psymetrics_core.records.provenance import run_provenance
from psymetrics_core.records.rundir import claim_run_dir
from psymetrics_core.records.writer import SampleWriter, provenance, write_results

__all__ = ["IMPORTED", "ImportedRun", "import_answers"]

IMPORTED = "imported"  # the backend name of a run whose answers were imported
NOT_IN_FILE = "no row for this item in the imported file"
EMPTY = "empty response in the imported file"


@dataclass(frozen=True)
class ImportedRun:
    """What ``import_answers`` wrote: the run directory, its task and what it held."""

    output: Path
    task: str
    conditions: list[str]
    respondents: list[str]
    n_rows: int
    n_missing: int


def import_answers(
    path: str | Path,
    task: str,
    model: str,
    output: str | Path,
    *,
    session: Session,
    condition: str | None = None,
    form: str = "original",
    overwrite: bool = False,
) -> ImportedRun:
    """Write the answers in the ratings CSV ``path`` as a run of ``model`` on ``task`` into
    ``output``. ``condition`` is every row's condition; without it a ``condition`` column gives
    each row's (else every row is ``original``). Bad input is one ``PsymError`` line."""
    src, out = Path(path), Path(output)
    _not_an_input(src, out, overwrite)
    inst = session.get_instrument(task)
    if getattr(inst, "kind", "questionnaire") != "questionnaire" or not inst.forms:
        raise PsymError(f"--task {task}: not a questionnaire (import answers scores Likert items)")
    table = read_ratings_table(src, inst, form, group=_group_column(src, condition))[0]
    cells = _cells(src, table, condition, session)
    who = list(dict.fromkeys(r.respondent for r in table))
    with claim_run_dir(out, overwrite=overwrite):
        writer = SampleWriter(out / "samples.jsonl")
        try:
            entries, missing = _entries(inst, form, table, cells, who, writer, session)
        finally:
            writer.close()
        entry = {**entries[0], "runs": [run_summary(e) for e in entries]}
        add_run_indicators(entry, inst)
        results = _header(model, src, list(cells.values()), len(who), session)
        results["tasks"] = {inst.id: entry}
        results["provenance"] = run_provenance(results["backend"], [inst], other=[("answers", src)])
        results["records"] = record_digests(out)
        write_results(out / "results.json", results)
    return ImportedRun(out, inst.id, list(cells), who, len(table), missing)


def _not_an_input(src: Path, out: Path, overwrite: bool) -> None:
    """Refuse an output directory whose run files would replace the CSV."""
    if (out / "results.json").exists() and not overwrite:
        raise PsymError(f"-o {out} already holds a run; pass --overwrite to replace it")
    for name in ("results.json", "samples.jsonl", "judge.jsonl"):
        target = out / name
        if target.exists() and src.exists() and target.resolve() == src.resolve():
            raise PsymError(f"-o {out}: writing {name} there would replace the input {src}")


def _group_column(src: Path, condition: str | None) -> str | None:
    """``condition`` when the file has that column and no ``--condition`` overrides it."""
    if condition is not None:
        return None
    return "condition" if "condition" in read_answer_table(src).columns else None


def _cells(
    src: Path, table: Sequence[Rating], condition: str | None, session: Session
) -> dict[str, Cell]:
    """{group in the file: its cell}; an unknown condition names its CSV line."""
    out: dict[str, Cell] = {}
    for r in table:
        name = condition or (r.group if r.group != "all" else "original")
        key = r.group
        if key in out:
            continue
        try:
            built = cells_for([name], session)
        except PsymError as exc:
            where = "--condition" if condition else f"{src}, line {r.line}, field 'condition'"
            raise PsymError(f"{where}: {exc}") from None
        if len(built) != 1:
            raise PsymError(
                f"{src}, line {r.line}: condition {name!r} is {len(built)} cells (expected one)"
            )
        out[key] = built[0]
    return out


def _entries(
    inst: Instrument,
    form: str,
    table: Sequence[Rating],
    cells: dict[str, Cell],
    who: list[str],
    writer: SampleWriter,
    session: Session,
) -> tuple[list[dict[str, Any]], int]:
    """One task entry per (condition, respondent), its samples written; and the missing count."""
    given = {(r.group, r.respondent, r.item): r.response for r in table}
    items: list[Item] = list(inst.forms[form])
    entries, missing = [], 0
    for group, cell in cells.items():
        for repeat, person in enumerate(who):
            if not any(g == group and p == person for g, p, _ in given):
                continue
            answers = []
            for it in items:
                key = (group, person, it.id)
                value = given.get(key)
                ans = (
                    Answer(value, "ok")
                    if value is not None
                    else Answer(
                        None, "unparsed", data={"reason": EMPTY if key in given else NOT_IN_FILE}
                    )
                )
                missing += value is None
                answers.append((it, ans))
                tag = {**cell.record(), "repeat": repeat, "seed": repeat}
                writer.write(
                    questionnaire_sample(inst, form, it, _prompt(inst, it), None, None, ans, tag)
                )
            entries.append(_entry(inst, form, cell, repeat, answers, session))
    return entries, missing


def _prompt(inst: Instrument, it: Item) -> Prompt:
    rs = inst.response_scale_for(it)
    return Prompt((), rs.options, "(imported answer: no prompt recorded)")


def _entry(
    inst: Instrument,
    form: str,
    cell: Cell,
    repeat: int,
    answers: list[tuple[Item, Answer]],
    session: Session,
) -> dict[str, Any]:
    """The task entry of one administration, scored by the session's hooks as ``psym eval``."""
    hook = session.hook
    responses = {it.id: a.value for it, a in answers}
    scores = hook.score(
        instrument=inst, responses=responses, form=form, answers={it.id: a for it, a in answers}
    )
    entry: dict[str, Any] = hook.aggregate(
        instrument=inst, scores=scores, answers=answers, norm_group=None
    )
    entry["instrument"] = instrument_record(inst)
    entry["prompt_template"] = inst.prompt_template
    entry.update(condition=cell.name, facets=cell.facets, repeat=repeat, seed=repeat, form=form)
    return entry


def _header(model: str, src: Path, cells: list[Cell], n: int, session: Session) -> dict[str, Any]:
    """``results.json`` before its task: the model as given, the backend ``imported``."""
    return {
        "model": model,
        "model_args": {},
        "backend": {"name": IMPORTED, "model": model, "source": src.name, **file_digest(src)},
        "cache": None,
        "settings": GenerationSettings(seed=0).to_json(),
        "seed": 0,
        "limit": None,
        "form": "original",
        "conditions": [c.name for c in cells],
        "design": "grid",
        "repeats": n,
        "seeds": list(range(n)),
        **provenance(plugin_versions(session.records)),
    }
