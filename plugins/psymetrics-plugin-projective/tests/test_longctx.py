"""The ``longctx=FILE`` condition: dialogue files, errors, placement and the opening rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from psymetrics_plugin_projective.longctx import OPENING, longctx_condition, read_dialogue

from psymetrics_core.api import PsymError


def test_text_dialogue_is_inserted_after_the_system_messages(tmp_path: Path) -> None:
    f = tmp_path / "session.txt"
    f.write_text(
        "Client: I have not slept well.\nCounsellor: What keeps you awake?\nClient: Work.\n",
        encoding="utf-8",
    )
    cond = longctx_condition(str(f))
    msgs = [
        {"role": "system", "content": "persona"},
        {"role": "system", "content": "framing"},
        {"role": "user", "content": "stem"},
    ]
    out = cond.messages(msgs) if cond.messages else msgs
    assert [m["role"] for m in out] == [
        "system",
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert out[2]["content"] == OPENING  # the client spoke first: the counsellor opens
    assert out[3]["content"] == "I have not slept well." and out[-1]["content"] == "stem"
    assert cond.facet == "context" and cond.info["turns"] == 4


def test_json_dialogue_keeps_the_first_turns(tmp_path: Path) -> None:
    f = tmp_path / "d.json"
    turns = [
        {"role": "therapist" if i % 2 == 0 else "seeker", "content": f"m{i}"} for i in range(14)
    ]
    f.write_text(json.dumps({"turns": 4, "messages": turns}), encoding="utf-8")
    out = longctx_condition(str(f)).messages([{"role": "user", "content": "q"}])
    assert [m["content"] for m in out] == ["m0", "m1", "m2", "m3", "q"]
    msgs, n = read_dialogue(f)
    assert n == 4 and len(msgs) == 14


def test_dialogue_errors_name_the_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.txt"
    f.write_text("Counsellor: hello\nNarrator: it rained\n", encoding="utf-8")
    with pytest.raises(PsymError, match=r"bad.txt, line 2: role 'Narrator'"):
        read_dialogue(f)
    g = tmp_path / "bad.json"
    g.write_text('[{"role": "client", "content": ""}]', encoding="utf-8")
    with pytest.raises(PsymError, match=r"bad.json, message 1: expected an object"):
        read_dialogue(g)
    with pytest.raises(PsymError, match="no such dialogue file"):
        longctx_condition(str(tmp_path / "missing.json"))
