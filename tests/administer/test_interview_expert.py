"""The interview's expert rating end to end (InCharacter's expert assessment, Wang et al., 2024):
``psym eval --condition interview-expert`` (batches of 3–4 question–answer pairs per scale) and
``interview-expert-all`` (all of a scale's pairs at once) against the loopback server that
answers as a persona and, as the judge, scores each batch as the mean level its answers show
(tests/administer/interview_server.py).

The persona's intended levels are the expected scale scores. The subject says the option it
means (reverse-keyed items turned over, 6 - level); the judge turns an answer back only where
the prompt marks the question "(opposite pole)". Scores equal the levels only when the prompt
marks the reverse-keyed items and the expert's score is not keyed again (unmarked, or keyed
twice, extraversion's 3 reverse items of 8 would pull 5 down to 3.5).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from psymetrics_core.administer.administration.interview_expert import InterviewExpert
from psymetrics_core.administer.administration.interview_expert_judge import (
    Pair,
    expert_batches,
    read_score,
    said_scores,
)
from psymetrics_core.base.types import Answer, Item
from psymetrics_core.cli import cli
from psymetrics_core.instruments.spec import load_instrument
from tests.administer.interview_server import InterviewServer, Persona
from tests.administer.test_interview import ANN, BFI, _eval, _judge, _questions, _read, _scores

SCALES = ("extraversion", "agreeableness", "conscientiousness", "neuroticism", "openness")
# bfi's scale sizes: 8, 9, 9, 8, 10 items -> batches of 3-4: 2 + 3 + 3 + 2 + 3 = 13
BATCHES = {"extraversion": 2, "agreeableness": 3, "conscientiousness": 3, "neuroticism": 2}
BATCHES["openness"] = 3
DEE = {"extraversion": 2, "agreeableness": 5, "conscientiousness": 1, "neuroticism": 4}
DEE["openness"] = 4


def _neuroticism_items() -> frozenset[str]:
    inst = load_instrument(BFI)
    return frozenset(it.id for it in inst.items if it.scales[0] == "neuroticism")


@pytest.fixture(scope="module")
def server() -> Iterator[InterviewServer]:
    # Dee declines every neuroticism question: that scale has nothing to rate
    personas = {"Ann": Persona(ANN), "Dee": Persona(DEE, _neuroticism_items())}
    personas["nobody"] = personas["Ann"]  # no persona condition: answers as Ann
    with InterviewServer(personas, _questions()) as srv:
        yield srv


def _persona(d: Path, name: str) -> Path:
    path = d / f"{name.lower()}.txt"
    path.write_text(f"You are {name}.")
    return path


@pytest.fixture(scope="module")
def ann_expert(server: InterviewServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("expert")
    before = server.count("subject"), server.count("judge")
    res = _eval(server, d / "run", _persona(d, "Ann"), "interview-expert")
    assert res.exit_code == 0, res.output
    assert server.count("subject") - before[0] == 44  # one conversation per question
    assert server.count("judge") - before[1] == sum(BATCHES.values()) == 13
    return d / "run"


def _judged(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "judge.jsonl").read_text().splitlines()]


def test_expert_scale_scores_are_the_personas_levels_reverse_keys_once(ann_expert: Path) -> None:
    results, samples = _read(ann_expert)
    assert _scores(results) == pytest.approx({k: float(v) for k, v in ANN.items()})
    entry = results["tasks"]["bfi"]
    assert entry["interview"] == {"method": "expert-rating"}
    assert entry["facets"]["administration"] == "interview-expert"
    assert entry["scales"]["extraversion"]["n_answered"] == 8
    # items have no option of their own: the expert scored their scale
    s6 = next(x for x in samples if x["item"] == "6")  # "Are you reserved?" (6R)
    assert s6["answer"] is None and s6["parse_status"] == "ok" and s6["keyed"] == {}
    (batch,) = s6["data"]["expert"]
    assert batch["scale"] == "extraversion" and batch["score"] == ANN["extraversion"]
    assert "6" in batch["items"] and len(batch["items"]) == 4
    # the answer-pattern indicators say why they have no value
    indicators = entry["indicators"]
    assert indicators["straight_lining"]["value"] is None
    assert indicators["acquiescence"]["reason"].startswith("expert rating: the judge scored")


def test_expert_batches_hold_3_or_4_pairs_of_one_scale_with_the_analysis_kept(
    ann_expert: Path,
) -> None:
    inst = load_instrument(BFI)
    scale_of = {it.id: it.scales[0] for it in inst.items}
    reverse = {it.id for it in inst.items if it.reverse}
    judged = _judged(ann_expert)
    per_scale: dict[str, int] = {}
    for j in judged:
        assert j["stage"] == "expert-rating" and j["attempt"] == 0
        ids = j["batches"][j["item"]]
        (scale,) = {scale_of[i] for i in ids}
        assert j["item"].startswith(f"{scale}/") and 3 <= len(ids) <= 4
        per_scale[scale] = per_scale.get(scale, 0) + 1
        text = j["prompt"]["messages"][-1]["content"]
        assert f"The scale is {scale}" in text and '"SCORE: X"' in text
        # every reverse-keyed question of the batch is marked, and only those
        assert text.count("(opposite pole)\n") == len(reverse & set(ids))
        assert j["completion"].startswith("Analysis:")
        assert j["verdict"]["value"] == [f"{ANN[scale]:g}"]
        assert j["verdict"]["explanation"].startswith("Analysis:")
    assert per_scale == BATCHES


def test_all_at_once_sends_each_scale_in_one_request(
    server: InterviewServer, tmp_path: Path
) -> None:
    before = server.count("judge")
    res = _eval(server, tmp_path / "run", _persona(tmp_path, "Ann"), "interview-expert-all")
    assert res.exit_code == 0, res.output
    assert server.count("judge") - before == 5
    results, _ = _read(tmp_path / "run")
    assert _scores(results) == pytest.approx({k: float(v) for k, v in ANN.items()})
    assert results["tasks"]["bfi"]["interview"] == {"method": "expert-rating-all"}
    sizes = sorted(len(j["batches"][j["item"]]) for j in _judged(tmp_path / "run"))
    assert sizes == [8, 8, 9, 9, 10]


def test_the_expert_methods_are_their_own_methods_in_the_divergence(
    server: InterviewServer, tmp_path: Path
) -> None:
    """psym analyze names a profile by its administration: interview-expert(-all)."""
    from psymetrics_core.analysis.divergence import load_constructs, profiles_of

    for condition in ("interview-expert", "interview-expert-all"):
        out = tmp_path / condition
        argv = ["eval", "--tasks", "bfi", "--model", "openai-chat", "--model-args"]
        argv += [f"base_url={server.base_url},model=subject", "--judge-model", "openai-chat"]
        argv += ["--judge-model-args", f"base_url={server.base_url},model=judge"]
        res = CliRunner().invoke(cli, [*argv, "--condition", condition, "-o", str(out)])
        assert res.exit_code == 0, res.output
        (profile,) = [p for p in profiles_of([out], load_constructs()) if p.family == "big_five"]
        assert profile.method == condition and profile.key == f"{condition}:bfi"
        assert profile.scores == pytest.approx({k: float(v) for k, v in ANN.items()})


def test_a_scale_the_judge_finds_nothing_about_is_missing_with_its_reason(
    server: InterviewServer, tmp_path: Path
) -> None:
    res = _eval(server, tmp_path / "run", _persona(tmp_path, "Dee"), "interview-expert")
    assert res.exit_code == 0, res.output
    results, samples = _read(tmp_path / "run")
    scales = results["tasks"]["bfi"]["scales"]
    neuro = scales["neuroticism"]
    assert neuro["score"] is None and neuro["n_answered"] == 0
    assert neuro["reason"] == "the judge found nothing about neuroticism in the answers ('none')"
    assert results["tasks"]["bfi"]["runs"][0]["scales"]["neuroticism"]["reason"] == neuro["reason"]
    others = {k: v["score"] for k, v in scales.items() if k != "neuroticism"}
    assert others == pytest.approx({k: float(v) for k, v in DEE.items() if k != "neuroticism"})
    s4 = next(x for x in samples if x["item"] == "4")  # "Are you depressed, blue?"
    assert s4["parse_status"] == "refused" and s4["answer"] is None
    assert "nothing about neuroticism" in s4["data"]["reason"]
    assert results["tasks"]["bfi"]["n_refused"] == 8
    # --impute midpoint scores the unscored batches as the range's middle, recorded
    res = _eval(
        server,
        tmp_path / "mid",
        _persona(tmp_path, "Dee"),
        "interview-expert",
        "--impute",
        "midpoint",
    )
    assert res.exit_code == 0, res.output
    mid, mid_samples = _read(tmp_path / "mid")
    assert mid["impute"] == "midpoint"
    assert mid["tasks"]["bfi"]["scales"]["neuroticism"]["score"] == 3.0
    s4 = next(x for x in mid_samples if x["item"] == "4")
    assert s4["data"]["imputed"] == "midpoint" and s4["data"]["expert"][0]["imputed"] == "midpoint"
    assert s4["interview"]["impute"] == "midpoint"


def test_rejudging_an_expert_run_gives_the_same_scores_without_subject_requests(
    server: InterviewServer, ann_expert: Path, tmp_path: Path
) -> None:
    subject, judged = server.count("subject"), server.count("judge")
    res = _judge(server, ann_expert, tmp_path / "run2")
    assert res.exit_code == 0, res.output
    assert server.count("subject") == subject
    assert server.count("judge") - judged == 13
    old, _ = _read(ann_expert)
    new, new_samples = _read(tmp_path / "run2")
    assert _scores(new) == _scores(old)
    assert new["tasks"]["bfi"]["interview"] == {"method": "expert-rating"}
    assert {s["interview"]["method"] for s in new_samples} == {"expert-rating"}


def test_judge_max_new_tokens_is_a_floor_for_the_interview_judge(
    server: InterviewServer, tmp_path: Path
) -> None:
    def lengths(extra: tuple[str, ...], condition: str) -> set[int]:
        n = len(server.bodies)
        out = tmp_path / f"run{len(server.bodies)}"
        ann = _persona(tmp_path, "Ann")
        res = _eval(server, out, ann, condition, "--no-cache", "--limit", "10", *extra)
        assert res.exit_code == 0, res.output
        return {b["max_tokens"] for b in server.bodies[n:] if b["model"] == "judge"}

    # option conversion: 128 + 12 per item of the largest batch (10) = 248 by default
    assert lengths((), "interview") == {248}
    assert lengths(("--judge-max-new-tokens", "999"), "interview") == {999}
    assert lengths(("--judge-max-new-tokens", "20"), "interview") == {248}  # a floor only
    # expert rating: 256 + 32 per pair of the largest batch (bfi's first 10 items: 2 per
    # scale) = 320
    assert lengths((), "interview-expert") == {320}
    assert lengths(("--judge-max-new-tokens", "1000"), "interview-expert") == {1000}


# -- the pieces, by hand -----------------------------------------------------------------------


def _pairs(n: int) -> list[Pair]:
    return [Pair(Item(str(i), "s", ("x",)), "q?", "a.") for i in range(n)]


@pytest.mark.parametrize(
    ("n", "sizes"),
    [
        (1, [1]),
        (5, [5]),  # fewer than 6 cannot be split into 3-4 (InCharacter keeps them together)
        (6, [3, 3]),
        (7, [4, 3]),
        (8, [4, 4]),
        (9, [3, 3, 3]),
        (10, [4, 3, 3]),
        (13, [4, 3, 3, 3]),
        (16, [4, 4, 4, 4]),
    ],
)
def test_batches_of_3_to_4(n: int, sizes: list[int]) -> None:
    got = expert_batches(_pairs(n), all_at_once=False)
    assert [len(b) for b in got] == sizes
    assert [p.item.id for b in got for p in b] == [str(i) for i in range(n)]  # order kept
    assert [len(b) for b in expert_batches(_pairs(n), all_at_once=True)] == [n]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Analysis.\nSCORE: 3.5", (3.5, None)),
        ("**Score:** 4", (4.0, None)),
        ("SCORE: none", (None, "none")),
        ("SCORE: 2\nSCORE: 2", (2.0, None)),
        ("SCORE: 2\nSCORE: 3", (None, "2 different scores (2, 3)")),
        ("SCORE: 6", (None, "6 is outside 1-5")),
        ("SCORE: 0.5", (None, "0.5 is outside 1-5")),
        ("SCORE: high", (None, "'high' is not a number")),
        ("I would say 4.", (None, "no 'SCORE: X' line")),
    ],
)
def test_reading_the_expert_score(reply: str, expected: tuple[float | None, str | None]) -> None:
    assert read_score(said_scores(reply), 1, 5) == expected


def test_the_scale_score_is_the_mean_of_the_batch_scores_and_a_sum_scale_scales_it() -> None:
    """Batch scores 2, 3 and 5 on extraversion (8 items): (2 + 3 + 5) / 3 = 10/3, computed by
    hand; a batch scored none is left out of the mean and of n_answered."""
    from dataclasses import replace

    inst = load_instrument(BFI)
    items = [it for it in inst.items if it.scales[0] == "extraversion"]
    groups = [(items[0:3], 2.0), (items[3:6], 3.0), (items[6:8], 5.0)]
    answers = []
    for k, (group, score) in enumerate(groups):
        batch = {"scale": "extraversion", "batch": k, "items": [it.id for it in group]}
        for it in group:
            answers.append((it, Answer(None, "ok", data={"expert": [{**batch, "score": score}]})))
    mode = InterviewExpert()
    got = mode.rate_scales(inst, "original", answers)["extraversion"]
    assert got.score.score == pytest.approx(10 / 3) and got.reason is None
    assert (got.score.n_items, got.score.n_answered) == (8, 8)
    summed = replace(
        inst,
        scales={**inst.scales, "extraversion": replace(inst.scales["extraversion"], method="sum")},
    )
    got = mode.rate_scales(summed, "original", answers)["extraversion"]
    assert got.score.score == pytest.approx(10 / 3 * 8)  # the mean rating x 8 items
    # the last batch said none: (2 + 3) / 2 over the 6 items of the scored batches
    for _, a in answers[6:]:
        a.data["expert"][0].update(score=None, reason="none said")
    got = mode.rate_scales(inst, "original", answers)["extraversion"]
    assert got.score.score == pytest.approx(2.5) and got.score.n_answered == 6
    other = mode.rate_scales(inst, "original", answers)["openness"]
    assert other.score.score is None and other.reason == "no item of the scale was asked"


def test_a_centred_scale_is_not_rated_by_the_expert() -> None:
    from dataclasses import replace

    from psymetrics_core.administer.administration.interview_expert import unratable

    inst = load_instrument(BFI)
    assert unratable(inst, "openness", "original") is None
    centred = replace(
        inst, scales={**inst.scales, "openness": replace(inst.scales["openness"], centre="mrat")}
    )
    why = unratable(centred, "openness", "original")
    assert why is not None and "centred (mrat)" in why and "--condition interview" in why


def test_a_plan_records_impute_and_its_run_applies_it(
    server: InterviewServer, tmp_path: Path
) -> None:
    """``psym plan --impute midpoint`` writes it in the plan's settings (a plan without it has
    no such key: its hash is what it was) and ``psym run`` imputes as ``psym eval`` does."""
    dee = _persona(tmp_path, "Dee")
    argv = ["plan", "--tasks", "bfi", "--model", "openai-chat", "--model-args"]
    argv += [f"base_url={server.base_url},model=subject", "--judge-model", "openai-chat"]
    argv += ["--judge-model-args", f"base_url={server.base_url},model=judge"]
    argv += ["--condition", f"interview-expert+persona={dee}"]
    for extra in ((), ("--impute", "midpoint")):
        plan = tmp_path / f"plan{len(extra)}.jsonl"
        res = CliRunner().invoke(cli, [*argv, *extra, "-o", str(plan)])
        assert res.exit_code == 0, res.output
        header = json.loads(plan.read_text().splitlines()[0])
        assert header["settings"].get("impute") == (extra[1] if extra else None)
        assert ("impute" in header["settings"]) == bool(extra)
    res = CliRunner().invoke(cli, ["run", str(plan), "-o", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    results, _ = _read(tmp_path / "run")
    assert results["impute"] == "midpoint"
    assert results["tasks"]["bfi"]["scales"]["neuroticism"]["score"] == 3.0


def test_psym_export_reads_the_expert_scores(ann_expert: Path, tmp_path: Path) -> None:
    """The same numbers in psym export, which checks samples.jsonl against results.json (as
    psym report does): an expert-rated item counts as answered when its scale was scored."""
    import csv

    out = tmp_path / "scores.csv"
    res = CliRunner().invoke(cli, ["export", "scores", str(ann_expert), "-o", str(out)])
    assert res.exit_code == 0, res.output
    rows = {r["scale"]: r for r in csv.DictReader(out.open())}
    assert {k: float(r["score"]) for k, r in rows.items()} == {k: float(v) for k, v in ANN.items()}
    assert rows["openness"]["n_answered"] == "10"


def test_expert_retries_are_bounded_recorded_and_each_a_new_request() -> None:
    """A judge that never ends with a SCORE line: each batch is asked 3 times in all, every
    prompt differs (no response cache can hand back the last reply), each request carries its
    attempt, and the batch ends unread with the reason."""
    from psymetrics_core.administer.administration.interview_expert_judge import (
        Construct,
        rate_scales_by_expert,
    )

    class Rambling:
        def __init__(self) -> None:
            self.calls: list[tuple[str, int]] = []

        def run_stage(self, task, stage, requests, tag=None):
            out = {}
            for item, prompt in requests:
                self.calls.append((prompt.text, tag["attempt"]))
                out[item.id] = stage.parse("They seem outgoing, I would say fairly high.")
            return out

    judge = Rambling()
    c = Construct("Toy", "warmth", "", 1, 5)
    got = rate_scales_by_expert(judge, "toy", [(c, _pairs(7))], {}, "expert-rating", False)
    assert [a for _, a in judge.calls] == [0, 0, 1, 1, 2, 2]  # two batches (4 + 3), 3 rounds
    assert len({t for t, _ in judge.calls}) == 6 and "request 3 of 3" in judge.calls[-1][0]
    assert [(b.batch, len(b.items), b.status, b.attempts) for b in got] == [
        (0, 4, "unparsed", 3),
        (1, 3, "unparsed", 3),
    ]
    assert got[0].reason == (
        "the judge's replies left it unread after 3 requests (no 'SCORE: X' line)"
    )
