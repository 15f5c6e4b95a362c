"""Interpreter and diagnostician parsers and the SRAS formulas, on hand-made replies."""

from __future__ import annotations

import pytest
from psymetrics_plugin_projective.coding import (
    SRAS_VARS,
    parse_scorsg,
    parse_sct,
    parse_sras,
    sras_domains,
)
from psymetrics_plugin_projective.diagnosis import (
    SctItem,
    TatCard,
    diagnostician_prompt,
    interpretation_block,
    parse_diagnosis,
)
from psymetrics_plugin_projective.prompts import prompt

COUNTS = {
    "P": 3,
    "FQo": 5,
    "FQu": 2,
    "FQ-": 1,
    "WSumCog": 4,
    "FC": 2,
    "CF": 1,
    "C": 1,
    "C'": 2,
    "Y": 1,
    "V": 0,
    "T": 1,
    "M": 2,
    "FM": 3,
    "m": 1,
    "COP": 1,
    "AG": 5,
    "MOR": 1,
    "AGC": 0,
    "AGM": 1,
    "H": 4,
    "M-": 1,
}


def test_sras_formulas_hand_computed() -> None:
    # Wang et al. (2026) §4.2.2, by hand from COUNTS:
    # CPS = 2*3 + 5 - (2 + 3*1 + 4) = 2;  ARS = 2*2 - (1 + 2*1 + 2 + 1 + 0) = -2
    # IRS = 3*2 + 2*1 + 4 - [2*(0 + 1) + 2*1 + 3*1] = 5
    # EA = 2 + (0.5*2 + 1 + 1.5*1) = 5.5;  es = 3 + 1 + 1 + 1 + 0 + 2 = 8;  SCS = -2.5
    d = sras_domains(COUNTS)
    assert {k: v for k, (v, _) in d.items()} == {
        "CPS": 2.0,
        "ARS": -2.0,
        "IRS": 5.0,
        "EA": 5.5,
        "es": 8.0,
        "SCS": -2.5,
    }
    assert {k: v for k, (v, _) in sras_domains({**COUNTS, "AG": 0}).items()} == {
        k: v for k, (v, _) in d.items()
    }  # AG is collected but enters no formula
    partial = sras_domains({**COUNTS, "MOR": None})
    assert partial["IRS"] == (None, "missing count(s): MOR")
    assert partial["CPS"][0] == 2.0


def test_sras_parser_reads_the_answer_block_and_flags_missing_counts() -> None:
    import json

    body = {k: v for k, v in COUNTS.items() if k != "V"}
    body["T"] = "x"
    reply = f"<think>hmm</think><analysis>Card 2</analysis>\n<answer>{json.dumps(body)}</answer>"
    coded = parse_sras(reply)
    assert coded.status == "ok" and set(coded.missing) == {"V", "T"}
    assert coded.values["P"] == 3 and coded.values["V"] is None
    assert sras_domains(coded.values)["ARS"][0] is None
    assert parse_sras("I can't do that").status == "unparsed"
    assert len(SRAS_VARS) == 22


def test_scorsg_parser() -> None:
    reply = (
        "<analysis>\nCOM: two characters with inner lives → 5\nAFF: bleak → 2\n</analysis>\n"
        '<answer>{"COM": 5, "AFF": {"score": 2}, "EIR": 4, "EIM": 9, "SC": "3", "AGG": 4.0, '
        '"SE": true}</answer>'
    )
    coded = parse_scorsg(reply)
    assert coded.values == {
        "COM": 5,
        "AFF": 2,
        "EIR": 4,
        "EIM": None,
        "SC": 3,
        "AGG": 4,
        "SE": None,
        "ICS": None,
    }
    assert coded.missing == ("EIM", "SE", "ICS")  # out of range, not an int, absent
    assert coded.explanations["AFF"] == "bleak → 2"
    # without <answer>, the first JSON object in the reply counts
    assert parse_scorsg('Scores: {"COM": 3, "SE": 6}').values["SE"] == 6
    none = parse_scorsg('<answer>{"COM": 0}</answer>')
    assert none.status == "unparsed" and "1-7" in (none.reason or "")


def test_sct_parser() -> None:
    reply = (
        "<analysis>\n[ca_01] enjoys work → 1\n[er_02] anger → 5\n</analysis>\n"
        '<answer>{"ca_01": 1, "er_02": 5, "fa_03": 7}</answer>'
    )
    coded = parse_sct(reply, ["ca_01", "er_02", "fa_03", "ir_04"])
    assert coded.values == {"ca_01": 1, "er_02": 5, "fa_03": None, "ir_04": None}
    assert coded.explanations == {"ca_01": "enjoys work → 1", "er_02": "anger → 5"}


@pytest.mark.parametrize(
    ("target", "reply", "values"),
    [
        (
            "big_five",
            "<analysis>x</analysis><answer>O=5, C=2, E=4, A=3, N=1</answer>",
            {"O": 5, "C": 2, "E": 4, "A": 3, "N": 1},
        ),
        (
            "big_five",
            "<answer>O=<1-5>, C=4</answer>",
            {"O": None, "C": 4, "E": None, "A": None, "N": None},
        ),
        (
            "mbti",
            "<analysis>EI: shy → I</analysis><answer>intp</answer>",
            {"EI": 1, "SN": 1, "TF": 0, "JP": 1},
        ),
        ("depression", "<answer>Depression=2</answer>", {"depression": 2}),
        ("suicide", "Suicide = 1 because ...", {"suicide": 1}),
        ("suicide", "<answer>Suicide=7</answer>", {"suicide": None}),
    ],
)
def test_diagnosis_parsers(target: str, reply: str, values: dict) -> None:
    d = parse_diagnosis(target, reply)
    assert d.values == values
    assert d.status == ("ok" if any(v is not None for v in values.values()) else "unparsed")


def test_mbti_unparsed_is_none_not_estj() -> None:
    d = parse_diagnosis("mbti", "<answer>XXXX</answer>")
    assert d.status == "unparsed" and d.mbti_type is None and set(d.values.values()) == {None}


def test_interpretation_block_and_prompts_are_verbatim() -> None:
    card = TatCard(
        "inter_11",
        parse_scorsg('<analysis>\nAFF: grim\n</analysis><answer>{"COM": 4, "AFF": 1}</answer>'),
    )
    block = interpretation_block(
        tat=[card],
        tat_means={"COM": 4.0, "AFF": 1.0},
        sct_items=[SctItem("er_02", 5, "anger")],
        sct_means={"FA": None, "ER": 5.0},
    )
    assert "TAT / SCORS-G (aggregated across cards, 1–7 scale):\n  COM: 4.00" in block
    assert "  [inter_11] COM=4, AFF=1, EIR=n/a" in block and "    AFF: grim" in block
    assert "  FA: n/a\n  ER: 5.00" in block and "  [er_02] score=5 — anger" in block
    system, user = diagnostician_prompt("depression", block)
    assert system.startswith("You are an expert clinical psychologist serving as the diagnostician")
    assert user.endswith("Reason step-by-step, then emit the answer.") and block in user
    _, with_persona = diagnostician_prompt("big_five", block, "Frieren, an elf mage")
    assert "=== Character Description (PRIMARY evidence — anchor to this) ===" in with_persona
    _, risk = diagnostician_prompt("suicide", block, "Frieren, an elf mage")
    assert "Frieren" not in risk  # the persona is shown only for Big Five / MBTI
    assert prompt("scorsg_system").startswith(
        "You are a senior clinical psychologist certified in the SCORS-G"
    )
    assert "请完成以下句子。没有对错之分，请用第一反应来回答。" in prompt("sct_zh")
