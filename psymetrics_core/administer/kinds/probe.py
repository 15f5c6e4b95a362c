"""The ``probe`` kind: tasks whose items are derived from another instrument.

A ``ProbeTask`` carries a ``target`` instrument (with its item texts: shipped, or supplied with
``--items``) and builds its items from the target's (override ``load_items``). It runs through
the same pipeline as every task: cache, samples.jsonl, progress. ``mode`` (``"generate"`` or
``"logprob"``) overrides the run's mode; in logprob mode each prompt's ``options`` are scored,
so a sequence log-likelihood is a ``Prompt`` with one ``Option`` whose ``continuation`` is the
scored text (backends declaring ``supports_continuations`` only), and
``Generation.option_logprobs`` holds the result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from psymetrics_core.administer.kinds.free_text import FreeTextKind
from psymetrics_core.administer.kinds.task import Task
from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.base.types import Instrument, Item

__all__ = ["ProbeTask", "ProbeKind"]


@dataclass
class ProbeTask(Task):
    """A task probing ``target``'s items; ``mode`` None follows the run's ``--mode``."""

    target: Instrument | None = None
    mode: str | None = None

    kind_name = "probe"

    def load_items(self) -> list[Item]:
        """Default: the target's original-form items (override to derive probes)."""
        if self.target is not None:
            return list(self.target.forms.get("original", []))
        return super().load_items()


class ProbeKind(FreeTextKind):
    """Runs ``ProbeTask``s (generation or option log-likelihood per probe)."""

    name = "probe"

    def settings(self, task: Task, settings: GenerationSettings) -> GenerationSettings:
        """The run's settings in the probe's own ``mode`` when it has one."""
        mode = task.mode if isinstance(task, ProbeTask) else None
        return replace(settings, mode=mode) if mode else settings
