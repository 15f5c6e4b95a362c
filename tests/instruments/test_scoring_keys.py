"""BFI-44 and MFQ-30 keys checked against scores computed by hand.

Keys: BFI-44 from John & Srivastava (1999) (items and reverse keys also in seed note 000 §2.1);
MFQ-30 from Graham et al. (2011) / moralfoundations.org (seed note 000 §2.2). The expected
values below were worked out by hand from those keys; the arithmetic is in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core import score_responses
from psymetrics_core.base.errors import ResponsesError
from psymetrics_core.cli import cli

DATA = Path(__file__).parents[1] / "data"

# Respondent A answers item i with ((i - 1) mod 5) + 1, i.e. 1,2,3,4,5,1,2,...
#   extraversion 1,6R,11,16,21R,26,31R,36: all raw 1; 5 forward x 1 + 3 reversed x (6-1=5) = 20/8
#   agreeableness 2R,7,12R,17,22,27R,32,37R,42: all raw 2; 5 x 2 + 4 x 4 = 26/9
#   conscientiousness 3,8R,13,18R,23R,28,33,38,43R: all raw 3 and 6-3 = 3 -> 27/9 = 3
#   neuroticism 4,9R,14,19,24R,29,34R,39: all raw 4; 5 x 4 + 3 x 2 = 26/8
#   openness 5,10,15,20,25,30,35R,40,41R,44: raw 5 except 41 (1) and 44 (4);
#     7 x 5 + (35R: 6-5=1) + (41R: 6-1=5) + 4 = 45/10
# Respondent B answers 5 everywhere but leaves item 1 empty (missing, left out of the mean):
#   extraversion: 11,16,26,36 -> 5 (20) + 6R,21R,31R -> 1 (3) = 23/7
#   agreeableness: 5 forward x 5 + 4 reversed x 1 = 29/9; conscientiousness the same 29/9
#   neuroticism: 5 x 5 + 3 x 1 = 28/8; openness: 8 x 5 + 2 x 1 = 42/10
BFI_EXPECTED = {
    "A": {
        "extraversion": 20 / 8,
        "agreeableness": 26 / 9,
        "conscientiousness": 3.0,
        "neuroticism": 26 / 8,
        "openness": 4.5,
    },
    "B": {
        "extraversion": 23 / 7,
        "agreeableness": 29 / 9,
        "conscientiousness": 29 / 9,
        "neuroticism": 3.5,
        "openness": 4.2,
    },
}

# Respondent A answers item i with i mod 6 (0..5); catch items 6 (=0) and 22 (=4) do not count.
#   care 1,7,12,17,23,28 -> 1+1+0+5+5+4 = 16/6;  fairness 2,8,13,18,24,29 -> 2+2+1+0+0+5 = 10/6
#   loyalty 3,9,14,19,25,30 -> 3+3+2+1+1+0 = 10/6; authority 4,10,15,20,26,31 -> 4+4+3+2+2+1 = 16/6
#   purity 5,11,16,21,27,32 -> 5+5+4+3+3+2 = 22/6
# Respondent B answers 5 everywhere except 0 on both catch items -> every foundation 5.0
MFQ_EXPECTED = {
    "A": {
        "care": 16 / 6,
        "fairness": 10 / 6,
        "loyalty": 10 / 6,
        "authority": 16 / 6,
        "purity": 22 / 6,
    },
    "B": dict.fromkeys(["care", "fairness", "loyalty", "authority", "purity"], 5.0),
}


def _assert_close(got, expected):
    assert set(got) == set(expected)
    for who in expected:
        assert got[who] == pytest.approx(expected[who]), who


@pytest.mark.parametrize(("task", "expected"), [("bfi", BFI_EXPECTED), ("mfq", MFQ_EXPECTED)])
def test_library_scores_match_hand_computation(task, expected):
    scored = score_responses(task, DATA / f"{task}_responses.csv")
    got = {who: {s: v["score"] for s, v in scales.items()} for who, scales in scored.items()}
    _assert_close(got, expected)


@pytest.mark.parametrize(("task", "expected"), [("bfi", BFI_EXPECTED), ("mfq", MFQ_EXPECTED)])
def test_psym_score_cli_json(task, expected):
    r = CliRunner().invoke(
        cli, ["score", "--task", task, "--responses", str(DATA / f"{task}_responses.csv"), "--json"]
    )
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert list(got) == [task]
    _assert_close(got[task], expected)


def test_missing_items_are_counted():
    scored = score_responses("bfi", DATA / "bfi_responses.csv")
    assert scored["B"]["extraversion"]["n_answered"] == 7
    assert scored["B"]["extraversion"]["n_items"] == 8


def test_mfq_catch_items_change_nothing(tmp_path):
    text = (
        (DATA / "mfq_responses.csv")
        .read_text()
        .replace("B,6,0", "B,6,5")
        .replace("B,22,0", "B,22,5")
    )
    (tmp_path / "r.csv").write_text(text)
    assert score_responses("mfq", tmp_path / "r.csv")["B"]["care"]["score"] == 5.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("respondent,item,answer\nA,1,3\n", "line 1: missing column(s) response"),
        ("respondent,item,response\nA,1,3\nA,45,3\n", "line 3: unknown item '45'"),
        ("respondent,item,response\nA,1,6\n", "line 2: response '6' to item 1 is not a value"),
        ("respondent,item,response\nA,1,2.5\n", "line 2: response '2.5'"),
        ("respondent,item,response\nA,1,3\nA,1,4\n", "line 3: respondent 'A' answers item 1 twice"),
        ("respondent,item,response\n", "no response rows"),
    ],
)
def test_bad_rows_name_the_line(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(ResponsesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        score_responses("bfi", path)


def test_cli_error_is_one_line_without_traceback(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "bad.csv"
    path.write_text("respondent,item,response\nA,99,3\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "psymetrics_core",
            "score",
            "--task",
            "bfi",
            "--responses",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "line 2: unknown item '99'" in r.stderr
