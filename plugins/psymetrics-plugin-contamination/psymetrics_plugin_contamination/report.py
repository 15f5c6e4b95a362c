"""The table ``psym contamination`` prints at the end (one per task)."""

from __future__ import annotations

from typing import Any

__all__ = ["print_tables", "rows"]


def _f(x: Any, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _baseline(probe: dict[str, Any]) -> str:
    parts = [f"{k.replace('_', ' ')} {_f(v)}" for k, v in probe["baseline"].items()]
    return "; ".join(parts) or "—"


def rows(entry: dict[str, Any]) -> list[list[str]]:
    """One table row per probe of a task entry of ``contamination.json``."""
    out = []
    for name, pr in entry["probes"].items():
        value = _f(pr["value"])
        if name == "order" and pr["value"] is not None:
            z = pr["detail"].get("z")
            value = f"p={_f(pr['value'])} z={_f(z, 2)}"
            controls = pr["detail"].get("positive_controls", {})
            ci = "controls: " + ", ".join(f"{k} p={_f(v.get('p'))}" for k, v in controls.items())
        elif pr["ci_low"] is not None:
            ci = f"[{_f(pr['ci_low'])}, {_f(pr['ci_high'])}]"
        else:
            ci = "—"
        if pr["value"] is None:  # the table shows the reason's head; the JSON has all of it
            value = f"null: {str(pr['reason']).split(' (', 1)[0]}"
        out.append(
            [
                name,
                pr["metric"],
                value,
                ci,
                _baseline(pr),
                str(pr["n_prompts"]),
                f"{pr['n_parsed']}/{pr['n_refused']}/{pr['n_invalid'] + pr['n_empty']}",
            ]
        )
    return out


def print_tables(report: dict[str, Any]) -> None:
    """Print each task's probes and index."""
    from psymetrics_core.api import stdout, table

    for task, entry in report["tasks"].items():
        t = table(
            f"{task}: {entry['inventory_name']} ({entry['n_items']} items), "
            f"model {report['model']}",
            ["probe", "metric", "value", "95% CI", "baseline", "n", "ok/refused/invalid"],
        )
        for row in rows(entry):
            t.add_row(*row)
        stdout.print(t)
        for name, pr in entry["probes"].items():
            for flag in pr["flags"]:
                stdout.print(f"  {name}: {flag}")
        idx = entry["index"]
        ci = (
            f" [{_f(idx['ci_low'])}, {_f(idx['ci_high'])}]" if idx.get("ci_low") is not None else ""
        )
        comps = ", ".join(f"{k} {_f(v, 2)}" for k, v in idx.get("components", {}).items())
        stdout.print(
            f"contamination index {_f(idx['value'])}{ci} (0 = no-knowledge baseline, 1 = "
            f"perfect recall; components: {comps or 'none'})"
        )
    cache = report.get("cache")
    if cache:
        stdout.print(f"model calls: {cache['misses']} (cache hits {cache['hits']})")
