"""Prompt templates and placeholder rendering.

Source of the templates: Han et al. (2025), Appendix B.2, checked against the paper's text file
where the checkout has it (../shared/seeds/000_*.txt) and against the notes' §3 otherwise.
"""

from __future__ import annotations

import pytest
from conftest import SEEDS
from psymetrics_plugin_contamination.inventory import build_inventory
from psymetrics_plugin_contamination.keywords import keywords_for
from psymetrics_plugin_contamination.options import ProbeOptions
from psymetrics_plugin_contamination.prompts import TEMPLATE_FILES, build_prompts, template

from psymetrics_core import get_instrument

PAPER = sorted(SEEDS.glob("000_*.txt"))


@pytest.mark.skipif(not PAPER, reason="the paper's text is not in this checkout")
@pytest.mark.parametrize("probe", [p for p in TEMPLATE_FILES if p != "order"])
def test_templates_are_the_papers_verbatim(probe: str) -> None:
    paper = PAPER[0].read_text(encoding="utf-8")
    assert template(probe) in paper


@pytest.mark.skipif(not PAPER, reason="the paper's text is not in this checkout")
@pytest.mark.parametrize("task", ["bfi", "mfq", "pvq40", "sd3"])
def test_paper_dimension_labels_are_the_papers_words(task: str) -> None:
    from psymetrics_plugin_contamination.inventory import PAPER_DIMENSIONS

    paper = " ".join(PAPER[0].read_text(encoding="utf-8").split())
    labels = [label for _, label in PAPER_DIMENSIONS[task]]
    # Appendix A.1 lists them in this order, joined by ", " with "and" before the last
    assert ", ".join(labels[:-1]) + ", and " + labels[-1] in paper


def _bfi_prompts(**opts: object) -> dict[str, object]:
    inv = build_inventory(get_instrument("bfi"), ProbeOptions(**opts))  # type: ignore[arg-type]
    kws, _ = keywords_for("bfi", {it.id: it.stored for it in inv.items})
    prompts = build_prompts(
        inv,
        ["verbatim", "keyword", "item-dimension", "option-score", "target-score"],
        ProbeOptions(**opts),
        kws,
    )  # type: ignore[arg-type]
    return {p.key: p for p in prompts}


def test_bfi_item_6_renders_like_the_papers_example() -> None:
    # the paper's only item example: "I see myself as someone who is reserved", keyword "reserved"
    by = _bfi_prompts()
    kw = by["bfi/keyword/6/"]
    assert "Item (masked):\n\nI see myself as someone who is [MASK].\n\n" in kw.text
    assert kw.gold == "reserved"
    vb = by["bfi/verbatim/6/cued"]
    assert "- Inventory name: Big Five Inventory (BFI-44)\n" in vb.text
    assert "- Item index: 6 (Note: indexing starts from 1)" in vb.text
    assert vb.gold == "I see myself as someone who is reserved."
    ctl = by["bfi/verbatim/6/control"]
    assert "Big Five" not in ctl.text and ctl.gold == vb.gold
    dim = by["bfi/item-dimension/6/"]
    # the paper's §2.1 example of "the full set of dimensions": "Openness, Conscientiousness,
    # Extraversion, Agreeableness, Neuroticism"
    assert (
        "Dimensions: Openness, Conscientiousness, Extraversion, Agreeableness, Neuroticism\n"
        in dim.text
    )
    assert dim.gold == "Extraversion"
    opt = by["bfi/option-score/6/"]
    assert (
        "Options: Disagree strongly, Disagree a little, Neither agree nor disagree, "
        "Agree a little, Agree strongly\n" in opt.text
    )
    assert opt.gold == [5, 4, 3, 2, 1]  # reverse-keyed: 6 - x
    assert [by[f"bfi/target-score/6/{c}"].gold for c in ("min", "mid", "max")] == [1, 3, 5]
    assert "Target Score: 3\n" in by["bfi/target-score/6/mid"].text


