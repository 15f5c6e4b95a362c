"""One way to wire an analysis (issue 32, item 7): the core's analyses of ``psym analyze`` (the
per-run tables, ecological validity, population psychometrics) are registered through the same
``register_analyses`` hook as a plugin's, sit in the same registry (``Session.analyses()``), and
a clash is settled by the one policy of every registry: one line naming both plugins, the
core's (else the first) kept, never a silent override and never a stopped command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core import hookimpl
from psymetrics_core.analysis import builtin_sections
from psymetrics_core.analysis.report import analyze
from psymetrics_core.analysis.sections import AnalysisRequest, AnalysisSection, run_analyses
from psymetrics_core.base.types import Completion
from psymetrics_core.pluginsys.loader import make_plugin_manager
from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]
BFI_SPEC = REPO / "plugins/psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi"
CORE = "psymetrics_core.analysis.builtin"
KEEP = "(uninstall or disable one: PSYM_DISABLE_PLUGINS)"


def lazy_analysis(request: AnalysisRequest) -> AnalysisSection:
    """A plugin's analysis named by a ``module:function`` reference."""
    return AnalysisSection("lazy", "Lazy", f"{len(request.run_dirs)} run(s)")


class Good:
    @hookimpl
    def register_analyses(self, register):
        register("good", lambda req: AnalysisSection("good", "Good", "g", {"n": 1}))
        register("lazy", f"{__name__}:lazy_analysis")


class BfiOnly:
    @hookimpl
    def register_instruments(self, register):
        register(BFI_SPEC)


def session_with(*plugins: object) -> Session:
    """The core and the BFI, then ``plugins`` (registered after the core, so their hooks are
    called before its plain ones: the core's order must not depend on that)."""
    pm, records = make_plugin_manager(autoload=False)
    pm.register(BfiOnly(), name="bfi-test")
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"extra{i}")
    return Session(pm, records)


class _Scripted:
    """Answers every prompt with the next of a fixed cycle (a fake model, unit tests only)."""

    def __init__(self, answers: list[int]) -> None:
        self.answers, self.i = answers, 0

    def generate(self, prompts, settings, progress=None):
        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
        return out

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def bfi_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("registry") / "run"
    evaluate(
        ["bfi"],
        backend=_Scripted([1, 2, 4, 5, 3]),
        limit=8,
        output=out,
        repeats=2,
        session=session_with(),
    )
    return out


def test_core_analyses_sit_in_the_plugins_registry() -> None:
    entries = session_with(Good()).analyses()
    # the core's first, the plugin's next, population (trylast) closing the report
    assert list(entries) == ["per-run", "validity", "divergence", "good", "lazy", "population"]
    assert {n: e.plugin for n, e in entries.items()} == {
        "per-run": CORE,
        "validity": CORE,
        "divergence": CORE,
        "population": CORE,
        "good": "extra0",
        "lazy": "extra0",
    }
    builtin = [n for n, e in entries.items() if e.builtin]
    assert builtin == ["per-run", "validity", "divergence", "population"]
    # one route: a reference is resolved the same way for the core's and the plugin's
    assert entries["per-run"].function() is builtin_sections.per_run
    assert entries["population"].function() is builtin_sections.population
    assert entries["lazy"].function() is lazy_analysis


def test_building_the_registry_imports_no_analysis_code() -> None:
    """The core registers references, so a Session (every command builds one) stays cheap."""
    code = (
        "import sys; from psymetrics_core.pluginsys.loader import make_plugin_manager;"
        "from psymetrics_core.pluginsys.session import Session;"
        "s = Session(*make_plugin_manager(autoload=False)); print(sorted(s.analyses()));"
        "print('pandas' in sys.modules, 'psymetrics_core.analysis.report' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "['divergence', 'per-run', 'population', 'validity']",
        "False False",
    ]


def test_every_analysis_runs_through_one_request(bfi_run: Path) -> None:
    session = session_with(Good())
    found = run_analyses(AnalysisRequest((bfi_run,), session, reference="original"))
    assert list(found) == ["per-run", "good", "lazy"]  # no pair, no population: None
    assert found["lazy"].text == "1 run(s)"
    # the per-run body is exactly what the per-run tables give when called directly
    direct = analyze([bfi_run], session=session)
    assert json.dumps(found["per-run"].data) == json.dumps(direct)  # NaN reads as NaN
    assert found["per-run"].data["analyses"]["run"]["bfi"]["conditions"] == ["original"]


