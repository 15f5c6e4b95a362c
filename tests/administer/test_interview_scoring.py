"""The interview's judge for small local models: option scoring (``--condition
interview-logprob``: the judge's backend scores each option's value and "none" as its reply to
one item, nothing parsed) and ``--judge-batch N`` (items per option-conversion request).

Option scoring runs end to end on a scripted backend that is both subject and judge: as the
subject it answers the BFI's open questions as Ann (tests/administer/test_interview.py's levels,
reverse-keyed items turned over, item 1 declined); as the judge it gives the option the answer
names a higher log-probability than the others (and "none" for the declined answer), except for
item 44, where two options are exactly as likely. The scores equal Ann's levels only when the
most likely reply is taken per item and reverse keys are applied once; the declined item is
missing with its reason, the tie unread with its reason. A judge that cannot score replies
(openai-chat: first-token log-probabilities only) is refused before the subject is asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import Backend, GenerationSettings
from psymetrics_core.base.types import Completion, Prompt
from psymetrics_core.cli import main
from psymetrics_core.pluginsys.session import Session
from tests.administer.interview_server import DECLINE, LABELS, InterviewServer, Persona
from tests.administer.test_interview import ANN, DECLINED, DROPPED, _questions

TIE = "44"  # openness: the judge scores "2" and "4" exactly alike


class SubjectAndScorer(Backend):
    """Ann as the subject; as the judge, log-probabilities favouring the option named (a tie
    between 2 and 4 for the items in ``ties``)."""

    name = "scripted-scorer"
    supports_continuations = True

    def __init__(self, ties: frozenset[str] = frozenset({TIE})) -> None:
        self.ties = ties
        self.questions = _questions()
        self.generated = 0
        self.scored: list[Prompt] = []

    def identity(self) -> dict[str, Any]:
        return {"name": self.name}

    def generate(self, prompts: Sequence[Prompt], settings: GenerationSettings, progress=None):
        out = []
        for p in prompts:
            self.generated += 1
            item, scale, reverse = self.questions[p.text]
            meant = 6 - ANN[scale] if reverse else ANN[scale]
            said = DECLINE if item == DECLINED else f"Honestly: {LABELS[meant - 1].lower()}."
            out.append(Completion(text=said))
        return out

    def option_logprobs(self, prompts: Sequence[Prompt], settings, progress=None):
        out = []
        for p in prompts:
            self.scored.append(p)
            item = re.search(r"Item (\S+)\n", p.text).group(1)  # type: ignore[union-attr]
            answer = re.search(r'Answer: "(.*?)"', p.text).group(1)  # type: ignore[union-attr]
            replies = [o.continuation for o in p.options]
            said = re.fullmatch(r"Honestly: (.+)\.", answer)
            labels = [lab.lower() for lab in LABELS]
            best = str(labels.index(said.group(1)) + 1) if said else "none"
            lps = [-0.25 if r == best else -3.0 for r in replies]
            if item in self.ties:
                lps = [-1.0 if r in ("2", "4") else -3.0 for r in replies]
            out.append(Completion(option_logprobs=tuple(lps)))
        return out


@pytest.fixture(scope="module")
def scored_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[SubjectAndScorer, Path, dict[str, Any]]:
    be = SubjectAndScorer()
    out = tmp_path_factory.mktemp("scored") / "run"
    res = evaluate(
        ["bfi"],
        backend=be,
        session=Session(),
        conditions=["interview-logprob"],
        output=out,
    )
    return be, out, res


def test_option_scoring_gives_the_intended_levels(scored_run: Any) -> None:
    be, out, res = scored_run
    assert be.generated == 44 and len(be.scored) == 44  # one scored judge request per item
    scales = res["tasks"]["bfi"]["scales"]
    assert {k: v["score"] for k, v in scales.items()} == pytest.approx(
        {k: float(v) for k, v in ANN.items()}
    )
    assert scales["extraversion"]["n_answered"] == 7  # item 1 declined
    assert scales["openness"]["n_answered"] == 9  # item 44: a tie
    assert res["tasks"]["bfi"]["interview"] == {"method": "option-logprob"}
    assert res["tasks"]["bfi"]["facets"] == {"administration": "interview-logprob"}


def test_none_and_a_tie_stay_missing_with_their_reasons(scored_run: Any) -> None:
    _, out, _ = scored_run
    samples = {
        s["item"]: s for s in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
    }
    declined = samples[DECLINED]
    assert declined["answer"] is None and declined["parse_status"] == "refused"
    assert declined["data"]["reason"] == "the judge's most likely reply was 'none'"
    tie = samples[TIE]
    assert tie["answer"] is None and tie["parse_status"] == "unparsed"
    assert "a tie between 2 and 4" in tie["data"]["reason"]
    assert samples["6"]["answer"] == 6 - ANN["extraversion"]  # 6R, turned over by the subject


def test_every_scored_request_is_recorded(scored_run: Any) -> None:
    be, out, _ = scored_run
    judged = [json.loads(x) for x in (out / "judge.jsonl").read_text().splitlines()]
    assert len(judged) == 44 and {j["stage"] for j in judged} == {"option-logprob"}
    first = next(j for j in judged if j["item"] == "2")  # agreeableness 2, item 2 reversed: 4
    scored = [o["continuation"] for o in first["prompt"]["options"]]
    assert scored == ["1", "2", "3", "4", "5", "none"]
    assert first["verdict"]["value"]["rating"] == "4"
    assert first["verdict"]["value"]["logprobs"]["4"] == -0.25
    assert "Honestly: agree a little." in first["prompt"]["messages"][-1]["content"]


def test_a_profile_from_mostly_unread_ratings_is_flagged(tmp_path: Path) -> None:
    """Ratings left unread for 34 of 44 items (and item 1 declined): the scores that remain
    are flagged (parse rate fired) and psym analyze's divergence counts the profile as
    degenerate."""
    from psymetrics_core.analysis.divergence import load_constructs, profiles_of

    ties = frozenset(str(i) for i in range(11, 45))
    out = tmp_path / "run"
    res = evaluate(
        ["bfi"],
        backend=SubjectAndScorer(ties),
        session=Session(),
        conditions=["interview-logprob"],
        output=out,
    )
    ind = res["tasks"]["bfi"]["indicators"]["parse_rate"]
    # items 2-10 read (item 1 declined: "none"), recorded to 4 decimals
    assert ind["value"] == pytest.approx(9 / 44, abs=1e-4) and ind["fired"]
    (profile,) = [p for p in profiles_of([out], load_constructs()) if p.task == "bfi"]
    assert profile.method == "interview-logprob" and profile.n_degenerate == 1


# -- loopback server: a judge that cannot score, and --judge-batch ---------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[InterviewServer]:
    personas = {"Ann": Persona(ANN, frozenset({DECLINED}))}
    with InterviewServer(personas, _questions(), drop_first=DROPPED) as srv:
        yield srv


def _argv(srv: InterviewServer, tmp_path: Path, condition: str, *extra: str) -> list[str]:
    persona = tmp_path / "ann.txt"
    persona.write_text("You are Ann.")
    argv = ["eval", "--tasks", "bfi", "--model", "openai-chat", "--model-args"]
    argv += [f"base_url={srv.base_url},model=subject", "--judge", "openai-chat"]
    argv += ["--judge-model-args", f"base_url={srv.base_url},model=judge"]
    argv += ["--condition", f"{condition}+persona={persona}", "-o", str(tmp_path / "run")]
    return [*argv, *extra]


def test_a_judge_that_cannot_score_is_refused_before_the_subject_is_asked(
    server: InterviewServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = server.count("subject"), server.count("judge")
    with pytest.raises(SystemExit) as exc:
        main(_argv(server, tmp_path, "interview-logprob"))
    assert exc.value.code == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("psym: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "openai-chat" in lines[0] and "supports_continuations is False" in lines[0]
    assert (server.count("subject"), server.count("judge")) == before


def test_judge_batch_one_sends_one_item_per_request_and_is_recorded(
    server: InterviewServer, tmp_path: Path
) -> None:
    before = server.count("subject"), server.count("judge")
    main(_argv(server, tmp_path, "interview", "--judge-batch", "1"))
    # 44 items, one per judge request, and item 44 asked again once (dropped from its first)
    assert server.count("subject") - before[0] == 44
    assert server.count("judge") - before[1] == 45
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["judge"]["batch"] == 1
    scales = results["tasks"]["bfi"]["scales"]
    assert {k: v["score"] for k, v in scales.items()} == pytest.approx(
        {k: float(v) for k, v in ANN.items()}
    )
    judged = [b["messages"][-1]["content"] for b in server.bodies if b["model"] == "judge"]
    assert all(len(re.findall(r"^Item \S+$", t, re.M)) == 1 for t in judged[before[1] :])


def test_the_judge_record_names_the_reply_lengths_actually_asked_for(
    server: InterviewServer, tmp_path: Path
) -> None:
    # option conversion sizes its replies, 128 + 12 per item of the largest batch pending, a
    # floor over --judge-max-new-tokens: 44 items in batches of 10 ask 248 tokens, a retry of
    # one item (item 44, where the server still drops it) 140, raised to the option's 150.
    # The record must say so, checked against the max_tokens the judge's requests carried.
    start = len(server.bodies)
    main(_argv(server, tmp_path, "interview", "--judge-max-new-tokens", "150"))
    sent = {b["max_tokens"] for b in server.bodies[start:] if b["model"] == "judge"}
    judge = json.loads((tmp_path / "run" / "results.json").read_text())["judge"]
    assert judge["settings"]["max_new_tokens"] == 150
    stage = judge["stage_settings"]["option-conversion"]
    assert stage["mode"] == "generate" and stage["sized_by_stage"] is True
    assert 248 in sent and min(sent) >= 150
    assert stage["max_new_tokens"] == sorted(sent)


# -- psym judge --method: the same answers judged by another interview mode -------------------


@pytest.fixture(scope="module")
def loopback_run(server: InterviewServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("loopback")
    main(_argv(server, d, "interview"))
    return d / "run"


def _rejudge(server: InterviewServer, run: Path, out: Path, method: str) -> list[str]:
    argv = ["judge", str(run), "--judge", "openai-chat", "--judge-model-args"]
    return [*argv, f"base_url={server.base_url},model=judge", "--method", method, "-o", str(out)]


def test_rejudging_by_another_mode_records_it(
    server: InterviewServer, loopback_run: Path, tmp_path: Path
) -> None:
    before = server.count("subject")
    main(_rejudge(server, loopback_run, tmp_path / "dim", "interview-dimensions"))
    assert server.count("subject") == before
    results = json.loads((tmp_path / "dim" / "results.json").read_text())
    entry = results["tasks"]["bfi"]
    assert entry["facets"] == {"administration": "interview-dimensions", "persona": "persona=ann"}
    assert entry["condition"] == "interview-dimensions+persona=ann"
    assert entry["interview"] == {"method": "dimension-aware"}
    judged = [json.loads(x) for x in (tmp_path / "dim" / "judge.jsonl").read_text().splitlines()]
    assert {j["stage"] for j in judged} == {"dimension-aware"}
    assert (
        "Every item below is about one dimension" in judged[0]["prompt"]["messages"][-1]["content"]
    )
    scales = entry["scales"]
    assert {k: v["score"] for k, v in scales.items()} == pytest.approx(
        {k: float(v) for k, v in ANN.items()}
    )


@pytest.mark.parametrize(
    ("method", "says"),
    [
        ("interview-logprob", "supports_continuations is False"),
        ("battery", "psym judge --method 'battery': not an interview mode (interview modes: "),
        ("no-such-mode", "psym judge --method 'no-such-mode': not an interview mode"),
    ],
)
def test_rejudging_by_a_mode_the_judge_or_run_cannot_take_is_one_line(
    server: InterviewServer,
    loopback_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    method: str,
    says: str,
) -> None:
    before = server.count("judge")
    with pytest.raises(SystemExit) as exc:
        main(_rejudge(server, loopback_run, tmp_path / "out", method))
    assert exc.value.code == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("psym: ")]
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in err, err
    assert server.count("judge") == before
    assert not (tmp_path / "out" / "results.json").exists()


# -- --judge-batch where no option-conversion interview takes it: refused, never ignored ------

NO_BATCH = "--judge-batch 5 sets the items per option-conversion request of an interview judge"


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("psym: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    "conditions", [[], ["interview-logprob"], ["interview-expert", "interview-expert-all"]]
)
def test_judge_batch_without_an_option_conversion_interview_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], conditions: list[str]
) -> None:
    conds = [x for c in conditions for x in ("--condition", c)]
    for cmd, out, what in (("eval", "run", "the run"), ("plan", "plan.jsonl", "the plan")):
        argv = [cmd, "--tasks", "bfi", *conds, "--judge-batch", "5", "-o", str(tmp_path / out)]
        line = _one_line(capsys, argv)
        assert NO_BATCH in line and f"; {what} has none" in line, line
        assert not (tmp_path / out).exists()


def test_a_plan_records_its_judge_batch(tmp_path: Path) -> None:
    plan = tmp_path / "plan.jsonl"
    main(
        [
            "plan",
            "--tasks",
            "bfi",
            "--condition",
            "interview",
            "--judge-batch",
            "5",
            "-o",
            str(plan),
        ]
    )
    header = json.loads(plan.read_text().splitlines()[0])
    assert header["settings"]["judge_batch"] == 5
    plain = tmp_path / "plain.jsonl"  # without it, absent (other plans' hashes unchanged)
    main(["plan", "--tasks", "bfi", "--condition", "interview", "-o", str(plain)])
    assert "judge_batch" not in json.loads(plain.read_text().splitlines()[0])["settings"]


@pytest.mark.parametrize("method", ["interview-logprob", "interview-expert-all"])
def test_rejudging_with_judge_batch_by_a_mode_without_it_is_refused(
    server: InterviewServer,
    loopback_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    method: str,
) -> None:
    before = server.count("judge")
    line = _one_line(
        capsys, [*_rejudge(server, loopback_run, tmp_path / "out", method), "--judge-batch", "5"]
    )
    assert NO_BATCH in line and f"; mode {method} has none" in line, line
    assert server.count("judge") == before and not (tmp_path / "out").exists()
