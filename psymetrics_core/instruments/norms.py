"""Human norms: parse a scale's ``norms:`` list from a spec, pick a group, and z-score against it.

A scale in ``instrument.yaml`` may list any number of norm groups::

    scales:
      extraversion:
        method: mean
        norms:
          - {group: Crowd, mean: 3.25, sd: 0.90, n: 6076, source: "Srivastava et al. (2003)",
             year: 2003}

The first group listed anywhere in the spec is the instrument's default group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from psymetrics_core.base.errors import PsymError, SpecError
from psymetrics_core.base.types import Instrument, NormGroup, ScaleScore

__all__ = ["parse_norms", "resolve_norm_group", "norm_comparison", "parse_norm_group_option"]


def parse_norms(path: Path, scale: str, raw: Any) -> tuple[NormGroup, ...]:
    """Validate the ``norms`` list of ``scale`` in the spec at ``path``."""
    if raw is None:
        return ()
    where = f"scales.{scale}.norms"
    if not isinstance(raw, list):
        raise SpecError(path, "expected a list of norm groups", field=where)
    out: list[NormGroup] = []
    for i, g in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(g, dict):
            raise SpecError(path, "expected a mapping with group, mean, sd, n, source", field=at)
        for key in ("group", "mean", "sd", "source"):
            if g.get(key) in (None, ""):
                raise SpecError(path, "is required but missing", field=f"{at}.{key}")
        for key in ("mean", "sd"):
            if (
                isinstance(g[key], bool)
                or not isinstance(g[key], int | float)
                or not math.isfinite(g[key])
            ):
                raise SpecError(
                    path, f"expected a number (finite), got {g[key]!r}", field=f"{at}.{key}"
                )
        if g["sd"] <= 0:
            raise SpecError(path, f"must be positive, got {g['sd']!r}", field=f"{at}.sd")
        for key in ("n", "year"):
            v = g.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise SpecError(path, f"expected a positive whole number, got {v!r}", field=at)
        name = str(g["group"])
        if any(o.group == name for o in out):
            raise SpecError(path, f"norm group {name!r} is listed twice", field=at)
        out.append(
            NormGroup(
                group=name,
                mean=float(g["mean"]),
                sd=float(g["sd"]),
                source=str(g["source"]).strip(),
                n=g.get("n"),
                year=g.get("year"),
                note=str(g.get("note", "")).strip(),
            )
        )
    return tuple(out)


def parse_norm_group_option(values: Sequence[str]) -> dict[str, str]:
    """Parse repeated ``--norm-group`` values: ``NAME`` (every task) or ``TASK=NAME``.

    Returns {"*": name} for the bare form and {task: name} for the others.
    """
    out: dict[str, str] = {}
    for v in values:
        task, sep, name = v.partition("=")
        if sep:
            out[task.strip()] = name.strip()
        else:
            out["*"] = v.strip()
    return out


def resolve_norm_group(inst: Instrument, choice: Mapping[str, str] | str | None) -> str | None:
    """The norm group to use for ``inst``: its own choice, else the global one, else the first.

    A group asked for by task (``TASK=NAME``) must exist; a global name that the instrument
    lacks falls back to its default group (other tasks in the run may have it).
    """
    groups = inst.norm_groups()
    if not groups:
        return None
    if isinstance(choice, str) or choice is None:
        choice = {"*": choice} if choice else {}
    if inst.id in choice:
        name = choice[inst.id]
        if name not in groups:
            raise PsymError(
                f"task '{inst.id}' has no norm group {name!r} (groups: {', '.join(groups)})"
            )
        return name
    wanted = choice.get("*")
    return wanted if wanted in groups else groups[0]


def norm_comparison(
    inst: Instrument, scores: Mapping[str, ScaleScore], group: str | None
) -> dict[str, dict[str, Any]]:
    """Per scale with a norm in ``group``: the norm and z = (score - mean) / sd.

    Scales without that group are left out; z is None for a missing score and for a summed
    scale with unanswered items (its partial sum is not on the norm's metric).
    """
    out: dict[str, dict[str, Any]] = {}
    if group is None:
        return out
    for name, sdef in inst.scales.items():
        norm = next((g for g in sdef.norms if g.group == group), None)
        s = scores.get(name)
        if norm is None or s is None:
            continue
        # a sum over only some items is not comparable with a norm over all of them
        partial = s.method == "sum" and s.n_answered < s.n_items
        z = None if s.score is None or partial else (s.score - norm.mean) / norm.sd
        out[name] = {
            "group": norm.group,
            "mean": norm.mean,
            "sd": norm.sd,
            "n": norm.n,
            "source": norm.source,
            "year": norm.year,
            "z": z,
        }
    return out


def check_norm_groups(instruments: Sequence[Instrument], choice: Mapping[str, str]) -> None:
    """Fail early when a requested group exists in none of the tasks of a run."""
    wanted = choice.get("*")
    if wanted and instruments and not any(wanted in i.norm_groups() for i in instruments):
        known = sorted({g for i in instruments for g in i.norm_groups()})
        raise PsymError(
            f"no task in this run has the norm group {wanted!r} "
            f"(groups: {', '.join(known) or 'none: these tasks have no norms'})"
        )
    for task in choice:
        if task != "*" and task not in {i.id for i in instruments}:
            raise PsymError(f"--norm-group names task '{task}', which is not in this run")
    for inst in instruments:
        resolve_norm_group(inst, choice)
