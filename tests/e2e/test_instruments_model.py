"""The instrument plugins run end to end on the real default model (SmolLM2), 2 items each."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parents[1] / "data"
TASKS = ["asi", "sr2k", "pvq40", "sd3", "16p"]


@pytest.mark.model
def test_instrument_tasks_run_on_smollm2(smollm2, tmp_path):
    from psymetrics_core import evaluate

    items = {  # placeholder texts, for tests only (see tests/data/README.md)
        "pvq40": DATA / "PLACEHOLDER_items_pvq40.csv",
        "sd3": DATA / "PLACEHOLDER_items_sd3.csv",
    }
    res = evaluate(
        TASKS, backend=smollm2, limit=2, max_new_tokens=8, item_files=items, output=tmp_path / "run"
    )
    assert list(res["tasks"]) == TASKS
    for task in TASKS:
        entry = res["tasks"][task]
        assert entry["n_items"] == 2
        assert entry["n_answered"] + entry["n_unparsed"] + entry["n_refused"] == 2
    assert res["tasks"]["16p"]["key"] == "unofficial"
    assert res["tasks"]["pvq40"]["instrument"]["item_texts"] == "user-supplied"
    assert (tmp_path / "run" / "results.json").is_file()
    lines = (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10
