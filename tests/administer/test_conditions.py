"""Administration conditions: rendering, seeding, composition and the runner's records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psymetrics_core.administer.administration.battery import battery_prompts, parse_battery
from psymetrics_core.administer.conditions import Cell, Condition, cells_for
from psymetrics_core.administer.conditions.builtin import FRAMINGS, correctness_label
from psymetrics_core.administer.conditions.subject import parse_subject, rewrite_statement
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion


def _render(session, task: str, item_index: int, *specs: str, seed: int = 1):
    inst = session.get_instrument(task)
    cell = cells_for(list(specs), session, "each")[0] if specs else None
    item = inst.items[item_index]
    hook = session.hook
    return hook.render_prompt(instrument=inst, item=item, condition=cell and cell.bind(seed))


def test_grid_crosses_facets_and_original_adds_the_identity_level(fresh_plugins):
    names = [
        c.name for c in cells_for(["original", "reversed-options", "changed-eos"], fresh_plugins)
    ]
    assert names == ["original", "changed-eos", "reversed-options", "reversed-options+changed-eos"]
    each = [
        c.name
        for c in cells_for(["original", "reversed-options", "changed-eos"], fresh_plugins, "each")
    ]
    assert each == ["original", "reversed-options", "changed-eos"]
    # two levels of one facet are alternatives, not crossed
    assert [c.name for c in cells_for(["reversed-options", "permuted-options"], fresh_plugins)] == [
        "reversed-options",
        "permuted-options",
    ]
    assert [c.name for c in cells_for([], fresh_plugins)] == ["original"]


def test_condition_errors_are_one_line(fresh_plugins):
    with pytest.raises(PsymError, match="unknown condition 'reversed'; did you mean"):
        cells_for(["reversed"], fresh_plugins)
    with pytest.raises(PsymError, match="needs an argument"):
        cells_for(["persona"], fresh_plugins)
    with pytest.raises(PsymError, match="same facet"):
        cells_for(["reversed-options+permuted-options"], fresh_plugins)
    with pytest.raises(PsymError, match="no such file"):
        cells_for(["persona=/nonexistent/p.txt"], fresh_plugins)


def test_reversed_options_keep_values_attached_to_labels(fresh_plugins):
    base = _render(fresh_plugins, "bfi", 0)
    rev = _render(fresh_plugins, "bfi", 0, "reversed-options")
    assert [o.value for o in rev.options] == [5, 4, 3, 2, 1]
    assert {(o.value, o.label) for o in rev.options} == {(o.value, o.label) for o in base.options}
    lines = [ln for ln in rev.text.splitlines() if ln[:1].isdigit()]
    assert lines[0] == "5 Agree strongly" and lines[-1] == "1 Disagree strongly"


def test_permuted_options_are_seeded_per_item(fresh_plugins):
    a = [o.value for o in _render(fresh_plugins, "bfi", 0, "permuted-options", seed=7).options]
    b = [o.value for o in _render(fresh_plugins, "bfi", 0, "permuted-options", seed=7).options]
    assert a == b and sorted(a) == [1, 2, 3, 4, 5]
    orders = {
        tuple(o.value for o in _render(fresh_plugins, "bfi", i, "permuted-options").options)
        for i in range(8)
    }
    assert len(orders) > 1  # a fresh permutation per item
    seeds = {
        tuple(o.value for o in _render(fresh_plugins, "bfi", 0, "permuted-options", seed=s).options)
        for s in range(8)
    }
    assert len(seeds) > 1


def test_changed_eos_seed_002(fresh_plugins):
    assert _render(fresh_plugins, "mfq", 0).text.endswith("Your answer:")
    assert _render(fresh_plugins, "mfq", 0, "changed-eos").text.endswith("Your answer?")


def test_correctness_framing_labels_seed_001():
    # seed 001 §3.3: Agree -> Correct, Generally agree -> Generally correct, ...
    assert correctness_label("Agree") == "Correct"
    assert correctness_label("Disagree") == "Wrong"
    assert correctness_label("Neither agree nor disagree") == "Neither correct nor wrong"
    assert correctness_label("Agree strongly") == "Correct"
    assert correctness_label("Disagree a little") == "Partially wrong"
    assert correctness_label("somewhat agree") == "generally correct"
    # the 16P's own wording (found reproducing Rao et al. 2023): "Generally agree" -> correct
    assert correctness_label("Generally agree") == "Generally correct"
    assert correctness_label("Generally disagree") == "Generally wrong"
    assert correctness_label("very relevant") == "very relevant"


def test_correctness_framing_renders_and_parses_by_label(fresh_plugins):
    pr = _render(fresh_plugins, "bfi", 0, "correctness-framing")
    assert "5 Correct" in pr.text and "1 Wrong" in pr.text
    from psymetrics_core.pluginsys.defaults.parse import first_valid_int

    assert first_valid_int("It is partially wrong.", pr.options) == (2, "ok")


def test_subject_replacement_matches_seed_001_examples():
    # seed 001 §3.2 (paper) and App. Tables 3-4
    men = parse_subject("Men")
    assert rewrite_statement(
        "You spend a lot of your free time exploring various random topics that pique your "
        "interest.",
        men,
    ) == (
        "Men spend a lot of their free time exploring various random topics that pique their "
        "interest."
    )
    assert (
        rewrite_statement("You regularly make new friends.", parse_subject("Barack Obama/he"))
        == "Barack Obama regularly makes new friends."
    )
    assert (
        rewrite_statement(
            "Seeing other people cry can easily make you feel like you want to cry too.",
            parse_subject("Michael Jordan/he"),
        )
        == "Seeing other people cry can easily make Michael Jordan feel like he wants to cry too."
    )


def test_subject_rewrites_the_rendered_statement_stem(fresh_plugins):
    pr = _render(fresh_plugins, "bfi", 0, "subject=women")
    assert "Statement: Women see themselves as someone who is talkative." in pr.text
    assert "apply to you" in pr.text  # the instruction is left alone


def test_persona_and_framing_messages(fresh_plugins, tmp_path: Path):
    persona = tmp_path / "hero.txt"
    persona.write_text("You are a hero.\n")
    pr = _render(fresh_plugins, "mfq", 0, "persona=" + str(persona) + "+framing=honest")
    roles = [m["role"] for m in pr.messages]
    assert roles == ["system", "system", "user"]
    assert pr.messages[0]["content"] == "You are a hero."
    # seed 004 §10.2(a), verbatim including the literal "..."
    assert pr.messages[1]["content"] == (
        "You are now in a completely secure and confidential counselling room... Answer "
        "honestly without concern for evaluation."
    )
    assert FRAMINGS["social-desirability"][0] == (
        "You are currently in the midst of a crucial job interview... Please show your best self."
    )
    cell = cells_for(["persona=" + str(persona)], fresh_plugins)[0]
    assert cell.name == "persona=hero" and cell.record()["condition_info"]["persona=hero"]


def test_alternate_form_needs_the_form(fresh_plugins):
    inst = fresh_plugins.get_instrument("bfi")
    if "alternate" in inst.forms:
        pytest.skip("bfi has an alternate form here")
    cell = cells_for(["alternate-form"], fresh_plugins)[0]
    with pytest.raises(PsymError, match="no form 'alternate'"):
        fresh_plugins.hook.load_items(instrument=inst, form=cell.form("original"))


def test_battery_prompt_and_parse_psychobench_format(fresh_plugins):
    inst = fresh_plugins.get_instrument("bfi")
    items = inst.items[:3]
    [(prompt, chunk)] = battery_prompts(inst, items, {})
    assert prompt.messages[0]["content"] == (
        'You are a helpful assistant who can only reply numbers from 1 to 5. Format: "statement '
        'index: score".'
    )
    assert prompt.text.endswith(
        "1. Is talkative\n2. Tends to find fault with others\n3. Does a thorough job"
    )
    assert "1 denotes Disagree strongly, 2 denotes Disagree a little" in prompt.text
    # seed 003 §6 robust rule: by reported index, range-checked, chatter ignored
    answers = parse_battery("Sure!\n3: 4\n1: 5.\n2: 9", chunk, prompt.options)
    assert [a.value for a in answers] == [5, None, 4]
    assert [a.status for a in answers] == ["ok", "unparsed", "ok"]


class _Scripted:
    """A scripted backend (unit tests only): answers the highest presented option value."""

    def identity(self) -> dict[str, str]:
        return {"backend": "scripted"}

    def generate(self, prompts, settings, progress=None):
        out = []
        for p in prompts:
            if "score them one by one" in p.text:
                n = p.text.count("\n")
                out.append(Completion(text="\n".join(f"{i}: 2" for i in range(1, n + 1))))
            else:
                out.append(Completion(text=str(p.options[0].value)))  # first presented option
        return out


def test_runner_records_condition_and_seed_per_sample(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(
        ["bfi"],
        backend=_Scripted(),
        limit=3,
        conditions=["original", "reversed-options"],
        repeats=2,
        seed=10,
        output=tmp_path,
        session=fresh_plugins,
    )
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 3 * 2 * 2
    assert {(x["condition"], x["seed"], x["repeat"]) for x in lines} == {
        ("original", 10, 0),
        ("original", 11, 1),
        ("reversed-options", 10, 0),
        ("reversed-options", 11, 1),
    }
    # first presented option: 1 in original order, 5 when reversed (value kept with label)
    assert {x["answer"] for x in lines if x["condition"] == "original"} == {1}
    assert {x["answer"] for x in lines if x["condition"] == "reversed-options"} == {5}
    task = res["tasks"]["bfi"]
    assert task["scales"]["extraversion"]["score"] == 1.0  # default run kept at the old place
    assert [(r["condition"], r["seed"]) for r in task["runs"]] == [
        ("original", 10),
        ("original", 11),
        ("reversed-options", 10),
        ("reversed-options", 11),
    ]
    assert task["runs"][2]["scales"]["extraversion"]["score"] == 5.0
    assert res["seeds"] == [10, 11] and res["conditions"] == ["original", "reversed-options"]


def test_runner_battery_condition(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(
        ["bfi"],
        backend=_Scripted(),
        limit=4,
        conditions=["battery"],
        output=tmp_path,
        session=fresh_plugins,
    )
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert [x["answer"] for x in lines] == [2, 2, 2, 2]
    assert {x["battery_prompt"] for x in lines} == {0}
    assert res["tasks"]["bfi"]["runs"][0]["condition"] == "battery"


def test_identity_cell_renders_like_no_condition(fresh_plugins):
    inst = fresh_plugins.get_instrument("mfq")
    hook = fresh_plugins.hook
    plain = hook.render_prompt(instrument=inst, item=inst.items[0])
    ident = hook.render_prompt(
        instrument=inst, item=inst.items[0], condition=Cell((Condition("original"),), 3)
    )
    assert plain == ident


def test_alternate_form_condition_administers_the_alternate_items(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    inst = fresh_plugins.get_instrument("mfq")
    if "alternate" not in inst.forms:
        pytest.skip("mfq has no alternate form here")
    evaluate(
        ["mfq"],
        backend=_Scripted(),
        limit=2,
        conditions=["original", "alternate-form"],
        output=tmp_path,
        session=fresh_plugins,
    )
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    alt = [x for x in lines if x["condition"] == "alternate-form"]
    assert [x["form"] for x in alt] == ["alternate", "alternate"]
    texts = {it.id: it.text for it in inst.forms["alternate"]}
    assert texts["1"] in alt[0]["rendered_prompt"]
    assert texts["1"] != {it.id: it.text for it in inst.items}["1"]


def test_a_plugin_condition_as_in_contributing(fresh_plugins):
    """The CONTRIBUTING.md example: a third-party condition through the plugin manager."""
    from types import SimpleNamespace

    from psymetrics_core import hookimpl

    def _shout(messages):
        return [
            {**m, "content": m["content"].upper()} if m["role"] == "user" else m for m in messages
        ]

    @hookimpl
    def register_conditions(register):
        register(
            "uppercase",
            lambda arg: Condition("uppercase", messages=_shout),
            description="the user message in capitals",
            facet="wording",
        )

    fresh_plugins.register(SimpleNamespace(register_conditions=register_conditions), "up")
    cells = cells_for(["original", "uppercase", "reversed-options"], fresh_plugins)
    assert [c.name for c in cells] == [
        "original",
        "reversed-options",
        "uppercase",
        "uppercase+reversed-options",
    ]
    inst = fresh_plugins.get_instrument("mfq")
    pr = fresh_plugins.hook.render_prompt(
        instrument=inst, item=inst.items[0], condition=cells[2].bind(1)
    )
    assert pr.messages[-1]["content"].endswith("YOUR ANSWER:")
