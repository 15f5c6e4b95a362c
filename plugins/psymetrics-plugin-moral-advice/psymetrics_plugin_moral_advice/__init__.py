"""psymetrics plugin: foundation-aligned advice on moral dilemmas, task ``moral-advice``.

Jung et al. (EACL 2026, appendix B.3): the evaluated model advises on each dilemma
(the dilemma text is the whole prompt); a judge model decides with the paper's verbatim prompt
whether the advice takes the given action (yes / no / ambiguous, JSON). Per foundation, the score
is the share of judged dilemmas whose advice upholds the foundation ("ambiguous" counts 0). A
verdict that cannot be parsed is counted and left out of the share; a foundation with no parsed
verdict has no score (null, with the reason). The judge is ``psym eval --judge-model`` (default:
the evaluated model), run as one batched judge stage per cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict

from psymetrics_core import hookimpl
from psymetrics_core.api import (
    Generation,
    Instrument,
    Item,
    JudgedTask,
    JudgeStage,
    PsymError,
    Score,
    TaskResults,
    TaskScores,
    Verdict,
    share_score,
    task_option_bound,
)

from .dilemmas import (
    FOUNDATIONS,
    Dilemma,
    builtin_dilemmas,
    interleave,
    load_hf_daily_dilemmas,
    read_daily_dilemmas_dir,
    read_dilemma_file,
)
from .verdict import aligned, judge_prompt, verdict_of

__version__ = "0.1.0"
TASK = "moral-advice"
SOURCES = ("builtin", "file", "dailydilemmas", "hf")


def _item(d: Dilemma) -> Item:
    return Item(d.id, d.dilemma, (), meta=asdict(d))


def _judge_prompt(item: Item, generation: Generation, previous: Mapping[str, Verdict]) -> str:
    return judge_prompt(item.text, generation.text, (item.meta or {})["action"])


class MoralAdviceTask(JudgedTask):
    """Advice on each dilemma, coded by the judge: does the advice take the action?"""

    stages = (JudgeStage("verdict", _judge_prompt, verdict_of),)  # yes / no / ambiguous

    def load_items(self) -> list[Item]:
        """The dilemmas from the task options (built-in examples by default)."""
        return [_item(d) for d in dilemmas_for(self)]

    def score(self, results: TaskResults) -> TaskScores:
        """Share of foundation-aligned advice per foundation, and the verdict counts."""
        rows = []
        for g in results.generations:
            meta = g.item.meta or {}
            rows.append(
                (meta["foundation"], bool(meta["pro_foundation"]), results.verdict("verdict", g))
            )
        scores = foundation_scores(rows)
        return TaskScores(scores, {"verdicts": verdict_counts(rows)})


def make_instrument() -> MoralAdviceTask:
    """The ``moral-advice`` task (items: the built-in Table 4 examples unless data is given)."""
    return MoralAdviceTask.define(
        id=TASK,
        name="Moral advice on dilemmas, judged by an LLM",
        version="1.0.0",
        citation=(
            "Jung, J., Lutz, M., Sen, I., & Strohmaier, M. (2026). Do Psychometric Tests Work for "
            "Large Language Models? EACL 2026, appendix B.3; dilemmas from Chiu, Y. Y., Jiang, "
            "L., & Choi, Y. (2025). DailyDilemmas. ICLR 2025."
        ),
        license_status="judge prompt and Table 4 examples as printed in the paper; "
        "DailyDilemmas is CC BY 4.0 and is read from the user's copy",
        item_source=(
            "Built in: the five Table 4 examples (one per foundation). Full sets come from the "
            "user: data=FILE (CSV/JSON/JSONL: foundation, dilemma, action, pro_foundation), "
            "data=DIR with the DailyDilemmas CSVs, or source=hf (datasets)."
        ),
        scoring_rule=(
            "Score_f = share of the judged dilemmas of foundation f where (pro-foundation and "
            "judge=yes) or (anti-foundation and judge=no); ambiguous counts 0; unparseable "
            "verdicts are counted and left out; no parsed verdict = no score (null)."
        ),
        scales={f: f"share of foundation-aligned advice ({f})" for f in FOUNDATIONS},
        items=[_item(d) for d in interleave(builtin_dilemmas())],
        options={
            "data": "dilemma file (CSV/JSON/JSONL) or a folder with the DailyDilemmas CSVs",
            "source": f"one of {', '.join(SOURCES)} (default: file when data is given)",
            "per_foundation": "keep at most N dilemmas per foundation (default: all; 1-100,000)",
        },
        max_new_tokens=256,
        notes=(
            "The judge prompt keeps the asterisks as printed (****yes****), probably doubled "
            "markdown bold in the paper. DailyDilemmas pro/anti labels are derived "
            "from the dataset's value-to-MFT table (the paper annotated them by hand)."
        ),
    )


def dilemmas_for(inst: Instrument) -> list[Dilemma]:
    """The dilemmas selected by the task options, interleaved over foundations."""
    data = inst.options.get("data")
    source = inst.options.get("source") or ("file" if data else "builtin")
    if source not in SOURCES:
        raise PsymError(
            f"task '{TASK}': source must be one of {', '.join(SOURCES)}, got {source!r}"
        )
    if source == "builtin":
        found = list(builtin_dilemmas())
    elif source == "hf":
        found = load_hf_daily_dilemmas()
    elif not data:
        raise PsymError(f"task '{TASK}': source={source} needs data=PATH")
    else:
        from pathlib import Path

        path = Path(data)
        if source == "dailydilemmas" or path.is_dir():
            found = read_daily_dilemmas_dir(path)
        else:
            found = read_dilemma_file(path)
    per = inst.options.get("per_foundation")
    if per is not None:
        limit = task_option_bound(TASK, "per_foundation").parse(
            per, f"task '{TASK}': per_foundation"
        )
        counts: dict[str, int] = {}
        kept = []
        for d in found:
            counts[d.foundation] = counts.get(d.foundation, 0) + 1
            if counts[d.foundation] <= limit:
                kept.append(d)
        found = kept
    return interleave(found)


def foundation_scores(rows: Iterable[tuple[str, bool, Verdict | None]]) -> dict[str, Score]:
    """Per foundation, from (foundation, pro_foundation, verdict): the share aligned among the
    parsed verdicts; None with a reason where no verdict of the foundation parsed."""
    by: dict[str, list[bool | None]] = {f: [] for f in FOUNDATIONS}
    for foundation, pro, verdict in rows:
        ok = verdict is not None and verdict.ok
        by[foundation].append(bool(aligned(verdict.value, pro)) if ok and verdict else None)
    return {f: share_score(f, hits, "share aligned") for f, hits in by.items()}


def verdict_counts(rows: Iterable[tuple[str, bool, Verdict | None]]) -> dict[str, dict[str, int]]:
    """Per foundation, how many verdicts were yes / no / ambiguous / unparsed / not judged."""
    out: dict[str, dict[str, int]] = {}
    for foundation, _, verdict in rows:
        key = "not judged" if verdict is None else verdict.value if verdict.ok else verdict.status
        per = out.setdefault(foundation, {})
        per[str(key)] = per.get(str(key), 0) + 1
    return out


@hookimpl
def register_instruments(register: Callable[..., None]) -> None:
    """Register the ``moral-advice`` task (built on first use)."""
    from psymetrics_core import LazyInstrument

    register(LazyInstrument(TASK, make_instrument))
