"""Generation probabilities computed elsewhere, brought in as an ordinary run
(``psym import logprobs``).

The CSV holds one row per (scenario, response) of a task whose prompts score continuations
(``value-portrait``): ``scenario`` (the task's item id), ``response`` (the option's value),
``logprob`` (the response's summed log-probability, a number <= 0) and ``tokens`` (how many
tokens were summed). The run is made by the task's own pipeline: :class:`FileScores` answers
each prompt from the file in place of a model, so ``results.json`` and ``samples.jsonl`` are
those ``psym eval`` writes, and every analysis reads them. A scenario the file leaves out is
an unparsed item of the run; a scenario it lists must list every response.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.administer.kinds.task import Task
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter
from psymetrics_core.base.errors import BackendError, PsymError
from psymetrics_core.base.reading import read_csv
from psymetrics_core.base.types import Completion, Prompt
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.records.digest import file_digest
from psymetrics_core.records.rundir import RUN_FILES

__all__ = ["COLUMNS", "PairScore", "FileScores", "read_logprobs", "import_logprobs"]

COLUMNS = ("scenario", "response", "logprob", "tokens")


@dataclass(frozen=True)
class PairScore:
    """One response's summed log-probability and the number of tokens summed."""

    logprob: float
    tokens: int


Scores = dict[str, dict[int, PairScore]]  # item id -> option value -> score


def _number(raw: str, at: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value > 0:
        raise PsymError(
            f"{at}: field 'logprob' must be a summed log-probability, a number <= 0; got {raw!r}"
        )
    return value


def _count(raw: str, at: str) -> int:
    text = raw.strip()
    if not re.fullmatch(r"[0-9]{1,9}", text) or int(text) < 1:
        raise PsymError(f"{at}: field 'tokens' must be a whole number >= 1; got {raw!r}")
    return int(text)


def option_values(task: Task) -> dict[str, tuple[int, ...]]:
    """Item id -> the option values of its prompt (refused: a task scoring no continuations)."""
    out = {}
    for item in task.load_items():
        prompt = task.render(item)
        if not prompt.has_continuations:
            raise PsymError(
                f"--task {task.id}: psym import logprobs takes a task whose prompts score "
                "continuations (e.g. value-portrait); this one has none"
            )
        out[item.id] = tuple(o.value for o in prompt.options)
    return out


def read_logprobs(path: Path, task_id: str, options: dict[str, tuple[int, ...]]) -> Scores:
    """The file's scores, checked: one line naming file, line and field for the first fault."""
    table = read_csv(path, what="log-probability CSV")
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise PsymError(
            f"{path}, line 1: the header must name the columns {', '.join(COLUMNS)}; "
            f"missing {', '.join(missing)}"
        )
    scores: Scores = {}
    first: dict[tuple[str, int], int] = {}
    for line, row in table.rows:
        at = f"{path}, line {line}"
        sid = row["scenario"].strip()
        if sid not in options:
            raise PsymError(
                f"{at}: field 'scenario': {sid!r} is not a scenario id of {task_id} "
                f"(psym show {task_id} lists them)"
            )
        raw = row["response"].strip()
        rid = int(raw) if re.fullmatch(r"[0-9]{1,9}", raw) else None
        if rid is None or rid not in options[sid]:
            ids = ", ".join(str(v) for v in options[sid])
            raise PsymError(
                f"{at}: field 'response': {raw!r} is not a response id of scenario {sid} "
                f"(expected one of {ids})"
            )
        if (sid, rid) in first:
            raise PsymError(
                f"{at}: scenario {sid} response {rid} is given twice "
                f"(first on line {first[sid, rid]})"
            )
        first[sid, rid] = line
        scores.setdefault(sid, {})[rid] = PairScore(
            _number(row["logprob"], at), _count(row["tokens"], at)
        )
    if not scores:
        raise PsymError(f"{path}: no rows below the header (expected {', '.join(COLUMNS)})")
    for sid, got in scores.items():
        lacking = [v for v in options[sid] if v not in got]
        if lacking:
            raise PsymError(
                f"{path}: scenario {sid} lacks response(s) {', '.join(map(str, lacking))} "
                "(a scenario is imported with all of its responses or not at all)"
            )
    return scores


class FileScores(Backend):
    """Answers ``logprob`` prompts from imported scores (by the prompt's text), in place of a
    model; a prompt the file does not cover gets no scores (an unparsed item)."""

    name = "import"
    supports_continuations = True
    supports_turn_end = True  # the file's numbers are whole replies, as its maker computed them

    def __init__(self, model: str, path: Path, by_text: Scores) -> None:
        self.model = model
        self.path = path
        self.by_text = by_text
        self.sha256 = file_digest(path)["sha256"]

    def generate(
        self, prompts: Sequence[Prompt], settings: GenerationSettings, progress: Any = None
    ) -> list[Completion]:
        """Imported scores hold no text."""
        raise BackendError("imported log-probabilities answer log-probability prompts only")

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Each prompt's options' imported scores, with the token counts."""
        out = []
        for prompt in prompts:
            pairs = self.by_text.get(prompt.text)
            if pairs is None:
                out.append(Completion(meta={"imported": False}))
            else:
                scored = [pairs[o.value] for o in prompt.options]
                out.append(
                    Completion(
                        option_logprobs=tuple(s.logprob for s in scored),
                        meta={"option_tokens": [s.tokens for s in scored]},
                    )
                )
            if progress is not None:
                progress.advance(1)
        return out

    def identity(self) -> dict[str, Any]:
        """The model named on the command line and the file the scores came from."""
        return {
            "backend": self.name,
            "model": self.model,
            "source": str(self.path),
            "sha256": self.sha256,
        }


def import_logprobs(
    path: Path,
    task_id: str,
    model: str,
    output: Path,
    session: Session,
    task_options: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Write ``output`` as the run of ``task_id`` whose scores are the file's (``task_options``
    as ``psym eval --task-arg`` gives them, e.g. ``{"value-portrait": {"length": "mean"}}``)."""
    if path.resolve() in {(output / name).resolve() for name in RUN_FILES}:
        raise PsymError(f"--output {output}: writing the run would replace the input {path}")
    task = session.get_instrument(task_id)
    if not isinstance(task, Task):
        raise PsymError(
            f"--task {task_id}: psym import logprobs takes a task whose prompts score "
            f"continuations (e.g. value-portrait), not a {task.kind}"
        )
    scores = read_logprobs(path, task_id, option_values(task))
    by_text = {task.render(it).text: scores[it.id] for it in task.load_items() if it.id in scores}
    backend = FileScores(model, path, by_text)
    return evaluate(
        [task_id],
        session=session,
        backend=backend,
        model=model,
        label=model,
        output=output,
        task_options=task_options,
    )
