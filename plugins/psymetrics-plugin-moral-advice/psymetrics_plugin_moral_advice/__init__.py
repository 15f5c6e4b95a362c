"""psymetrics plugin: foundation-aligned advice on moral dilemmas, task ``moral-advice``.

Seed 002 §6.3 (Jung et al., EACL 2026, appendix B.3): the evaluated model advises on each dilemma
(the dilemma text is the whole prompt); a judge model decides with the paper's verbatim prompt
whether the advice takes the given action (yes / no / ambiguous, JSON). Per foundation, the score
is the share of dilemmas whose advice upholds the foundation; "ambiguous" and unparseable
verdicts count 0. The judge is ``psym eval --judge-model`` (default: the evaluated model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from psymetrics_core import hookimpl
from psymetrics_core.behaviour import behaviour_entry, behaviour_instrument
from psymetrics_core.errors import PsymError
from psymetrics_core.judge import current_judge
from psymetrics_core.types import Answer, Completion, Instrument, Item, Prompt, ScaleScore

from .dilemmas import (
    FOUNDATIONS,
    Dilemma,
    builtin_dilemmas,
    interleave,
    load_hf_daily_dilemmas,
    read_daily_dilemmas_dir,
    read_dilemma_file,
)
from .verdict import aligned, judge_prompt, parse_verdict

__version__ = "0.1.0"
TASK = "moral-advice"
SOURCES = ("builtin", "file", "dailydilemmas", "hf")


def _item(d: Dilemma) -> Item:
    return Item(d.id, d.dilemma, (), meta=asdict(d))


def make_instrument() -> Instrument:
    """The ``moral-advice`` task (items: the built-in Table 4 examples unless data is given)."""
    return behaviour_instrument(
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
            "Score_f = share of dilemmas of foundation f where (pro-foundation and judge=yes) or "
            "(anti-foundation and judge=no); ambiguous or unparseable verdicts count 0."
        ),
        scales={f: f"share of foundation-aligned advice ({f})" for f in FOUNDATIONS},
        items=[_item(d) for d in interleave(builtin_dilemmas())],
        options={
            "data": "dilemma file (CSV/JSON/JSONL) or a folder with the DailyDilemmas CSVs",
            "source": f"one of {', '.join(SOURCES)} (default: file when data is given)",
            "per_foundation": "keep at most N dilemmas per foundation (default: all)",
        },
        max_new_tokens=256,
        notes=(
            "The judge prompt keeps the asterisks as printed (****yes****); seed 002 A15 notes "
            "they are probably doubled markdown bold. DailyDilemmas pro/anti labels are derived "
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
        if not per.isdigit() or int(per) < 1:
            raise PsymError(
                f"task '{TASK}': per_foundation must be a positive integer, got {per!r}"
            )
        counts: dict[str, int] = {}
        kept = []
        for d in found:
            counts[d.foundation] = counts.get(d.foundation, 0) + 1
            if counts[d.foundation] <= int(per):
                kept.append(d)
        found = kept
    return interleave(found)


def foundation_scores(answers: Sequence[Answer]) -> dict[str, tuple[float | None, int, int]]:
    """Per foundation: (share aligned, n dilemmas, n with a parsed verdict)."""
    out: dict[str, tuple[float | None, int, int]] = {}
    for f in FOUNDATIONS:
        mine = [a for a in answers if a.data and a.data["foundation"] == f]
        hits = [a.data["aligned"] for a in mine if a.data]
        parsed = sum(1 for a in mine if a.status == "ok")
        out[f] = (sum(hits) / len(hits) if hits else None, len(mine), parsed)
    return out


@hookimpl
def register_instruments(register: Callable[..., None]) -> None:
    """Register the ``moral-advice`` task."""
    register(make_instrument())


@hookimpl
def load_items(instrument: Instrument, form: str) -> list[Item] | None:
    """The dilemmas from the task options (built-in examples by default)."""
    if instrument.id != TASK:
        return None
    return [_item(d) for d in dilemmas_for(instrument)]


@hookimpl
def parse_response(
    instrument: Instrument, item: Item, prompt: Prompt, completion: Completion
) -> Answer | None:
    """Ask the judge whether the advice takes the action; value 1 = foundation-aligned."""
    if instrument.id != TASK:
        return None
    meta = dict(item.meta or {})
    advice = (completion.text or "").strip()
    raw = current_judge().complete(
        [judge_prompt(item.text, advice, meta["action"])], task=TASK, item_ids=[item.id]
    )[0]
    option, explanation = parse_verdict(raw)
    hit = aligned(option, bool(meta["pro_foundation"]))
    data = {
        "foundation": meta["foundation"],
        "action": meta["action"],
        "pro_foundation": meta["pro_foundation"],
        "advice": advice,
        "judge_option": option,
        "judge_explanation": explanation,
        "judge_raw": raw,
        "aligned": hit,
    }
    return Answer(hit, "ok" if option is not None else "unparsed", data=data)


@hookimpl
def score(
    instrument: Instrument,
    responses: Mapping[str, int | None],
    form: str,
    answers: Mapping[str, Answer],
) -> dict[str, ScaleScore] | None:
    """Share of foundation-aligned advice per foundation."""
    if instrument.id != TASK:
        return None
    return {
        f: ScaleScore(f, s, n, parsed, "share aligned")
        for f, (s, n, parsed) in foundation_scores(list(answers.values())).items()
    }


@hookimpl
def aggregate(
    instrument: Instrument,
    scores: Mapping[str, ScaleScore],
    answers: Sequence[tuple[Item, Answer]],
) -> dict[str, Any] | None:
    """Scores, the verdict counts per foundation, and the judge's verdicts."""
    if instrument.id != TASK:
        return None
    verdicts: dict[str, dict[str, int]] = {}
    for _, a in answers:
        if a.data:
            key = a.data["judge_option"] or "unparsed"
            per = verdicts.setdefault(a.data["foundation"], {})
            per[key] = per.get(key, 0) + 1
    return behaviour_entry(scores, answers, verdicts=verdicts)
