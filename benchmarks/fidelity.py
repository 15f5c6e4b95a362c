"""``psym fidelity`` at scale (issue 34): a simulated population of 1,250 respondents x 44 items
(long answers CSV) against 2,800 simulated people (wide, as psych's bfi is exported), 1,000
bootstrap replicates, in a subprocess: its wall time and peak resident memory."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["fidelity_at_scale"]


def _write(work: Path, respondents: int, people: int, n_items: int, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    items = [f"q{i:02d}" for i in range(1, n_items + 1)]
    shares = rng.dirichlet(np.ones(5), size=n_items)
    model, human = work / "model_long.csv", work / "human_wide.csv"
    with model.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["respondent", "item", "response"])
        for r in range(respondents):
            for i, item in enumerate(items):
                w.writerow([f"m{r}", item, 1 + rng.choice(5, p=shares[i])])
    with human.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["respondent", *items])
        for r in range(people):
            w.writerow([f"h{r}", *(1 + rng.choice(5, p=shares[i]) for i in range(n_items))])
    return model, human


def fidelity_at_scale(
    work: Path,
    respondents: int = 1250,
    people: int = 2800,
    n_items: int = 44,
    n_boot: int = 1000,
) -> dict[str, Any]:
    """Wall time and peak memory (``wait4``'s ``ru_maxrss``) of ``psym fidelity --json``."""
    work.mkdir(parents=True, exist_ok=True)
    model, human = _write(work, respondents, people, n_items, seed=7)
    cmd = [
        sys.executable,
        "-m",
        "psymetrics_core",
        "fidelity",
        str(model),
        str(human),
        "--bootstrap",
        str(n_boot),
        "--json",
    ]
    start = time.perf_counter()
    with (work / "fidelity.json").open("w") as fh, (work / "fidelity.log").open("w") as err:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{(work / 'fidelity.log').read_text()[-3000:]}")
    return {
        "respondents": respondents,
        "people": people,
        "items": n_items,
        "n_boot": n_boot,
        "wall_s": wall,
        "peak_gb": usage.ru_maxrss * 1024 / 1e9,
    }
