"""What the probes need to know about an instrument, read from its spec (never hard-coded).

Dimensions are the instrument's item-level scales (not totals, unions or centred variants);
options, reverse keying and rescaling come from its response scales and item key, keyed exactly
as the instrument's own scoring does (``psymetrics_core.pluginsys.defaults.score``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from psymetrics_core.api import Instrument, Item, scale_value

from .options import ProbeOptions

__all__ = [
    "ProbeOption",
    "ProbeItem",
    "Inventory",
    "build_inventory",
    "shown_text",
    "STEMS",
    "PAPER_DIMENSIONS",
]

# Instruments whose stored items are fragments completed by a printed stem (Han et al. show
# BFI items as full sentences: "I see myself as someone who is reserved").
STEMS: dict[str, str] = {
    "bfi": "I see myself as someone who {fragment}.",
    "pb-bfi": "I see myself as someone who {fragment}.",
}


# Han et al.'s dimension names (their Appendix A.1), in their order, by the scale ids of the
# four inventories they probed (option dimension_labels=paper; the notes' §2.0 and §3.6).
PAPER_DIMENSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "bfi": (
        ("openness", "Openness"),
        ("conscientiousness", "Conscientiousness"),
        ("extraversion", "Extraversion"),
        ("agreeableness", "Agreeableness"),
        ("neuroticism", "Neuroticism"),
    ),
    "mfq": (
        ("care", "Harm/Care"),
        ("fairness", "Fairness/Reciprocity"),
        ("loyalty", "In-group/Loyalty"),
        ("authority", "Authority/Respect"),
        ("purity", "Purity/Sanctity"),
    ),
    "pvq40": (
        ("achievement", "Achievement"),
        ("benevolence", "Benevolence"),
        ("conformity", "Conformity"),
        ("security", "Security"),
        ("stimulation", "Stimulation"),
        ("self_direction", "Self-Direction"),
        ("tradition", "Tradition"),
        ("hedonism", "Hedonism"),
        ("universalism", "Universalism"),
        ("power", "Power"),
    ),
    "sd3": (
        ("machiavellianism", "Machiavellianism"),
        ("narcissism", "Narcissism"),
        ("psychopathy", "Psychopathy"),
    ),
}


@dataclass(frozen=True)
class ProbeOption:
    """One response option: its label, raw value and keyed value for the item's dimension."""

    label: str
    raw: int
    keyed: float


@dataclass(frozen=True)
class ProbeItem:
    """An item as the probes see it.

    ``index`` is the 1-based position in the published order (attention checks counted);
    ``stored`` the text as the instrument stores it, ``shown`` as it is put in prompts (and
    the verbatim reference); ``scale``/``dimension`` are None for unscored items.
    """

    id: str
    index: int
    stored: str
    shown: str
    scale: str | None
    dimension: str | None
    reverse: bool
    options: tuple[ProbeOption, ...]

    @property
    def keyed_range(self) -> tuple[float, float]:
        """Lowest and highest keyed value of the item's options."""
        vals = [o.keyed for o in self.options]
        return min(vals), max(vals)

    def gold_scores(self) -> list[float]:
        """Keyed value of each option in the rendered (ascending raw value) order."""
        return [o.keyed for o in self.options]

    def target(self, condition: str, rule: str) -> float:
        """The target score of condition ``min``, ``mid`` or ``max`` (``rule`` for ``mid``)."""
        lo, hi = self.keyed_range
        if condition == "min":
            return lo
        if condition == "max":
            return hi
        centre = (lo + hi) / 2
        if rule == "exact":
            return centre
        if rule == "floor":
            return float(math.floor(centre))
        if rule == "ceil":
            return float(math.ceil(centre))
        values = sorted({o.keyed for o in self.options})
        return min(values, key=lambda v: (abs(v - centre), v))