def test_a_plugin_analysis_that_breaks_is_one_line_and_left_out(
    bfi_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Broken:
        @hookimpl
        def register_analyses(self, register):
            register("crash", lambda req: {}["missing"])
            register("not-a-section", lambda req: {"key": "x"})
            register("", lambda req: None)  # no name
            register("no-function", "not a reference")
            register("gone", "no_such_module_here:analyse")  # imported when run: fails then

    class Raises:
        @hookimpl
        def register_analyses(self, register):
            register("half", lambda req: None)
            raise RuntimeError("lost its config")

    warnings: list[str] = []
    session = session_with(Broken(), Raises())
    found = run_analyses(AnalysisRequest((bfi_run,), session), warn=warnings.append)
    assert list(found) == ["per-run"]
    assert warnings == [
        "analysis 'crash' of plugin 'extra0' failed: KeyError('missing'); left out",
        "analysis 'not-a-section' of plugin 'extra0' returned dict, not an AnalysisSection; "
        "left out",
        "analysis 'gone' of plugin 'extra0' failed: "
        "ModuleNotFoundError(\"No module named 'no_such_module_here'\"); left out",
    ]
    err = capsys.readouterr().err.splitlines()  # registration: one line each, when built
    assert err == [
        "psym: plugin 'extra1': register_analyses failed (RuntimeError: lost its config); "
        "its other entries are kept",
        "psym: plugin 'extra0': register_analyses registered '' with function (expected a name "
        "and a function or a 'module:function' reference); skipped",
        "psym: plugin 'extra0': register_analyses registered 'no-function' with str 'not a "
        "reference' (expected a name and a function or a 'module:function' reference); skipped",
    ]
    assert "half" in session.analyses()  # what a failing hook registered before is kept


def test_a_clashing_name_is_one_line_naming_both(capsys: pytest.CaptureFixture[str]) -> None:
    """The core's entry wins over a plugin's, of two plugins the first stays; never silent."""

    class Shadow:  # registers a name the core has, and one another plugin has
        @hookimpl
        def register_analyses(self, register):
            register("validity", lambda req: AnalysisSection("validity", "fake", "fake"))
            register("shared", lambda req: None)

    class Other:
        @hookimpl
        def register_analyses(self, register):
            register("shared", lambda req: None)

    entries = session_with(Shadow(), Other()).analyses()
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"psym: analysis 'validity' is registered by both plugin '{CORE}' and plugin 'extra0'; "
        f"using '{CORE}'s {KEEP}",
        "psym: analysis 'shared' is registered by both plugin 'extra1' and plugin 'extra0'; "
        f"using 'extra1's {KEEP}",
    ]
    assert entries["validity"].plugin == CORE and entries["shared"].plugin == "extra1"
    assert entries["validity"].function() is builtin_sections.ecological_validity


def test_psym_analyze_runs_on_past_a_clash_and_a_broken_plugin(bfi_run: Path) -> None:
    from psymetrics_core.cli import LazyGroup

    class Shadow:
        @hookimpl
        def register_analyses(self, register):
            register("per-run", lambda req: AnalysisSection("per_run", "fake", "fake"))
            register("boom", lambda req: 1 / 0)

    session = session_with(Shadow())
    result = CliRunner().invoke(LazyGroup(name="psym"), ["analyze", str(bfi_run)], obj=session)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        f"psym: analysis 'per-run' is registered by both plugin '{CORE}' and plugin 'extra0'; "
        f"using '{CORE}'s {KEEP}"
    ) in lines
    assert any("analysis 'boom' of plugin 'extra0' failed: ZeroDivisionError" in x for x in lines)
    assert "run · bfi: internal consistency" in result.output  # the core's tables, not 'fake'


def test_parsers_and_task_kinds_follow_the_same_clash_policy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before, a parser of the same name replaced the core's silently and a second task kind
    was dropped without naming the first plugin; now every registry settles it one way."""

    class Shadow:
        @hookimpl
        def register_parsers(self, register):
            register("first_valid_int", lambda text, options: (None, "unparsed"))

        @hookimpl
        def register_task_kinds(self, register):
            register("questionnaire", object())

    session = session_with(Shadow())
    core_parser = session_with().parsers()["first_valid_int"]
    capsys.readouterr()
    assert session.parsers()["first_valid_int"] is core_parser
    assert type(session.kinds()["questionnaire"]).__name__ == "QuestionnaireKind"
    err = capsys.readouterr().err.splitlines()
    parse, kinds = "psymetrics_core.pluginsys.defaults.parse", "psymetrics_core.administer.kinds"
    assert err == [
        f"psym: parser 'first_valid_int' is registered by both plugin 'extra0' and plugin "
        f"'{parse}'; using '{parse}'s {KEEP}",
        f"psym: task kind 'questionnaire' is registered by both plugin 'extra0' and plugin "
        f"'{kinds}.builtin'; using '{kinds}.builtin's {KEEP}",
    ]
