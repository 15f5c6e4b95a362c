"""The divergence section: profiles from real imported runs, pairs, the across-model sign-flip
test and the same numbers in the text and the JSON of ``psym analyze``."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from psymetrics_core.analysis.divergence import (
    Profile,
    divergence_of,
    load_constructs,
    profiles_of,
)
from psymetrics_core.cli import cli

BFI = Path(__file__).parents[1] / "data" / "song2025" / "bfi.csv"
TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")


def _profile(model: str, method: str, task: str, values: list[float]) -> Profile:
    return Profile(
        model, method, task, "big_five", dict(zip(TRAITS, values, strict=True)), 1, 0, ""
    )


def test_sign_flip_across_models_uses_each_models_within_minus_cross() -> None:
    a = [5.0, 4.0, 3.0, 2.0, 1.0]
    profiles = []
    # model m0: the two forms agree (rho 1.0), the behaviour measure less (rho 0.7 and 0.9)
    within = {"m0": [5, 4, 3, 2, 1], "m1": [5, 4, 3, 1, 2], "m2": [4, 5, 3, 2, 1]}
    cross = {"m0": [4, 5, 1, 3, 2], "m1": [1, 2, 3, 4, 5], "m2": [5, 4, 2, 3, 1]}
    for m in within:
        profiles.append(_profile(m, "self-report", "bfi", a))
        profiles.append(_profile(m, "self-report", "bfi10", [float(v) for v in within[m]]))
        profiles.append(_profile(m, "generation-probability", "vp", [float(v) for v in cross[m]]))
    result = divergence_of(profiles)
    assert len(result.pairs) == 9  # 3 pairs per model
    d = result.differences["big_five"]
    for m in within:
        mine = [p for p in result.pairs if p.model == m]
        w = [p.rho.rho for p in mine if p.kind == "within-method"]
        c = [p.rho.rho for p in mine if p.kind == "cross-method"]
        assert len(w) == 1 and len(c) == 2
        assert d[m] == pytest.approx(w[0] - np.mean(c))  # type: ignore[arg-type]
    test = result.tests["big_five"]
    values = list(d.values())
    flips = [np.mean(np.array(s) * values) for s in itertools.product((1, -1), repeat=3)]
    assert test.p_one_sided == pytest.approx(np.mean(np.array(flips) >= np.mean(values) - 1e-12))


def test_constant_profile_pair_is_null_with_reason() -> None:
    profiles = [
        _profile("m", "self-report", "bfi", [1.0, 2.0, 3.0, 4.0, 5.0]),
        _profile("m", "interview", "bfi", [3.0, 3.0, 3.0, 3.0, 3.0]),
    ]
    (pair,) = divergence_of(profiles).pairs
    assert pair.rho.rho is None and pair.ndcg is None
    assert pair.rho.reason == "the second profile is constant: it has no ranking"
    assert divergence_of(profiles).tests == {}  # no rho: nothing to test


def _import(tmp: Path, src: Path, task: str) -> Path:
    out = tmp / task
    argv = ["import", "answers", str(src), "--task", task, "--model", "m", "-o", str(out)]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 0, res.output
    return out


def test_analyze_shows_the_same_rho_in_text_and_json(tmp_path: Path) -> None:
    # BFI-44 (Song et al.'s answers) and the 25-item IPIP Big Five answered as a profile
    # with openness highest and neuroticism lowest: two self-report forms, within-method
    ipip = tmp_path / "ipip.csv"
    level = {"O": 6, "C": 4, "E": 3, "A": 5, "N": 1}
    rows = ["respondent,item,response"]
    rows += [f"m,{t}{i},{level[t]}" for t in level for i in range(1, 6)]
    ipip.write_text("\n".join(rows) + "\n", encoding="utf-8")
    runs = [_import(tmp_path, BFI, "bfi"), _import(tmp_path, ipip, "ipip-bfi25")]
    text = CliRunner().invoke(cli, ["analyze", *map(str, runs)])
    assert text.exit_code == 0, text.output
    data = CliRunner().invoke(cli, ["analyze", *map(str, runs), "--json"])
    assert data.exit_code == 0, data.output
    (pair,) = json.loads(data.output)["sections"]["divergence"]["pairs"]
    assert pair["kind"] == "within-method" and pair["rho"]["n"] == 5
    shown = re.search(r"self-report:bfi vs self-report:ipip-bfi25 .*?rho ([-0-9.]+)", text.output)
    assert shown is not None
    assert shown.group(1) == f"{pair['rho']['rho']:.3f}"
    report = tmp_path / "report.html"
    res = CliRunner().invoke(cli, ["report", *map(str, runs), "-o", str(report)])
    assert res.exit_code == 0, res.output
    html = report.read_text(encoding="utf-8")
    section = html[html.index('<section id="divergence">') :]
    assert f"<td>{shown.group(1)}</td>" in section[: section.index("</section>")]


def test_interview_and_persona_administrations(tmp_path: Path) -> None:
    # an imported BFI-44 run whose second administration is relabelled as an interview
    # (mm-interview's facet) and a third as a persona: the interview is its own method, the
    # persona's administration is left out of the profile and counted
    run = _import(tmp_path, BFI, "bfi")
    results = json.loads((run / "results.json").read_text())
    runs = results["tasks"]["bfi"]["runs"]
    runs[1]["facets"] = {"administration": "interview-dimensions"}
    runs.append({**runs[0], "condition": "p", "facets": {"persona": "p"}, "repeat": 1})
    (run / "results.json").write_text(json.dumps(results))
    found = {p.key: p for p in profiles_of([run], load_constructs())}
    assert set(found) == {"self-report:bfi", "interview-dimensions:bfi"}
    assert found["self-report:bfi"].n_administrations == 1
    assert found["self-report:bfi"].n_left_out == 1
    assert found["interview-dimensions:bfi"].scores["neuroticism"] == pytest.approx(2.75)


def test_a_degenerate_answer_pattern_is_flagged_in_text_json_and_report(tmp_path: Path) -> None:
    # Song et al.'s BFI-44 answers (two option orders) and a 25-item IPIP profile with no
    # indicator fired; then every administration of the BFI run marked straight-lining: the
    # profile is still computed, and every place that shows it counts the degenerate ones
    run = _import(tmp_path, BFI, "bfi")
    ipip = tmp_path / "ipip.csv"
    reverse = {"A1", "C4", "C5", "E1", "E2", "O2", "O5"}  # R psych's bfi keys (its README)
    level = dict(zip("OCEAN", (6, 4, 3, 5, 1), strict=True))
    rows = ["respondent,item,response"] + [
        f"m,{t}{i},{7 - v if f'{t}{i}' in reverse else v}"
        for t, v in level.items()
        for i in range(1, 6)
    ]
    ipip.write_text("\n".join(rows) + "\n", encoding="utf-8")
    runs = [run, _import(tmp_path, ipip, "ipip-bfi25")]
    results = json.loads((run / "results.json").read_text())
    for administration in results["tasks"]["bfi"]["runs"]:
        administration["indicators"]["straight_lining"]["fired"] = True
    (run / "results.json").write_text(json.dumps(results))
    found = {p.key: p for p in profiles_of(runs, load_constructs())}
    assert found["self-report:bfi"].n_degenerate == found["self-report:bfi"].n_administrations == 2
    assert found["self-report:ipip-bfi25"].n_degenerate == 0
    text = CliRunner().invoke(cli, ["analyze", *map(str, runs)])
    assert text.exit_code == 0, text.output
    line = next(x for x in text.output.splitlines() if x.strip().startswith("self-report:bfi "))
    assert "! 2 degenerate answer pattern(s)" in line
    data = json.loads(CliRunner().invoke(cli, ["analyze", *map(str, runs), "--json"]).output)
    flags = {p["task"]: p["n_degenerate"] for p in data["sections"]["divergence"]["profiles"]}
    assert flags == {"bfi": 2, "ipip-bfi25": 0}
    report = tmp_path / "report.html"
    assert CliRunner().invoke(cli, ["report", *map(str, runs), "-o", str(report)]).exit_code == 0
    html = report.read_text(encoding="utf-8")
    assert "! 2 degenerate answer pattern(s)" in html[html.index('<section id="divergence">') :]
