"""The plugin guide's worked example of a judged task, run as written against a scripted judge.

The python block under "Worked example: a small judged task" is extracted from docs/plugins/code.md,
imported as a plugin module into its own session, and evaluated; the expected scores are
counted by hand from the scripted replies.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from behaviour_fakes import ScriptedBackend

from psymetrics_core.pluginsys.loader import make_plugin_manager
from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]


def _example_module(tmp_path: Path):
    text = (REPO / "docs" / "plugins" / "code.md").read_text(encoding="utf-8")
    section = text.split("### Worked example: a small judged task", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None, "docs/plugins/code.md lost its worked example"
    path = tmp_path / "politeness_plugin.py"
    path.write_text(code.group(1), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("politeness_plugin", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def session(tmp_path):
    pm, records = make_plugin_manager(autoload=False)
    s = Session(pm, records)
    s.register(_example_module(tmp_path), name="politeness")
    return s


def _reply(text: str) -> str:
    if text.startswith("Is the following reply"):  # the judge
        if "sorry" in text:
            return "Polite."
        return "rude" if "No." in text else "I would rather not say."
    if "parcel" in text:
        return "I am so sorry, let me check your parcel right away."
    return "No." if "money" in text else "Please hold."


def test_the_worked_example_runs_and_scores_by_hand(session, tmp_path):
    from psymetrics_core.administer.runner import evaluate

    be = ScriptedBackend(_reply)
    res = evaluate(["politeness"], backend=be, output=tmp_path / "run", session=session)
    polite = res["tasks"]["politeness"]["scales"]["polite"]
    # by hand: "late" -> polite (True), "refund" -> rude (False), "wait" -> unparsed (left out)
    assert polite["score"] == pytest.approx(1 / 2) and polite["n"] == 2
    assert polite["detail"] == {"n_units": 3, "n_verdicts": 2, "n_unparsed": 1}
    assert res["judge"]["stages"]["polite"] == {"ok": 2, "unparsed": 1, "refused": 0}
    lines = (tmp_path / "run" / "judge.jsonl").read_text().splitlines()
    assert [json.loads(x)["verdict"]["status"] for x in lines] == ["ok", "ok", "unparsed"]


def test_no_parsed_verdict_is_null_with_a_reason(session):
    from psymetrics_core.administer.runner import evaluate

    be = ScriptedBackend(lambda t: "Hmm." if t.startswith("Is the") else "Fine.")
    res = evaluate(["politeness"], backend=be, session=session)
    polite = res["tasks"]["politeness"]["scales"]["polite"]
    assert polite["score"] is None and polite["reason"] == "0 of 3 verdicts parsed"
