"""What ``psym show`` tells about a task: its items, scales and keying, norms, citation, licence."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from psymetrics_core.administer.kinds.base import instrument_record
from psymetrics_core.administer.kinds.task import Task
from psymetrics_core.administer.options import with_options
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Instrument, NormGroup
from psymetrics_core.pluginsys.session import Session

__all__ = ["ScaleSummary", "TaskDescription", "describe_task"]


@dataclass(frozen=True)
class ScaleSummary:
    """One scale: scoring method, its items, the reverse-keyed ones, meaning and norms."""

    method: str
    items: list[str]
    reverse: list[str]
    higher_is: str
    norms: tuple[NormGroup, ...]

    def to_json(self) -> dict[str, Any]:
        """The scale as ``psym show --json`` prints it."""
        return {
            "method": self.method,
            "items": self.items,
            "reverse": self.reverse,
            **({"higher_is": self.higher_is} if self.higher_is else {}),
            "norms": [asdict(g) for g in self.norms],
        }


@dataclass(frozen=True)
class TaskDescription:
    """A task as ``psym show`` describes it (``items_note``: why items cannot be listed)."""

    instrument: Instrument
    items: list[dict[str, Any]]
    items_note: str | None
    scales: dict[str, ScaleSummary]
    flagged: dict[str, str]
    norm_groups: list[str]

    @property
    def n_items(self) -> int | None:
        """How many items the task gives (None when they cannot be listed)."""
        return len(self.items) if self.items_note is None else None

    def to_json(self) -> dict[str, Any]:
        """Everything, every item with id and text (``psym show --json``)."""
        inst = self.instrument
        return {
            **instrument_record(inst),
            "kind": inst.kind,
            "n_items": self.n_items,
            "items": self.items,
            **({"items_note": self.items_note} if self.items_note else {}),
            "forms": list(inst.forms),
            "scales": {name: s.to_json() for name, s in self.scales.items()},
            "flagged_items": self.flagged,
            "response_scales": {
                n: {"min": r.min, "max": r.max, "labels": [o.label for o in r.options]}
                for n, r in inst.response_scales.items()
            },
            "notes": inst.notes,
            "norm_groups": self.norm_groups,
            "human_loadings": _loadings_json(inst),
        }


def _loadings_json(inst: Instrument) -> dict[str, Any] | None:
    """The published human loadings (raw item direction), or None when none ship."""
    h = inst.human_loadings
    if h is None:
        return None
    return {
        "source": h.source,
        "file": h.file,
        "rotation": h.rotation,
        "method": h.method,
        "n": h.n,
        "note": h.note,
        "direction": "raw",
        "factors": list(h.factors),
        "loadings": {item: list(v) for item, v in h.loadings},
    }


def describe_task(
    task: str, session: Session, options: Mapping[str, Mapping[str, Any]] | None = None
) -> TaskDescription:
    """Describe ``task`` with its task ``options`` ({task or "*": {key: value}}) applied."""
    opts = options or {}
    inst = with_options(session.get_instrument(task), opts.get(task), opts.get("*"))
    listed, items_note = _items(inst)
    scales = {}
    for name, sdef in inst.scales.items():
        members = inst.scale_items(name)
        scales[name] = ScaleSummary(
            method=sdef.method,
            items=[it.id for it in members],
            reverse=[it.id for it in members if it.reverse],
            higher_is=sdef.higher_is,
            norms=sdef.norms,
        )
    return TaskDescription(
        instrument=inst,
        items=listed,
        items_note=items_note,
        scales=scales,
        flagged={it.id: it.flag for it in inst.items if it.flag},
        norm_groups=inst.norm_groups(),
    )


def _items(inst: Instrument) -> tuple[list[dict[str, Any]], str | None]:
    """Every item (id, text, and scales or prompt attributes), or why they cannot be listed."""
    if not isinstance(inst, Task):
        return [
            {
                "id": it.id,
                "text": it.text,
                "scales": list(it.scales),
                "reverse": it.reverse,
                **({"flag": it.flag} if it.flag else {}),
            }
            for it in inst.items
        ], None
    try:
        items = inst.load_items()
    except PsymError as exc:
        return [], f"built from the task's data: {exc}"
    return [{"id": it.id, "text": it.text, "meta": it.meta or {}} for it in items], None
