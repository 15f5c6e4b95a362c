"""``psym analyze --task TASK --responses FILE.csv``: data that did not come from psym eval."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pandas as pd
import pytest

from psymetrics_core.cli import main

REPO = Path(__file__).resolve().parents[2]
ASI_ITEMS = REPO / "plugins/psymetrics-plugin-asi/psymetrics_plugin_asi/instruments/asi/items.csv"


def _asi_key() -> dict[str, tuple[str, bool]]:
    """item -> (scale, reverse) read straight from the shipped item CSV."""
    with ASI_ITEMS.open(newline="", encoding="utf-8") as fh:
        return {r["id"]: (r["scale"], r["reverse"] == "1") for r in csv.DictReader(fh)}


def _long_csv(path: Path) -> pd.DataFrame:
    """Two 'models' x 30 respondents x 22 ASI items (0-5), some responses left empty;
    deterministic (random.Random(2024)). Model b answers more coherently than model a."""
    rng = random.Random(2024)
    key = _asi_key()
    rows = []
    for model, noise in (("a", 2.0), ("b", 0.8)):
        for resp in range(30):
            trait = rng.gauss(0, 1)
            for item, (_, rev) in key.items():
                x = 2.5 + (-trait if rev else trait) * 1.2 + rng.gauss(0, noise)
                value = "" if rng.random() < 0.03 else str(min(5, max(0, round(x))))
                rows.append(
                    {
                        "model": model,
                        "respondent": f"r{resp}",
                        "item": item,
                        "response": value,
                        "context": "none",
                    }
                )
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return frame


def test_listwise_alpha_per_group_reproduces_pingouin(tmp_path: Path, capsys, fresh_plugins):
    import pingouin as pg

    f = tmp_path / "long.csv"
    frame = _long_csv(f)
    main(["analyze", "--task", "asi", "--responses", str(f), "--group", "model", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert list(rep["groups"]) == ["a", "b"]
    key = _asi_key()
    frame["response"] = pd.to_numeric(frame["response"])
    # independent keying: ASI reverse items are 0 + 5 - x (spec: min_plus_max on 0..5)
    frame["keyed"] = [
        5 - v if key[i][1] else v for i, v in zip(frame["item"], frame["response"], strict=True)
    ]
    for model, sub in frame.groupby("model"):
        wide = sub.pivot(index="respondent", columns="item", values="keyed")
        for scale in ("hostile", "benevolent", "total"):
            cols = [i for i in wide.columns if scale == "total" or key[i][0] == scale]
            ref, _ = pg.cronbach_alpha(data=wide[cols], nan_policy="listwise")
            got = rep["groups"][model]["scales"][scale]["alpha"]
            assert got["alpha"] == pytest.approx(ref, abs=1e-9), (model, scale)
            complete = int(wide[cols].dropna().shape[0])
            assert got["rows_used"] == f"{complete} of 30"
        # descriptives of the scale score (mean of keyed items per respondent), pandas
        hostile = [i for i in wide.columns if key[i][0] == "hostile"]
        scores = wide[hostile].mean(axis=1)
        d = rep["groups"][model]["scales"]["hostile"]["descriptives"]
        assert d["n"] == 30 and d["mean"] == pytest.approx(scores.mean(), abs=1e-12)
        assert d["sd"] == pytest.approx(scores.std(ddof=1), abs=1e-12)
        assert d["skew"] == pytest.approx(scores.skew(), abs=1e-12)
        assert d["excess_kurtosis"] == pytest.approx(scores.kurt(), abs=1e-12)
        item = rep["groups"][model]["scales"]["hostile"]["items"]["2"]
        assert item["mean"] == pytest.approx(wide["2"].mean())
        assert item["variance"] == pytest.approx(wide["2"].var(ddof=1))
        # omega: fitted where complete rows outnumber items, else a stated reason
        for scale in ("hostile", "total"):
            cols = [i for i in wide.columns if scale == "total" or key[i][0] == scale]
            om = rep["groups"][model]["scales"][scale]["omega"]
            if wide[cols].dropna().shape[0] > len(cols):
                assert 0 < om["omega"] <= 1, (model, scale)
            else:
                assert om["omega"] is None and "singular" in om["note"], (model, scale)
    a = rep["groups"]["a"]["scales"]["total"]["alpha"]["alpha"]
    b = rep["groups"]["b"]["scales"]["total"]["alpha"]["alpha"]
    assert b > a  # the less noisy group is the more consistent one


def test_responses_table_and_errors(tmp_path: Path, capsys, fresh_plugins):
    f = tmp_path / "long.csv"
    frame = _long_csv(f)
    # without --group, respondent ids must be unique across the file
    with pytest.raises(SystemExit):
        main(["analyze", "--task", "asi", "--responses", str(f)])
    assert "respondent 'r0' answers item 1 twice" in capsys.readouterr().err
    one = tmp_path / "one.csv"
    frame[frame["model"] == "a"].to_csv(one, index=False)
    main(["analyze", "--task", "asi", "--responses", str(one)])
    out = capsys.readouterr().out
    assert "all respondents" in out and "hostile" in out and "rows used by alpha" in out
    with pytest.raises(SystemExit):
        main(["analyze", "--task", "asi", "--responses", str(f), "--group", "nope"])
    err = capsys.readouterr().err
    assert "line 1: missing column(s) nope" in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("respondent,item,response\nr1,1,9\n")
    with pytest.raises(SystemExit):
        main(["analyze", "--task", "asi", "--responses", str(bad)])
    assert "line 2: response '9' to item 1" in capsys.readouterr().err
