"""The first screen of ``psym eval``: indicators and warnings under the table, intervals and
reasons of behaviour-task scores. Runs use a scripted backend (unit tests)."""

from __future__ import annotations

import pytest

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.cli.eval_table import print_table as _print_table


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


# --- every run's scores at 80 columns (scales as rows in blocks of runs when too wide) ---

_CONDITIONS = ["original", "reversed-options", "interview-expert", "battery+item-order-shuffle"]


def _runs_results(n_scales: int, conditions: list[str], seeds: list[int]) -> dict:
    """A results dict as evaluate writes it for several runs (the fields the table reads):
    PsychoBench-sized (28 scales), names of varied length, one undefined score per run."""
    import random

    rng = random.Random(33)
    words = ["self_direction", "hope", "emotional_intelligence", "gse", "risk_taking", "lot"]
    scales = [f"{words[i % len(words)]}_{i}" for i in range(n_scales)]
    runs = []
    for r, (cond, seed) in enumerate((c, s) for c in conditions for s in seeds):
        scores = {s: {"score": round(rng.uniform(-160.0, 160.0), 4)} for s in scales}
        scores[scales[r % n_scales]]["score"] = None
        runs.append({"condition": cond, "seed": seed, "scales": scores})
    return {"tasks": {"pb-many": {"scales": {}, "runs": runs}}}


def _render_runs(monkeypatch, results: dict, width: int) -> list[str]:
    from psymetrics_core.cli.console import stdout
    from psymetrics_core.cli.eval_table import _print_runs

    monkeypatch.setattr(stdout, "_width", width)
    with stdout.capture() as cap:
        _print_runs(results)
    return [line.rstrip() for line in cap.get().splitlines()]


def _cells(line: str, sep: str) -> list[str]:
    return [c.strip() for c in line.strip()[1:-1].split(sep)]


def _parse_blocks(lines: list[str]) -> list[tuple[str, int, dict[str, str]]]:
    """(condition, seed, {scale: cell}) per column of the transposed blocks, in order; a
    condition folded over header lines is joined back."""
    columns: list[tuple[str, int, dict[str, str]]] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("┏"):
            i += 1
            continue
        i += 1
        head: list[list[str]] = []
        while lines[i].startswith("┃"):
            head.append(_cells(lines[i], "┃")[1:])
            i += 1
        conds = ["".join(parts) for parts in zip(*head, strict=True)]
        i += 1  # ┡
        seeds = _cells(lines[i], "│")
        assert seeds[0] == "seed", lines[i]
        i += 2  # ├
        body: dict[str, list[str]] = {}
        while lines[i].startswith("│"):
            row = _cells(lines[i], "│")
            body[row[0]] = row[1:]
            i += 1
        for k, cond in enumerate(conds):
            columns.append((cond, int(seeds[k + 1]), {s: v[k] for s, v in body.items()}))
    return columns


def test_28_scales_of_several_conditions_fit_80_columns_with_every_score(monkeypatch):
    results = _runs_results(28, _CONDITIONS, [1234, 1235])
    lines = _render_runs(monkeypatch, results, 80)
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    columns = _parse_blocks(lines)
    runs = results["tasks"]["pb-many"]["runs"]
    assert [(c, s) for c, s, _ in columns] == [(r["condition"], r["seed"]) for r in runs]
    for (_, _, cells), run in zip(columns, runs, strict=True):
        # two decimals as the wide table and the first table print them; None is an em dash
        want = {
            s: "—" if v["score"] is None else f"{v['score']:.2f}" for s, v in run["scales"].items()
        }
        assert cells == want
    titles = [line for line in lines if line.startswith("pb-many: scores per condition")]
    assert titles[0].endswith(", runs 1–3 of 8") and titles[-1].endswith(", run 8 of 8"), titles


def test_a_wide_terminal_keeps_one_row_per_run(monkeypatch):
    results = _runs_results(28, _CONDITIONS, [1234, 1235])
    lines = _render_runs(monkeypatch, results, 1000)
    assert lines[0] == "pb-many: scores per condition and repeat"
    assert _cells(lines[2], "┃")[:4] == ["condition", "seed", "self_direction_0", "hope_1"]
    rows = [_cells(line, "│") for line in lines if line.startswith("│")]
    runs = results["tasks"]["pb-many"]["runs"]
    assert [(r[0], int(r[1])) for r in rows] == [(r["condition"], r["seed"]) for r in runs]
    assert rows[0][2:4] == ["—", f"{runs[0]['scales']['hope_1']['score']:.2f}"]


def test_more_runs_than_the_cap_say_where_the_rest_are(monkeypatch):
    from psymetrics_core.cli.console import ROW_CAP

    results = _runs_results(28, [f"persona-{i}" for i in range(ROW_CAP + 2)], [1234])
    lines = _render_runs(monkeypatch, results, 80)
    assert len(_parse_blocks(lines)) == ROW_CAP
    assert "... 2 more runs (all in results.json, runs)" in lines
