"""Prompt builders of the probes: Han et al.'s (2025) five templates, verbatim, plus our order
test prompts. Each prompt is one user message with no system prompt (the paper reports none).

Placeholders are rendered as the reimplementation notes suggest: ``{inventory_name}`` the
instrument's name, ``{item_index}`` the 1-based published position (attention checks counted),
``{item}`` the item as administered (``item_form``), ``{item_with_mask}`` that text with the
first whole-word occurrence of the keyword replaced by ``[MASK]``, ``{dimensions}``
comma-separated labels in the instrument's scale order, ``{options}`` the option labels in
ascending value order (comma-separated, or numbered) and ``{target_score}`` the target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .inventory import Inventory, ProbeItem, shown_text
from .keywords import Keyword, mask_first
from .options import ProbeOptions
from .order_test import OrderedList, joined, permutations, positive_controls

__all__ = [
    "ProbePrompt",
    "template",
    "render",
    "format_options",
    "format_number",
    "build_prompts",
    "order_lists",
    "TARGET_CONDITIONS",
]

TARGET_CONDITIONS = ("min", "mid", "max")
TEMPLATE_FILES = {
    "verbatim": "verbatim.txt",
    "keyword": "keyword.txt",
    "item-dimension": "item_dimension.txt",
    "option-score": "option_score.txt",
    "target-score": "target_score.txt",
    "order": "order.txt",
}


@dataclass(frozen=True)
class ProbePrompt:
    """One probe prompt.

    ``mode`` is ``generate`` (a completion is parsed) or ``loglik`` (the log-likelihood of
    ``continuation`` after the message is scored). ``unit`` names what the bootstrap resamples
    (an item id; a sequence name for the order test); ``condition`` distinguishes prompts of
    one unit (``cued``/``control``, ``min``/``mid``/``max``, ``canonical``/``perm-K``).
    """

    task: str
    probe: str
    unit: str
    condition: str
    text: str
    mode: str = "generate"
    max_new_tokens: int = 16
    continuation: str | None = None
    gold: Any = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        """A stable name of this prompt within a run: task/probe/unit/condition."""
        return f"{self.task}/{self.probe}/{self.unit}/{self.condition}"


@cache
def template(probe: str) -> str:
    """The template text of ``probe`` (shipped in ``templates/``)."""
    from importlib import resources

    ref = resources.files(__package__).joinpath("templates", TEMPLATE_FILES[probe])
    return ref.read_text(encoding="utf-8").rstrip("\n")


def render(probe: str, **values: str) -> str:
    """``probe``'s template with ``{name}`` placeholders replaced (no other braces touched)."""
    text = template(probe)
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def format_number(x: float) -> str:
    """3.0 -> "3", 2.5 -> "2.5"."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def format_options(item: ProbeItem, fmt: str) -> str:
    """``{options}``: labels in ascending raw value order, comma-separated or numbered."""
    labels = [o.label for o in item.options]
    if fmt == "numbered":
        return ", ".join(f"{i}. {lab}" for i, lab in enumerate(labels, start=1))
    return ", ".join(labels)


def _eligible(inv: Inventory, opts: ProbeOptions) -> list[ProbeItem]:
    return list(inv.items) if opts.include_unscored else inv.scored


def _verbatim(inv: Inventory, opts: ProbeOptions) -> list[ProbePrompt]:
    names = [("cued", inv.name)]
    if opts.verbatim_control == "name":
        names.append(("control", opts.control_name))
    return [
        ProbePrompt(
            inv.task,
            "verbatim",
            it.id,
            cond,
            render("verbatim", inventory_name=name, item_index=str(it.index)),
            max_new_tokens=opts.max_new_tokens("verbatim"),
            gold=it.shown,
            meta={"inventory_name": name},
        )
        for it in _eligible(inv, opts)
        for cond, name in names
    ]


def _keyword(
    inv: Inventory, opts: ProbeOptions, keywords: Mapping[str, Keyword]
) -> list[ProbePrompt]:
    """Keyword prompts. Items whose masked text equals another item's (BFI "Is [MASK]" for "Is
    talkative", "Is reserved", "Is inventive") cannot all be answered right by any model; each
    prompt carries its masked text so the summary can report that ceiling."""
    out = []
    for it in _eligible(inv, opts):
        masked = mask_first(it.stored, keywords[it.id].keyword)
        if masked is None:  # checked when the keywords were loaded
            raise ValueError(f"keyword of item {it.id} not in its text")
        text, gold = masked
        shown = shown_text(inv.task, text, opts.item_form)
        # the keyword as written in the shown text (a stem may lower-case the first word)
        at = shown.index("[MASK]")
        as_shown = it.shown[at : at + len(gold)]
        gold = as_shown if as_shown.casefold() == gold.casefold() else gold
        out.append(
            ProbePrompt(
                inv.task,
                "keyword",
                it.id,
                "",
                render("keyword", item_with_mask=shown),
                max_new_tokens=opts.max_new_tokens("keyword"),
                gold=gold,
                meta={"keyword_source": keywords[it.id].source, "masked": shown},
            )
        )
    return out


def _item_dimension(inv: Inventory, opts: ProbeOptions) -> list[ProbePrompt]:
    dims = ", ".join(inv.dimensions)
    return [
        ProbePrompt(
            inv.task,
            "item-dimension",
            it.id,
            "",
            render("item-dimension", inventory_name=inv.name, dimensions=dims, item=it.shown),
            max_new_tokens=opts.max_new_tokens("item-dimension"),
            gold=it.dimension,
        )
        for it in inv.scored
    ]


def _option_score(inv: Inventory, opts: ProbeOptions) -> list[ProbePrompt]:
    return [
        ProbePrompt(
            inv.task,
            "option-score",
            it.id,
            "",
            render(
                "option-score",
                item=it.shown,
                dimension=str(it.dimension),
                options=format_options(it, opts.options_format),
            ),
            max_new_tokens=opts.max_new_tokens("option-score"),
            gold=it.gold_scores(),
        )
        for it in inv.scored
    ]


def _target_score(inv: Inventory, opts: ProbeOptions) -> list[ProbePrompt]:
    out = []
    for it in inv.scored:
        for cond in TARGET_CONDITIONS:
            t = it.target(cond, opts.target_mid_rule)
            out.append(
                ProbePrompt(
                    inv.task,
                    "target-score",
                    it.id,
                    cond,
                    render(
                        "target-score",
                        item=it.shown,
                        dimension=str(it.dimension),
                        target_score=format_number(t),
                        options=format_options(it, opts.options_format),
                    ),
                    max_new_tokens=opts.max_new_tokens("target-score"),
                    gold=t,
                )
            )
    return out


def order_lists(inv: Inventory, opts: ProbeOptions) -> list[OrderedList]:
    """The inventory's item list (stored texts, published order) and the positive controls."""
    items = tuple(it.stored for it in _eligible(inv, opts))
    own = OrderedList(inv.task, render("order", inventory_name=inv.name), items)
    return [own, *positive_controls()]


