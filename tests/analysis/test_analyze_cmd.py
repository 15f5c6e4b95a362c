"""``psym analyze`` end to end on recorded runs (scripted backends in unit tests only)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.analysis.report import analyze
from psymetrics_core.base.types import Completion


class _ValueBackend:
    """Unit-test backend: answers a value fixed by (item text, seed), whatever the option order."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted"}

    def generate(self, prompts, settings, progress=None):
        out = []
        for p in prompts:
            stmt = re.search(r"Statement: (.*)", p.text)
            key = f"{stmt.group(1) if stmt else p.text}:{settings.seed}".encode()
            low = min(o.value for o in p.options)
            value = low + hashlib.sha256(key).digest()[0] % len(p.options)
            out.append(Completion(text=f"{value}"))
        return out


# persona k answers item i with PERSONA_ANSWERS[k][i] (mfq items 1..5 = care, fairness,
# loyalty, authority, purity)
PERSONA_ANSWERS = {
    "1": [1, 1, 4, 0, 2],
    "2": [2, 3, 3, 1, 2],
    "3": [3, 2, 2, 2, 2],
    "4": [4, 4, 1, 3, 2],
}


class _PersonaBackend:
    """Unit-test backend: answers from PERSONA_ANSWERS by the persona in the system prompt."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted-persona"}

    def generate(self, prompts, settings, progress=None):
        out = []
        for p in prompts:
            system = " ".join(m["content"] for m in p.messages if m["role"] == "system")
            persona = re.search(r"persona (\d)", system).group(1)
            item = int(re.search(r"\[item (\d+)\]", " ".join(m["content"] for m in p.messages))[1])
            out.append(Completion(text=str(PERSONA_ANSWERS[persona][item - 1])))
        return out


@pytest.fixture
def value_run(fresh_plugins, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    evaluate(
        ["bfi"],
        backend=_ValueBackend(),
        limit=10,
        conditions=["original", "reversed-options"],
        repeats=3,
        output=out,
        session=fresh_plugins,
    )
    return out


def test_consistency_styles_and_facets_on_a_value_consistent_respondent(
    fresh_plugins, value_run: Path
):
    rep = analyze([value_run], session=fresh_plugins)
    a = rep["analyses"]["run"]["bfi"]
    # answers do not depend on option order -> consistency 1 in every seed
    assert a["consistency"]["mean"] == {"reversed-options": 1.0}
    assert [r["seed"] for r in a["consistency"]["per_seed"]] == [1234, 1235, 1236]
    # scale scores vary with the seed only: all variance is the seed's
    for scale, res in a["facets"].items():
        if res.get("note"):
            continue
        assert res["shares"]["option_order"] == pytest.approx(0.0, abs=1e-9), scale
        assert res["shares"]["seed"] == pytest.approx(1.0), scale
    assert set(a["reliability"]) == {
        "extraversion",
        "agreeableness",
        "conscientiousness",
        "neuroticism",
        "openness",
    }
    assert a["reliability"]["extraversion"]["respondents"] == "6 of 6 administrations (complete)"
    assert set(a["icc"]) == {"original", "reversed-options"}
    styles = a["response_styles"]["mean"]["original"]
    assert styles["refusal_rate"] == 0.0 and 0.0 <= styles["extreme"] <= 1.0
    assert a["mbti_metrics"]["robustness"]["reversed-options"] == pytest.approx(1.0)
    assert "respondents are administrations" in rep["respondents"]


def test_consistency_matches_a_direct_count_from_samples(fresh_plugins, value_run: Path):
    # independent computation: count unchanged answers straight from samples.jsonl
    lines = [json.loads(x) for x in (value_run / "samples.jsonl").read_text().splitlines()]
    by = {(x["condition"], x["seed"], x["item"]): x["answer"] for x in lines}
    seed = 1235
    same = [
        by[("original", seed, i)] == by[("reversed-options", seed, i)]
        for i in map(str, range(1, 11))
    ]
    rep = analyze([value_run], nan_policy="mismatch", session=fresh_plugins)
    row = next(
        r for r in rep["analyses"]["run"]["bfi"]["consistency"]["per_seed"] if r["seed"] == seed
    )
    assert row["consistency"] == pytest.approx(sum(same) / len(same))


def test_baseline_fences_flag_out_of_range_models(fresh_plugins, value_run: Path, tmp_path: Path):
    base = tmp_path / "human.csv"
    base.write_text("consistency\n0.5\n0.6\n0.7\n0.8\n0.9\n")  # fences 0.3 .. 1.1
    rep = analyze([value_run], baseline=base, session=fresh_plugins)
    c = rep["analyses"]["run"]["bfi"]["consistency"]
    assert c["human_fences"]["upper"] == pytest.approx(1.1)
    assert not any(r["outside_fences"] for r in c["per_seed"])
    base.write_text("consistency\n0.5\n0.5\n0.5\n0.5\n")  # fences collapse to 0.5
    c = analyze([value_run], baseline=base, session=fresh_plugins)["analyses"]["run"]["bfi"][
        "consistency"
    ]
    assert all(r["outside_fences"] for r in c["per_seed"])


def _persona_files(tmp_path: Path) -> list[str]:
    files = []
    for k in PERSONA_ANSWERS:
        f = tmp_path / f"p{k}.txt"
        f.write_text(f"You are persona {k}.")
        files.append(f"persona={f}")
    return files


def test_convergent_validity_across_persona_units(fresh_plugins, tmp_path: Path, monkeypatch):
    inst = fresh_plugins.get_instrument("mfq")
    # tag every item so the scripted backend knows which item it is asked
    monkeypatch.setattr(inst, "prompt_template", inst.prompt_template + " [item {{ item_id }}]")
    out = tmp_path / "personas"
    evaluate(
        ["mfq"],
        backend=_PersonaBackend(),
        limit=5,
        conditions=_persona_files(tmp_path),
        output=out,
        session=fresh_plugins,
    )
    hyps = ["mfq.care~mfq.fairness:+", "mfq.care~mfq.loyalty:-"]
    rep = analyze([out], hypotheses=hyps, session=fresh_plugins)
    cv = rep["convergent_validity"]
    # a unit is a model (results.json 'model', here the default name) split by persona
    assert cv["units"] == [
        "smollm2/persona=p1",
        "smollm2/persona=p2",
        "smollm2/persona=p3",
        "smollm2/persona=p4",
    ]
    care_fair, care_loyal = cv["rows"]
    # hand calculation: care 1 2 3 4 vs fairness 1 3 2 4 -> sum d^2 = 2 -> 1 - 12/60 = 0.8;
    # loyalty 4 3 2 1 -> rho = -1 (CI undefined at |rho| = 1)
    assert care_fair["rho"] == pytest.approx(0.8) and care_fair["supported"]
    assert care_loyal["rho"] == pytest.approx(-1.0) and care_loyal["supported"]
    assert care_fair["n"] == 4
    # purity is constant across personas: no correlation can be computed
    rep2 = analyze([out], hypotheses=["mfq.care~mfq.purity:+"], session=fresh_plugins)
    assert "varying" in rep2["convergent_validity"]["rows"][0]["note"]
    # without declared hypotheses, an exploratory table over all scale pairs
    assert analyze([out], session=fresh_plugins)["convergent_validity"]["exploratory"] is True


def test_cli_json_output_dir_and_errors(value_run: Path, tmp_path: Path, capsys):
    from psymetrics_core.cli import main

    main(["analyze", str(value_run), "--json", "--output", str(tmp_path / "an")])
    report = json.loads(capsys.readouterr().out)
    assert report["analyses"]["run"]["bfi"]["consistency"]["mean"]["reversed-options"] == 1.0
    for name in ("analysis.json", "consistency.csv", "response_styles.csv", "facets.csv"):
        assert (tmp_path / "an" / name).is_file()
    # one run: no convergent-validity rows, so no empty CSV
    assert not (tmp_path / "an" / "convergent_validity.csv").exists()
    main(["analyze", str(value_run)])
    text = capsys.readouterr().out
    for heading in (
        "answer consistency",
        "internal consistency",
        "test-retest",
        "response styles",
        "variance of scale scores by facet",
    ):
        assert heading in text
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(tmp_path / "nope")])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "results.json: no such file" in err and len(err.strip().splitlines()) == 1


@pytest.mark.model
def test_analyze_a_real_smollm2_run(fresh_plugins, smollm2, tmp_path: Path):
    out = tmp_path / "real"
    # the response cache on, as ``psym eval`` has it: the test session's cache may already hold
    # some of these answers (test_end_to_end_model asks the same mfq items)
    evaluate(
        ["mfq"],
        backend=smollm2,
        cache=True,
        limit=2,
        repeats=2,
        conditions=["original", "reversed-options"],
        output=out,
        session=fresh_plugins,
    )
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 2 * 2 * 2
    rep = analyze([out], session=fresh_plugins)
    a = rep["analyses"]["real"]["mfq"]
    assert set(a["consistency"]["mean"]) == {"reversed-options"}
    assert 0.0 <= a["consistency"]["mean"]["reversed-options"] <= 1.0
    assert set(a["response_styles"]["mean"]) == {"original", "reversed-options"}


def test_totals_and_rescaled_items_reach_the_item_analyses(fresh_plugins, tmp_path: Path):
    out = tmp_path / "asi"
    evaluate(
        ["asi"], backend=_ValueBackend(), limit=6, repeats=2, output=out, session=fresh_plugins
    )
    rel = analyze([out], session=fresh_plugins)["analyses"]["asi"]["asi"]["reliability"]
    assert "total" in rel and rel["total"]["k"] == 6  # the total uses every scored item
    # SR2K item 3 is rescaled (1-3 onto 1-4) after reverse keying; the keyed value used by
    # the item analyses is the one the scorer uses
    out2 = tmp_path / "sr2k"
    evaluate(["sr2k"], backend=_ValueBackend(), output=out2, session=fresh_plugins)
    from psymetrics_core.analysis.records import load_run

    items = load_run(out2).items
    inst = fresh_plugins.get_instrument("sr2k")
    it3 = next(it for it in inst.items if it.id == "3")
    row = items[items["item"] == "3"].iloc[0]
    x = row["answer"]
    rs = inst.response_scale_for(it3)
    x = rs.min + rs.max - x if it3.reverse else x
    expected = dict(it3.rescale or ()).get(int(x), x)
    assert row["keyed"] == pytest.approx(expected)
    assert it3.rescale  # the test would be vacuous without a rescale


def test_norm_comparison_in_the_report(fresh_plugins, value_run: Path, monkeypatch):
    from psymetrics_core.analysis import norms as nm

    inst = fresh_plugins.get_instrument("bfi")
    group = {"name": "Crowd", "mean": 3.25, "sd": 0.9, "n": 6076, "source": "test", "year": 2003}
    monkeypatch.setitem(inst.extra, "norms", {"extraversion": [group]})
    rep = analyze([value_run], session=fresh_plugins)
    n = rep["analyses"]["run"]["bfi"]["norms"]
    assert "not independent respondents" in n["caveat"]
    [row] = n["scales"]["extraversion"]
    # the model's scores: the three repeats of the reference condition, from results.json
    res = json.loads((value_run / "results.json").read_text())
    vals = [
        r["scales"]["extraversion"]["score"]
        for r in res["tasks"]["bfi"]["runs"]
        if r["condition"] == "original"
    ]
    m = sum(vals) / 3
    assert row["model_n"] == 3 and row["model_mean"] == pytest.approx(m)
    assert row["z"] == pytest.approx((m - 3.25) / 0.9)
    ref = nm.psychobench_test(m, row["model_sd"], 3, 3.25, 0.9, 6076)
    assert row["psychobench_test"]["p"] == pytest.approx(ref["p"])


class _FirstOptionBackend:
    """Unit-test backend: always the first option shown (Jung et al., 2026's SmolLM2 pattern:
    one answer in the original order, the opposite when the options are reversed)."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted-first"}

    def generate(self, prompts, settings, progress=None):
        return [Completion(text=str(p.options[0].value)) for p in prompts]


