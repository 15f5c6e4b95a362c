"""Per-probe metrics with bootstrap intervals, baselines and counts, and the contamination index.

Contamination index (ours; Han et al. report the five metrics separately). Each probe run gives a
component in [0, 1] that is 0 at the no-knowledge baseline and 1 at perfect recall:

- verbatim: (AED_control - AED) / AED_control, the share of edit distance removed by naming the
  real inventory (both AEDs after removing the inventory name each prompt gave from its own
  answer, so echoing a longer made-up name does not count as recall; without a control prompt:
  1 - AED);
- keyword: the success rate (normalised match by default) on the items whose masked prompt is
  unique (items whose masked prompt equals another item's cannot all be answered right);
- item-dimension: (F1 - F1_chance) / (1 - F1_chance), chance = uniform random dimension;
- option-score and target-score: 1 - MAE / MAE_random, random = uniform random answers;
- order: 2 * (percentile - 0.5), the share of permutations the published order beats, rescaled
  so that beating only the median permutation is 0 (its expectation under no contamination is
  0.25, as the clipped value of a uniform percentile).

Every component is clipped to [0, 1]; the index is their unweighted mean. Its 95% interval
resamples items jointly across probes (the order component is held fixed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bootstrap import percentile_interval, quantile, resamples
from .inventory import Inventory
from .metrics import (
    chance_macro_f1,
    macro_f1,
    no_reverse_option_mae,
    random_option_mae,
    random_target_mae,
    ratio,
)
from .options import ProbeOptions
from .order_test import order_stats
from .parsing import INVALID, normalize_keyword
from .scoring import Record, records_by_unit

__all__ = ["ProbeResult", "summarise", "contamination_index", "INDEX_DOC"]

INDEX_DOC = __doc__.split("Contamination index (ours;", 1)[1].split("\n\n", 1)[1].strip()

Units = list[list[Record]]
Stat = Callable[[Units], float | None]

METRIC = {
    "verbatim": ("AED", "lower = more contaminated"),
    "keyword": ("success_rate", "higher = more contaminated"),
    "item-dimension": ("macro_f1", "higher = more contaminated"),
    "option-score": ("MAE", "lower = more contaminated"),
    "target-score": ("MAE", "lower = more contaminated"),
    "order": ("p", "lower = more contaminated"),
}


@dataclass
class ProbeResult:
    """One probe on one instrument."""

    probe: str
    metric: str
    direction: str
    value: float | None
    reason: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_reason: str | None = None
    n_prompts: int = 0
    n_parsed: int = 0
    n_refused: int = 0
    n_invalid: int = 0
    n_empty: int = 0
    n_dropped: int = 0
    n_truncated: int = 0  # answers that hit max_new_tokens (cut off: scored as they are)
    n_truncation_unknown: int = 0  # answers from a backend that does not say
    baseline: dict[str, float | None] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    component: float | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for ``contamination.json``."""
        return dict(self.__dict__)


def _flat(units: Units, condition: str | None = None) -> list[Record]:
    return [r for u in units for r in u if condition is None or r.condition == condition]


def _ratio_stat(
    condition: str | None = None, key: str | None = None, num_key: str | None = None
) -> Stat:
    """Σ num / Σ den over ``condition``'s records; ``key``: the share of records whose flag
    ``key`` is true; ``num_key``: the numerator from ``extra[num_key]`` instead of ``num``."""

    def stat(units: Units) -> float | None:
        recs = _flat(units, condition)
        if num_key is not None:
            pairs = [(float((r.extra or {})[num_key]), r.den) for r in recs if r.den is not None]
        elif key is not None:
            pairs = [(float(bool((r.extra or {})[key])), 1.0) for r in recs if r.den is not None]
        else:
            pairs = [(r.num, r.den) for r in recs if r.num is not None and r.den is not None]
        return ratio(pairs)  # type: ignore[arg-type]

    return stat


def _f1_stat(labels: Sequence[str]) -> Stat:
    """Macro-F1 over the dimensions that occur among the gold or predicted labels (all of them
    on a whole instrument; a bootstrap sample or --limit may miss some, which then neither
    count as 0 nor as 1 - scikit-learn's default label set, without INVALID)."""

    def stat(units: Units) -> float | None:
        recs = _flat(units)
        if not recs:
            return None
        gold, pred = [r.gold for r in recs], [r.pred for r in recs]
        present = [lab for lab in labels if lab in gold or lab in pred]
        return macro_f1(gold, pred, present)

    return stat


