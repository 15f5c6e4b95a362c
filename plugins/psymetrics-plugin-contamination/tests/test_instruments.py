"""The probes on every kind of instrument: shipped texts (bfi, mfq, asi, sr2k, PsychoBench scales)
and user-supplied texts (pvq40, sd3 with --items; tests/data has placeholder texts).

A loopback server answers from the probe view of each instrument (the plumbing check: every
label set, per-item response scale, rescaled or inverted key and catch item goes through the
prompts, the parsers and the metrics and comes out perfect). The BFI values are checked against
an answer key built independently from the published key in test_loopback.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA
from oracle_server import AnswerKey, KeyItem, OracleServer
from psymetrics_plugin_contamination.inventory import build_inventory
from psymetrics_plugin_contamination.options import ProbeOptions
from psymetrics_plugin_contamination.run import contamination

from psymetrics_core import get_instrument
from psymetrics_core.api import PsymError, require_item_texts, session_or_default

ITEMS = {
    "pvq40": DATA / "PLACEHOLDER_items_pvq40.csv",
    "sd3": DATA / "PLACEHOLDER_items_sd3.csv",
}
FIVE = ("verbatim", "keyword", "item-dimension", "option-score", "target-score")


def key_for(task: str, options: ProbeOptions | None = None) -> AnswerKey:
    inv = build_inventory(require_item_texts(get_instrument(task), "original", ITEMS), options)
    return AnswerKey(
        inv.name,
        [
            KeyItem(
                it.index,
                it.shown,
                it.dimension or "",
                [o.label for o in it.options],
                it.gold_scores(),
            )
            for it in inv.items
        ],
    )


@pytest.mark.parametrize(
    ("task", "n_dims"),
    [("mfq", 5), ("asi", 2), ("sr2k", 1), ("pb-gse", 1), ("pb-bfi", 5), ("pvq40", 10), ("sd3", 3)],
)
def test_perfect_answers_on_every_kind_of_instrument(
    task: str, n_dims: int, tmp_path: Path
) -> None:
    with OracleServer([key_for(task)]) as srv:
        rep = contamination(
            [task],
            probes=FIVE,
            model="openai-chat",
            model_args=f"base_url={srv.base_url},model=oracle,concurrency=8",
            options=ProbeOptions(bootstrap=100),
            item_files=ITEMS,
            output=tmp_path,
            session=session_or_default(),
        )
    entry = rep["tasks"][task]
    assert len(entry["dimensions"]) == n_dims
    probes = entry["probes"]
    assert probes["verbatim"]["value"] == 0.0
    # identical masked prompts (pb-bfi: "Is [MASK]") cap the rate; 1 on the unique ones
    assert probes["keyword"]["value"] == probes["keyword"]["baseline"]["ceiling"]
    assert probes["keyword"]["detail"]["unambiguous"]["value"] == 1.0
    assert probes["option-score"]["value"] == 0.0
    assert probes["target-score"]["value"] == 0.0
    if n_dims > 1:
        assert probes["item-dimension"]["value"] == 1.0
    else:  # undefined, not a perfect score: one dimension makes the mapping trivial
        assert probes["item-dimension"]["value"] is None
        assert "one dimension" in probes["item-dimension"]["reason"]
    if task in ITEMS:
        assert "derived now" in entry["keywords"]
        assert entry["instrument"]["item_texts"] == "user-supplied"


def test_missing_texts_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(PsymError, match="--items pvq40=FILE.csv"):
        contamination(
            ["pvq40"],
            probes=("verbatim",),
            output=tmp_path,
            backend=object(),
            session=session_or_default(),
        )
