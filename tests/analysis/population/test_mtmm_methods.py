"""The MTMM with measurement methods as the method facet (issue 33, item 4): one population of
12 personas given the BFI twice, item by item (self-report, a loopback server answering as each
persona) and as an interview (tests/administer/interview_server.py: the subject answers the open
questions as the persona, the judge converts the answers to options), then ``psym analyze`` of
the two runs. Each persona's interview levels differ from its self-report levels on some traits,
so the methods agree imperfectly. The validity values are checked against numpy: Pearson's r of
the per-persona scale scores computed here from the two runs' samples (keyed answers averaged by
hand), not by the analysis.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from benchmarks.latency_server import LatencyServer
from psymetrics_core.cli import cli
from psymetrics_core.instruments.spec import load_instrument
from tests.administer.interview_server import InterviewServer, Persona

REPO = Path(__file__).resolve().parents[3]
BFI = REPO / "plugins/psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi/instrument.yaml"
TRAITS = ("extraversion", "agreeableness", "conscientiousness", "neuroticism", "openness")
RNG = np.random.default_rng(33)
NAMES = [f"P{k:02d}" for k in range(12)]
SELF = {n: dict(zip(TRAITS, map(int, RNG.integers(1, 6, 5)), strict=True)) for n in NAMES}
# the interview shifts some traits by one step (kept within 1-5): imperfect agreement
SHIFT = {n: dict(zip(TRAITS, map(int, RNG.integers(-1, 2, 5)), strict=True)) for n in NAMES}
TALK = {n: {t: min(5, max(1, SELF[n][t] + SHIFT[n][t])) for t in TRAITS} for n in NAMES}


def _items() -> list[tuple[str, str, str, bool, str]]:
    inst = load_instrument(BFI)
    return [(it.id, it.text, it.scales[0], it.reverse, str(it.question)) for it in inst.items]


def _self_report(messages: list[dict[str, str]]) -> str:
    """The persona's level of the item's trait, turned over for a reverse-keyed item."""
    system = " ".join(m["content"] for m in messages if m["role"] == "system")
    who = re.search(r"You are (P\d\d)\.", system)
    user = messages[-1]["content"].lower()  # "Statement: I see myself as someone who is ..."
    found = [x for x in _items() if x[1].lower() in user]
    _, _, scale, reverse, _ = max(found, key=lambda x: len(x[1]))  # the longest text named
    level = SELF[who.group(1)][scale] if who else 3
    return str(6 - level if reverse else level)


def _eval(out: Path, base_url: str, pop: Path, *extra: str) -> None:
    # the first 15 items: 3 per trait (the BFI cycles through the five), to keep the test cheap
    args = ["eval", "--tasks", "bfi", "--limit", "15", "--population", str(pop)]
    args += ["--model", "openai-chat"]
    args += ["--model-args", f"base_url={base_url},model=subject", "-o", str(out), *extra]
    res = CliRunner().invoke(cli, args, terminal_width=200)
    assert res.exit_code == 0, res.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    tmp = tmp_path_factory.mktemp("mtmm-methods")
    pop = tmp / "pop.jsonl"
    lines = [{"id": n.lower(), "persona": n, "labels": {}} for n in NAMES]
    pop.write_text("".join(json.dumps(x) + "\n" for x in lines))
    questions = {q: (i, s, r) for i, _, s, r, q in _items()}
    personas = {n: Persona(TALK[n]) for n in NAMES}
    with LatencyServer(latency=0.0, answer=_self_report) as srv:
        _eval(tmp / "self", srv.base_url, pop)
    with InterviewServer(personas, questions) as srv:
        judge = ["--judge-model", "openai-chat"]
        judge += ["--judge-model-args", f"base_url={srv.base_url},model=judge"]
        _eval(
            tmp / "talk", srv.base_url, pop, "--mode", "generate", *judge, "--condition=interview"
        )
    yield tmp / "self", tmp / "talk"


def _persona_scores(run: Path) -> dict[str, dict[str, float]]:
    """Per persona (its system text) and trait: the mean keyed answer, by hand."""
    keyed = {i: (s, r) for i, _, s, r, _ in _items()}
    per: dict[str, dict[str, list[float]]] = {}
    for line in (run / "samples.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["answer"] is None:
            continue
        who = next(v["respondent"] for v in rec["condition_info"].values() if "respondent" in v)
        scale, reverse = keyed[rec["item"]]
        value = 6 - rec["answer"] if reverse else rec["answer"]
        per.setdefault(who, {}).setdefault(scale, []).append(float(value))
    return {w: {t: float(np.mean(v)) for t, v in d.items()} for w, d in per.items()}


def _analyze(runs: tuple[Path, Path], out: Path) -> tuple[dict[str, Any], str]:
    """One ``psym analyze``: what it printed and the analysis.json it wrote."""
    argv = ["analyze", *map(str, runs), "-o", str(out)]
    res = CliRunner().invoke(cli, argv, terminal_width=200)
    assert res.exit_code == 0, res.output
    return json.loads((out / "analysis.json").read_text()), res.output


def test_methods_are_the_facet_and_validity_is_numpy_r(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    data, text = _analyze(runs, tmp_path / "analysis")
    m = data["sections"]["population"]["mtmm"]
    assert m["methods"] == ["self-report:bfi", "interview:bfi"]
    assert m["matched_by"] == "persona" and m["n_matched"] == 12
    # divergence_constructs.yaml's big_five, in its order
    assert m["traits"] == [
        "openness",
        "conscientiousness",
        "extraversion",
        "agreeableness",
        "neuroticism",
    ]
    self_scores, talk_scores = _persona_scores(runs[0]), _persona_scores(runs[1])
    assert set(self_scores) == set(talk_scores) and len(self_scores) == 12
    who = sorted(self_scores)
    for v in m["validity"]:
        t = v["trait_a"]
        x = [self_scores[w][t] for w in who]
        y = [talk_scores[w][t] for w in who]
        assert v["n"] == 12
        assert v["r"] == pytest.approx(float(np.corrcoef(x, y)[0, 1]), abs=1e-9), t
    assert "MTMM with the measurement method as the method facet" in text
    assert "self-report:bfi 12 administrations of 12 personas" in text
    assert "interview:bfi 12 administrations of 12 personas" in text


def test_a_trait_table_given_keeps_the_instrument_facet(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    table = tmp_path / "traits.yaml"
    table.write_text("traits:\n  e: {bfi: extraversion}\n  a: {bfi: agreeableness}\n")
    res = CliRunner().invoke(cli, ["analyze", *map(str, runs), "--mtmm", str(table)])
    assert res.exit_code == 0, res.output
    assert "measurement method as the method facet" not in res.output
