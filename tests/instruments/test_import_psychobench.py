"""``psym import psychobench``: a small file in PsychoBench's questionnaires.json format
(schema: seed note 003 §3.3) round-trips into runnable, correctly keyed tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError
from psymetrics_core.instruments.psychobench import import_psychobench

SYS = (
    "You are a helpful assistant who can only reply numbers from {} to {}. "
    'Format: "statement index: score".'
)


def _crowd(name, mean, std, n):
    return {"crowd_name": name, "mean": mean, "std": std, "n": n}


# Item texts are placeholders written for this test (not the instruments' items).
QUESTIONNAIRES = [
    {
        "name": "DTDD",
        "questions": {str(i): f"Test statement {i}." for i in range(1, 13)},
        "inner_setting": SYS.format(1, 9),
        "prompt": "You can only reply numbers from 1 to 9 in the following statements. Please "
        "provide a rating based on the following 12 descriptions using a scale from 1 (disagree "
        "strongly) to 9 (agree strongly). Here are the statements, score them one by one:",
        "scale": 10,
        "compute_mode": "AVG",
        "reverse": [],
        "categories": [
            {
                "cat_name": "Machiavellianism",
                "cat_questions": [1, 2, 3, 4],
                "crowd": [_crowd("Crowd", 3.78, 1.63, 577)],
            },
            {
                "cat_name": "Psychopathy",
                "cat_questions": [5, 6, 7, 8],
                "crowd": [_crowd("Crowd", 2.47, 1.44, 577)],
            },
            {
                "cat_name": "Neuroticism",
                "cat_questions": [9, 10, 11, 12],
                "crowd": [_crowd("Crowd", 4.88, 1.8, 577)],
            },
        ],
    },
    {
        "name": "LOT-R",
        "questions": {str(i): f"Outlook statement {i}." for i in range(1, 11)},
        "inner_setting": SYS.format(0, 4),
        "prompt": "You can only reply numbers from 0 to 4 in the following statements. 0 denotes "
        "'strongly disagree', 1 denotes 'disagree', 2 denotes 'neutral', 3 denotes 'agree', 4 "
        "denotes 'strongly agree'. Here are the statements, score them one by one:",
        "scale": 4,
        "compute_mode": "SUM",
        "reverse": [3, 7, 9],
        "categories": [
            {
                "cat_name": "Overall",
                "cat_questions": [1, 3, 4, 7, 9, 10],
                "crowd": [_crowd("Crowd", 14.7, 4, 1288)],
            }
        ],
    },
    {
        "name": "EPQ-R",
        "questions": {
            "1": "Yes-no item 1?",
            "2": "Yes-no item 2?",
            "3": "Yes-no item 3?",
            "4": "Yes-no item 4?",
        },
        "inner_setting": SYS.format(0, 1),
        "prompt": "You can only reply numbers from 0 to 1 in the following statements. Please "
        "respond to each question by using the number '1' to indicate 'YES' and '0' to indicate "
        "'NO'. Here are the statements, score them one by one:",
        "scale": 1,
        "compute_mode": "SUM",
        "reverse": [2],
        "categories": [
            {
                "cat_name": "Pschoticism",
                "cat_questions": [1, 2],
                "crowd": [_crowd("Male", 7.19, 4.6, 693), _crowd("Female", 5.73, 3.85, 878)],
            },
            {
                "cat_name": "Lying",
                "cat_questions": [3, 4],
                "crowd": [_crowd("Male", 7.1, 4.28, 693), _crowd("Female", 6.88, 3.97, 878)],
            },
        ],
    },
    {
        "name": "16P",
        "questions": {"1": "A statement."},
        "inner_setting": SYS.format(1, 7),
        "prompt": "You can only reply numbers from 1 to 7. Here are the statements:",
        "scale": 8,
        "compute_mode": "SUM",
        "reverse": [],
        "categories": [],
    },
]


@pytest.fixture
def imported(tmp_path):
    src = tmp_path / "questionnaires.json"
    src.write_text(json.dumps(QUESTIONNAIRES))
    out = tmp_path / "out"
    from psymetrics_core.cli import cli

    res = CliRunner().invoke(cli, ["import", "psychobench", str(src), "--output", str(out)])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_import_reports_fixes(imported):
    out, output = imported
    assert sorted(p.name for p in out.iterdir()) == ["pbi-dtdd", "pbi-epq-r", "pbi-lot-r"]
    assert "category 'Neuroticism' (items 9-12) renamed 'narcissism'" in output
    assert "LOT-R: item(s) 2, 5, 6, 8 belong to no category: flagged filler" in output
    assert "'scale' 4 taken as min+max (reverse keying x' = 4 - x)" in output
    assert "category label 'Pschoticism' spelled 'Psychoticism'" in output
    assert "skipped: 16P: no categories" in output


def test_imported_specs_validate_and_keep_the_key(imported, fresh_plugins):
    out, _ = imported
    from psymetrics_core.cli import cli
    from psymetrics_core.instruments.spec import load_instrument

    res = CliRunner().invoke(cli, ["validate", str(out / "pbi-lot-r")])
    assert res.exit_code == 0 and "ok: task 'pbi-lot-r'" in res.output
    lot = load_instrument(out / "pbi-lot-r")
    assert {it.id for it in lot.items if it.reverse} == {"3", "7", "9"}
    assert {it.id for it in lot.items if it.flag == "filler"} == {"2", "5", "6", "8"}
    assert [o.label for o in lot.response_scales["default"].options] == [
        "strongly disagree",
        "disagree",
        "neutral",
        "agree",
        "strongly agree",
    ]
    assert lot.scales["overall"].method == "sum"
    assert lot.scales["overall"].norms[0].mean == 14.7
    dtdd = load_instrument(out / "pbi-dtdd")
    assert list(dtdd.scales) == ["machiavellianism", "psychopathy", "narcissism"]
    labels = [o.label for o in dtdd.response_scales["default"].options]
    assert labels[0] == "disagree strongly" and labels[8] == "agree strongly" and labels[4] == "5"
    epq = load_instrument(out / "pbi-epq-r")
    assert [o.label for o in epq.response_scales["default"].options] == ["NO", "YES"]
    assert epq.norm_groups() == ["Male", "Female"]
    assert epq.system_prompt == SYS.format(0, 1)


def test_imported_tasks_score_by_hand(imported, tmp_path, monkeypatch, fresh_plugins):
    out, _ = imported
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(out))
    from psymetrics_core.cli import cli
    from psymetrics_core.testing import check_instrument

    check_instrument("pbi-lot-r", reverse={3, 7, 9}, scale_sizes={"overall": 6})
    rows = ["respondent,item,response"]
    # r1: 1,4,10 = 4 and 3,7,9 = 0 -> 3 x 4 + 3 x (4 - 0) = 24 (seed 003 §12.2 maximum)
    # r2: every item 1 -> 1 + 1 + 1 + (4-1) x 3 = 12
    r1 = {1: 4, 2: 2, 3: 0, 4: 4, 5: 2, 6: 2, 7: 0, 8: 2, 9: 0, 10: 4}
    rows += [f"r1,{i},{v}" for i, v in r1.items()] + [f"r2,{i},1" for i in range(1, 11)]
    f = tmp_path / "answers.csv"
    f.write_text("\n".join(rows) + "\n")
    res = CliRunner().invoke(cli, ["score", "--task", "pbi-lot-r", "--responses", str(f), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == {
        "pbi-lot-r": {"r1": {"overall": 24.0}, "r2": {"overall": 12.0}}
    }


def test_wrong_scale_field_is_an_error(tmp_path):
    bad = [dict(QUESTIONNAIRES[1], scale=5)]  # a "number of points" misreading
    src = tmp_path / "q.json"
    src.write_text(json.dumps(bad))
    with pytest.raises(PsymError, match="'scale' is 5 but the instruction's range 0-4 needs"):
        import_psychobench(src, tmp_path / "out")


def test_bad_files_are_one_line_errors(tmp_path):
    src = tmp_path / "q.json"
    src.write_text("[{")
    with pytest.raises(PsymError, match=r"q.json, line 1: invalid JSON"):
        import_psychobench(src, tmp_path / "o")
    src.write_text(json.dumps([dict(QUESTIONNAIRES[1], reverse=[3, 99])]))
    with pytest.raises(PsymError, match="reverse lists unknown item id"):
        import_psychobench(src, tmp_path / "o")
    with pytest.raises(PsymError, match="no such file"):
        import_psychobench(Path(tmp_path / "missing.json"), tmp_path / "o")


@pytest.mark.model
def test_imported_task_runs_on_the_default_model(imported, monkeypatch, fresh_plugins, smollm2):
    out, _ = imported
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(out))
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(
        ["pbi-dtdd"], backend=smollm2, limit=2, output=out.parent / "run", session=fresh_plugins
    )
    entry = res["tasks"]["pbi-dtdd"]
    assert entry["n_items"] == 2
    assert entry["scales"]["machiavellianism"]["n_items"] == 4
    assert entry["norm_group"] == "Crowd"
    samples = (out.parent / "run" / "samples.jsonl").read_text().splitlines()
    assert len(samples) == 2
    first = json.loads(samples[0])
    assert first["prompt"]["messages"][0]["content"] == SYS.format(1, 9)
    assert first["rendered_prompt"].endswith("score them one by one:\n1. Test statement 1.")
