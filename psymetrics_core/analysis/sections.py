"""Extra ``psym analyze`` sections contributed by plugins (the ``register_analyses`` hook).

A plugin whose tasks need their own analysis (the projective tests' κ, DCR and accuracy
against labels, for example) registers an analysis function that returns an
``AnalysisSection``; the core never imports the plugin. A plugin that crashes is reported on
one line and left out, so it cannot take ``psym analyze`` down; a ``PsymError`` (bad input) is
the user's error and stops the command with its one-line message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from psymetrics_core.analysis.ecological import validity_section
from psymetrics_core.analysis.section import AnalysisSection
from psymetrics_core.base.errors import PsymError

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["AnalysisSection", "Analysis", "analyses", "collect_sections"]


Analysis = Callable[[list[Path], Path | None, str | None], AnalysisSection | None]


def analyses(session: Session, warn: Callable[[str], None] | None = None) -> dict[str, Analysis]:
    """The analysis functions every plugin of ``session`` registers, by name."""
    hook = session.hook.register_analyses
    out: dict[str, Analysis] = {}
    for impl in reversed(hook.get_hookimpls()):  # registration order
        found: dict[str, Analysis] = {}

        def register(name: str, fn: Analysis, _into: dict[str, Analysis] = found) -> None:
            _into[str(name)] = fn

        try:
            impl.function(register=register)
        except Exception as exc:  # a broken plugin never takes the command down
            if warn is not None:
                warn(f"plugin '{impl.plugin_name}' failed in register_analyses: {exc!r}")
            continue
        for name, fn in found.items():
            if name in out:
                raise PsymError(f"two plugins register the analysis '{name}'")
            out[name] = fn
    return out


def collect_sections(
    run_dirs: Sequence[Path],
    session: Session,
    labels: Path | None = None,
    reference: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[AnalysisSection]:
    """Every analysis ``session``'s plugins register: its section for ``run_dirs`` (``None``
    results left out).

    ``warn`` is called with one line when an analysis fails with an unexpected exception.
    """
    out: list[AnalysisSection] = []
    builtin: dict[str, Analysis] = {"validity": validity_section}
    for name, fn in (builtin | analyses(session, warn)).items():
        try:
            section = fn(list(run_dirs), labels, reference)
        except PsymError:
            raise
        except Exception as exc:  # a broken plugin never takes the command down
            if warn is not None:
                warn(f"analysis '{name}' failed: {exc!r}; left out")
            continue
        if section is not None:
            out.append(section)
    return out
