"""GenPT details from the authors' code (issue 24 item 7): the minimum-answered rules, every
repeat with its spread, ``--unparsed authors`` and the extra validity metrics.

Expected values come from scikit-learn / numpy (named at each check) or are counted by hand
in the comments; the authors' rules are those of the extraction notes
(/work/shared/notes/seeds/004-genpt.md §7.2, §9.2, §11.4).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from psymetrics_plugin_projective.analysis import (
    AUTHORS_DEFAULTS,
    analyse,
    predictions_from_results,
)
from psymetrics_plugin_projective.labels import read_labels
from psymetrics_plugin_projective.metrics import (
    all_correct,
    axis_accuracy,
    macro_f1,
    mae,
    type_accuracy,
)

from psymetrics_core.cli import cli

sk = pytest.importorskip("sklearn.metrics")

TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
LABELS = {
    "ann": {
        "mbti": "INTP",
        "big_five": dict(zip(TRAITS, (4, 2, 2, 2, 1), strict=True)),
        "depression": 1,
    },
    "bob": {
        "mbti": "ESTJ",
        "big_five": dict(zip(TRAITS, (2, 5, 4, 3, 2), strict=True)),
        "depression": 2,
    },
    "cy": {
        "mbti": "ENFP",
        "big_five": dict(zip(TRAITS, (5, 1, 5, 4, 3), strict=True)),
        "depression": 0,
    },
}
DX = ("O", "C", "E", "A", "N", "EI", "SN", "TF", "JP", "depression")


def _labels(tmp_path: Path) -> Any:
    f = tmp_path / "labels.json"
    f.write_text(json.dumps(LABELS), encoding="utf-8")
    return read_labels(f)


def _run(persona: str, framing: str | None, repeat: int, scales: dict[str, Any], **kw: Any) -> dict:
    facets = {"persona": f"persona={persona}"}
    if framing:
        facets["framing"] = f"framing={framing}"
    return {"facets": facets, "repeat": repeat, "scales": scales, **kw}


def _dx(values: dict[str, int | None]) -> dict[str, Any]:
    return {
        f"dx.{k}": {"score": v, "reason": None if v is not None else "no 'X=<1-5>' levels"}
        for k, v in values.items()
    }


def _results(task: str, runs: list[dict]) -> dict:
    return {
        "model": "m",
        "judge": {"model": "j", "model_args": {}},
        "tasks": {task: {"runs": runs}},
    }


def _record(res: dict) -> dict:
    """``res`` (model, judge, tasks with runs) as a complete ``results.json`` record, as the
    run reader requires (records.ResultsRecord): the first run of each task is its entry."""
    tasks = {}
    for task, entry in res["tasks"].items():
        runs = [_summary(r) for r in entry["runs"]]
        first = runs[0]
        inst = {
            "id": task,
            "name": task,
            "version": "1",
            "citation": "c",
            "license_status": "l",
            "item_source": "s",
            "scoring_rule": "r",
            "item_texts": "shipped",
            "plugin": None,
            "distribution": None,
            "plugin_version": None,
        }
        scales = first["scales"]
        tasks[task] = {
            **{k: v for k, v in first.items() if k != "scales"},
            "scales": scales,
            "n_unparsed": 0,
            "n_refused": 0,
            "parse_rate": None,
            "instrument": inst,
            "prompt_template": "",
            "kind": "judged",
            "runs": runs,
        }
    return {
        "model": res["model"],
        "model_args": {},
        "backend": {},
        "cache": None,
        "settings": {"mode": "generate"},
        "seed": 0,
        "limit": None,
        "form": "original",
        "conditions": [],
        "design": "grid",
        "repeats": 1,
        "seeds": [0],
        "psymetrics": "0",
        "plugins": {},
        "python": "3",
        "platform": "p",
        "created": "2026-11-26",
        "judge": res.get("judge"),
        "tasks": tasks,
    }


def _summary(run: dict) -> dict:
    n = run.get("n_answered", 0)
    scales = {
        k: {"n_items": 0, "n_answered": 0, "method": "judge", **v} for k, v in run["scales"].items()
    }
    return {
        "condition": "+".join(run["facets"].values()) or "original",
        "facets": run["facets"],
        "repeat": run["repeat"],
        "seed": run["repeat"],
        "form": "original",
        "n_items": max(n, 44 if "n_answered" in run else 0),
        "n_answered": n,
        "scales": scales,
    }


# -- the extra metrics against scikit-learn and by hand -----------------------------------------


def test_macro_f1_and_mae_match_scikit_learn() -> None:
    truth = [1, 2, 3, 3, 5, 4, 2, 1, 3, 5]
    pred = [1, 3, 3, None, 5, 2, 2, 4, 3, 1]
    # sklearn.metrics.f1_score over the fixed classes 1-5; a missing prediction as a sentinel
    # class outside the labels (a miss of its true class), zero_division=0 as the authors' code
    ref = sk.f1_score(
        truth,
        [-1 if p is None else p for p in pred],
        labels=[1, 2, 3, 4, 5],
        average="macro",
        zero_division=0,
    )
    got = macro_f1(pred, truth, (1, 2, 3, 4, 5))
    assert got.value == pytest.approx(ref) and got.n == 10
    # MAE: sklearn.metrics.mean_absolute_error on the nine pairs with a prediction
    keep = [i for i, p in enumerate(pred) if p is not None]
    ref_mae = sk.mean_absolute_error([truth[i] for i in keep], [pred[i] for i in keep])
    m = mae(pred, truth)
    assert m.value == pytest.approx(ref_mae) and m.n == 9 and "1 target(s)" in (m.reason or "")
    # by hand: |errors| 0 1 0 0 2 0 3 0 4 over 9 = 10/9
    assert m.value == pytest.approx(10 / 9)


def test_mbti_axis_type_and_all_five_by_hand() -> None:
    pred = ["INTP", None, "ESTJ", "ENFP"]
    truth = ["INTP", "INFP", "ISTJ", "ENFJ"]
    ax = axis_accuracy(pred, truth)
    # EI: I=I, miss, E!=I, E=E -> 2/4; SN: N, miss, S, N -> 3/4; TF: 3/4; JP: P, miss, J, P!=J
    assert {a: s.value for a, s in ax.items()} == {"EI": 0.5, "SN": 0.75, "TF": 0.75, "JP": 0.5}
    assert type_accuracy(pred, truth).value == 0.25  # INTP only
    five = [[1, 2, 3, 4, 5], [1, 2, 3, 4, None], [2, 2, 3, 4, 5], [1, 1, 1, 1, 1]]
    truth5 = [[1, 2, 3, 4, 5]] * 3 + [[1, 1, 1, 1, None]]  # the last lacks a label: left out
    got = all_correct(five, truth5)
    assert (got.value, got.n) == (pytest.approx(1 / 3), 3)


@pytest.mark.parametrize(
    ("name", "stat", "reason"),
    [
        ("f1-no-prediction", lambda: macro_f1([None, None], [1, 2], (1, 2)), "no parsed"),
        ("f1-one-class", lambda: macro_f1([1, 2, 3], [3, 3, 3], (1, 2, 3)), "one class only"),
        ("f1-no-truth", lambda: macro_f1([1, 2], [None, None], (1, 2)), "no ground truth"),
        ("mae-no-prediction", lambda: mae([None], [2]), "no parsed"),
        ("type-no-prediction", lambda: type_accuracy([None, None], ["INTP", "ENFP"]), "no parsed"),
        ("axis-no-truth", lambda: axis_accuracy(["INTP"], [None])["EI"], "no ground truth"),
        (
            "all-five-no-prediction",
            lambda: all_correct([[None] * 5], [[1, 2, 3, 4, 5]]),
            "no parsed",
        ),
    ],
)
def test_undefined_metrics_are_null_with_a_reason(name: str, stat: Any, reason: str) -> None:
    s = stat()
    assert s.value is None and reason in (s.reason or ""), name


def test_analysis_reports_the_extra_metrics(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    dx = {
        "ann": dict(zip(DX, (4, 2, 2, 2, 1, 1, 1, 0, 1, 1), strict=True)),  # INTP, all five right
        "bob": dict(zip(DX, (2, 5, 3, 3, 2, 0, 1, 0, 0, 0), strict=True)),  # ENTJ, E 3 != 4
        "cy": dict(zip(DX, (5, 2, 5, 4, 3, 1, 1, 1, 1, 0), strict=True)),  # INFP, C 2 != 1
    }
    preds = predictions_from_results(
        _results("tat", [_run(p, None, 0, _dx(v)) for p, v in dx.items()])
    )
    rows = {(v.target, v.metric): v for v in analyse(preds, labels).validity}
    keys = sorted(dx)
    t = [LABELS[p]["big_five"][tr] for p in keys for tr in TRAITS]
    q = [dx[p][d] for p in keys for d in "OCEAN"]
    ref = sk.f1_score(t, q, labels=[1, 2, 3, 4, 5], average="macro", zero_division=0)
    assert rows[("big_five", "macro_f1")].value.value == pytest.approx(ref)
    assert rows[("big_five", "mae")].value.value == pytest.approx(sk.mean_absolute_error(t, q))
    assert rows[("big_five", "all_five")].value.value == pytest.approx(1 / 3)  # ann only
    # MBTI: INTP/INTP, ENTJ/ESTJ, INFP/ENFP: EI 2/3, SN 2/3, TF 3/3, JP 3/3, type 1/3
    assert rows[("mbti", "type_acc")].value.value == pytest.approx(1 / 3)
    assert [rows[("mbti", f"axis_acc.{a}")].value.value for a in ("EI", "SN", "TF", "JP")] == [
        pytest.approx(2 / 3),
        pytest.approx(2 / 3),
        1.0,
        1.0,
    ]
    dep_t = [LABELS[p]["depression"] for p in keys]
    dep_q = [dx[p]["depression"] for p in keys]
    ref_dep = sk.f1_score(dep_t, dep_q, labels=[0, 1, 2, 3], average="macro", zero_division=0)
    assert rows[("depression", "macro_f1")].value.value == pytest.approx(ref_dep)
    assert rows[("depression", "mae")].value.value == pytest.approx(2 / 3)  # |2-0| over 3


# -- the minimum-answered rules ------------------------------------------------------------------


def test_bfi_and_16p_below_the_authors_minimum_are_left_out(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    bfi = {t: {"score": 3.0} for t in TRAITS}
    p16 = {n: {"score": 70} for n in ("extraverted", "intuitive", "thinking", "judging")}
    res = {
        "model": "m",
        "tasks": {
            "bfi": {
                "runs": [
                    _run("ann", None, 0, bfi, n_answered=29),
                    _run("bob", None, 0, bfi, n_answered=30),
                    _run("cy", None, 0, bfi, n_answered=44),
                ]
            },
            "16p": {
                "runs": [
                    _run("ann", None, 0, p16, n_answered=39),
                    _run("bob", None, 0, p16, n_answered=40),
                    _run("cy", None, 0, p16, n_answered=None),
                ]
            },
        },
    }
    report = analyse(predictions_from_results(res, "run"), labels)
    out = {(e.task, e.persona): e.reason for e in report.excluded}
    assert set(out) == {("bfi", "ann"), ("16p", "ann"), ("16p", "cy")}
    assert "29 of 44 items answered, below the authors' minimum of 30" in out[("bfi", "ann")]
    assert "39 of 60 items answered, below the authors' minimum of 40" in out[("16p", "ann")]
    assert "no answered-item count" in out[("16p", "cy")]
    val = {(v.task, v.metric): v.value for v in report.validity}
    # the authors drop the persona for the task: N falls to 2 x 5 traits and 1 type
    assert val[("bfi", "accuracy")].n == 10 and val[("16p", "hamming")].n == 1
    # bob: all 3 vs (2, 5, 4, 3, 2) -> 1/5; cy: 3 vs (5, 1, 5, 4, 3) -> 1/5; 2/10
    assert val[("bfi", "accuracy")].value == pytest.approx(0.2)


def test_projective_analyze_lists_the_profiles_left_out(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    bfi = {t: {"score": 4.0} for t in TRAITS}
    res = {
        "model": "m",
        "tasks": {
            "bfi": {
                "runs": [
                    _run("ann", None, 0, bfi, n_answered=12),
                    _run("bob", None, 0, bfi, n_answered=44),
                ]
            }
        },
    }
    (run / "results.json").write_text(json.dumps(_record(res)), encoding="utf-8")
    r = CliRunner().invoke(
        cli, ["projective-analyze", str(run), "--json", str(tmp_path / "o.json")]
    )
    assert r.exit_code == 0, r.output
    assert "Questionnaire profiles left out" in r.output
    assert "12 of 44 items answered, below the authors' minimum of 30" in r.output
    data = json.loads((tmp_path / "o.json").read_text())
    assert [e["persona"] for e in data["excluded"]] == ["ann"]


# -- every repeat, with the spread --------------------------------------------------------------


def test_every_repeat_is_analysed_with_its_spread(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    rng = np.random.default_rng(7)
    runs, dep = [], {}
    for rep in range(3):
        for framing in (None, "job-screening"):
            for p in sorted(LABELS):
                v = int(rng.integers(0, 4))
                dep[(rep, framing, p)] = v
                runs.append(_run(p, framing, rep, _dx({"depression": v})))
    report = analyse(predictions_from_results(_results("sct", runs)), labels, n_boot=50)
    assert report.repeats == [0, 1, 2]
    rel = {r.repeat: r for r in report.reliability if r.target == "depression"}
    assert sorted(rel) == [0, 1, 2]
    kappas, accs = [], []
    for rep in range(3):
        a = [dep[(rep, None, p)] for p in sorted(LABELS)]
        b = [dep[(rep, "job-screening", p)] for p in sorted(LABELS)]
        # each repeat paired with the same repeat of neutral: sklearn's linear kappa, the mean
        # shift by hand
        if len(set(a)) > 1 or len(set(b)) > 1:
            ref = sk.cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2, 3])
            assert rel[rep].kappa.value == pytest.approx(ref)
            kappas.append(ref)
        assert rel[rep].shift.mean == pytest.approx(np.mean(np.subtract(b, a)))
        truth = [LABELS[p]["depression"] for p in sorted(LABELS)]
        accs.append(sk.accuracy_score(truth, a))
    spread = {(s.condition, s.target, s.metric): s for s in report.spread}
    k = spread[("framing=job-screening", "depression", "kappa")]
    assert k.n_repeats == 3 and k.n_defined == len(kappas)
    assert k.mean == pytest.approx(np.mean(kappas))
    assert k.sd == pytest.approx(np.std(kappas, ddof=1))  # numpy sample SD
    assert (k.low, k.high) == (pytest.approx(min(kappas)), pytest.approx(max(kappas)))
    acc = spread[("neutral", "depression", "accuracy")]
    assert acc.mean == pytest.approx(np.mean(accs)) and acc.sd == pytest.approx(
        np.std(accs, ddof=1)
    )


def test_projective_analyze_prints_repeats_and_spread(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    runs = [
        _run(p, f, rep, _dx({"depression": (rep + i + (f is not None)) % 4}))
        for rep in range(2)
        for f in (None, "job-screening")
        for i, p in enumerate(sorted(LABELS))
    ]
    (run / "results.json").write_text(json.dumps(_record(_results("sct", runs))), encoding="utf-8")
    r = CliRunner().invoke(cli, ["projective-analyze", str(run), "--n-boot", "20"])
    assert r.exit_code == 0, r.output
    assert "repeats: 0, 1" in r.output and "Across repeats" in r.output
    rows = [ln.split() for ln in r.output.splitlines() if " sct " in ln and "depression" in ln]
    assert {row[4] for row in rows if row[3] == "framing=job-screening"} >= {"0", "1"}


# -- unparsed diagnoses: missing (default) or the authors' defaults ------------------------------


def _unparsed_preds() -> list[Any]:
    dx = {
        "ann": dict.fromkeys(DX, None),  # nothing parsed: authors -> 3 3 3 3 3, ESTJ, 0
        "bob": {
            **dict.fromkeys(DX[:5], None),
            "EI": 0,
            "SN": 0,
            "TF": 0,
            "JP": 0,
            "depression": None,
        },
        "cy": dict(zip(DX, (5, 1, 5, 4, 3, 0, 1, 1, 1, 0), strict=True)),  # all right
    }
    return predictions_from_results(
        _results("tat", [_run(p, None, 0, _dx(v)) for p, v in dx.items()])
    )


def test_unparsed_counts_as_missing_by_default(tmp_path: Path) -> None:
    report = analyse(_unparsed_preds(), _labels(tmp_path))
    val = {(v.target, v.metric): v.value for v in report.validity}
    assert report.unparsed == "missing" and report.n_substituted == 0
    # accuracy: only cy's 5 traits right out of 15 (missing counts wrong)
    assert val[("big_five", "accuracy")].value == pytest.approx(5 / 15)
    # MAE leaves the 10 missing traits out: cy's 5 exact -> 0
    assert val[("big_five", "mae")].value == 0 and val[("big_five", "mae")].n == 5
    assert val[("depression", "accuracy")].value == pytest.approx(1 / 3)  # cy 0 == 0
    assert "counted as missing" in " ".join(report.notes)


def test_unparsed_authors_reproduces_their_defaults(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    report = analyse(_unparsed_preds(), labels, unparsed="authors")
    assert report.unparsed == "authors" and report.n_substituted == 5 + 4 + 1 + 5 + 1
    assert AUTHORS_DEFAULTS["O"] == 3 and AUTHORS_DEFAULTS["EI"] == 0
    val = {(v.target, v.metric): v.value for v in report.validity}
    # ann 3 3 3 3 3 vs (4, 2, 2, 2, 1): 0 hits; bob 3 3 3 3 3 vs (2, 5, 4, 3, 2): A -> 1 hit;
    # cy 5/5: 6/15
    assert val[("big_five", "accuracy")].value == pytest.approx(6 / 15)
    # MBTI: ann "XXXX" -> ESTJ vs INTP: 3 axes off; bob ESTJ vs ESTJ: 0; cy ENFP (axes 0 1 1 1)
    # vs ENFP: 0 -> mean Hamming 3/3 = 1.0; type accuracy 2/3
    assert val[("mbti", "hamming")].value == pytest.approx(1.0)
    assert val[("mbti", "type_acc")].value == pytest.approx(2 / 3)
    # depression: ann 0 vs 1, bob 0 vs 2, cy 0 vs 0 -> 1/3; MAE (1 + 2 + 0) / 3
    assert val[("depression", "accuracy")].value == pytest.approx(1 / 3)
    assert val[("depression", "mae")].value == pytest.approx(1.0)
    assert "authors' defaults" in " ".join(report.notes)


def test_projective_analyze_unparsed_option_is_recorded(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    preds_src = _results("tat", [_run("ann", None, 0, _dx({"depression": None}))])
    (run / "results.json").write_text(json.dumps(_record(preds_src)), encoding="utf-8")
    lab = tmp_path / "labels.json"
    lab.write_text(json.dumps(LABELS), encoding="utf-8")
    for choice, note in (("missing", "counted as missing"), ("authors", "substituted for 1")):
        out = tmp_path / f"{choice}.json"
        args = ["projective-analyze", str(run), "--labels", str(lab), "--json", str(out)]
        r = CliRunner().invoke(cli, [*args, "--unparsed", choice])
        assert r.exit_code == 0, r.output
        assert f"unparsed diagnoses: {choice}" in r.output and note in r.output
        assert json.loads(out.read_text())["unparsed"] == choice
    r = CliRunner().invoke(cli, ["projective-analyze", str(run)])
    assert "unparsed diagnoses: missing" in r.output  # the default is unchanged