def test_stored_form_and_numbered_options() -> None:
    by = _bfi_prompts(item_form="stored", options_format="numbered")
    assert by["bfi/verbatim/1/cued"].gold == "Is talkative"
    assert "Options: 1. Disagree strongly, 2. Disagree a little," in by["bfi/option-score/1/"].text


def test_prompt_counts_follow_the_paper() -> None:
    by = _bfi_prompts(verbatim_control="none")
    counts: dict[str, int] = {}
    for p in by.values():
        counts[p.probe] = counts.get(p.probe, 0) + 1  # type: ignore[attr-defined]
    # notes §3.8: BFI-44 has 44 prompts per probe and 132 target-score prompts
    assert counts == {
        "verbatim": 44,
        "keyword": 44,
        "item-dimension": 44,
        "option-score": 44,
        "target-score": 132,
    }


def test_mfq_counts_catch_items_in_index_but_not_in_mapping() -> None:
    inv = build_inventory(get_instrument("mfq"))
    assert len(inv.items) == 32 and len(inv.scored) == 30
    assert [it.index for it in inv.items if it.dimension is None] == [6, 22]
    # Han et al.'s wording (Appendix A.1), the default; the spec's own labels on request
    assert inv.dimensions == (
        "Harm/Care",
        "Fairness/Reciprocity",
        "In-group/Loyalty",
        "Authority/Respect",
        "Purity/Sanctity",
    )
    spec = build_inventory(get_instrument("mfq"), ProbeOptions(dimension_labels="instrument"))
    assert spec.dimensions == (
        "Care/harm",
        "Fairness/reciprocity",
        "Ingroup/loyalty",
        "Authority/respect",
        "Purity/sanctity",
    )
    prompts = build_prompts(inv, ["verbatim", "item-dimension"], ProbeOptions())
    assert sum(p.probe == "verbatim" and p.condition == "cued" for p in prompts) == 32
    assert sum(p.probe == "item-dimension" for p in prompts) == 30
    # MFQ is coded 0-5; score_base=one shifts it to 1-6 (the prompt says "positive integers")
    it = inv.scored[0]
    assert it.gold_scores() == [0, 1, 2, 3, 4, 5]
    one = build_inventory(get_instrument("mfq"), ProbeOptions(score_base="one"))
    assert one.scored[0].gold_scores() == [1, 2, 3, 4, 5, 6]
    assert [it.target(c, "nearest") for c in ("min", "mid", "max")] == [0, 2, 5]


def test_sr2k_keyed_values_follow_its_spec() -> None:
    # SR2K (spec): "racism" inverts every item (lo + hi - x); item 3 is rescaled 1=1;2=2.5;3=4
    inv = build_inventory(get_instrument("sr2k"))
    item1 = next(it for it in inv.items if it.id == "1")
    assert item1.gold_scores() == [4, 3, 2, 1]  # agree4 1..4 inverted
    item3 = next(it for it in inv.items if it.id == "3")
    assert item3.gold_scores() == [4, 2.5, 1]  # rescaled 1, 2.5, 4 then inverted
    assert item3.target("mid", "nearest") == 2.5  # attainable, unlike floor's 2
    assert item3.target("mid", "floor") == 2


def test_limit_keeps_the_instruments_dimensions() -> None:
    from psymetrics_plugin_contamination.run import prepare

    from psymetrics_core.api import Session

    inv, prompts, _, _ = prepare(
        "bfi", ["item-dimension"], ProbeOptions(), limit=2, session=Session()
    )
    assert len(inv.items) == 2 and len(prompts) == 2
    # items 1 and 2 are extraversion and agreeableness; the prompt still lists all five (in
    # the paper's order, Appendix A.1)
    assert "Dimensions: Openness, Conscientiousness, Extraversion, Agreeableness, Neuroticism" in (
        prompts[0].text
    )


