"""What the structural analyses of a population task are asked to compute:
``StructureOptions`` (``--group``, ``--efa``, ``--rotation``, ``--cfa-model``, ``--pa``).

Its own module so the options (held by ``options.PopulationOptions`` and read by the CLI) do not
import the analysis that uses them (``structure``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from psymetrics_core.analysis.population.cfa_model import CFAModel
from psymetrics_core.records.read import read_results, unit_label

__all__ = ["StructureOptions"]


@dataclass(frozen=True)
class StructureOptions:
    """What to compute beyond parallel analysis: ``group`` (model, condition or a label),
    ``efa`` (a number of factors or ``"auto"``), its ``rotation`` (None: unrotated) and a CFA
    ``cfa_model``; ``run_labels`` maps run directories to model labels (``for_runs``)."""

    group: str | None = None
    efa: int | str | None = None
    rotation: str | None = "oblimin"
    cfa_model: CFAModel | None = None
    run_labels: Mapping[str, str] = field(default_factory=dict)
    pa: str = "factors"  # --pa: what parallel analysis counts (factors or components)

    def asked(self) -> str:
        """The options given, as written on the command line ('' when none)."""
        given = (
            ("--group", self.group),
            ("--efa", self.efa),
            ("--cfa-model", self.cfa_model),
            ("--pa", None if self.pa == "factors" else self.pa),
        )
        return ", ".join(name for name, v in given if v is not None)

    def for_runs(self, run_dirs: Sequence[Path]) -> StructureOptions:
        """With each run's model label (its directory name when runs share a label)."""
        if self.group != "model":
            return self
        labels = {str(r): unit_label(read_results(Path(r) / "results.json")) for r in run_dirs}
        if len(set(labels.values())) < len(labels):
            labels = {str(r): _unique_name(Path(r), run_dirs) for r in run_dirs}
        return replace(self, run_labels=labels)


def _unique_name(run: Path, run_dirs: Sequence[Path]) -> str:
    same = [r for r in run_dirs if Path(r).name == run.name]
    return run.name if len(same) == 1 else f"{run.name}#{same.index(run) + 1}"
