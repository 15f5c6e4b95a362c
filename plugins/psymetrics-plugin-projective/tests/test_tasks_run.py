"""The three tasks run end to end: capability error, loopback image server, personas + analysis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from psymetrics_plugin_projective.inkblot import make_card
from scripted_server import SRAS, ScriptedServer

from psymetrics_core import evaluate
from psymetrics_core.cli import cli, main


def test_rorschach_on_a_text_only_model_stops_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["eval", "--tasks", "rorschach", "--output", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert stop.value.code == 1 and "Traceback" not in err
    errors = [ln for ln in err.splitlines() if "error" in ln.lower()]
    assert len(errors) == 1 and "text-only (supports_images is False)" in errors[0]
    assert (
        not (tmp_path / "r" / "samples.jsonl").exists()
        or not (tmp_path / "r" / "samples.jsonl").read_text()
    )  # stopped before sending anything


def test_rorschach_sends_ten_images_and_codes_the_replies(tmp_path: Path) -> None:
    with ScriptedServer() as srv:
        out = evaluate(
            ["rorschach"],
            model="openai-chat",
            model_args={"base_url": srv.base_url, "model": "vision-model", "concurrency": "2"},
            output=tmp_path / "run",
            task_options={"rorschach": {"stimulus_seed": "5"}},
        )
    assert srv.bad == []
    expected = [make_card(n, 5).sha256 for n in range(1, 11)]
    assert srv.received_images == expected  # ten cards, in order, each once, as sent
    entry = out["tasks"]["rorschach"]
    assert entry["inkblot_sha256"] == {
        f"card_{r}": h
        for r, h in zip(
            ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"), expected, strict=True
        )
    }
    sc = {k: v["score"] for k, v in entry["scales"].items()}
    # SRAS formulas by hand from the server's counts (scripted_server.SRAS):
    # CPS = 2*2 + 6 - (2 + 3*1 + 1) = 4; ARS = 2*2 - (1 + 0 + 1 + 2 + 0) = 0
    # IRS = 3*3 + 2*1 + 2 - (2*0 + 2*1 + 3*0) = 11; EA = 3 + (1 + 1 + 0) = 5; es = 7; SCS = -2
    assert SRAS["M"] == 3
    assert (sc["CPS"], sc["ARS"], sc["IRS"], sc["EA"], sc["es"], sc["SCS"]) == (4, 0, 11, 5, 7, -2)
    assert (sc["dx.O"], sc["dx.N"], sc["dx.depression"], sc["dx.suicide"]) == (4, 2, 1, 0)
    assert entry["mbti_type"] == "INFP" and sc["dx.EI"] == 1
    assert entry["judge_parse"]["interpreter"]["parse_rate"] == 1.0
    judge_lines = (tmp_path / "run" / "judge.jsonl").read_text().splitlines()
    assert len(judge_lines) == 5  # one SRAS call + four diagnoses
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 20  # free association + inquiry per card
    assert samples[1]["prompt"]["messages"][-2]["content"].startswith("A bat")  # the dialogue


PERSONA = """You are {name}. Based on the following psychological profile, engage with the \
projective test stimuli in character, and let your behavior reflect that persona.

Beliefs and Values: {beliefs}

Psychological Traits: {traits}

Speech Style: {speech}

Stay in character throughout the assessment.
"""  # the paper's role-play template (Wang et al. 2026, App. B.7)


PERSONAS = {
    "frieren": ("an elf mage", "time is long; memories matter", "calm, detached", "terse"),
    "saitama": ("a hero", "do the job, then rest", "laid-back, unbothered", "flat"),
    "megumin": ("an arch wizard", "explosions are art", "dramatic, proud", "grandiose"),
}


@pytest.fixture(scope="module")
def persona_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three persona files x {neutral, job-screening}, sct on the scripted loopback judge."""
    tmp = tmp_path_factory.mktemp("personas")
    args = ["eval", "--tasks", "sct", "--limit", "5", "--model", "openai-chat"]
    for key, (name, beliefs, traits, speech) in PERSONAS.items():
        f = tmp / f"{key}.txt"
        f.write_text(PERSONA.format(name=name, beliefs=beliefs, traits=traits, speech=speech))
        args += ["--condition", f"persona={f}", "--condition", f"persona={f}+framing=job-screening"]
    args += ["--design", "each"]  # persona x {neutral, job-screening}: six cells
    with ScriptedServer(vary=True) as srv:
        run = CliRunner().invoke(
            cli,
            [
                *args,
                "--model-args",
                f"base_url={srv.base_url},model=m",
                "--output",
                str(tmp / "run"),
            ],
        )
        assert run.exit_code == 0, run.output
    return tmp / "run"