# The control comparison removes the inventory name each prompt gave from its own answer first:
# models often echo the name, and a longer made-up name would otherwise look like worse recall.
_CUED = _ratio_stat("cued", num_key="ed_name_removed")
_CONTROL = _ratio_stat("control", num_key="ed_name_removed")


def _delta_stat(units: Units) -> float | None:
    cued, control = _CUED(units), _CONTROL(units)
    return None if cued is None or control is None else control - cued


def _counts(res: ProbeResult, recs: Sequence[Record]) -> None:
    res.n_prompts = len(recs)
    res.n_parsed = sum(r.status == "ok" for r in recs)
    res.n_refused = sum(r.status == "refused" for r in recs)
    res.n_invalid = sum(r.status == "invalid" for r in recs)
    res.n_empty = sum(r.status == "empty" for r in recs)
    res.n_dropped = sum(r.num is None for r in recs) if res.probe != "order" else 0
    res.n_truncated = sum(r.truncated is True for r in recs)
    res.n_truncation_unknown = sum(r.truncated is None for r in recs) if res.probe != "order" else 0
    parsed = [repr(r.parsed) for r in recs if r.status == "ok"]
    if len(parsed) >= 3 and len(set(parsed)) == 1:
        res.flags.append(f"degenerate: every parsed answer is {parsed[0]}")
    if recs and res.n_parsed == 0:
        res.flags.append("no answer could be parsed")


def _with_interval(res: ProbeResult, units: Units, stat: Stat, draws: list[list[int]]) -> None:
    res.value = stat(units)
    if res.value is None:
        res.reason = res.reason or "no scorable answers"
        res.ci_reason = "metric undefined"
        return
    res.ci_low, res.ci_high, res.ci_reason = percentile_interval(units, stat, draws)


def _interval_json(units: Units, stat: Stat, draws: list[list[int]]) -> dict[str, Any]:
    value = stat(units)
    low, high, why = (
        percentile_interval(units, stat, draws)
        if value is not None
        else (None, None, "metric undefined")
    )
    return {"value": value, "ci_low": low, "ci_high": high, "ci_reason": why}


def _clip(x: float | None) -> float | None:
    return None if x is None else min(1.0, max(0.0, x))


def component(
    probe: str,
    units: Units,
    base: dict[str, float | None],
    opts: ProbeOptions,
    ambiguous: frozenset[str] = frozenset(),
) -> float | None:
    """The probe's index component (see the module docstring) on ``units``; ``ambiguous``
    names the keyword items left out of the keyword component."""
    if probe == "verbatim":
        control = _CONTROL(units)
        if control:  # name-removed AEDs (a fallback without control uses the raw cued AED)
            cued = _CUED(units)
            return None if cued is None else _clip((control - cued) / control)
        plain = _ratio_stat("cued")(units)
        return None if plain is None else _clip(1 - plain)
    if probe == "keyword":
        clear = [u for u in units if u and u[0].unit not in ambiguous]
        return _clip(_ratio_stat()(clear or units))
    if probe == "item-dimension":
        f1, chance = base.get("_f1"), base.get("chance_uniform")
        if f1 is None or chance is None or chance >= 1:
            return None
        return _clip((f1 - chance) / (1 - chance))
    if probe in ("option-score", "target-score"):
        mae, rnd = _ratio_stat()(units), base.get("random_uniform")
        return None if mae is None or not rnd else _clip(1 - mae / rnd)
    return None