def _order(inv: Inventory, opts: ProbeOptions, n_perm: int) -> list[ProbePrompt]:
    out = []
    for seq in order_lists(inv, opts):
        orders = [("canonical", tuple(range(len(seq.items))))]
        orders += [
            (f"perm-{k}", p)
            for k, p in enumerate(permutations(len(seq.items), n_perm, opts.seed), start=1)
        ]
        for cond, order in orders:
            out.append(
                ProbePrompt(
                    inv.task,
                    "order",
                    seq.name,
                    cond,
                    seq.context,
                    mode="loglik",
                    continuation=joined([seq.items[i] for i in order]),
                    gold=list(order),
                    meta={"control": seq.control},
                )
            )
    return out


def build_prompts(
    inv: Inventory,
    probes: Sequence[str],
    opts: ProbeOptions,
    keywords: Mapping[str, Keyword] | None = None,
    n_permutations: int = 50,
) -> list[ProbePrompt]:
    """Every prompt of ``probes`` for ``inv``, probe by probe, items in published order."""
    out: list[ProbePrompt] = []
    for probe in probes:
        if probe == "verbatim":
            out += _verbatim(inv, opts)
        elif probe == "keyword":
            if keywords is None:
                raise ValueError("the keyword probe needs keywords")
            out += _keyword(inv, opts, keywords)
        elif probe == "item-dimension":
            out += _item_dimension(inv, opts) if len(inv.dimensions) > 1 else []
        elif probe == "option-score":
            out += _option_score(inv, opts)
        elif probe == "target-score":
            out += _target_score(inv, opts)
        elif probe == "order":
            out += _order(inv, opts, n_permutations)
    return out
