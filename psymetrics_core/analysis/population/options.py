"""What the population analyses of ``psym analyze`` and ``psym report`` are asked to compute.

One record for the options both commands share (the missing-data policy, criterion pairs, the
bootstrap draws, the graded response model, the structural analyses and the MTMM trait table),
handed down from the CLI to ``runs.population_section`` and ``long.population_report``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from psymetrics_core.analysis.population.structure_options import StructureOptions

__all__ = ["PopulationOptions"]


@dataclass(frozen=True)
class PopulationOptions:
    """``criterion`` ((scale, label field) pairs, in the order given, a scale as often as it
    is paired; None: every scale named like a label), ``n_boot`` bootstrap draws per interval,
    ``irt`` (a graded response model per scale), ``structure`` (``--group``, ``--efa``,
    ``--rotation``, ``--cfa-model``, ``--pa``), ``mtmm`` (a trait table file; None: the shipped
    one) and ``missing`` (``--missing``: listwise, pairwise or fiml, for every analysis)."""

    criterion: tuple[tuple[str, str], ...] | None = None
    n_boot: int = 200
    irt: bool = False
    structure: StructureOptions | None = None
    mtmm: Path | None = None
    missing: str = "listwise"

    def asked(self) -> str:
        """The options given that need a population run, as written on the command line."""
        given = [
            "--criterion" if self.criterion else "",
            "--irt" if self.irt else "",
            self.structure.asked() if self.structure is not None else "",
            f"--mtmm {self.mtmm}" if self.mtmm is not None else "",
        ]
        return ", ".join(g for g in given if g)
