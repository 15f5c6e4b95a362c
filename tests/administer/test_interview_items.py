"""Interviewing an instrument whose item texts are the user's (``item_texts: user``): the
``--items TASK=FILE`` CSV may carry a ``question`` column (id,text,question), and then the
instrument can be interviewed like a shipped one (tests/administer/interview_server.py answers
as a persona and judges).

sd3 (Jones & Paulhus, 2014) ships its key only. The file below gives placeholder texts and
questions (not the published items); the persona's intended levels are the expected scores,
reverse-keyed items (11, 15, 17, 20, 25) turned over by the subject and back by the key, so the
scores equal the levels only when the file's questions reached the subject and reverse keys
were applied once. Without the column the interview is refused in one line naming the file
option; an empty question is refused naming the file, line and field.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from psymetrics_core.cli import main
from tests.administer.interview_server import InterviewServer, Persona

REVERSE = {"11", "15", "17", "20", "25"}
SUE = {"machiavellianism": 2, "narcissism": 4, "psychopathy": 1}


def _scale(i: int) -> str:
    return "machiavellianism" if i <= 9 else "narcissism" if i <= 18 else "psychopathy"


def _question(i: int) -> str:
    return f"Question {i}: how much is statement {i} like you?"


@pytest.fixture(scope="module")
def server() -> Iterator[InterviewServer]:
    questions = {_question(i): (str(i), _scale(i), str(i) in REVERSE) for i in range(1, 28)}
    with InterviewServer({"Sue": Persona(SUE)}, questions) as srv:
        yield srv


def _items(path: Path, question: bool = True, empty_at: int | None = None) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", *(["question"] if question else [])])
        for i in range(1, 28):
            q = "" if i == empty_at else _question(i)
            w.writerow([i, f"Statement {i} (placeholder)", *([q] if question else [])])
    return path


def _argv(srv: InterviewServer, items: Path, tmp_path: Path) -> list[str]:
    persona = tmp_path / "sue.txt"
    persona.write_text("You are Sue.")
    return [
        "eval",
        "--tasks",
        "sd3",
        "--items",
        f"sd3={items}",
        "--model",
        "openai-chat",
        "--model-args",
        f"base_url={srv.base_url},model=subject",
        "--judge",
        "openai-chat",
        "--judge-model-args",
        f"base_url={srv.base_url},model=judge",
        "--condition",
        f"interview+persona={persona}",
        "--output",
        str(tmp_path / "run"),
    ]


@pytest.fixture(scope="module")
def sd3_run(server: InterviewServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sd3")
    before = server.count("subject"), server.count("judge")
    main(_argv(server, _items(d / "sd3.csv"), d))
    # 27 questions, one conversation each; 3 judge batches of <= 10 items
    assert server.count("subject") - before[0] == 27
    assert server.count("judge") - before[1] == 3
    return d / "run"


def _scores(run: Path) -> dict[str, float]:
    results = json.loads((run / "results.json").read_text())
    return {k: v["score"] for k, v in results["tasks"]["sd3"]["scales"].items()}


def test_a_user_items_file_with_questions_is_interviewed(sd3_run: Path) -> None:
    assert _scores(sd3_run) == pytest.approx({k: float(v) for k, v in SUE.items()})
    samples = [json.loads(x) for x in (sd3_run / "samples.jsonl").read_text().splitlines()]
    s11 = next(s for s in samples if s["item"] == "11")  # narcissism, reverse-keyed
    assert s11["interview"]["question"] == _question(11)
    assert s11["interview"]["statement"] == "Statement 11 (placeholder)"
    assert s11["answer"] == 6 - SUE["narcissism"]


def test_rejudging_uses_the_statements_the_run_kept(
    server: InterviewServer, sd3_run: Path, tmp_path: Path
) -> None:
    """sd3 ships no texts: the judge's prompts must still show the user's statements."""
    before = server.count("subject"), len(server.bodies)
    argv = ["judge", str(sd3_run), "--judge", "openai-chat", "--judge-model-args"]
    main([*argv, f"base_url={server.base_url},model=judge", "-o", str(tmp_path / "re")])
    assert server.count("subject") == before[0]
    prompts = [b["messages"][-1]["content"] for b in server.bodies[before[1] :]]
    # the batches go to the judge concurrently: the last body need not be the last batch's
    assert len(prompts) == 3
    assert any('Statement: "Statement 27 (placeholder)"' in p for p in prompts)
    assert _scores(tmp_path / "re") == _scores(sd3_run)


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 1
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("psym: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_user_items_file_without_questions_is_refused_for_interview(
    server: InterviewServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = _items(tmp_path / "sd3.csv", question=False)
    before = server.count("subject")
    line = _refused(_argv(server, items, tmp_path), capsys)
    assert "task 'sd3' cannot be interviewed" in line
    assert "the item file (--items sd3=FILE) has no 'question' column" in line
    assert server.count("subject") == before
    assert not (tmp_path / "run" / "results.json").exists()


def test_an_empty_question_is_refused_naming_file_line_and_field(
    server: InterviewServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = _items(tmp_path / "sd3.csv", empty_at=5)
    before = server.count("subject")
    line = _refused(_argv(server, items, tmp_path), capsys)
    # the header is line 1, item 5 is line 6
    assert f"{items}, row 6, field 'question': empty question" in line
    assert server.count("subject") == before
