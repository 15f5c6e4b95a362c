"""The ``interview`` administration end to end (InCharacter, Wang et al., 2024): ``psym eval
--condition interview`` against a loopback OpenAI-compatible server that answers the BFI's open
questions as a persona and judges the answers (tests/administer/interview_server.py).

The persona's intended levels are the expected scale scores: the subject says the option it
means (reverse-keyed items turned over, 6 - level), the judge converts the words back to that
option, and the instrument's keys turn reverse-keyed items back. Scores equal the levels only
when reverse keys are applied exactly once (zero or two times would give 6 - level on those
items). A declined question is a missing answer with its reason, not the midpoint.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from psymetrics_core.cli import cli, main
from psymetrics_core.instruments.spec import load_instrument
from tests.administer.interview_server import LABELS, InterviewServer, Persona

REPO = Path(__file__).resolve().parents[2]
BFI = REPO / "plugins/psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi/instrument.yaml"
ANN = {
    "extraversion": 5,
    "agreeableness": 2,
    "conscientiousness": 4,
    "neuroticism": 1,
    "openness": 3,
}
BOB = {
    "extraversion": 1,
    "agreeableness": 4,
    "conscientiousness": 2,
    "neuroticism": 5,
    "openness": 5,
}
DECLINED = "1"  # Ann declines "Are you talkative?" (extraversion, not reverse-keyed)
DROPPED = "44"  # the judge leaves item 44 out of its first reply: it is asked again


def _questions() -> dict[str, tuple[str, str, bool]]:
    inst = load_instrument(BFI)
    return {str(it.question): (it.id, it.scales[0], it.reverse) for it in inst.items}


@pytest.fixture(scope="module")
def server() -> Iterator[InterviewServer]:
    personas = {"Ann": Persona(ANN, frozenset({DECLINED})), "Bob": Persona(BOB)}
    with InterviewServer(personas, _questions(), drop_first=DROPPED) as srv:
        yield srv


def _eval(srv: InterviewServer, out: Path, persona: Path, condition: str, *extra: str) -> Any:
    return CliRunner().invoke(
        cli,
        [
            "eval",
            "--tasks",
            "bfi",
            "--mode",
            "generate",
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=subject",
            "--judge-model",
            "openai-chat",
            "--judge-model-args",
            f"base_url={srv.base_url},model=judge",
            "--condition",
            f"{condition}+persona={persona}",
            "--output",
            str(out),
            *extra,
        ],
    )


@pytest.fixture(scope="module")
def ann_run(server: InterviewServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("interview")
    persona = d / "ann.txt"
    persona.write_text("You are Ann.")
    out = d / "run"
    before = server.count("subject"), server.count("judge")
    res = _eval(server, out, persona, "interview")
    assert res.exit_code == 0, res.output
    # 44 questions, one conversation each; 5 judge batches (<= 10 items) + 1 retry for item 44
    assert server.count("subject") - before[0] == 44
    assert server.count("judge") - before[1] == 6
    return out


def _read(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    results = json.loads((out / "results.json").read_text())
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    return results, samples


def _scores(results: dict[str, Any]) -> dict[str, float]:
    return {k: v["score"] for k, v in results["tasks"]["bfi"]["scales"].items()}


def test_scores_are_the_personas_levels_with_reverse_keys_applied_once(ann_run: Path) -> None:
    results, samples = _read(ann_run)
    assert _scores(results) == pytest.approx({k: float(v) for k, v in ANN.items()})
    # a reverse-keyed item carries the turned-over option as answered: 6 - level
    by_id = {s["item"]: s for s in samples}
    assert by_id["6"]["answer"] == 6 - ANN["extraversion"]  # "Are you reserved?" (6R)
    assert by_id["6"]["keyed"] == {"extraversion": ANN["extraversion"]}
    facets = results["tasks"]["bfi"]["facets"]
    assert facets == {"administration": "interview", "persona": "persona=ann"}
    assert results["tasks"]["bfi"]["interview"] == {"method": "option-conversion"}
    assert "impute" not in results  # a "none" is left missing unless --impute says otherwise


def test_a_declined_question_stays_missing_with_its_reason(ann_run: Path) -> None:
    results, samples = _read(ann_run)
    s = next(x for x in samples if x["item"] == DECLINED)
    assert s["completion"] == "I would rather not say."
    assert s["answer"] is None and s["parse_status"] == "refused"
    assert "none" in s["data"]["reason"]
    ext = results["tasks"]["bfi"]["scales"]["extraversion"]
    assert ext["n_answered"] == 7 and ext["n_items"] == 8


def test_every_exchange_and_judge_call_is_recorded(ann_run: Path) -> None:
    _, samples = _read(ann_run)
    judged = [json.loads(x) for x in (ann_run / "judge.jsonl").read_text().splitlines()]
    assert len(judged) == 6
    assert all(j["stage"] == "option-conversion" for j in judged)
    # the open answers are in the judge prompts; the raw reply and the parsed lines are kept
    first = judged[0]
    assert "Honestly:" in first["prompt"]["messages"][-1]["content"]
    assert first["completion"].startswith("Analysis:")
    assert first["verdict"]["value"]["2"] == ["4"]  # Ann: agreeableness 2, item 2 reverse-keyed
    retry = judged[-1]
    assert retry["attempt"] == 1 and retry["batches"] == {"batch0": [DROPPED]}
    assert retry["item"] == "batch0"
    s44 = next(x for x in samples if x["item"] == DROPPED)
    assert s44["interview"]["rating"] == {"value": 3, "status": "ok", "reason": None, "attempts": 2}
    s1 = next(x for x in samples if x["item"] == "1")
    assert s1["interview"]["question"] == "Are you talkative?"


def test_personas_apply(server: InterviewServer, tmp_path: Path) -> None:
    persona = tmp_path / "bob.txt"
    persona.write_text("You are Bob.")
    res = _eval(server, tmp_path / "run", persona, "interview")
    assert res.exit_code == 0, res.output
    results, _ = _read(tmp_path / "run")
    assert _scores(results) == pytest.approx({k: float(v) for k, v in BOB.items()})


def test_midpoint_imputation_is_the_option_and_recorded(
    server: InterviewServer, tmp_path: Path
) -> None:
    persona = tmp_path / "ann.txt"
    persona.write_text("You are Ann.")
    res = _eval(server, tmp_path / "run", persona, "interview", "--impute", "midpoint")
    assert res.exit_code == 0, res.output
    results, samples = _read(tmp_path / "run")
    s = next(x for x in samples if x["item"] == DECLINED)
    assert s["answer"] == 3 and s["data"]["imputed"] == "midpoint"
    assert s["interview"]["impute"] == "midpoint"
    # extraversion: seven items at 5 and the imputed 3, (7 * 5 + 3) / 8
    assert _scores(results)["extraversion"] == pytest.approx((7 * 5 + 3) / 8)
    assert results["impute"] == "midpoint"
    # re-judged as the run did, unless --impute says otherwise (then the declined item is missing)
    for extra, expected in (((), (7 * 5 + 3) / 8), (("--impute", "none"), 5.0)):
        out = tmp_path / f"judged{len(extra)}"
        res = _judge(server, tmp_path / "run", out, *extra)
        assert res.exit_code == 0, res.output
        new, _ = _read(out)
        assert _scores(new)["extraversion"] == pytest.approx(expected)
        assert new.get("impute") == (None if extra else "midpoint")


def test_the_retired_midpoint_condition_points_to_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--tasks", "bfi", "--condition", "interview-midpoint", "-o", str(tmp_path)])
    assert exc.value.code == 1
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("psym: ")]
    assert lines == [
        "psym: error: condition 'interview-midpoint' is retired: use --condition interview "
        "--impute midpoint (the imputation is an option for every interview judge method now)"
    ]


def test_impute_without_an_interview_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--tasks", "bfi", "--impute", "midpoint", "-o", str(tmp_path / "run")])
    assert exc.value.code == 1
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("psym: ")]
    assert len(lines) == 1 and "the run has no interview condition" in lines[0], lines


def test_an_instrument_without_questions_is_refused_in_one_line(
    server: InterviewServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = server.count("subject")
    argv = ["eval", "--tasks", "ipip-bfi25", "--model", "openai-chat", "--model-args"]
    argv += [f"base_url={server.base_url},model=subject", "--condition", "interview"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--output", str(tmp_path / "run")])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("psym: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "task 'ipip-bfi25' cannot be interviewed" in lines[0]
    assert "no 'question' column" in lines[0]
    assert server.count("subject") == before
    assert not (tmp_path / "run" / "results.json").exists()


# -- psym judge: re-judging a run asks only the judge ------------------------------------------


def _judge(srv: InterviewServer, run: Path, out: Path, *extra: str) -> Any:
    argv = ["judge", str(run), "--judge", "openai-chat", "--judge-model-args"]
    argv += [f"base_url={srv.base_url},model=judge", "-o", str(out), *extra]
    return CliRunner().invoke(cli, argv)


def test_rejudging_gives_the_same_scores_without_subject_requests(
    server: InterviewServer, ann_run: Path, tmp_path: Path
) -> None:
    subject, judged = server.count("subject"), server.count("judge")
    res = _judge(server, ann_run, tmp_path / "run2")
    assert res.exit_code == 0, res.output
    assert server.count("subject") == subject  # the subject was not asked again
    assert server.count("judge") - judged == 5  # 5 batches; item 44 is read the first time now
    old, old_samples = _read(ann_run)
    new, new_samples = _read(tmp_path / "run2")
    assert _scores(new) == _scores(old)
    assert new["tasks"]["bfi"]["n_refused"] == old["tasks"]["bfi"]["n_refused"] == 1
    assert new["rejudged_from"]["subject_requests"] == 0
    assert new["rejudged_from"]["run"] == str(ann_run)
    assert [s["completion"] for s in new_samples] == [s["completion"] for s in old_samples]
    assert [s["answer"] for s in new_samples] == [s["answer"] for s in old_samples]
    assert len((tmp_path / "run2" / "judge.jsonl").read_text().splitlines()) == 5


def test_rejudging_refuses_its_own_input_and_a_run_without_interviews(
    server: InterviewServer, ann_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (ann_run / "results.json").read_bytes()
    for out, why in ((ann_run, "is the run being re-judged"), (tmp_path / "x", "no interviewed")):
        if why == "no interviewed":
            empty = tmp_path / "plain"
            empty.mkdir()
            (empty / "results.json").write_bytes(before)
            (empty / "samples.jsonl").write_text("")
            run = empty
        else:
            run = ann_run
        argv = ["judge", str(run), "--judge", "openai-chat", "-o", str(out)]
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 1
        err = capsys.readouterr().err
        lines = [x for x in err.splitlines() if x.startswith("psym: ")]
        assert len(lines) == 1 and why in lines[0] and "Traceback" not in err, err
    assert (ann_run / "results.json").read_bytes() == before


# -- dimension-aware option conversion ----------------------------------------------------------


def test_dimension_aware_conversion_judges_one_scale_per_batch_on_its_adjectives(
    server: InterviewServer, tmp_path: Path
) -> None:
    persona = tmp_path / "bob.txt"
    persona.write_text("You are Bob.")
    res = _eval(server, tmp_path / "run", persona, "interview-dimensions")
    assert res.exit_code == 0, res.output
    results, samples = _read(tmp_path / "run")
    assert _scores(results) == pytest.approx({k: float(v) for k, v in BOB.items()})
    assert results["tasks"]["bfi"]["interview"]["method"] == "dimension-aware"
    inst = load_instrument(BFI)
    scale_of = {it.id: it.scales[0] for it in inst.items}
    judged = [json.loads(x) for x in (tmp_path / "run" / "judge.jsonl").read_text().splitlines()]
    seen = set()
    for j in judged:
        assert j["stage"] == "dimension-aware"
        ids = j["batches"][j["item"]]  # the line's own batch (item "batchK")
        (scale,) = {scale_of[i] for i in ids}  # one scale per batch
        text = j["prompt"]["messages"][-1]["content"]
        adjectives = ", ".join(inst.scales[scale].adjectives)
        assert text.startswith(f"Every item below is about one dimension, {scale}: ")
        assert adjectives in text
        seen.add(scale)
    assert seen == set(BOB)
    assert {s["interview"]["method"] for s in samples} == {"dimension-aware"}


def test_dimension_aware_conversion_needs_every_scales_adjectives() -> None:
    from dataclasses import replace

    from psymetrics_core.administer.administration.interview import InterviewDimensions
    from psymetrics_core.base.errors import PsymError

    inst = load_instrument(BFI)
    bare = {**inst.scales, "openness": replace(inst.scales["openness"], adjectives=())}
    with pytest.raises(PsymError, match=r"no 'adjectives' for scale\(s\) openness$"):
        InterviewDimensions().check(replace(inst, scales=bare), list(inst.items))
    InterviewDimensions().check(inst, list(inst.items))  # bfi ships them


# -- a SUM scale -----------------------------------------------------------------------------

TOY_ITEMS = (
    "id,text,scale,reverse,question\n"
    "1,Is warm,warmth,0,Are you warm?\n"
    "2,Is cold,warmth,1,Are you cold?\n"
    "3,Is kind,warmth,0,Are you kind?\n"
    "4,Is tidy,order,0,Are you tidy?\n"
)


def test_a_sum_scale_is_the_sum_of_the_keyed_ratings(tmp_path: Path) -> None:
    import yaml

    from psymetrics_core import evaluate

    spec = {
        "schema_version": 1,
        "id": "toy-sum",
        "name": "Toy sum scale",
        "version": "1.0",
        "citation": "Someone, A. (2020). A toy scale.",
        "license": {"status": "public domain", "redistributable": True},
        "item_source": "Someone (2020), Table 1.",
        "forms": {"original": "items.csv"},
        "response_scales": {"default": {"min": 1, "max": 5, "labels": LABELS}},
        "scales": {"warmth": {"method": "sum"}, "order": {"method": "sum"}},
        "prompt": {"instruction": "Rate it."},
    }
    (tmp_path / "instrument.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "items.csv").write_text(TOY_ITEMS)
    inst = load_instrument(tmp_path / "instrument.yaml")
    questions = {str(it.question): (it.id, it.scales[0], it.reverse) for it in inst.items}
    persona = tmp_path / "cy.txt"
    persona.write_text("You are Cy.")
    levels = {"warmth": 4, "order": 2}
    with InterviewServer({"Cy": Persona(levels, frozenset({"4"}))}, questions) as srv:
        res = evaluate(
            [inst],
            model="openai-chat",
            model_args=f"base_url={srv.base_url},model=subject",
            judge_model="openai-chat",
            judge_model_args=f"base_url={srv.base_url},model=judge",
            conditions=[f"interview+persona={persona}"],
            output=tmp_path / "run",
        )
    scales = res["tasks"]["toy-sum"]["scales"]
    # three items at level 4 (item 2 answered 6 - 4 = 2, keyed back to 4): 4 + 4 + 4
    assert scales["warmth"]["score"] == 12
    # the only order item was declined: no sum (not 0, not the midpoint)
    assert scales["order"]["score"] is None and scales["order"]["n_answered"] == 0


def test_retries_are_bounded_and_each_is_a_new_request() -> None:
    """A judge that never gives a readable line (as SmolLM2-135M judging itself did): the
    items are asked 3 times in all, each prompt differs (a response cache cannot hand back
    the last reply) and the items end unread with the reason."""
    from psymetrics_core.administer.administration.interview_judge import (
        Exchange,
        convert_options,
    )
    from psymetrics_core.base.types import Option

    class Unreadable:
        def __init__(self) -> None:
            self.prompts: list[str] = []

        def run_stage(self, task, stage, requests, tag=None):
            out = {}
            for item, prompt in requests:
                self.prompts.append(prompt.text)
                out[item.id] = stage.parse("1. Disagree strongly\n2. Agree a little")
            return out

    inst = load_instrument(BFI)
    items = list(inst.items[:3])
    judge = Unreadable()
    options = {it.id: tuple(Option(i + 1, lab) for i, lab in enumerate(LABELS)) for it in items}
    exchanges = [Exchange(it, str(it.question), "Sure.") for it in items]
    ratings = convert_options(judge, "bfi", exchanges, options, {})
    assert len(judge.prompts) == 3 and len(set(judge.prompts)) == 3
    assert "request 3 of 3" in judge.prompts[-1]
    for it in items:
        r = ratings[it.id]
        assert (r.value, r.status, r.attempts) == (None, "unparsed", 3)
        assert r.reason == (
            f"the judge's replies left it unread after 3 requests (no line for item {it.id})"
        )


def test_a_run_of_the_retired_midpoint_condition_is_rejudged_as_it_was(
    server: InterviewServer, ann_run: Path, tmp_path: Path
) -> None:
    """A run made with ``--condition interview-midpoint`` (before ``--impute``) re-judges as an
    interview with the midpoint imputed, as its samples record."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(ann_run, old)
    rows = [json.loads(x) for x in (old / "samples.jsonl").read_text().splitlines()]
    for row in rows:
        row["facets"]["administration"] = "interview-midpoint"
        row["interview"]["impute"] = "midpoint"
    (old / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = _judge(server, old, tmp_path / "new")
    assert res.exit_code == 0, res.output
    new, samples = _read(tmp_path / "new")
    assert new["impute"] == "midpoint"
    assert _scores(new)["extraversion"] == pytest.approx((7 * 5 + 3) / 8)
    assert next(s for s in samples if s["item"] == DECLINED)["data"]["imputed"] == "midpoint"
