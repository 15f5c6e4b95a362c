"""Registers the core's ``psym analyze`` analyses through ``register_analyses``, as a plugin does.

Listed in ``pluginsys.loader.DEFAULT_PLUGINS``, so they sit in the same registry as the
plugins' (``Session.analyses()``) under the same clash policy. Each is named by a
``"module:function"`` reference, imported only when ``psym analyze`` runs it (building a
Session imports no pandas). The order is the report's, whenever a plugin was registered: the
per-run tables and ecological validity first (``tryfirst``), then the plugins' sections,
population psychometrics last (``trylast``: its section treats the respondents as people and
closes the report).
"""

from __future__ import annotations

from collections.abc import Callable

from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["PER_RUN", "register_analyses", "register_population_analysis"]

# the per-run tables (consistency, reliability, norms ... of every task of every run): the
# body of the JSON report and of analysis.json, printed as tables by ``cli.analyze_tables``
PER_RUN = "per-run"
_SECTIONS = "psymetrics_core.analysis.builtin_sections"


@hookimpl(tryfirst=True)
def register_analyses(register: Callable[..., None]) -> None:
    """The per-run tables and ecological validity, before the plugins' sections."""
    register(PER_RUN, f"{_SECTIONS}:per_run", "reliability, consistency, styles, norms per run")
    register("validity", f"{_SECTIONS}:ecological_validity", "questionnaire vs behaviour rho")
    register("divergence", f"{_SECTIONS}:method_divergence", "one model, several methods: rho")


@hookimpl(specname="register_analyses", trylast=True)
def register_population_analysis(register: Callable[..., None]) -> None:
    """Population psychometrics, after the plugins' sections."""
    register("population", f"{_SECTIONS}:population", "population runs: respondents as people")
