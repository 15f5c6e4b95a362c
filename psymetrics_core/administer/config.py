"""``RunConfig``: everything one ``evaluate`` run is asked to do, in one frozen object.

``psym eval`` and the plan runner build one from their options; the library API
(``psymetrics_core.evaluate(tasks, **options)``) builds one from its keyword arguments
(:meth:`RunConfig.from_options`, which refuses an unknown keyword with a ``TypeError``). What is
not configuration but a live object (the plugin ``Session``, a ready ``backend``, a
``progress`` callback) is passed to ``evaluate`` beside it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.pluginsys.backend_hints import DEFAULT_MODEL

__all__ = ["RunConfig", "Unit"]

Unit = tuple[str, str, int]  # (task id, cell name, repeat): one unit of work of a plan


@dataclass(frozen=True)
class RunConfig:
    """The options of one run (see ``psymetrics_core.administer.runner.evaluate``).

    ``model_args`` / ``judge_model_args``: lm-eval style ``k=v,k=v`` text or a dict.
    ``norm_group``: a group name for every task, or {task: name} ({"*": name} for the rest).
    ``cache``: None = on for a backend built by name, off for a ready backend object.
    ``judge_batch``: items per option-conversion request of an interview's judge (None: 10).
    ``units``: only these (task, cell name, repeat) units (one shard of a plan); None = all.
    ``label``: when set, ``results.json`` names the model so (``psym eval --label``).
    ``provenance``: record the command line, git commit and sha256 of every file used.
    ``population``: a population file (``psym population build``): every cell is run once per
    respondent, the persona rendered by ``persona_template`` (a built-in name or a Jinja2 file);
    ``sample``: a seeded sample of that many respondents.
    ``impute``: how an interview judge's "none" is scored: None (missing) or "midpoint"
    (InCharacter's choice; ``psym eval --impute``).
    ``inputs``: more (role, path) files the run read, for its provenance (``psym import
    answers``: the answers CSV).
    """

    model: str = DEFAULT_MODEL
    model_args: str | Mapping[str, str] | None = None
    mode: str = "generate"
    seed: int = 1234
    limit: int | None = None
    form: str = "original"
    max_new_tokens: int | None = None
    temperature: float = 0.0
    output: Path | None = None
    item_files: Mapping[str, str | Path] | None = None
    conditions: tuple[str, ...] = ()
    repeats: int = 1
    design: str = "grid"
    norm_group: Mapping[str, str] | str | None = None
    cache: bool | None = None
    concurrency: int | None = None
    task_options: Mapping[str, Mapping[str, Any]] | None = None
    judge_model: str | None = None
    judge_model_args: str | Mapping[str, str] | None = None
    judge_max_new_tokens: int | None = None
    judge_batch: int | None = None
    impute: str | None = None
    units: frozenset[Unit] | None = None
    overwrite: bool = False
    resume: bool = False
    label: str | None = None
    provenance: bool = False
    population: Path | None = None
    persona_template: str = "jung"
    sample: int | None = None
    inputs: tuple[tuple[str, Path], ...] = ()

    def __post_init__(self) -> None:
        # accept what callers naturally pass (a str path, a list of conditions, a set of units)
        if self.output is not None and not isinstance(self.output, Path):
            object.__setattr__(self, "output", Path(self.output))
        if self.population is not None and not isinstance(self.population, Path):
            object.__setattr__(self, "population", Path(self.population))
        if not isinstance(self.conditions, tuple):
            object.__setattr__(self, "conditions", tuple(self.conditions))
        if self.units is not None and not isinstance(self.units, frozenset):
            object.__setattr__(self, "units", frozenset(self.units))

    @classmethod
    def from_options(cls, **options: Any) -> RunConfig:
        """A config from ``evaluate``'s keyword arguments; an unknown one is a ``TypeError``."""
        unknown = sorted(set(options) - set(cls.fields()))
        if unknown:
            raise TypeError(
                f"evaluate() got unexpected keyword argument(s): {', '.join(unknown)} "
                f"(known: {', '.join(cls.fields())}, session, backend, progress, run_dir)"
            )
        return cls(**options)

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The option names, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def condition_args(self) -> list[str]:
        """Every single condition named by ``conditions`` (``A+B`` split), for provenance."""
        return [c for cond in self.conditions for c in cond.split("+")]

    def in_units(self, task: str, cell: str, repeat: int) -> bool:
        """Whether this run administers ``task`` in ``cell`` for ``repeat``."""
        return self.units is None or (task, cell, repeat) in self.units
