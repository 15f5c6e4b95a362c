"""The backend interface and the settings every backend receives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from ..errors import BackendError
from ..types import Completion, Prompt

__all__ = ["Backend", "GenerationSettings", "parse_model_args", "Reporter"]


@dataclass(frozen=True)
class GenerationSettings:
    """How completions are produced; recorded in every run."""

    mode: str = "generate"  # "generate" or "logprob"
    max_new_tokens: int = 24
    temperature: float = 0.0  # 0 = greedy
    seed: int = 1234

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for run records."""
        return asdict(self)


class Reporter(Protocol):
    """Progress callback: ``advance(n)`` after ``n`` more prompts are done."""

    def advance(self, n: int = 1) -> None: ...


class Backend(Protocol):
    """What a model backend provides to the pipeline."""

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """One text completion per prompt."""
        ...

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Per prompt, the log-likelihood of each option (``Completion.option_logprobs``)."""
        ...

    def identity(self) -> dict[str, Any]:
        """Backend name, model and arguments for run records (never secrets)."""
        ...


def parse_model_args(text: str | None) -> dict[str, str]:
    """Parse lm-eval style ``k=v,k=v`` model arguments into a dict."""
    out: dict[str, str] = {}
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise BackendError(f"--model-args: expected key=value, got {part!r}")
        key, value = (x.strip() for x in part.split("=", 1))
        if not key:
            raise BackendError(f"--model-args: expected key=value, got {part!r}")
        if key in out:
            raise BackendError(f"--model-args: '{key}' is given twice")
        out[key] = value
    return out
