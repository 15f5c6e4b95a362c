"""Re-judge an interview run without asking the subject again (``psym judge RUN --judge-model
NAME -o RUN2``).

An interview run keeps every open answer in ``samples.jsonl`` (the subject's prompt, its
completion and the question, ``interview``). Re-judging reads them back, per (task, condition,
repeat) of the run, has the new judge rate them exactly as the run did (``rate_and_record``:
the run's judge method, bounded retries, the run's imputation unless ``impute`` says
otherwise) and scores the ratings as ``psym eval`` does (``cell_entry``: the instrument's keys,
or the expert's scale scores). The new run directory holds the same open answers with the new
ratings (``samples.jsonl``), the new judge's calls (``judge.jsonl``) and ``results.json`` with the
earlier run's header, the new scores and ``rejudged_from`` (the run, its judge and the number
of subject requests made: none). Only the judge is called.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from psymetrics_core.administer.administration.interview import (
    INTERVIEW,
    Asked,
    Interview,
    check_impute,
    check_judge_batch,
    rate_and_record,
)
from psymetrics_core.administer.judge import DEFAULT_JUDGE_MAX_NEW_TOKENS, Judge
from psymetrics_core.administer.kinds.questionnaire import cell_entry
from psymetrics_core.administer.runner import run_summary
from psymetrics_core.backends.base import parse_model_args
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Instrument, Item, Prompt
from psymetrics_core.contracts.kinds import instrument_record
from psymetrics_core.instruments.indicators import add_run_indicators
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.digest import record_digests
from psymetrics_core.records.population_summary import with_population
from psymetrics_core.records.read import iter_records, read_results
from psymetrics_core.records.rundir import claim_run_dir
from psymetrics_core.records.samples import SampleRecord
from psymetrics_core.records.writer import SampleWriter, write_results

__all__ = ["rejudge"]

RETIRED_MIDPOINT = "interview-midpoint"  # the condition --impute midpoint replaced
_TAG = ("condition", "conditions", "facets", "condition_info", "repeat", "seed", "max_new_tokens")


@dataclass
class _Unit:
    """One (task, condition, repeat) of the earlier run: its interviewed items as asked."""

    task: str
    form: str
    mode: str
    impute: str | None
    tag: dict[str, Any]
    # item id, prompt, answer, the statement the judge saw (None in runs before it was kept)
    rows: list[tuple[str, Prompt, str, str | None]] = field(default_factory=list)


def rejudge(
    run: str | Path,
    output: str | Path,
    *,
    session: Session,
    judge_model: str,
    judge_model_args: str | dict[str, str] | None = None,
    judge_max_new_tokens: int | None = None,
    judge_batch: int | None = None,
    mode: str | None = None,
    impute: str | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Judge ``run``'s open answers again with ``judge_model``; write and return the new
    run's results (module docstring). ``mode``: judge by another interview mode than the
    run's (e.g. ``interview-logprob``), recorded as the new run's administration. ``impute``:
    "none" or "midpoint" (``--impute``); None scores a "none" as the run did."""
    src, out = Path(run), Path(output)
    if out.resolve() == src.resolve():
        raise PsymError(f"psym judge: -o {out} is the run being re-judged; name a new directory")
    results = read_results(src, schema=True)
    units = _units(src / "samples.jsonl")
    if mode is not None:
        units = [_as_mode(u, mode, session) for u in units]
    named = sorted({u.mode for u in units})
    check_judge_batch(
        judge_batch, [session.administration(m) for m in named], f"mode {', '.join(named)}"
    )
    if impute is not None:
        check_impute(None if impute == "none" else impute, [Interview()])
        for u in units:
            u.impute = None if impute == "none" else impute
    insts = {u.task: session.get_instrument(u.task) for u in units}
    args = (
        judge_model_args
        if isinstance(judge_model_args, dict)
        else parse_model_args(judge_model_args)
    )
    with claim_run_dir(out, overwrite=overwrite):
        judge = Judge(
            model=judge_model,
            model_args=args,
            factory=lambda: session.make_backend(judge_model, dict(args)),
            seed=int(results["seed"]),
            max_new_tokens=judge_max_new_tokens or DEFAULT_JUDGE_MAX_NEW_TOKENS,
            records=out / "judge.jsonl",
            batch=judge_batch,
        )
        writer = SampleWriter(out / "samples.jsonl")
        try:
            entries: dict[str, list[dict[str, Any]]] = {}
            for u in units:
                old = results["tasks"].get(u.task) or {}
                entry = _judge_unit(u, insts[u.task], judge, writer, session, old)
                entries.setdefault(u.task, []).append(entry)
        finally:
            writer.close()
            judge.close()
        new = with_population(_results(results, entries, insts, judge, src, units))
        new["records"] = record_digests(out)
        write_results(out / "results.json", new)
    return new