def summarise(
    inv: Inventory, probe: str, records: Sequence[Record], opts: ProbeOptions
) -> ProbeResult:
    """The metric, interval, counts, baselines and flags of ``probe`` from its records."""
    metric, direction = METRIC[probe]
    res = ProbeResult(probe, metric, direction, None)
    _counts(res, records)
    if res.n_truncated:
        budget = opts.max_new_tokens(probe)
        res.flags.append(
            f"{res.n_truncated} of {res.n_prompts} answers hit the budget of {budget} tokens "
            f"and are cut off (marked truncated in samples.jsonl; raise --option "
            f"max_new_tokens_{probe.replace('-', '_')})"
        )
    units: Units = list(records_by_unit(records).values())
    draws = resamples(len(units), opts.bootstrap, opts.seed)
    if probe == "order":
        return _summarise_order(res, units)
    if not records:
        res.reason = (
            "one dimension only: item-dimension mapping is uninformative"
            if probe == "item-dimension" and len(inv.dimensions) < 2
            else "no prompts (no eligible items)"
        )
        return res
    if probe == "verbatim":
        _with_interval(res, units, _ratio_stat("cued"), draws)
        cued = [r for u in units for r in u if r.condition == "cued"]
        res.n_prompts = len(records)
        res.detail["exact_match_rate"] = sum(
            bool((r.extra or {}).get("exact")) for r in cued
        ) / len(cued)
        if any(r.condition == "control" for r in records):
            res.detail["control_AED"] = _interval_json(units, _ratio_stat("control"), draws)
            res.detail["name_removed"] = {
                "cued_AED": _interval_json(units, _CUED, draws),
                "control_AED": _interval_json(units, _CONTROL, draws),
            }
            res.detail["control_minus_cued"] = _interval_json(units, _delta_stat, draws)
            res.baseline["control_AED"] = res.detail["control_AED"]["value"]
            res.detail["control_name"] = opts.control_name
    elif probe == "keyword":
        _with_interval(res, units, _ratio_stat(), draws)
        res.detail["headline"] = opts.keyword_headline
        res.detail["strict"] = _interval_json(units, _ratio_stat(key="strict"), draws)
        res.detail["normalized"] = _interval_json(units, _ratio_stat(key="normalized"), draws)
        ambiguous = _ambiguous(records)
        res.detail["n_ambiguous"] = len(ambiguous)
        res.detail["ambiguous_items"] = sorted(ambiguous, key=_item_order)
        res.baseline["ceiling"] = _keyword_ceiling(records)
        clear = [u for u in units if u[0].unit not in ambiguous]
        res.detail["unambiguous"] = _interval_json(
            clear, _ratio_stat(), resamples(len(clear), opts.bootstrap, opts.seed)
        )
        if ambiguous:
            res.flags.append(
                f"{len(ambiguous)} masked prompts are identical to another item's: "
                f"no model can exceed {res.baseline['ceiling']:.3f}"
            )
    elif probe == "item-dimension":
        _with_interval(res, units, _f1_stat(inv.dimensions), draws)
        res.baseline["chance_uniform"] = chance_macro_f1(inv)
        res.detail["accuracy"] = _ratio_stat()(units)
        res.detail["n_INVALID"] = sum(r.pred == INVALID for r in records)
        res.detail["confusion"] = _confusion(records)
    elif probe == "option-score":
        _with_interval(res, units, _ratio_stat(), draws)
        res.baseline["ignore_reverse_keying"] = no_reverse_option_mae(inv.scored)
        res.baseline["random_uniform"] = random_option_mae(inv.scored)
    elif probe == "target-score":
        _with_interval(res, units, _ratio_stat(), draws)
        res.baseline["random_uniform"] = random_target_mae(inv.scored, opts.target_mid_rule)
        res.detail["by_condition"] = {c: _ratio_stat(c)(units) for c in ("min", "mid", "max")}
        res.detail["mid_rule"] = opts.target_mid_rule
    base = {**res.baseline, "_f1": res.value}
    unclear = frozenset(res.detail.get("ambiguous_items", ()))
    res.component = component(probe, units, base, opts, unclear)
    if res.n_parsed == 0 and probe in _UNPARSED_POLICY:
        _undefined_without_answers(res, _UNPARSED_POLICY[probe](opts))
    return res


# the recorded policy that scores an answer that could not be parsed, by probe
_UNPARSED_POLICY = {
    "keyword": lambda o: f"keyword_unparsed={o.keyword_unparsed}",
    "item-dimension": lambda o: "INVALID counts as a wrong prediction",
    "option-score": lambda o: f"option_score_unparsed={o.option_score_unparsed}",
    "target-score": lambda o: f"target_unparsed={o.target_unparsed}",
}


def _undefined_without_answers(res: ProbeResult, policy: str) -> None:
    """No answer parsed: the metric would be the unparsed-answer policy's value alone, which
    says nothing about the model's knowledge - null with the reason (the policy's value and its
    index component are kept in ``detail``), and the probe leaves the index."""
    res.detail["policy_value"] = res.value
    res.detail["policy_component"] = res.component
    shown = "null" if res.value is None else f"{res.value:.3f}"
    res.reason = (
        f"0 of {res.n_prompts} answers parsed (scoring them by the policy {policy} "
        f"would give {shown})"
    )
    res.value = res.ci_low = res.ci_high = res.component = None
    res.ci_reason = "metric undefined"


