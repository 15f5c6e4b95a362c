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

The run directory is written by ``evaluate`` (the one writer of runs, as for ``psym import
logprobs``). A backend answering prompts could not tell the cells apart (two conditions may
render the same prompt; a task that ships no item texts renders none), so the task is run by
the :class:`ImportedAnswers` kind instead: evaluate hands it each (cell, repeat) it plans, and
the kind takes that cell's rows of that respondent from the file. The kind asks no model
(``TaskKind.asks_model``), so the run needs no item texts and states no distribution method;
the backend (:class:`NoModel`) only names the model and the file. Every condition is its own
cell (design ``each``); a (condition, respondent) the file has no rows for is not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from psymetrics_core.administer.answer_files import Rating, read_answer_table, read_ratings_table
from psymetrics_core.administer.conditions import Cell, cells_for
from psymetrics_core.administer.kinds.base import CellRun, TaskKind
from psymetrics_core.administer.kinds.questionnaire import questionnaire_sample
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter
from psymetrics_core.base.errors import BackendError, PsymError
from psymetrics_core.base.types import Answer, Completion, Instrument, Item, Prompt
from psymetrics_core.contracts.kinds import SessionView
from psymetrics_core.pluginsys.hookspecs import hookimpl
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.digest import file_digest

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
    each row's (else every row is ``original``). Bad input is one ``PsymError`` line.

    The run is ``evaluate``'s, as ``psym eval`` writes it: the task is run by the
    :class:`ImportedAnswers` kind (each (condition, respondent) one cell and repeat, answered
    from the file; no model is asked), registered on ``session`` for the run only."""
    src, out = Path(path), Path(output)
    _not_an_input(src, out, overwrite)
    inst = session.get_instrument(task)
    if getattr(inst, "kind", "questionnaire") != "questionnaire" or not inst.forms:
        raise PsymError(f"--task {task}: not a questionnaire (import answers scores Likert items)")
    table = read_ratings_table(src, inst, form, group=_group_column(src, condition))[0]
    cells = _cells(src, table, condition, session)
    kind = ImportedAnswers(inst, form, table, {c.name: g for g, c in cells.items()})
    plugin = _KindPlugin(kind)
    session.register(plugin, name=f"{IMPORTED}-{id(plugin)}")
    try:
        evaluate(
            [replace(inst, extra={**inst.extra, "kind": ImportedAnswers.name})],
            session=session,
            backend=NoModel(model, src),
            model=model,
            output=out,
            overwrite=overwrite,
            form=form,
            conditions=tuple(condition or (g if g != "all" else "original") for g in cells),
            design="each",
            seed=0,
            repeats=len(kind.who),
            units=kind.units(),
            cache=False,
            provenance=True,
            inputs=(("answers", src),),
        )
    finally:
        session.pm.unregister(plugin)
        session.refresh()
    return ImportedRun(out, inst.id, list(cells), kind.who, len(table), kind.n_missing)


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
    """{group in the file: its cell}; an unknown condition, or a second name of one cell,
    names its CSV line."""
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
        same = [g for g, c in out.items() if c.name == built[0].name]
        if same:
            raise PsymError(
                f"{src}, line {r.line}, field 'condition': {name!r} is the condition "
                f"{same[0]!r} names already ({built[0].name}); give each condition one name"
            )
        out[key] = built[0]
    return out


class ImportedAnswers(TaskKind):
    """Answers each cell from the file: the cell's condition and repeat (respondent number in
    file order) pick the rows; an item without a row, or with an empty response, is a missing
    answer (``unparsed``, its reason recorded), never imputed. Scored by the session's
    ``score`` and ``aggregate`` hooks on the instrument as loaded, as in ``psym eval``."""

    name = "imported-answers"
    asks_model = False

    def __init__(
        self, inst: Instrument, form: str, table: Sequence[Rating], groups: dict[str, str]
    ) -> None:
        self.inst, self.form, self.groups = inst, form, groups
        self.given = {(r.group, r.respondent, r.item): r.response for r in table}
        self.who = list(dict.fromkeys(r.respondent for r in table))
        self.n_missing = 0

    def units(self) -> frozenset[tuple[str, str, int]]:
        """The (task, cell, repeat) units the file has rows for."""
        have = {(g, p) for g, p, _ in self.given}
        return frozenset(
            (self.inst.id, name, r)
            for name, group in self.groups.items()
            for r, person in enumerate(self.who)
            if (group, person) in have
        )

    def count(self, task: Instrument, form: str, limit: int | None, session: SessionView) -> int:
        """No prompt is sent."""
        return 0

    def run_cell(self, run: CellRun) -> dict[str, Any]:
        """The cell's answers from the file, written as samples and scored."""
        inst, form = self.inst, self.form
        group, person = self.groups[run.cell.name], self.who[run.repeat]
        answers = []
        for it in inst.forms[form]:
            key = (group, person, it.id)
            value = self.given.get(key)
            reason = EMPTY if key in self.given else NOT_IN_FILE
            ans = (
                Answer(value, "ok")
                if value is not None
                else Answer(None, "unparsed", None, {"reason": reason})
            )
            self.n_missing += value is None
            answers.append((it, ans))
            run.writer.write(
                questionnaire_sample(inst, form, it, _prompt(inst, it), None, None, ans, run.tag)
            )
        hook = run.session.hook
        scores = hook.score(
            instrument=inst,
            responses={it.id: a.value for it, a in answers},
            form=form,
            answers={it.id: a for it, a in answers},
        )
        entry: dict[str, Any] = hook.aggregate(
            instrument=inst, scores=scores, answers=answers, norm_group=None
        )
        entry = run.finish(entry)
        entry["form"] = form  # the form the file answered, whatever a condition names
        return entry


def _prompt(inst: Instrument, it: Item) -> Prompt:
    rs = inst.response_scale_for(it)
    return Prompt((), rs.options, "(imported answer: no prompt recorded)")


class _KindPlugin:
    """Registers one import's kind on the session for the length of its run."""

    def __init__(self, kind: ImportedAnswers) -> None:
        self.kind = kind

    @hookimpl
    def register_task_kinds(self, register: Any) -> None:
        register(self.kind.name, self.kind)


class NoModel(Backend):
    """The run's backend: the model named on the command line and the answers file; asked
    nothing (the answers are the file's)."""

    name = IMPORTED

    def __init__(self, model: str, path: Path) -> None:
        self.model = model
        self.path = path

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Imported answers answer no prompt."""
        raise BackendError("imported answers answer no prompt")

    def identity(self) -> dict[str, Any]:
        """The model as given and the answers file (name, sha256, lines)."""
        return {
            "name": IMPORTED,
            "model": self.model,
            "source": self.path.name,
            **file_digest(self.path),
        }
