"""Fakes for the behaviour-task unit tests only (never a default): scripted backends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psymetrics_core.base.types import Completion, Prompt


class ScriptedBackend:
    """Answers each prompt with ``reply(prompt_text)``; records every prompt it saw."""

    name = "scripted"

    def __init__(self, reply: Callable[[str], str]) -> None:
        self.reply = reply
        self.seen: list[str] = []

    def generate(self, prompts: Sequence[Prompt], settings: Any, progress: Any = None):
        out = []
        for p in prompts:
            self.seen.append(p.text)
            out.append(Completion(text=self.reply(p.text)))
            if progress is not None:
                progress.advance(1)
        return out

    def option_logprobs(self, prompts, settings, progress=None):  # pragma: no cover
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        return {"backend": self.name}


def shared_data():
    """``<repo>/../shared/data``, else ``$PSYM_SHARED_DATA`` (default /work/shared/data)."""
    import os
    from pathlib import Path

    here = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    return here if here.is_dir() else Path(os.environ.get("PSYM_SHARED_DATA", "/work/shared/data"))