def _dx_cells(run_dir: Path, dims: list[str]) -> dict[tuple[str, str], list[int]]:
    results = json.loads((run_dir / "results.json").read_text())
    cells = {}
    for r in results["tasks"]["sct"]["runs"]:
        cond = r["facets"].get("framing", "neutral")
        persona = r["facets"]["persona"].partition("=")[2]
        cells[(persona, cond)] = [int(r["scales"][d]["score"]) for d in dims]
    return cells


def test_personas_framing_and_analysis(tmp_path: Path, genpt: Path, persona_run: Path) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "projective-analyze",
            str(persona_run),
            "--labels",
            str(genpt / "pdb_labels.json"),
            "--json",
            str(tmp_path / "report.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Reliability against 'neutral'" in res.output and "framing=job-screening" in res.output
    assert "Validity against" in res.output
    report = json.loads((tmp_path / "report.json").read_text())
    rel = [r for r in report["reliability"] if r["target"] == "big_five"]
    assert rel and rel[0]["n_targets"] == 3
    # check the printed kappa independently against scikit-learn on the results file
    sklearn = pytest.importorskip("sklearn.metrics")
    results = json.loads((persona_run / "results.json").read_text())
    cells = {}
    for r in results["tasks"]["sct"]["runs"]:
        cond = r["facets"].get("framing", "neutral")
        cells[(r["facets"]["persona"], cond)] = r["scales"]
    dims = ["dx.O", "dx.C", "dx.E", "dx.A", "dx.N"]
    keys = sorted({p for p, _ in cells})
    a = [int(cells[(p, "neutral")][d]["score"]) for p in keys for d in dims]
    b = [int(cells[(p, "framing=job-screening")][d]["score"]) for p in keys for d in dims]
    ref = sklearn.cohen_kappa_score(a, b, weights="linear", labels=[1, 2, 3, 4, 5])
    assert rel[0]["kappa"]["value"] == pytest.approx(ref)


def test_psym_analyze_reports_kappa_dcr_and_accuracy(
    genpt: Path, persona_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 13 done-when: three persona files, neutral and job-screening, `psym analyze
    # --labels` prints kappa, DCR with direction and accuracy (through the analyze_runs hook)
    res = CliRunner().invoke(
        cli, ["analyze", str(persona_run), "--labels", str(genpt / "pdb_labels.json")]
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert "Projective tests" in out and "Reliability against 'neutral'" in out
    rows = {}
    for line in out.splitlines():
        tok = line.split()
        # judge test target condition rep, then n kappa DCR dir ... or metric value majority n
        if len(tok) >= 9 and tok[1] == "sct" and tok[2] in ("big_five", "mbti"):
            kind = "acc" if tok[5] in ("accuracy", "hamming") else "rel" if tok[5].isdigit() else ""
            rows.setdefault((tok[2], tok[3], kind), tok)
    dims = ["dx.O", "dx.C", "dx.E", "dx.A", "dx.N"]
    cells = _dx_cells(persona_run, dims)
    keys = sorted({p for p, _ in cells})
    a = [v for p in keys for v in cells[(p, "neutral")]]
    b = [v for p in keys for v in cells[(p, "framing=job-screening")]]
    # kappa: independent implementation (scikit-learn), printed to 2 decimals
    sklearn = pytest.importorskip("sklearn.metrics")
    rel = rows[("big_five", "framing=job-screening", "rel")]
    ref = sklearn.cohen_kappa_score(a, b, weights="linear", labels=[1, 2, 3, 4, 5])
    assert rel[4] == "0" and float(rel[6]) == pytest.approx(ref, abs=0.0051)  # 2 decimals
    # DCR = max(n_up, n_down) / (n_up + n_down) and its arrow, counted by hand here
    up = sum(y > x for x, y in zip(a, b, strict=True))
    down = sum(y < x for x, y in zip(a, b, strict=True))
    assert up + down > 0  # the scripted judge varies its answers per request
    assert float(rel[7]) == pytest.approx(
        max(up, down) / (up + down), abs=0.0051
    )  # printed to 2 decimals
    assert rel[8] == ("↑" if up > down else "↓" if down > up else "=")
    # accuracy against pdb_labels.json (exact level match over 3 personas x 5 traits)
    labels = json.loads((genpt / "pdb_labels.json").read_text())
    traits = ["openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"]
    truth = [labels[p]["big_five"][t]["level"] for p in keys for t in traits]
    for cond, pred in (("neutral", a), ("framing=job-screening", b)):
        acc = rows[("big_five", cond, "acc")]
        assert acc[5] == "accuracy" and acc[-1] == "15"
        hits = sum(x == y for x, y in zip(pred, truth, strict=True))
        assert float(acc[6]) == pytest.approx(hits / 15, abs=0.0051)  # printed to 2 decimals
    # --json carries the same numbers under sections.projective
    js = CliRunner().invoke(
        cli, ["analyze", str(persona_run), "--labels", str(genpt / "pdb_labels.json"), "--json"]
    )
    assert js.exit_code == 0, js.output
    section = json.loads(js.output)["sections"]["projective"]
    big = [r for r in section["reliability"] if r["task"] == "sct" and r["target"] == "big_five"]
    assert big[0]["kappa"]["value"] == pytest.approx(ref)
    # a bad labels file: one line naming the file, no traceback
    bad = persona_run.parent / "bad_labels.json"
    bad.write_text('{"frieren": {"mbti": "XYZ"}}', encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(persona_run), "--labels", str(bad)])
    err = capsys.readouterr().err
    assert stop.value.code == 1 and "Traceback" not in err
    assert "bad_labels.json, line 1 (target 'frieren'): mbti type 'XYZ'" in err


def test_user_stem_bank_through_items_option(tmp_path: Path, genpt: Path) -> None:
    # the authors' Chinese bank as a user file (--items sct=FILE): Chinese instruction, their ids
    with ScriptedServer() as srv:
        out = evaluate(
            ["sct"],
            model="openai-chat",
            model_args={"base_url": srv.base_url, "model": "m"},
            item_files={"sct": genpt / "sct_final_filtered.json"},
            limit=5,
            output=tmp_path / "run",
        )
    entry = out["tasks"]["sct"]
    assert entry["stimuli"] == ["4.1_06", "4.2_01", "1.1_04", "1.4_01", "2.1_08"]  # seed 42
    first = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert first["prompt"]["messages"][-1]["content"].startswith("请完成以下句子。")
    # five stems, one per domain: each domain mean rests on one stem score 0-6
    for dom in ("FA", "CA", "SA", "IR", "ER"):
        assert entry["scales"][dom]["n"] == 1 and 0 <= entry["scales"][dom]["score"] <= 6
    bad = tmp_path / "bad.csv"
    bad.write_text("id,domain,stem\nx1,ZZ,My…\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"bad.csv, line 2: domain 'ZZ'"):
        evaluate(
            ["sct"],
            model="openai-chat",
            model_args={"base_url": "http://127.0.0.1:9", "model": "m"},
            item_files={"sct": bad},
            limit=1,
        )


def test_targets_option_limits_the_diagnoses(tmp_path: Path) -> None:
    with ScriptedServer() as srv:
        out = evaluate(
            ["sct"],
            model="openai-chat",
            model_args={"base_url": srv.base_url, "model": "m"},
            limit=2,
            output=tmp_path / "run",
            task_options={"sct": {"targets": "depression"}},
        )
    sc = out["tasks"]["sct"]["scales"]
    assert sc["dx.depression"]["score"] == 1  # the scripted diagnostician's answer
    assert sc["dx.O"]["score"] is None and "not requested" in sc["dx.O"]["reason"]
    stages = [
        json.loads(x)["stage"] for x in (tmp_path / "run" / "judge.jsonl").read_text().splitlines()
    ]
    assert stages == ["interpreter", "diagnostician.depression"]
    with pytest.raises(Exception, match="option targets takes"):
        evaluate(
            ["sct"],
            model="openai-chat",
            model_args={"base_url": srv.base_url, "model": "m"},
            task_options={"sct": {"targets": "anxiety"}},
            limit=1,
        )
