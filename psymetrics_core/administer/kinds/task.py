"""The base of every non-questionnaire task: metadata, overridable stages and typed results.

A plugin subclasses a kind's task class (``FreeTextTask``, ``JudgedTask``, ``ProbeTask``),
overrides only what is specific to it, and registers an instance built with ``define(...)``::

    class RefLetter(FreeTextTask):
        def parse(self, item, completion): ...
        def score(self, results): ...

    register(RefLetter.define(id="refletter", name=..., scales={...}, items=[...]))

There are no per-task-id guards: the runner calls the methods of the task object itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from psymetrics_core.base.bounds import task_option_bound
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import (
    Completion,
    Generation,
    Instrument,
    Item,
    PluginInfo,
    Prompt,
    ResponseScale,
    ScaleDef,
    Score,
    Verdict,
)
from psymetrics_core.instruments.indicators import judge_parse_rate

__all__ = ["Task", "TaskResults", "TaskScores", "task_entry"]

T = TypeVar("T", bound="Task")


@dataclass
class TaskResults:
    """What one cell of a task produced: its generations and each judge stage's verdicts.

    ``verdicts[stage][item_id]``; a generation that was not judged has no verdict.
    """

    generations: list[Generation]
    verdicts: dict[str, dict[str, Verdict]] = field(default_factory=dict)

    @property
    def ok(self) -> list[Generation]:
        """The generations that parsed (status ``ok``)."""
        return [g for g in self.generations if g.ok]

    def verdict(self, stage: str, generation: Generation) -> Verdict | None:
        """The verdict of ``stage`` on ``generation`` (None when it was not judged)."""
        return self.verdicts.get(stage, {}).get(generation.item.id)

    def counts(self) -> dict[str, Any]:
        """Generations given, parsed, unparsed and refused, and the parse rate."""
        n = len(self.generations)
        n_ok = sum(g.status == "ok" for g in self.generations)
        n_refused = sum(g.status == "refused" for g in self.generations)
        return {
            "n_items": n,
            "n_answered": n_ok,
            "n_unparsed": n - n_ok - n_refused,
            "n_refused": n_refused,
            "parse_rate": n_ok / n if n else None,
        }


@dataclass
class TaskScores:
    """A task's scores and any further detail for its ``results.json`` entry."""

    scores: dict[str, Score]
    detail: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, scores: Iterable[Score], **detail: Any) -> TaskScores:
        """Scores given as a list (kept in order) plus keyword detail."""
        return cls({s.name: s for s in scores}, dict(detail))


