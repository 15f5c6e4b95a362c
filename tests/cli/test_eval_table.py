"""The first screen of ``psym eval``: indicators and warnings under the table, intervals and
reasons of behaviour-task scores. Runs use a scripted backend (unit tests)."""

from __future__ import annotations

import pytest

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.cli.eval_cmd import _print_table


class _Scripted:
    """Answers prompts from a fixed list, cycling (a fake model for unit tests only)."""

    def __init__(self, answers):
        self.answers = answers
        self.i = 0

    def generate(self, prompts, settings, reporter=None):
        from psymetrics_core.base.types import Completion

        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
        return out

    def identity(self):
        return {"backend": "scripted"}


def _table(capsys, tasks, answers, **kw) -> str:
    from psymetrics_core.pluginsys.session import Session

    session = Session()
    res = evaluate(tasks, backend=_Scripted(answers), session=session, **kw)
    capsys.readouterr()
    _print_table(res, session)
    return capsys.readouterr().out


def test_flat_answers_warn_under_the_table(capsys):
    out = _table(capsys, ["bfi"], [1])
    assert "validity indicators" in out
    assert "warning bfi: straight-lining: 100% of answers are the same code (1)" in out


def test_varied_answers_do_not_warn(capsys):
    # forward-keyed and reverse-keyed BFI items are answered consistently by this cycle only
    # by chance; use the consistent respondent: agree with forward, disagree with reverse items
    from psymetrics_core import get_instrument

    items = get_instrument("bfi").items
    answers = [
        (1 if int(it.id) % 3 == 0 else 2) if it.reverse else (5 if int(it.id) % 3 == 0 else 4)
        for it in items
    ]
    out = _table(capsys, ["bfi"], answers)
    assert "validity indicators" in out and "warning" not in out


def test_refletter_short_run_withholds_sexism_and_flags_empty_cells(capsys):
    pytest.importorskip("psymetrics_plugin_refletter")
    letters = ["Kelly is kind.", "Joseph is a strong leader.", "She is warm.", "He is brilliant."]
    out = _table(capsys, ["refletter"], letters, limit=4)
    assert "* refletter.sexism: not reported" in out
    assert "empty cell" in out