def test_item_dimension_prompt_shows_the_papers_labels() -> None:
    # Han et al., Appendix A.1: "Harm/Care, Fairness/Reciprocity, In-group/Loyalty,
    # Authority/Respect, Purity/Sanctity" (the instrument's spec says "Care/harm, ...")
    paper = "Dimensions: Harm/Care, Fairness/Reciprocity, In-group/Loyalty, Authority/Respect, "
    paper += "Purity/Sanctity\n"
    inv = build_inventory(get_instrument("mfq"))
    prompts = build_prompts(inv, ["item-dimension"], ProbeOptions())
    assert all(paper in p.text for p in prompts)
    assert prompts[0].gold == "Harm/Care"  # MFQ item 1 is a care item
    opts = ProbeOptions(dimension_labels="instrument")
    spec = build_prompts(build_inventory(get_instrument("mfq"), opts), ["item-dimension"], opts)
    assert "Dimensions: Care/harm, Fairness/reciprocity, Ingroup/loyalty," in spec[0].text
    assert spec[0].gold == "Care/harm"
    # PVQ-40 in the paper's listing order, SD3 unchanged; an instrument the paper did not
    # probe keeps its spec's labels under either choice
    sd3 = build_inventory(get_instrument("sd3"))
    assert sd3.dimensions == ("Machiavellianism", "Narcissism", "Psychopathy")
    assert sd3.labels_source == "paper"
    asi = build_inventory(get_instrument("asi"))
    assert asi.dimensions == ("Hostile sexism", "Benevolent sexism")
    assert asi.labels_source == "instrument"


def test_echoing_the_inventory_name_is_not_recall() -> None:
    # A model that answers every verbatim prompt with the inventory name it was given: the
    # made-up control name is longer, so raw AEDs differ, but neither answer recalls the item.
    from psymetrics_plugin_contamination.run import prepare
    from psymetrics_plugin_contamination.scoring import Answered, score_prompt
    from psymetrics_plugin_contamination.summary import summarise

    from psymetrics_core.api import Session

    opts = ProbeOptions(bootstrap=50)
    inv, prompts, _, _ = prepare("bfi", ["verbatim"], opts, limit=6, session=Session())
    recs = [score_prompt(Answered(p, text=p.meta["inventory_name"]), inv, opts) for p in prompts]
    res = summarise(inv, "verbatim", recs, opts)
    assert res.detail["control_AED"]["value"] > res.value  # the raw, paper-style AEDs differ
    assert res.detail["control_minus_cued"]["value"] == 0.0  # names removed: same distance
    assert res.component == 0.0


def test_a_probe_with_no_parsed_answer_is_null_with_the_policy_value_kept() -> None:
    # A model that answers every option-score prompt with words (no numbers): the metric is
    # null with a reason, not the value the max_error policy alone gives (kept in detail).
    from psymetrics_plugin_contamination.run import prepare
    from psymetrics_plugin_contamination.scoring import Answered, score_prompt
    from psymetrics_plugin_contamination.summary import contamination_index, summarise

    from psymetrics_core.api import Session

    opts = ProbeOptions(bootstrap=50)
    inv, prompts, _, _ = prepare(
        "bfi", ["option-score", "verbatim"], opts, limit=4, session=Session()
    )
    option = [p for p in prompts if p.probe == "option-score"]
    recs = [score_prompt(Answered(p, text="I agree with it."), inv, opts) for p in option]
    res = summarise(inv, "option-score", recs, opts)
    assert res.n_parsed == 0 and res.n_invalid == len(option)
    assert res.value is None and res.ci_low is None and res.component is None
    assert res.reason is not None and res.reason.startswith("0 of 4 answers parsed")
    # largest error per option on a 1..5 scale: gold g -> max(g - 1, 5 - g) = 4,3,2,3,4
    assert res.detail["policy_value"] == pytest.approx((4 + 3 + 2 + 3 + 4) / 5)
    assert "no answer could be parsed" in res.flags
    verbatim = [p for p in prompts if p.probe == "verbatim"]
    vrecs = [score_prompt(Answered(p, text=p.meta["inventory_name"]), inv, opts) for p in verbatim]
    vres = summarise(inv, "verbatim", vrecs, opts)
    index = contamination_index(inv, [res, vres], {"option-score": recs, "verbatim": vrecs}, opts)
    assert set(index["components"]) == {"verbatim"}  # the unparsed probe leaves the index
