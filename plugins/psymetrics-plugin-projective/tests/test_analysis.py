"""The projective analysis on hand-built results: pairing, κ/DCR, validity, baselines."""

from __future__ import annotations

from pathlib import Path

import pytest
from psymetrics_plugin_projective.analysis import analyse, predictions_from_results
from psymetrics_plugin_projective.labels import read_labels


def _run(persona: str, framing: str | None, dx: dict[str, int | None]) -> dict:
    facets = {"persona": f"persona={persona}"}
    if framing:
        facets["framing"] = f"framing={framing}"
    return {
        "facets": facets,
        "repeat": 0,
        "scales": {f"dx.{k}": {"score": v} for k, v in dx.items()},
    }


def _results(runs: list[dict]) -> dict:
    return {
        "model": "smollm2",
        "judge": {"model": "smollm2", "model_args": {}},
        "tasks": {"tat": {"runs": runs}},
    }


def test_reliability_and_validity_by_hand(genpt: Path) -> None:
    labels = read_labels(genpt / "pdb_labels.json")
    keys = ("depression", "O", "C", "E", "A", "N", "EI", "SN", "TF", "JP")
    neutral = {
        "frieren": dict(zip(keys, (1, 4, 2, 2, 2, 1, 1, 1, 0, 1), strict=True)),
        "saitama": dict(zip(keys, (2, 3, 3, 2, 3, 2, 1, 0, 0, 1), strict=True)),
        "megumin": dict(zip(keys, (0, 3, 2, 4, 3, 2, 0, 1, 1, 1), strict=True)),
    }
    job = {
        "frieren": {**neutral["frieren"], "depression": 0, "O": 5},
        "saitama": {**neutral["saitama"], "depression": 1},
        "megumin": {**neutral["megumin"], "depression": 0, "N": 1},
    }
    runs = [_run(p, None, v) for p, v in neutral.items()]
    runs += [_run(p, "job-screening", v) for p, v in job.items()]
    preds = predictions_from_results(_results(runs), "run")
    assert len(preds) == 6 and {p.condition for p in preds} == {"neutral", "framing=job-screening"}
    report = analyse(preds, labels, n_boot=200)
    rel = {r.target: r for r in report.reliability}
    dep = rel["depression"]
    # depression 1->0, 2->1, 0->0: two moves down, DCR = 1.0 downward, mean shift -2/3
    assert (dep.dcr.value, dep.dcr.direction, dep.n_targets) == (1.0, "down", 3)
    assert dep.shift.mean == pytest.approx(-2 / 3)
    # Big Five pooled over 15 cells: O 4->5 up, N 2->1 down: DCR 0.5, "="
    assert (rel["big_five"].dcr.value, rel["big_five"].dcr.direction) == (0.5, "=")
    assert rel["mbti"].kappa.value == pytest.approx(1.0) and rel["mbti"].dcr.value is None
    val = {
        (v.target, v.condition): v for v in report.validity if v.metric in ("accuracy", "hamming")
    }
    # neutral vs PDB labels: frieren 5/5 (4,2,2,2,1), saitama O2 C3 E2 A3 N2 -> 4/5 (O 3 != 2),
    # megumin O3 C2 E4 A3 N2 -> 5/5; pooled 14/15
    assert val[("big_five", "neutral")].value.value == pytest.approx(14 / 15)
    # MBTI: frieren INTP == INTP, saitama ISTP == ISTP, megumin ENFP vs INFP -> 1; mean 1/3
    assert val[("mbti", "neutral")].value.value == pytest.approx(1 / 3)
    assert ("depression", "neutral") not in val  # no depression labels for these characters


def test_majority_baselines_on_all_fifteen(genpt: Path) -> None:
    # extraction notes §8.1 [D]: per-dimension modes give Big Five accuracy 30/75 = 0.40 and
    # the per-axis majority type ENFP gives MBTI Hamming distance 22/15 = 1.47
    labels = read_labels(genpt / "pdb_labels.json")
    dx = {"O": 3, "C": 3, "E": 3, "A": 3, "N": 3, "EI": 0, "SN": 0, "TF": 0, "JP": 0}
    preds = predictions_from_results(_results([_run(k, None, dx) for k in labels]))
    val = {
        v.target: v for v in analyse(preds, labels).validity if v.metric in ("accuracy", "hamming")
    }
    assert val["big_five"].majority.value == pytest.approx(30 / 75)
    assert val["mbti"].majority.value == pytest.approx(22 / 15)


def test_two_judges_agreement() -> None:
    a = _results([_run("x", None, {"depression": 1}), _run("y", None, {"depression": 2})])
    b = _results([_run("x", None, {"depression": 1}), _run("y", None, {"depression": 3})])
    b["judge"] = {"model": "openai-chat", "model_args": {"model": "judge-b"}}
    preds = predictions_from_results(a, "a") + predictions_from_results(b, "b")
    report = analyse(preds)
    (ag,) = [g for g in report.agreement if g.target == "depression"]
    assert ag.exact.value == pytest.approx(0.5) and ag.judges == ("openai-chat:judge-b", "smollm2")


def test_questionnaire_baselines_become_levels() -> None:
    from psymetrics_plugin_projective.analysis import questionnaire_levels

    bfi = {
        t: {"score": s}
        for t, s in [
            ("openness", 3.5),
            ("conscientiousness", 2.5),
            ("extraversion", 4.6),
            ("agreeableness", None),
            ("neuroticism", 1.2),
        ]
    }
    # round half to even, as the authors' code: 3.5 -> 4, 2.5 -> 2
    assert questionnaire_levels("bfi", bfi) == {"O": 4.0, "C": 2.0, "E": 5.0, "A": None, "N": 1.0}
    p16 = {
        n: {"score": s}
        for n, s in [("extraverted", 50), ("intuitive", 50), ("thinking", 50), ("judging", 50)]
    }
    assert questionnaire_levels("16p", p16) == {"EI": 1.0, "SN": 1.0, "TF": 1.0, "JP": 0.0}  # INFJ
    p16 = {
        n: {"score": s}
        for n, s in [("extraverted", 70), ("intuitive", 20), ("thinking", 60), ("judging", 10)]
    }
    assert questionnaire_levels("16p", p16) == {"EI": 0.0, "SN": 0.0, "TF": 0.0, "JP": 1.0}  # ESTP
    assert questionnaire_levels("sd3", {"machiavellianism": {"score": 3}}) == {}


@pytest.mark.parametrize(
    ("task", "scale", "total", "answered", "level"),
    [
        ("bdi2", "depression", 13, 21, 0),
        ("bdi2", "depression", 14, 21, 1),
        ("bdi2", "depression", 28, 21, 2),
        ("bdi2", "depression", 29, 21, 3),
        ("bdi2", "depression", 40, 14, None),
        ("bss", "ideation", 3, 19, 0),
        ("bss", "ideation", 4, 19, 1),
        ("bss", "ideation", 17, 13, 3),
    ],
)
def test_bdi_and_bss_sums_become_risk_levels(
    task: str, scale: str, total: int, answered: int, level: int | None
) -> None:
    from psymetrics_plugin_projective.analysis import questionnaire_levels

    target = "depression" if task == "bdi2" else "suicide"
    got = questionnaire_levels(task, {scale: {"score": total, "n_answered": answered}})
    assert got == {target: None if level is None else float(level)}
