"""Judge models: a model that rates other models' completions, for any plugin to use.

During ``evaluate()`` a ``Judge`` is in scope; a hook calls ``current_judge().complete(...)``.
The judge is any registered backend (``psym eval --judge-model NAME --judge-model-args ...``),
by default the evaluated model itself (the same loaded backend object). Its calls go through
``runner.call_backend`` like every other completion and share the run's response cache (the
evaluated model's cached backend, or the named judge wrapped in the same cache); every call is
recorded in ``judge.jsonl`` in the run directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from .backends.base import GenerationSettings
from .errors import PsymError
from .records import JudgeRecord
from .results import SampleWriter, redact
from .types import Prompt

__all__ = ["Judge", "current_judge", "judge_scope", "DEFAULT_JUDGE_MAX_NEW_TOKENS"]

DEFAULT_JUDGE_MAX_NEW_TOKENS = 128

_CURRENT: ContextVar[Judge | None] = ContextVar("psym_judge", default=None)


class Judge:
    """A lazily built judge backend plus the settings and record file of one run."""

    def __init__(
        self,
        *,
        model: str,
        model_args: dict[str, str] | None = None,
        backend: Any = None,
        wrap: Callable[[Any], Any] | None = None,
        seed: int = 1234,
        max_new_tokens: int = DEFAULT_JUDGE_MAX_NEW_TOKENS,
        temperature: float = 0.0,
        records: Path | None = None,
        same_as_evaluated: bool = False,
    ) -> None:
        self.model = model
        self.model_args = dict(model_args or {})
        self._backend = backend
        self._wrap = wrap
        self.settings = GenerationSettings("generate", max_new_tokens, temperature, seed)
        self.same_as_evaluated = same_as_evaluated
        self._records_path = records
        self._writer: SampleWriter | None = None
        self.n_calls = 0

    @property
    def backend(self) -> Any:
        """The judge's backend, built on first use."""
        if self._backend is None:
            from .runner import make_backend

            built = make_backend(self.model, self.model_args)
            self._backend = self._wrap(built) if self._wrap is not None else built
        return self._backend

    def complete(
        self,
        texts: Sequence[str],
        *,
        task: str = "",
        item_ids: Sequence[str] | None = None,
        system: str | None = None,
    ) -> list[str]:
        """The judge's completion of each user message in ``texts`` (recorded per call)."""
        from .runner import call_backend

        prompts = [_prompt(t, system) for t in texts]
        completions = call_backend(self.backend, prompts, self.settings)
        out = [c.text or "" for c in completions]
        ids = list(item_ids) if item_ids is not None else [""] * len(out)
        if self._records_path is not None and self._writer is None:
            self._writer = SampleWriter(self._records_path, JudgeRecord)
        for item_id, pr, text in zip(ids, prompts, out, strict=True):
            self.n_calls += 1
            if self._writer is not None:
                self._writer.write(
                    {
                        "task": task,
                        "item": item_id,
                        "judge_model": self.model,
                        "prompt": pr.to_json(),
                        "completion": text,
                    }
                )
        return out

    def record(self) -> dict[str, Any]:
        """Judge model, arguments (secrets redacted) and settings, for ``results.json``."""
        ident = self._backend.identity() if self._backend is not None else None
        summary = getattr(self._backend, "summary", None)
        cache = summary() if callable(summary) and not self.same_as_evaluated else None
        return {
            "model": self.model,
            "model_args": redact(self.model_args),
            "same_as_evaluated": self.same_as_evaluated,
            "backend": ident,
            "settings": self.settings.to_json(),
            "n_calls": self.n_calls,
            **({"cache": cache} if cache is not None else {}),
        }

    def close(self) -> None:
        """Close the record file."""
        if self._writer is not None:
            self._writer.close()


def _prompt(text: str, system: str | None) -> Prompt:
    messages: list[dict[str, str]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": text})
    return Prompt(messages=tuple(messages), options=(), text=text)


def current_judge() -> Judge:
    """The judge of the running evaluation; an error outside ``evaluate()``."""
    judge = _CURRENT.get()
    if judge is None:
        raise PsymError("this task needs a judge model, which is only available inside evaluate()")
    return judge


@contextmanager
def judge_scope(judge: Judge) -> Iterator[Judge]:
    """Make ``judge`` the current judge for the duration of the block."""
    token = _CURRENT.set(judge)
    try:
        yield judge
    finally:
        _CURRENT.reset(token)
        judge.close()