@dataclass
class Task(Instrument):
    """A task run by a non-questionnaire kind; construct it with ``define(...)``.

    Override ``load_items``, ``render``, ``parse`` and ``score`` as needed (defaults: the fixed
    items, the item text as the user message, the stripped text, no scores).
    """

    # questionnaire-only fields get defaults (a task has no response scales or template)
    license_status: str = ""
    redistributable: bool | None = True
    item_source: str = ""
    scoring_rule: str = ""
    response_scales: dict[str, ResponseScale] = field(default_factory=dict)
    scales: dict[str, ScaleDef] = field(default_factory=dict)
    forms: dict[str, list[Item]] = field(default_factory=lambda: {"original": []})
    prompt_template: str = ""
    instruction: str = ""

    kind_name = "free_text"

    @classmethod
    def define(
        cls: type[T],
        *,
        id: str,
        name: str,
        version: str,
        citation: str,
        license_status: str,
        item_source: str,
        scoring_rule: str,
        scales: Mapping[str, str],
        items: Iterable[Item] = (),
        options: Mapping[str, str] | None = None,
        max_new_tokens: int = 256,
        notes: str = "",
        system_prompt: str | None = None,
        plugin: PluginInfo | None = None,
        **fields: Any,
    ) -> T:
        """A task ready for ``register(task)``.

        :param scales: score name -> description (``score`` fills them).
        :param items: the fixed prompts (a data-dependent task overrides ``load_items``).
        :param options: task option name -> help text; ``evaluate()`` rejects any other key.
        :param max_new_tokens: generation length unless the user passes ``--max-new-tokens``.
        :param fields: further dataclass fields of the subclass (e.g. ``target`` of a probe).
        """
        return cls(
            id=id,
            name=name,
            version=version,
            citation=citation,
            license_status=license_status,
            item_source=item_source,
            scoring_rule=scoring_rule,
            scales={k: ScaleDef(k, "mean", v) for k, v in scales.items()},
            forms={"original": list(items)},
            notes=notes,
            system_prompt=system_prompt,
            plugin=plugin,
            extra={
                "kind": cls.kind_name,
                "options": dict(options or {}),
                "max_new_tokens": max_new_tokens,
            },
            **fields,
        )

    # -- stages a task may override -------------------------------------------------------------

    def load_items(self) -> list[Item]:
        """The prompts to administer (default: the fixed items); read ``self.options``."""
        return list(self.forms.get("original", []))

    def render(self, item: Item, cell: Any = None) -> Prompt:
        """The item text as the user message, with the cell's text and message transforms."""
        inst: Instrument = cell.apply_instrument(self) if cell is not None else self
        text = cell.apply_text(inst, item, item.text) if cell is not None else item.text
        messages: list[dict[str, str]] = []
        if inst.system_prompt:
            messages.append({"role": "system", "content": inst.system_prompt})
        messages.append({"role": "user", "content": text})
        if cell is not None:
            messages = cell.apply_messages(messages)
        return Prompt(messages=tuple(messages), options=(), text=text)

    def parse(self, item: Item, completion: Completion) -> Generation:
        """The stripped completion text; an empty one is ``unparsed``. Pure: no model calls."""
        text = (completion.text or "").strip()
        return Generation(item, text, "ok" if text else "unparsed")

    def score(self, results: TaskResults) -> TaskScores:
        """The task's scores from one cell's results (default: none)."""
        return TaskScores({})

    # -- helpers for task options ---------------------------------------------------------------

    def option_float(self, key: str, default: float, lo: float, hi: float) -> float:
        """Task option ``key`` as a number in [lo, hi] (one-line error otherwise)."""
        raw = self.options.get(key)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not lo <= value <= hi:
            raise PsymError(
                f"task '{self.id}': option {key} must be a number in [{lo}, {hi}], got {raw!r}"
            )
        return value

    def option_int(self, key: str, default: int, minimum: int = 1) -> int:
        """Task option ``key`` as an integer within its bound: the one ``base/bounds.py``
        declares for this task and key, else ``minimum``..1,000,000 (one-line error otherwise)."""
        raw = self.options.get(key)
        if raw is None:
            return default
        b = task_option_bound(self.id, key, minimum)
        text = raw.strip()
        value = int(text) if re.fullmatch(r"-?[0-9]{1,18}", text) else None
        if value is None or not b.lo <= value <= b.hi:
            raise PsymError(f"task '{self.id}': " + b.message(raw, f"option {key}"))
        return value


def task_entry(task: Task, results: TaskResults, scored: TaskScores) -> dict[str, Any]:
    """A task's ``results.json`` entry: scores (value or null with a reason), counts, detail."""
    counts = results.counts()
    entry = {
        "kind": task.kind,
        "scales": {
            name: s.to_json(counts["n_items"], counts["n_answered"])
            for name, s in scored.scores.items()
        },
        **scored.detail,
        **counts,
        "options": dict(task.options),
    }
    if results.verdicts:  # judged tasks: how many judge verdicts parsed (validity indicator)
        verdicts = [v for stage in results.verdicts.values() for v in stage.values()]
        n_ok = sum(v.status == "ok" for v in verdicts)
        entry["indicators"] = {"judge_parse_rate": judge_parse_rate(n_ok, len(verdicts))}
    return entry
