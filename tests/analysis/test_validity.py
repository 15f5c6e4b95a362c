"""psym validity: pairing, Spearman's rho with a Fisher-z interval, and the rank plot."""

from __future__ import annotations

import json
import math

import pytest

from psymetrics_core.analysis.ecological import load_pairs, read_runs, spearman, validity
from psymetrics_core.base.errors import PsymError

MFQ_CARE = {"m1": 3.0, "m2": 2.0, "m3": 4.0, "m4": 1.0, "m5": 5.0}
ADV_CARE = {"m1": 0.50, "m2": 0.60, "m3": 0.40, "m4": 0.30, "m5": 0.70}


def write_run(folder, model, tasks, label=None):
    folder.mkdir(parents=True)
    res = {"model": model, "model_args": {}, "tasks": tasks}
    if label:
        res["label"] = label
    (folder / "results.json").write_text(json.dumps(res))
    return folder


def scales(**kw):
    return {"scales": {k: {"score": v} for k, v in kw.items()}}


def runs(tmp_path):
    dirs = []
    for m in MFQ_CARE:
        # questionnaire and behaviour in separate runs; m1 has two seeds of moral-advice
        dirs.append(write_run(tmp_path / f"{m}-q", m, {"mfq": scales(care=MFQ_CARE[m])}))
        dirs.append(write_run(tmp_path / f"{m}-b", m, {"moral-advice": scales(care=ADV_CARE[m])}))
    dirs.append(write_run(tmp_path / "m1-b2", "m1", {"moral-advice": scales(care=0.70)}))
    return dirs


def test_rho_and_interval_by_hand(tmp_path):
    scores = read_runs(runs(tmp_path))
    assert scores["m1"]["moral-advice.care"] == pytest.approx(0.60)  # seed mean of .50 and .70
    res = {r.construct: r for r in validity(scores, load_pairs())}
    care = res["care"]
    # ranks of test: m1 3, m2 2, m3 4, m4 1, m5 5; behaviour (m1 = .60 ties m2): m1 3.5, m2 3.5,
    # m3 2, m4 1, m5 5 -> Pearson of the rank vectors (average ranks for ties), by hand:
    rx, ry = [3, 2, 4, 1, 5], [3.5, 3.5, 2, 1, 5]
    mx, my = sum(rx) / 5, sum(ry) / 5
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    rho = cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    assert care.rho == pytest.approx(rho)  # 0.5643
    se = 1 / math.sqrt(5 - 3)
    assert care.ci_low == pytest.approx(math.tanh(math.atanh(rho) - 1.959964 * se), abs=1e-5)
    assert care.ci_high == pytest.approx(math.tanh(math.atanh(rho) + 1.959964 * se), abs=1e-5)
    assert care.n == 5 and care.test_score == "mfq.care"
    assert "sexism" not in res  # no ASI/refletter runs given


def test_spearman_without_ties_matches_the_d_squared_formula():
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]
    d2 = sum((a - b) ** 2 for a, b in zip([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], strict=True))
    assert spearman(x, y)[0] == pytest.approx(1 - 6 * d2 / (6 * (36 - 1)))  # = 0.8286
    assert spearman([1.0, 2.0], [1.0, 2.0])[0] is None  # fewer than 3 models


def test_sign_and_exclusion(tmp_path):
    pairs_file = tmp_path / "pairs.yaml"
    pairs_file.write_text(
        "pairs:\n  - construct: racism\n    test: [{score: sr2k.total, sign: -1}]\n"
        "    behaviour: housing.D\n"
    )
    scores = {f"m{i}": {"sr2k.total": float(i), "housing.D": float(i)} for i in range(1, 6)}
    (r,) = validity(scores, load_pairs(pairs_file))
    assert r.rho == pytest.approx(-1.0)  # turned round: higher = more racist
    (r,) = validity(scores, load_pairs(pairs_file), exclude=["m5"])
    assert r.n == 4
    pairs_file.write_text("pairs:\n  - construct: x\n    test: nodot\n    behaviour: a.b\n")
    with pytest.raises(PsymError, match="expected score: TASK.SCALE"):
        load_pairs(pairs_file)


def test_cli_writes_table_and_plots(tmp_path, capsys):
    from psymetrics_core.cli import main

    out = tmp_path / "val"
    main(["validity", *map(str, runs(tmp_path)), "--output", str(out), "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert [r["construct"] for r in rows] == ["care"]
    assert (out / "validity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (out / "validity.svg").read_text()
    assert (out / "validity.csv").read_text().startswith("construct,test_score,behaviour_score")


def test_cli_errors_are_one_line(tmp_path, capsys):
    from psymetrics_core.cli import main

    with pytest.raises(SystemExit):
        main(["validity", str(tmp_path / "nope")])
    assert "no results.json" in capsys.readouterr().err


def test_validity_is_a_section_of_analyze(tmp_path):
    """``psym analyze`` reaches the same table (issue 26: every analysis under analyze)."""
    from psymetrics_core.analysis.sections import AnalysisRequest, run_analyses
    from psymetrics_core.pluginsys.loader import make_plugin_manager
    from psymetrics_core.pluginsys.session import Session

    def sections_of(dirs):  # the core only: the section is built in, not a plugin's
        session = Session(*make_plugin_manager(autoload=False))
        del session.analyses()["per-run"]  # these results.json have no samples to tabulate
        return list(run_analyses(AnalysisRequest(tuple(dirs), session)).values())

    dirs = runs(tmp_path)
    sections = {s.key: s for s in sections_of(dirs)}
    care = sections["validity"].data["pairs"][0]
    direct = validity(read_runs(dirs), load_pairs())[0]
    assert care["construct"] == "care" and care["rho"] == pytest.approx(direct.rho)
    assert "psym validity" in sections["validity"].text
    alone = sections_of(dirs[:2])  # one model: no pair has two models' values
    assert all(s.key != "validity" or s.data["pairs"][0]["n"] == 1 for s in alone)
