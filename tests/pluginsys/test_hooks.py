"""Every hook of the plugin API, exercised through a real plugin manager.

Each ``test_hook_<name>`` registers a small plugin that implements that hook and checks that the
pipeline uses it (and, for firstresult hooks, that returning None falls through to the default).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from psymetrics_core import hookimpl
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Answer, Completion, Item, Option, Prompt, ScaleScore
from psymetrics_core.pluginsys import hookspecs
from psymetrics_core.pluginsys.loader import make_plugin_manager
from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]
BFI_SPEC = REPO / "plugins/psymetrics-plugin-bfi/psymetrics_plugin_bfi/instruments/bfi"
HOOKS = sorted(
    name
    for name, obj in vars(hookspecs).items()
    if callable(obj) and hasattr(obj, "psymetrics_spec")
)


class ScriptedBackend:
    """A unit-test backend that answers every prompt with a fixed text or log-probabilities."""

    def __init__(self, text: str = "4", logprobs: list[float] | None = None) -> None:
        self.text, self.logprobs, self.calls = text, logprobs, 0

    def generate(self, prompts, settings, progress=None):
        self.calls += len(prompts)
        self.prompts = list(prompts)
        return [Completion(text=self.text) for _ in prompts]

    def option_logprobs(self, prompts, settings, progress=None):
        self.calls += len(prompts)
        return [Completion(option_logprobs=tuple(self.logprobs or [])) for _ in prompts]

    def identity(self):
        return {"backend": "scripted"}


class ScriptedPromptSpy:
    """Reads back what a ScriptedBackend was last asked."""

    @staticmethod
    def last(backend: ScriptedBackend) -> str:
        return backend.prompts[-1].text


@pytest.fixture
def pm_with():
    """A session with the core defaults, the BFI spec, and the given plugins (to pass on)."""

    class BfiOnly:
        @hookimpl
        def register_instruments(self, register):
            register(BFI_SPEC)

    def install(*extra):
        pm, records = make_plugin_manager(autoload=False)
        pm.register(BfiOnly(), name="bfi-test")
        for i, p in enumerate(extra):
            pm.register(p, name=f"extra{i}")
        return Session(pm, records)

    return install


def _evaluate(session, mode="generate", backend=None, limit=None):
    from psymetrics_core.administer.runner import evaluate

    return evaluate(
        ["bfi"], backend=backend or ScriptedBackend(), mode=mode, limit=limit, session=session
    )


def test_every_hook_has_a_test():
    names = {n for n, _ in inspect.getmembers(__import__(__name__), inspect.isfunction)}
    missing = [h for h in HOOKS if f"test_hook_{h}" not in names]
    assert not missing, f"hooks without a test_hook_* test: {missing}"


def test_every_hook_is_documented_with_its_signature():
    doc = (REPO / "docs/plugins/hooks.md").read_text()
    for name in HOOKS:
        params = list(inspect.signature(getattr(hookspecs, name)).parameters)
        assert f"{name}({', '.join(params)})" in doc, f"docs/plugins/hooks.md lacks {name}"
        assert getattr(hookspecs, name).__doc__, f"hookspec {name} has no docstring"


def test_pipeline_hooks_are_firstresult_and_registration_hooks_collect():
    pm, _ = make_plugin_manager(autoload=False)
    for name in HOOKS:
        opts = getattr(pm.hook, name).spec.opts
        assert opts["firstresult"] is (not name.startswith("register_")), name


def test_hook_register_instruments(pm_with):
    session = pm_with()
    assert set(session.instruments()) == {"bfi"}  # only this session's plugins
    inst = session.get_instrument("bfi")
    assert len(inst.items) == 44 and inst.plugin is not None and inst.plugin.name == "bfi-test"


def test_hook_register_backends(pm_with):
    made = []

    class Plug:
        @hookimpl
        def register_backends(self, register):
            register("scripted", lambda args: made.append(args) or ScriptedBackend(), "test")

    session = pm_with(Plug())
    # the core defaults (hf and smollm2 come from psymetrics-plugin-hf, not loaded here)
    assert {"openai-chat", "openai-completions", "lm-eval", "scripted"} <= set(session.backends())
    assert "smollm2" not in session.backends()
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(["bfi"], model="scripted", model_args="a=1,b=two", limit=2, session=session)
    assert made == [{"a": "1", "b": "two"}]
    assert res["backend"] == {"backend": "scripted"}


def test_hook_register_parsers(pm_with):
    class Plug:
        @hookimpl
        def register_parsers(self, register):
            register("always_two", lambda text, options: (2, "ok"))

    session = pm_with(Plug())
    assert "always_two" in session.parsers() and "first_valid_int" in session.parsers()
    inst = session.get_instrument("bfi")
    inst.parser = "always_two"
    res = _evaluate(session, backend=ScriptedBackend("5"))
    # every item answered 2 -> forward items 2, reverse items 6 - 2 = 4
    assert res["tasks"]["bfi"]["scales"]["openness"]["score"] == pytest.approx((8 * 2 + 2 * 4) / 10)


def test_hook_register_commands(pm_with):
    class Plug:
        @hookimpl
        def register_commands(self, cli):
            @cli.command("hello")
            def hello():
                click.echo("hello from a plugin")

    session = pm_with(Plug())
    from psymetrics_core.cli import LazyGroup

    group = LazyGroup(name="psym-test")
    result = CliRunner().invoke(group, ["hello"], obj=session)
    assert result.exit_code == 0 and "hello from a plugin" in result.output


def _without_core_analyses(session: Session) -> None:
    session.pm.unregister(name="psymetrics_core.analysis.builtin")
    session.refresh()


def test_hook_register_analyses(pm_with, tmp_path):
    from psymetrics_core.analysis.sections import AnalysisRequest, AnalysisSection, run_analyses

    class Good:
        @hookimpl
        def register_analyses(self, register):
            register("good", lambda req: AnalysisSection("good", "G", f"{req.reference}"))
            register("none", lambda req: None)  # not my runs

    class Broken:
        @hookimpl
        def register_analyses(self, register):
            register("broken", lambda req: 1 / 0)

    session = pm_with(Good(), Broken())
    assert {"good", "none", "broken"} <= set(session.analyses())
    _without_core_analyses(session)  # tmp_path holds no run: only the plugins' are asked
    warnings: list[str] = []
    request = AnalysisRequest((tmp_path,), session, reference="neutral")
    sections = run_analyses(request, warn=warnings.append)
    assert [(k, s.text) for k, s in sections.items()] == [("good", "neutral")]
    assert len(warnings) == 1 and "'broken'" in warnings[0] and "ZeroDivisionError" in warnings[0]

    class BadInput:
        @hookimpl
        def register_analyses(self, register):
            def analyse(req):
                raise PsymError(f"{req.labels}, line 3: bad label")

            register("bad", analyse)

    session = pm_with(BadInput())
    _without_core_analyses(session)
    with pytest.raises(PsymError, match=r"labels.json, line 3: bad label"):
        run_analyses(AnalysisRequest((tmp_path,), session, labels=tmp_path / "labels.json"))


def test_hook_register_conditions(pm_with):
    from psymetrics_core.administer.conditions import Condition

    class Plug:
        @hookimpl
        def register_conditions(self, register):
            shout = Condition("shout", facet="wording", text=lambda inst, item, text: text.upper())
            register("shout", lambda arg: shout, description="upper-case prompts", facet="wording")

    session = pm_with(Plug())
    backend = ScriptedBackend("4")
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(["bfi"], backend=backend, limit=2, conditions=["shout"], session=session)
    assert res["conditions"] == ["shout"]
    prompt = ScriptedPromptSpy.last(backend)
    assert "I SEE MYSELF AS SOMEONE WHO" in prompt


def test_hook_register_task_kinds(pm_with):
    from psymetrics_core.administer.kinds import FreeTextTask, TaskKind

    class CountKind(TaskKind):
        """A toy kind: asks nothing, reports how many items the task has."""

        name = "count-only"

        def count(self, task, form, limit, session):
            return 0

        def run_cell(self, run):
            return run.finish({"scales": {}, "n_items": len(run.task.load_items()), "toy": True})

    class Toy(FreeTextTask):
        kind_name = "count-only"

    class Plug:
        @hookimpl
        def register_task_kinds(self, register):
            register("count-only", CountKind())

        @hookimpl
        def register_instruments(self, register):
            items = [Item("a", "A?", ()), Item("b", "B?", ())]
            register(
                Toy.define(
                    id="toy",
                    name="Toy",
                    version="1",
                    citation="-",
                    license_status="-",
                    item_source="-",
                    scoring_rule="-",
                    scales={},
                    items=items,
                )
            )

    session = pm_with(Plug())
    from psymetrics_core.administer.runner import evaluate

    assert {"questionnaire", "free_text", "judged", "probe", "count-only"} <= set(session.kinds())
    backend = ScriptedBackend()
    res = evaluate(["toy"], backend=backend, session=session)
    assert res["tasks"]["toy"]["toy"] is True and res["tasks"]["toy"]["n_items"] == 2
    assert backend.calls == 0  # the kind ran the cell, not the questionnaire pipeline


def test_hook_register_administrations(pm_with):
    """A plugin's mode, selected by its own condition, puts the items instead of the core's."""
    from psymetrics_core import Administration, Condition
    from psymetrics_core.administer.runner import evaluate

    class Guess(Administration):
        """A toy mode: answers every item with the scale midpoint, asks the model nothing."""

        name = "guess"

        def administer(self, run, items):
            out = []
            for it in items:
                rs = run.task.response_scale_for(it)
                out.append((it, Answer((rs.min + rs.max) // 2, "ok")))
            return out

    class Plug:
        @hookimpl
        def register_administrations(self, register):
            register("guess", Guess(), description="the midpoint, no model")
            register("broken", object())  # not an Administration: skipped with a warning

        @hookimpl
        def register_conditions(self, register):
            guess = Condition("guess", facet="administration", administration="guess")
            register("guess", lambda arg: guess, facet="administration")
            lost = Condition("lost", facet="administration", administration="nowhere")
            register("lost", lambda arg: lost, facet="administration")

    session = pm_with(Plug())
    core = {"item-by-item", "battery", "verbalized", "interview", "interview-expert"}
    core |= {"interview-dimensions", "interview-expert-all", "interview-logprob"}
    assert core | {"guess"} == set(session.administrations())
    backend = ScriptedBackend("1")
    res = evaluate(["bfi"], backend=backend, limit=4, conditions=["guess"], session=session)
    assert backend.calls == 0
    assert res["tasks"]["bfi"]["n_answered"] == 4
    with pytest.raises(PsymError, match=r"administration 'nowhere' is provided by no installed"):
        evaluate(["bfi"], backend=backend, limit=4, conditions=["lost"], session=session)


def test_hook_load_items(pm_with):
    class Plug:
        @hookimpl
        def load_items(self, instrument, form):
            return instrument.forms[form][:3] if instrument.id == "bfi" else None

    res = _evaluate(pm_with(Plug()))
    assert res["tasks"]["bfi"]["n_items"] == 3


def test_hook_render_prompt(pm_with):
    class Plug:
        @hookimpl
        def render_prompt(self, instrument, item):
            if item.id != "1":
                return None  # falls through to the default template
            opts = (Option(1, "no"), Option(5, "yes"))
            return Prompt(({"role": "user", "content": "custom"},), opts, "custom")

    session = pm_with(Plug())
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(["bfi"], backend=ScriptedBackend("yes"), limit=2, output=None, session=session)
    assert res["tasks"]["bfi"]["scales"]["extraversion"]["score"] == 5.0  # item 1 -> "yes" = 5
    assert res["tasks"]["bfi"]["scales"]["agreeableness"]["n_answered"] == 0  # "yes" not a label


def test_hook_parse_response(pm_with):
    seen: list[list[str]] = []

    class Plug:
        @hookimpl
        def parse_response(self, instrument, item, prompt, completion, parsers):
            seen.append(sorted(parsers))
            if item.id == "1":
                return Answer(None, "refused")
            if item.id == "2":  # the registered parsers, as the default uses them
                value, status = parsers["first_valid_int"]("2 of course", prompt.options)
                return Answer(value, status)
            return None

    res = _evaluate(pm_with(Plug()), backend=ScriptedBackend("3"), limit=4)
    entry = res["tasks"]["bfi"]
    assert (entry["n_refused"], entry["n_answered"]) == (1, 3)
    assert entry["scales"]["extraversion"]["n_answered"] == 0
    assert entry["scales"]["agreeableness"]["score"] == 4.0  # item 2 is reverse-keyed: 6 - 2
    assert seen[0] == ["first_valid_int", "indexed_score"] and len(seen) == 4


def test_hook_score(pm_with):
    seen = {}

    class Plug:
        @hookimpl
        def score(self, instrument, responses, answers):
            seen.update(answers)
            return {"total": ScaleScore("total", float(sum(responses.values())), 44, 44, "sum")}

    res = _evaluate(pm_with(Plug()), backend=ScriptedBackend("2"))
    assert res["tasks"]["bfi"]["scales"] == {
        "total": {"score": 88.0, "n_items": 44, "n_answered": 44, "method": "sum"}
    }
    assert seen["7"].status == "ok"


def test_hook_aggregate(pm_with):
    class Plug:
        @hookimpl
        def aggregate(self, instrument, scores, answers):
            return {"scales": {}, "n_items": len(answers), "custom": True}

    res = _evaluate(pm_with(Plug()), limit=3)
    assert res["tasks"]["bfi"]["custom"] is True and res["tasks"]["bfi"]["n_items"] == 3


def test_logprob_mode_takes_argmax_and_keeps_distribution(pm_with):
    backend = ScriptedBackend(logprobs=[-3, -2, -1, -0.5, -4])
    res = _evaluate(pm_with(), mode="logprob", backend=backend)
    # option 4 wins everywhere: forward items 4, reverse items 2
    assert res["tasks"]["bfi"]["scales"]["extraversion"]["score"] == pytest.approx(
        (5 * 4 + 3 * 2) / 8
    )


def test_hook_names_are_verbs_without_prefix():
    assert all(re.fullmatch(r"[a-z_]+", h) for h in HOOKS)
    assert "load_items" in HOOKS and "aggregate" in HOOKS
