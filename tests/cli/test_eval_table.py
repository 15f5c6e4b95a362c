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


# --- validity indicators at 80 columns (indicators as rows in blocks of tasks when too wide) ---

_INDICATORS = [
    "straight_lining",
    "acquiescence",
    "reverse_keyed_inconsistency",
    "parse_rate",
    "judge_parse_rate",
    "option_order_sensitivity",
]


def _indicator_results(tasks: list[str]) -> dict:
    """Every indicator of every task, in turn fired, not fired and undefined (``null`` with a
    reason), as results.json records them (the fields the table reads)."""
    out = {}
    for t, task in enumerate(tasks):
        ind = {}
        for k, name in enumerate(_INDICATORS):
            state = (t + k) % 3
            value = None if state == 2 else round(0.07 + 0.14 * k + 0.03 * t, 4)
            ind[name] = {"value": value, "threshold": 0.5, "fired": state == 0, "n": 12}
            if value is None:
                ind[name]["reason"] = "fewer than 5 answers"
        out[task] = {"indicators": ind}
    return {"tasks": out}


def _render_indicators(monkeypatch, results: dict, width: int) -> list[str]:
    from psymetrics_core.cli.console import stdout
    from psymetrics_core.cli.eval_table import _print_indicators

    monkeypatch.setattr(stdout, "_width", width)
    with stdout.capture() as cap:
        _print_indicators(results)
    return [line.rstrip() for line in cap.get().splitlines()]


def _parse_indicator_blocks(lines: list[str]) -> dict[str, dict[str, str]]:
    """{task: {indicator name as printed: cell}} from the blocks with indicators as rows; a
    task name folded over header lines is joined back."""
    tasks: dict[str, dict[str, str]] = {}
    i = 0
    while i < len(lines):
        if not lines[i].startswith("┏"):
            i += 1
            continue
        i += 1
        head: list[list[str]] = []
        while lines[i].startswith("┃"):
            head.append(_cells(lines[i], "┃"))
            i += 1
        names = ["".join(parts) for parts in zip(*head, strict=True)]
        assert names[0] == "task", head
        i += 1  # ┡
        while lines[i].startswith("│"):
            row = _cells(lines[i], "│")
            for task, cell in zip(names[1:], row[1:], strict=True):
                tasks.setdefault(task, {})[row[0]] = cell
            i += 1
    return tasks


def _want_cell(ind: dict) -> str:
    """A cell as the table with one row per task prints it: two decimals, `!` when fired, an
    em dash when undefined."""
    if ind["value"] is None:
        return "—"
    return f"{ind['value']:.2f}" + (" !" if ind["fired"] else "")


def test_every_indicator_fits_80_columns_named_whole_with_every_value(monkeypatch):
    from psymetrics_core.instruments.indicators import SHORT_NAMES

    tasks = ["16p", "bfi", "sct", "psychobench-empathy", "asi", "mfq", "bfi10", "dark-triad-sd3"]
    results = _indicator_results(tasks)
    lines = _render_indicators(monkeypatch, results, 80)
    # the tables and their titles; the warning lines under them are text the terminal wraps
    shown = lines[: lines.index("! = beyond its threshold (docs: guides/report.md)")]
    assert max(len(line) for line in shown) <= 80, max(shown, key=len)
    assert not any("…" in line for line in shown)
    parsed = _parse_indicator_blocks(lines)
    assert list(parsed) == tasks
    for task, cells in parsed.items():
        inds = results["tasks"][task]["indicators"]
        # every indicator named whole (its one name on every screen), with the results' value
        assert cells == {SHORT_NAMES[n]: _want_cell(inds[n]) for n in _INDICATORS}
    titles = [line for line in lines if line.startswith("validity indicators")]
    # 80 - 1 - (18 + 3) leaves 58 columns: 16p, bfi, sct, asi (6 + 3 each) and the folded
    # psychobench-empathy (16 + 3) fill 55 of them; mfq's 9 more would not fit
    assert titles == ["validity indicators, tasks 1–5 of 8", "validity indicators, tasks 6–8 of 8"]
    assert lines.count("! = beyond its threshold (docs: guides/report.md)") == 1
    assert sum(line.startswith("warning ") for line in lines) == sum(
        ind["fired"] for e in results["tasks"].values() for ind in e["indicators"].values()
    )


def test_indicators_that_fit_keep_one_row_per_task(monkeypatch):
    results = _indicator_results(["bfi", "mfq"])
    for ind in results["tasks"].values():
        del ind["indicators"]["judge_parse_rate"], ind["indicators"]["option_order_sensitivity"]
    lines = _render_indicators(monkeypatch, results, 80)
    assert lines[0] == "validity indicators"
    head = ["task", "straight-lining", "acquiescence", "reverse-key gap", "parse rate"]
    assert _cells(lines[2], "┃") == head
    rows = [_cells(line, "│") for line in lines if line.startswith("│")]
    inds = results["tasks"]["bfi"]["indicators"]
    assert rows[0] == ["bfi", *(_want_cell(inds[n]) for n in _INDICATORS[:4])]
    assert [r[0] for r in rows] == ["bfi", "mfq"]