def _units(path: Path) -> list[_Unit]:
    """The run's interviewed items grouped by (task, condition, repeat), in order."""
    if not path.is_file():
        raise PsymError(f"{path}: no such file (psym judge re-judges a run's samples.jsonl)")
    units: dict[tuple[str, str, int], _Unit] = {}
    what = "samples file"
    for _, row, rec in iter_records(path, SampleRecord, what=what, schema="samples"):
        if rec.interview is None:
            continue
        key = (rec.task, rec.condition, rec.repeat)
        if key not in units:
            tag = {k: row[k] for k in _TAG if k in row}
            mode = rec.facets.get("administration", INTERVIEW)
            if mode == RETIRED_MIDPOINT:  # a run made before --impute: the same, imputed
                mode = INTERVIEW
            units[key] = _Unit(rec.task, rec.form, mode, rec.interview.impute, tag)
        prompt = Prompt(
            messages=tuple(rec.prompt.messages), options=(), text=rec.interview.question
        )
        units[key].rows.append((rec.item, prompt, rec.completion or "", rec.interview.statement))
    if not units:
        raise PsymError(
            f"{path}: no interviewed items (psym judge re-judges a run made with "
            "--condition interview)"
        )
    return list(units.values())


def _as_mode(u: _Unit, mode: str, session: Session) -> _Unit:
    """``u`` judged by the interview mode ``mode`` instead of its own: the administration
    facet and the condition names say so (``interview+persona=x`` -> ``MODE+persona=x``)."""
    modes = {n: e.mode for n, e in session.administrations().items()}
    adm = modes.get(mode)
    if not isinstance(adm, Interview):
        names = ", ".join(sorted(n for n, m in modes.items() if isinstance(m, Interview)))
        raise PsymError(
            f"psym judge --method {mode[:60]!r}: not an interview mode (interview modes: {names})"
        )
    old = u.mode
    tag = dict(u.tag)
    tag["facets"] = {**(tag.get("facets") or {}), "administration": mode}
    tag["conditions"] = [mode if c == old else c for c in tag.get("conditions") or []]
    if isinstance(tag.get("condition"), str):
        tag["condition"] = "+".join(mode if c == old else c for c in tag["condition"].split("+"))
    return replace(u, mode=mode, tag=tag)


def _judge_unit(
    u: _Unit,
    inst: Instrument,
    judge: Judge,
    writer: SampleWriter,
    session: Session,
    old: dict[str, Any],
) -> dict[str, Any]:
    """Rate one unit's answers, write its samples and return its task entry."""
    if u.form not in inst.forms:
        raise PsymError(f"task '{inst.id}' has no form '{u.form}' (the run's samples name it)")
    items = {it.id: it for it in inst.forms[u.form]}
    unknown = [i for i, *_ in u.rows if i not in items]
    if unknown:
        raise PsymError(
            f"task '{inst.id}' has no item(s) {', '.join(unknown)} (the run names them)"
        )
    asked = [Asked(_statement(items[i], said, inst), pr, text) for i, pr, text, said in u.rows]
    mode = session.administration(u.mode)
    if not isinstance(mode, Interview):
        raise PsymError(f"administration '{u.mode}' of the run's samples is not an interview")
    answers = rate_and_record(judge, inst, u.form, asked, u.tag, writer.write, mode, u.impute)
    return _entry(u, inst, answers, mode, session, old.get("norm_group"))


def _statement(item: Item, said: str | None, inst: Instrument) -> Item:
    """``item`` with the statement the run's judge saw where the instrument ships none (its
    texts came from --items); an error when the run did not keep it."""
    if item.text:
        return item
    if not said:
        raise PsymError(
            f"task '{inst.id}' ships no item texts and the run's samples do not keep item "
            f"{item.id}'s statement (runs made before psymetrics kept it cannot be re-judged)"
        )
    return replace(item, text=said)


def _entry(
    u: _Unit,
    inst: Instrument,
    answers: list[tuple[Item, Answer]],
    mode: Interview,
    session: Session,
    norm_group: str | None,
) -> dict[str, Any]:
    """The unit's task entry, scored and aggregated as ``psym eval`` does."""
    entry = cell_entry(session, mode, inst, u.form, answers, norm_group)
    entry["instrument"] = instrument_record(inst)
    entry["prompt_template"] = inst.prompt_template
    entry.update(
        condition=u.tag.get("condition"),
        facets=u.tag.get("facets", {}),
        repeat=u.tag.get("repeat"),
        seed=u.tag.get("seed"),
        form=u.form,
    )
    return entry


def _results(
    old: dict[str, Any],
    entries: dict[str, list[dict[str, Any]]],
    insts: dict[str, Instrument],
    judge: Judge,
    src: Path,
    units: list[_Unit],
) -> dict[str, Any]:
    """The earlier run's header with the new tasks, the new judge, the imputation used and
    where it came from."""
    tasks: dict[str, Any] = {}
    for task, got in entries.items():
        entry = {**got[0], "runs": [run_summary(e) for e in got]}
        add_run_indicators(entry, insts[task])
        tasks[task] = entry
    drop = ("tasks", "judge", "usage", "records", "impute")
    keep = {k: v for k, v in old.items() if k not in drop}
    imputes = {u.impute for u in units if u.impute}
    return {
        **keep,
        **({"impute": imputes.pop()} if imputes else {}),
        "cache": None,
        "tasks": tasks,
        "judge": judge.record(),
        "rejudged_from": {
            "run": str(src),
            "judge": old.get("judge"),
            "subject_requests": 0,
        },
    }