def test_uninformative_reliability_is_null_and_model_is_named(fresh_plugins, tmp_path, capsys):
    from psymetrics_core.cli import main

    out = tmp_path / "run"
    conditions = ["original", "changed-eos", "reversed-options"]
    evaluate(
        ["bfi"],
        backend=_FirstOptionBackend(),
        limit=10,
        conditions=conditions,
        output=out,
        session=fresh_plugins,
    )  # noqa: E501
    # the run as a local model records it: the converted copy's path, beside the model's name
    res = json.loads((out / "results.json").read_text())
    res["model"], res["backend"] = "smollm2", {"pretrained": "/venv/lib/models/smollm2-copy"}
    (out / "results.json").write_text(json.dumps(res))
    rel = analyze([out], session=fresh_plugins)["analyses"]["run"]["bfi"]["reliability"]
    for scale, r in rel.items():  # 3 administrations, 2 distinct patterns
        assert r["distinct_patterns"] == 2, scale
        assert r["alpha"] is None and r["omega"]["omega"] is None, (scale, r)
        assert "not informative" in r["note"] or "does not vary" in r["note"], (scale, r)
    assert any("not informative" in r["note"] for r in rel.values())  # alpha 0 or 1 before
    main(["analyze", str(out)])
    text = capsys.readouterr().out
    assert "/venv/lib" not in text and "smollm2" in text
    block = text[text.index("internal consistency") :].split("└")[0]
    assert "0.00" not in block and "1.00" not in block and "—" in block
    main(["analyze", str(out), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["analyses"]["run"]["bfi"]["reliability"]["openness"]["alpha"] is None


def test_response_styles_follow_the_agree_end_of_16p(fresh_plugins, tmp_path: Path):
    """16p codes 1 = agree (Rao et al., 2023): answering "1" everywhere is acquiescence +1 and
    agree rate 1 by hand, in ``psym analyze`` as on the eval screen."""
    from behaviour_fakes import ScriptedBackend

    out = tmp_path / "p16"
    evaluate(
        ["16p"], backend=ScriptedBackend(lambda _: "1"), limit=6, output=out, session=fresh_plugins
    )  # noqa: E501
    rep = analyze([out], session=fresh_plugins)
    mean = rep["analyses"]["p16"]["16p"]["response_styles"]["mean"]["original"]
    assert mean["acquiescence"] == pytest.approx(1.0) and mean["agree_rate"] == pytest.approx(1.0)
    ind = json.loads((out / "results.json").read_text())["tasks"]["16p"]["indicators"]
    assert ind["acquiescence"]["value"] == pytest.approx(1.0)