def _item_order(item: str) -> tuple[int, str]:
    return (int(item), "") if item.isdigit() else (10**9, item)


def _groups(records: Sequence[Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for r in records:
        out.setdefault(str((r.extra or {}).get("masked")), []).append(r)
    return out


def _ambiguous(records: Sequence[Record]) -> set[str]:
    """Items whose masked prompt is shared with an item that has another keyword."""
    out: set[str] = set()
    for group in _groups(records).values():
        if len({normalize_keyword(str(r.gold)) for r in group}) > 1:
            out |= {r.unit for r in group}
    return out


def _keyword_ceiling(records: Sequence[Record]) -> float | None:
    """The best success rate any model can reach: one answer per distinct masked prompt, right
    for the most common keyword among the items sharing it."""
    scored = [r for r in records if r.den is not None]
    if not scored:
        return None
    best = 0
    for group in _groups(scored).values():
        counts: dict[str, int] = {}
        for r in group:
            k = normalize_keyword(str(r.gold))
            counts[k] = counts.get(k, 0) + 1
        best += max(counts.values())
    return best / len(scored)


def _confusion(records: Sequence[Record]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in records:
        row = out.setdefault(str(r.gold), {})
        row[str(r.pred)] = row.get(str(r.pred), 0) + 1
    return out


def _order_json(units: list[Record]) -> dict[str, Any]:
    canon = [r for r in units if r.condition == "canonical" and r.status == "ok"]
    perms = [r.parsed for r in units if r.condition != "canonical" and r.status == "ok"]
    if not canon or not perms:
        return {"p": None, "reason": "no log-likelihoods (canonical or permutations missing)"}
    return order_stats(float(canon[0].parsed), perms).to_json()


def _summarise_order(res: ProbeResult, units: Units) -> ProbeResult:
    res.ci_reason = "a permutation test: p is exact up to Monte Carlo error, no bootstrap"
    own = [u for u in units if u and not (u[0].extra or {}).get("control")]
    controls = [u for u in units if u and (u[0].extra or {}).get("control")]
    if own:
        stats = _order_json(own[0])
        res.value = stats.get("p")
        res.reason = stats.get("reason")
        res.detail.update(stats)
        if res.value is not None:
            res.component = _clip(2 * (float(stats["percentile"]) - 0.5))
    res.detail["positive_controls"] = {u[0].unit: _order_json(u) for u in controls}
    res.baseline["null_p_expectation"] = 0.5
    weak = [n for n, s in res.detail["positive_controls"].items() if (s.get("p") or 1) >= 0.05]
    if weak:
        res.flags.append(
            "positive control(s) not significant (p >= 0.05): "
            + ", ".join(weak)
            + "; the order test may lack power on this model"
        )
    return res


def contamination_index(
    inv: Inventory,
    results: Sequence[ProbeResult],
    records: Mapping[str, Sequence[Record]],
    opts: ProbeOptions,
) -> dict[str, Any]:
    """The index (mean of the probes' components) with a joint item bootstrap interval."""
    comps = {r.probe: r.component for r in results if r.component is not None}
    if not comps:
        return {"value": None, "reason": "no probe gave a component", "components": {}}
    value = sum(comps.values()) / len(comps)
    item_ids = [it.id for it in inv.items]
    by_probe = {
        p: records_by_unit(recs) for p, recs in records.items() if p in comps and p != "order"
    }
    base = {r.probe: {**r.baseline, "_f1": None} for r in results}
    ambiguous = {r.probe: frozenset(r.detail.get("ambiguous_items", ())) for r in results}
    labels = inv.dimensions
    reps = []
    for draw in resamples(len(item_ids), opts.bootstrap, opts.seed + 1):
        vals = []
        for probe, c in comps.items():
            if probe == "order":
                vals.append(c)
                continue
            units = [by_probe[probe][item_ids[i]] for i in draw if item_ids[i] in by_probe[probe]]
            b = dict(base[probe])
            if probe == "item-dimension":
                b["_f1"] = _f1_stat(labels)(units)
            v = component(probe, units, b, opts, ambiguous[probe])
            if v is not None:
                vals.append(v)
        if vals:
            reps.append(sum(vals) / len(vals))
    reps.sort()
    low = high = None
    if len(item_ids) >= 2 and reps:
        low, high = quantile(reps, 0.025), quantile(reps, 0.975)
    return {
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "components": comps,
        "definition": INDEX_DOC,
    }
