"""The judge: a model that codes other models' generations, run as an explicit batched stage.

A judged task declares ``JudgeStage``s (see ``administer.kinds.judged``). For one cell,
the judged kind collects every prompt of a stage and hands them to ``Judge.run_stage`` as ONE
batch: one call through ``call_backend`` (API backends answer it concurrently), through the
run's response cache, with one ``judge.jsonl`` line per call; the next stage sees the verdicts
of the earlier ones. The judge is any registered backend (``psym eval --judge-model NAME
--judge-model-args ...``), by default the evaluated model itself (the same loaded backend).

Parsing verdicts is pure: a stage's ``parse(text) -> Verdict`` never calls a model.

There is no ambient judge: the run builds one ``Judge`` from its configuration and hands it to
the kinds in ``CellRun.judge`` (``generations.py`` builds its own for scoring existing
generations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from psymetrics_core.backends.base import (
    Backend,
    GenerationSettings,
    as_backend,
    call_backend,
    check_requests,
)
from psymetrics_core.backends.cache import CachedBackend
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Item, Prompt, Verdict
from psymetrics_core.contracts.judging import JudgeStage, user_prompt
from psymetrics_core.records.writer import SampleWriter, redact

__all__ = [
    "Judge",
    "JudgeStage",
    "user_prompt",
    "DEFAULT_JUDGE_MAX_NEW_TOKENS",
]

DEFAULT_JUDGE_MAX_NEW_TOKENS = 128


class Judge:
    """The run's judge: a lazily built backend, its settings, counts and ``judge.jsonl``."""

    def __init__(
        self,
        *,
        model: str,
        model_args: dict[str, str] | None = None,
        backend: Any = None,
        factory: Callable[[], Any] | None = None,
        seed: int = 1234,
        max_new_tokens: int = DEFAULT_JUDGE_MAX_NEW_TOKENS,
        temperature: float = 0.0,
        records: Path | None = None,
        same_as_evaluated: bool = False,
        batch: int | None = None,
    ) -> None:
        self.model = model
        self.model_args = dict(model_args or {})
        self._backend: Backend | None = as_backend(backend) if backend is not None else None
        self._factory = factory
        self.settings = GenerationSettings("generate", max_new_tokens, temperature, seed)
        self.same_as_evaluated = same_as_evaluated
        self.batch = batch  # items per request where a stage batches items (the interview's)
        self._records_path = records
        self._writer: SampleWriter | None = None
        self.n_calls = 0
        self.stages: dict[str, dict[str, int]] = {}
        #: per stage, how its replies were asked for (``stage_settings`` in the record)
        self.asked: dict[str, dict[str, Any]] = {}

    @property
    def backend(self) -> Backend:
        """The judge's backend, built on first use."""
        if self._backend is None:
            if self._factory is None:
                raise PsymError(f"no judge model available (--judge-model {self.model})")
            self._backend = as_backend(self._factory())
        return self._backend

    def run_stage(
        self,
        task: str,
        stage: JudgeStage,
        requests: Sequence[tuple[Item, Prompt]],
        tag: Mapping[str, Any] | None = None,
    ) -> dict[str, Verdict]:
        """Judge every request of ``stage`` in one batch; the verdict per item id.

        Each call is written to ``judge.jsonl`` (prompt, reply and parsed verdict) as soon as
        the batch returns; the replies are in the response cache before they are parsed.
        """
        if not requests:
            return {}
        prompts = [p for _, p in requests]
        settings = self._settings(stage)
        self._note(stage, settings)
        completions = call_backend(self.backend, prompts, settings)
        counts = self.stages.setdefault(stage.name, {"ok": 0, "unparsed": 0, "refused": 0})
        out: dict[str, Verdict] = {}
        for (item, prompt), comp in zip(requests, completions, strict=True):
            text = comp.text or ""
            if stage.score is not None:  # scored, not generated: the verdict holds the numbers
                verdict = stage.score(prompt, tuple(comp.option_logprobs or ()))
            else:
                verdict = stage.parse(text)
            out[item.id] = verdict
            counts[verdict.status] = counts.get(verdict.status, 0) + 1
            self._record(task, item.id, prompt, text, stage.name, verdict, tag)
        return out

    def _settings(self, stage: JudgeStage) -> GenerationSettings:
        """The judge's settings for ``stage``: its reply length; ``logprob`` for a scored one."""
        settings = self.settings
        if stage.max_new_tokens is not None:
            n = stage.max_new_tokens
            if stage.at_least:  # the stage's length is a floor under --judge-max-new-tokens
                n = max(n, settings.max_new_tokens)
            settings = replace(settings, max_new_tokens=n)
        return replace(settings, mode="logprob") if stage.score is not None else settings

    def _note(self, stage: JudgeStage, settings: GenerationSettings) -> None:
        """Keep how ``stage``'s replies were asked for: its mode and every reply length sent
        (a stage sizing its own replies asks for more than --judge-max-new-tokens)."""
        seen = self.asked.setdefault(stage.name, {"mode": settings.mode})
        if settings.mode == "logprob":  # scored, nothing generated: no reply length
            return
        lengths = seen.setdefault("max_new_tokens", [])
        if settings.max_new_tokens not in lengths:
            lengths.append(settings.max_new_tokens)
            lengths.sort()
        seen["sized_by_stage"] = stage.max_new_tokens is not None

    def check_stage(self, stage: JudgeStage, prompts: Sequence[Prompt]) -> None:
        """Refuse, in one line and before any request, ``prompts`` the judge's backend cannot
        answer truly in ``stage`` (``check_requests``)."""
        settings = self._settings(stage)
        check_requests(self.backend, [(p, settings) for p in prompts])

    def _record(
        self,
        task: str,
        item_id: str,
        prompt: Prompt,
        text: str,
        stage: str | None,
        verdict: Verdict | None,
        tag: Mapping[str, Any] | None,
    ) -> None:
        self.n_calls += 1
        if self._records_path is not None and self._writer is None:
            self._writer = SampleWriter(self._records_path, "judge")
        if self._writer is not None:
            self._writer.write(
                {
                    "task": task,
                    "item": item_id,
                    "stage": stage,
                    "judge_model": self.model,
                    "prompt": prompt.to_json(),
                    "completion": text,
                    "verdict": verdict.to_json() if verdict is not None else None,
                    **dict(tag or {}),
                }
            )

    def record(self) -> dict[str, Any]:
        """Judge model, arguments (secrets redacted), settings and counts, for results."""
        be = self._backend
        cache = None
        if be is not None and not self.same_as_evaluated:
            cache = be.summary() if isinstance(be, CachedBackend) else None
        return {
            "model": self.model,
            "model_args": redact(self.model_args),
            "same_as_evaluated": self.same_as_evaluated,
            "backend": be.identity() if be is not None else None,
            # --judge-max-new-tokens (or 128): a stage that sizes its own replies uses its own
            # length where larger; the lengths actually asked for are in stage_settings
            "settings": self.settings.to_json(),
            "stage_settings": self.asked,
            "n_calls": self.n_calls,
            "stages": self.stages,
            **({"batch": self.batch} if self.batch is not None else {}),
            **({"cache": cache} if cache is not None else {}),
        }

    def close(self) -> None:
        """Close the record file."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
