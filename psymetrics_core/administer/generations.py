"""Score generations that already exist (``psym score --task refletter --responses FILE``).

The file is a CSV or JSONL with ``item`` (an item id, see ``psym show TASK --json``), ``text``
(the generation) and optional ``respondent`` (one score set per respondent). A ``samples.jsonl``
of an earlier ``psym eval`` is accepted as is: its ``completion`` is re-parsed exactly as in
the run, rows of other tasks are skipped, and each (condition, repeat) is one respondent
(``original/repeat0`` for a plain run), so it re-scores to the run's own results. Judged tasks
call the judge (``judge_model``) through the response cache, one batch per stage.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from psymetrics_core.administer.judge import DEFAULT_JUDGE_MAX_NEW_TOKENS, Judge
from psymetrics_core.administer.kinds.judged import JudgedTask, run_stages
from psymetrics_core.administer.kinds.task import Task, TaskResults, task_entry
from psymetrics_core.base.errors import ResponsesError
from psymetrics_core.base.types import Completion, Item, Verdict
from psymetrics_core.pluginsys.session import Session

__all__ = ["read_generations", "score_generations"]


def read_generations(path: str | Path, task: Task) -> dict[str, list[tuple[Item, str]]]:
    """{respondent: [(item, text), ...]} from a CSV or JSONL file; bad rows are one-line errors."""
    p = Path(path)
    if not p.is_file():
        raise ResponsesError(f"{p}: no such file")
    items = {it.id: it for it in task.load_items()}
    rows = _jsonl_rows(p) if p.suffix.lower() in (".jsonl", ".json") else _csv_rows(p)
    out: dict[str, list[tuple[Item, str]]] = {}
    seen: set[tuple[str, str]] = set()
    for line, row in rows:
        if "task" in row and row["task"] != task.id:
            continue  # a samples.jsonl of a run with several tasks
        item_id = str(row.get("item") or "").strip()
        if item_id not in items:
            raise ResponsesError(
                f"{p}, line {line}: item {item_id!r} is not an item of task '{task.id}' "
                f"(see `psym show {task.id} --json`)"
            )
        text = row["completion"] if "completion" in row else row.get("text")
        if text is not None and not isinstance(text, str):
            raise ResponsesError(f"{p}, line {line}: field 'text' must be a string")
        who = _respondent(row)
        if (who, item_id) in seen:
            raise ResponsesError(f"{p}, line {line}: respondent {who!r} has item {item_id!r} twice")
        seen.add((who, item_id))
        out.setdefault(who, []).append((items[item_id], text or ""))
    if not out:
        raise ResponsesError(f"{p}: no rows for task '{task.id}'")
    return out


def _respondent(row: Mapping[str, Any]) -> str:
    if row.get("respondent") not in (None, ""):
        return str(row["respondent"]).strip()
    if "condition" in row:  # a samples.jsonl line
        return f"{row['condition']}/repeat{row.get('repeat', 0)}"
    return "all"


def _csv_rows(p: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        with p.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            cols = [c.strip() for c in (reader.fieldnames or [])]
            missing = [c for c in ("item", "text") if c not in cols]
            if missing:
                raise ResponsesError(
                    f"{p}, line 1: missing column(s) {', '.join(missing)} "
                    "(expected columns: item, text and optionally respondent)"
                )
            reader.fieldnames = cols
            return [(i, dict(r)) for i, r in enumerate(reader, start=2)]
    except UnicodeDecodeError as exc:
        raise ResponsesError(f"{p}: not a UTF-8 text file ({exc.reason})") from None
    except csv.Error as exc:
        raise ResponsesError(f"{p}: not a valid CSV file ({exc})") from None


def _jsonl_rows(p: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ResponsesError(f"{p}: not a UTF-8 text file ({exc.reason})") from None
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ResponsesError(f"{p}, line {i}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ResponsesError(f"{p}, line {i}: expected a JSON object with item and text")
        if "item" not in row or not ({"text", "completion"} & set(row)):
            raise ResponsesError(f"{p}, line {i}: expected the fields item and text")
        out.append((i, row))
    return out


def score_generations(
    task: Task,
    path: str | Path,
    *,
    session: Session,
    judge_model: str | None = None,
    judge_model_args: str | dict[str, str] | None = None,
    judge_max_new_tokens: int | None = None,
    seed: int = 1234,
) -> dict[str, dict[str, Any]]:
    """Each respondent's results entry (scores, counts, detail), as ``psym eval`` reports it."""
    data = read_generations(path, task)
    judge = _judge(task, session, judge_model, judge_model_args, judge_max_new_tokens, seed)
    out: dict[str, dict[str, Any]] = {}
    try:
        for who, rows in data.items():
            gens = [task.parse(item, Completion(text=text)) for item, text in rows]
            verdicts: dict[str, dict[str, Verdict]] = {}
            if judge is not None and isinstance(task, JudgedTask):
                verdicts = run_stages(task, gens, judge, {"respondent": who})
            results = TaskResults(gens, verdicts)
            out[who] = task_entry(task, results, task.score(results))
    finally:
        if judge is not None:
            judge.close()
    return out


def _judge(
    task: Task,
    session: Session,
    model: str | None,
    model_args: str | dict[str, str] | None,
    max_new_tokens: int | None,
    seed: int,
) -> Judge | None:
    if not isinstance(task, JudgedTask):
        return None
    if not model:
        raise ResponsesError(f"task '{task.id}' is judged: name the judge with --judge-model")
    from psymetrics_core.backends.base import parse_model_args
    from psymetrics_core.backends.cache import CachedBackend, ResponseCache

    args = model_args if isinstance(model_args, dict) else parse_model_args(model_args)
    return Judge(
        model=model,
        model_args=args,
        factory=lambda: CachedBackend(session.make_backend(model, args), ResponseCache()),
        seed=seed,
        max_new_tokens=max_new_tokens or DEFAULT_JUDGE_MAX_NEW_TOKENS,
    )