@dataclass(frozen=True)
class Inventory:
    """An instrument prepared for probing: name, dimension labels and probe items."""

    task: str
    name: str
    dimensions: tuple[str, ...]  # labels, in the order shown to the model
    scale_of_label: dict[str, str]
    items: tuple[ProbeItem, ...]
    labels_source: str = "instrument"  # "paper" (Han et al. A.1) or "instrument" (its spec)

    @property
    def scored(self) -> list[ProbeItem]:
        """Items with a dimension (attention checks and fillers excluded)."""
        return [it for it in self.items if it.dimension is not None]


def dimension_label(inst: Instrument, scale: str) -> str:
    """The label shown for ``scale``: its short description without a parenthesis, else the id
    title-cased (``self_direction`` -> ``Self Direction``)."""
    desc = re.sub(r"\s*\(.*?\)\s*", " ", inst.scales[scale].description or "").strip()
    if desc and len(desc) <= 40 and "," not in desc:
        return desc
    return scale.replace("_", " ").title()


def item_dimensions(inst: Instrument, form: str = "original") -> list[str]:
    """The item-level scales in spec order: scales named directly by some scored item."""
    named = {s for it in inst.forms[form] if it.scored for s in it.scales}
    return [
        name
        for name, sdef in inst.scales.items()
        if name in named and not sdef.include_all and not sdef.of_scales and not sdef.centre
    ]


def dimension_labels(
    inst: Instrument, dims: list[str], source: str
) -> tuple[list[str], dict[str, str], str]:
    """The dimensions in the order shown, each scale's label, and where the labels come from:
    Han et al.'s names and order (``source`` paper, for the four inventories they probed, when
    the instrument has exactly their scales), else the instrument spec's (``dimension_label``)."""
    paper = dict(PAPER_DIMENSIONS.get(inst.id, ()))
    if source == "paper" and paper and set(paper) == set(dims):
        return list(paper), paper, "paper"
    return dims, {s: dimension_label(inst, s) for s in dims}, "instrument"


def _keyed(inst: Instrument, item: Item, scale: str | None, raw: int, base_shift: float) -> float:
    """The keyed score of ``raw`` (the default scorer's ``scale_value``), shifted to the base."""
    if scale is None:
        return float(raw) + base_shift
    return scale_value(inst, item, scale, raw) + base_shift


def shown_text(task: str, text: str, form: str) -> str:
    """``text`` as put in prompts: completed by the instrument's stem when ``form`` is full."""
    stem = STEMS.get(task)
    if form != "full" or stem is None:
        return text
    fragment = text[:1].lower() + text[1:] if text[:2] != "I " else text
    return stem.format(fragment=fragment.rstrip("."))


def build_inventory(
    inst: Instrument, options: ProbeOptions | None = None, form: str = "original"
) -> Inventory:
    """The probe view of ``inst`` (whose ``form`` must have item texts)."""
    opts = options or ProbeOptions()
    dims, labels, source = dimension_labels(
        inst, item_dimensions(inst, form), opts.dimension_labels
    )
    items: list[ProbeItem] = []
    for index, it in enumerate(inst.forms[form], start=1):
        primary = [s for s in it.scales if s in labels] if it.scored else []
        scale = primary[0] if len(primary) == 1 else None
        rs = inst.response_scale_for(it)
        shift = 1.0 if opts.score_base == "one" and rs.min == 0 else 0.0
        probe_options = tuple(
            ProbeOption(o.label, o.value, _keyed(inst, it, scale, o.value, shift))
            for o in sorted(rs.options, key=lambda o: o.value)
        )
        items.append(
            ProbeItem(
                id=it.id,
                index=index,
                stored=it.text,
                shown=shown_text(inst.id, it.text, opts.item_form),
                scale=scale,
                dimension=labels[scale] if scale else None,
                reverse=it.reverse,
                options=probe_options,
            )
        )
    return Inventory(
        task=inst.id,
        name=re.sub(r"\s*\[[^\]]*\]\s*$", "", inst.name),  # "GSE [PsychoBench]" -> "GSE"
        dimensions=tuple(labels[s] for s in dims),
        scale_of_label={v: k for k, v in labels.items()},
        items=tuple(items),
        labels_source=source,
    )
