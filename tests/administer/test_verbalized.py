"""The verbalized administration (Meister et al., 2024, "express the distribution"): its strict
reply parser on hand-written replies, and a run through ``evaluate`` with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psymetrics_core.administer.administration.stated_shares import (
    TOLERANCE,
    parse_stated_shares,
)
from psymetrics_core.administer.administration.verbalized import NO_SCORE
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion, Option

LABELS = [
    "Disagree strongly",
    "Disagree a little",
    "Neither agree nor disagree",
    "Agree a little",
    "Agree strongly",
]
BFI = [Option(i + 1, label) for i, label in enumerate(LABELS)]


def _ok(text: str, options=BFI) -> dict[int, float]:
    got = parse_stated_shares(text, options)
    assert got.status == "ok", got.reason
    assert got.reason is None
    assert sum(got.shares.values()) == pytest.approx(1.0)
    return got.shares


def _fails(text: str, options=BFI) -> str:
    got = parse_stated_shares(text, options)
    assert got.status == "unparsed" and got.shares is None
    assert got.reason
    return got.reason


def test_value_keys_with_percent_signs_are_shares_of_one():
    shares = _ok("1 = 10%\n2 = 20%\n3 = 40%\n4 = 20%\n5 = 10%")
    assert shares == {1: 0.10, 2: 0.20, 3: 0.40, 4: 0.20, 5: 0.10}


def test_a_decimal_percentage_is_a_hundredth_of_it():
    # "33.3%" = 0.333 (issue 34): 33.3 + 16.7 + 10 + 20 + 20 = 100, nothing rescaled
    got = parse_stated_shares(
        "Disagree strongly: 33.3%\nDisagree a little: 16.7%\n"
        "Neither agree nor disagree: 10%\nAgree a little: 20%\nAgree strongly: 20%",
        BFI,
    )
    assert got.shares[1] == pytest.approx(0.333) and got.shares[2] == pytest.approx(0.167)
    assert got.stated_total == pytest.approx(1.0) and not got.renormalised


def test_label_keys_in_any_case_with_markdown_bullets_and_a_total_line():
    shares = _ok(
        "Here are my estimates:\n"
        "- **disagree STRONGLY**: 5%\n"
        "- Disagree a little: 15%\n"
        "* Neither agree nor disagree: 30%\n"
        "- Agree a little: 35%\n"
        "- Agree strongly: 15%\n"
        "Total: 100%\n"
        "The answer is 4."  # prose that ends in a number: not a share line
    )
    assert shares == {1: 0.05, 2: 0.15, 3: 0.30, 4: 0.35, 5: 0.15}


@pytest.mark.parametrize(
    "line",
    [
        "3 = Neither agree nor disagree: 30%",
        "3. Neither agree nor disagree - 30%",
        "3 (Neither agree nor disagree): 30%",
        "Neither agree nor disagree (3): 30%",
        "[3] Neither agree nor disagree = 30 %",
        "Option 3: 30 percent",
    ],
)
def test_value_and_label_together_name_one_option(line):
    text = f"1 = 10%\n2 = 20%\n{line}\n4 = 20%\n5 = 20%"
    assert _ok(text)[3] == pytest.approx(0.30)


def test_a_key_whose_value_and_label_disagree_fails_naming_both():
    reason = _fails("1 = 10%\n2 = Agree strongly: 20%\n3 = 40%\n4 = 20%\n5 = 10%")
    assert "line 2" in reason and "names two options" in reason
    assert "value 2" in reason and "option 5" in reason


def test_one_line_and_json_replies():
    assert _ok("1: 10%, 2: 20%, 3: 40%, 4: 20%, 5: 10%")[3] == pytest.approx(0.40)
    assert _ok("1 = 10%; 2 = 20%; 3 = 40%; 4 = 20%; 5 = 10%")[5] == pytest.approx(0.10)
    shares = _ok('{"1": 10, "2": 20, "3": 40, "4": 20, "5": 10}')  # bare numbers: percentages
    assert shares == {1: 0.10, 2: 0.20, 3: 0.40, 4: 0.20, 5: 0.10}
    multi = '{\n  "Disagree strongly": "5%",\n  "Disagree a little": "15%",\n'
    multi += '  "Neither agree nor disagree": "30%",\n  "Agree a little": "35%",\n'
    multi += '  "Agree strongly": "15%"\n}'
    assert _ok(multi)[4] == pytest.approx(0.35)


def test_a_missing_option_fails_naming_it():
    reason = _fails("1 = 10%\n2 = 20%\n3 = 40%\n4 = 30%")
    assert reason == "no share for option(s) 5 (Agree strongly)"


def test_an_option_given_twice_fails():
    reason = _fails("1 = 10%\n2 = 20%\n3 = 40%\n4 = 20%\n5 = 10%\n1 = 10%")
    assert reason == "option 1 is given twice (lines 1 and 6)"


def test_shares_within_the_tolerance_are_renormalised_and_the_total_recorded():
    got = parse_stated_shares("1 = 20%\n2 = 20%\n3 = 20%\n4 = 20%\n5 = 15%", BFI)
    assert got.status == "ok"
    # by hand: 20 / 95 and 15 / 95
    assert got.shares[1] == pytest.approx(20 / 95) and got.shares[5] == pytest.approx(15 / 95)
    assert got.stated_total == pytest.approx(0.95) and got.renormalised
    assert got.data() == {"stated_total": 0.95, "renormalised": True}


@pytest.mark.parametrize(
    ("text", "total"),
    [
        ("1 = 20%\n2 = 20%\n3 = 20%\n4 = 20%\n5 = 5%", "85%"),
        ("1 = 30%\n2 = 20%\n3 = 20%\n4 = 20%\n5 = 20.5%", "110.5%"),
        ("1 = 0%\n2 = 0%\n3 = 0%\n4 = 0%\n5 = 0%", "0%"),
    ],
)
def test_shares_summing_far_from_100_fail_with_the_sum(text, total):
    lo, hi = TOLERANCE
    assert (lo, hi) == (0.90, 1.10)
    assert _fails(text) == f"the shares sum to {total}, outside 90-110%"


def test_the_tolerance_bounds_are_inside():
    assert parse_stated_shares("1 = 30%\n2 = 20%\n3 = 20%\n4 = 20%\n5 = 20%", BFI).status == "ok"
    assert parse_stated_shares("1 = 10%\n2 = 20%\n3 = 20%\n4 = 20%\n5 = 20%", BFI).status == "ok"


def test_fractions_where_percentages_were_asked_fail_with_a_hint():
    reason = _fails("1 = 0.2\n2 = 0.2\n3 = 0.2\n4 = 0.2\n5 = 0.2")
    assert reason.startswith("the shares sum to 1%") and "fractions?" in reason


def test_unknown_keys_and_impossible_shares_fail():
    assert _fails("Maybe: 20%\n1 = 20%") == "line 1: 'Maybe' names no option"
    assert "value 6 is not one" in _fails("6 = 20%")
    assert "'strongly agree' is no label" in _fails("5 = Strongly agree: 20%")
    assert "a negative share" in _fails("1 = -10%\n2 = 30%")
    assert "above 100%" in _fails("1 = 120%")


def test_numbers_without_keys_are_never_realigned_to_the_options():
    # five shares in option order but naming no option: not read as 1..5
    got = parse_stated_shares("10%\n20%\n40%\n20%\n10%", BFI)
    assert got.status == "unparsed" and got.reason == "no 'option = percentage' line in the reply"


def test_a_refusal_without_shares_is_refused():
    got = parse_stated_shares("I'm sorry, as an AI I cannot estimate that.", BFI)
    assert got.status == "refused" and got.shares is None


def test_value_keys_follow_the_values_not_the_presented_order():
    reversed_options = list(reversed(BFI))
    shares = _ok("5 = 50%\n4 = 20%\n3 = 10%\n2 = 10%\n1 = 10%", reversed_options)
    assert shares[5] == pytest.approx(0.5) and list(shares) == [5, 4, 3, 2, 1]


def test_negative_option_values_are_keys_too():
    opts = [Option(-1, "No"), Option(0, "Unsure"), Option(1, "Yes")]
    assert _ok("-1 = 20%\n0 = 30%\n1 = 50%", opts) == {-1: 0.2, 0: 0.3, 1: 0.5}


class _Stating:
    """A scripted model (unit tests only): states fixed shares for a verbalized prompt of item
    texts containing "talkative", an unparseable reply otherwise; answers "2" to other prompts."""

    def identity(self) -> dict[str, str]:
        return {"backend": "stating"}

    def generate(self, prompts, settings, progress=None):
        self.settings = settings
        self.prompts = list(prompts)
        out = []
        for p in prompts:
            if "percentage of" not in p.text:
                out.append(Completion(text="2"))
            elif "talkative" in p.text:
                out.append(Completion(text="1 = 10%\n2 = 20%\n3 = 30%\n4 = 25%\n5 = 10%"))
            else:
                out.append(Completion(text="1 = 50%\n2 = 50%"))
        return out


def test_a_verbalized_run_records_stated_shares_and_no_scores(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    be = _Stating()
    res = evaluate(
        ["bfi"],
        backend=be,
        limit=3,
        conditions=["verbalized"],
        output=tmp_path,
        session=fresh_plugins,
    )
    lines = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    first, second = lines[0], lines[1]
    assert first["answer"] is None and first["parse_status"] == "ok"
    # 10+20+30+25+10 = 95%: renormalised, by hand 10/95 ...
    assert first["stated_shares"]["4"] == pytest.approx(25 / 95)
    assert first["data"] == {"stated_total": 0.95, "renormalised": True}
    assert second["stated_shares"] is None and second["parse_status"] == "unparsed"
    assert second["data"]["reason"].startswith("no share for option(s) 3 (Neither")
    assert first["facets"] == {"administration": "verbalized"}
    # the prompt: the item as the instrument asks it, quoted, then the question about people
    text = first["prompt"]["messages"][-1]["content"]
    assert "I see myself as someone who is talkative." in text
    assert "what percentage of people would choose" in text
    assert [m["role"] for m in first["prompt"]["messages"]] == ["user"]
    assert be.settings.max_new_tokens == 80  # 16 new tokens per option, 5 options
    entry = res["tasks"]["bfi"]
    assert entry["n_answered"] == 1 and entry["parse_rate"] == pytest.approx(1 / 3)
    ind = entry["indicators"]
    assert ind["parse_rate"]["value"] == pytest.approx(round(1 / 3, 4))  # same on every screen
    assert ind["straight_lining"]["value"] is None
    assert ind["straight_lining"]["reason"] == NO_SCORE
    assert all(s["score"] is None and s["reason"] == NO_SCORE for s in entry["scales"].values())
    dist = res["distribution"]["verbalized"]
    assert dist["method"] == "verbalized" and dist["field"] == "stated_shares"
    assert dist["per_item"] == 1


def test_a_persona_asks_about_people_like_you(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    persona = tmp_path / "nurse.txt"
    persona.write_text("You are a nurse from Lyon.")
    be = _Stating()
    evaluate(
        ["bfi"],
        backend=be,
        limit=1,
        conditions=["verbalized+persona=" + str(persona)],
        output=tmp_path / "run",
        session=fresh_plugins,
    )
    msgs = be.prompts[0].messages
    assert msgs[0] == {"role": "system", "content": "You are a nurse from Lyon."}
    assert "what percentage of people like you would choose" in msgs[-1]["content"]


def test_verbalized_needs_generate_mode(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate

    with pytest.raises(PsymError, match="the 'verbalized' condition needs --mode generate"):
        evaluate(
            ["bfi"],
            backend=_Stating(),
            limit=1,
            conditions=["verbalized"],
            mode="logprob",
            output=tmp_path,
            session=fresh_plugins,
        )


def test_the_eval_screen_shows_stated_shares_not_scores(fresh_plugins, tmp_path: Path, capsys):
    from psymetrics_core.administer.distribution import is_verbalized_only, stated_items
    from psymetrics_core.administer.runner import evaluate
    from psymetrics_core.cli.stated_screen import print_stated

    res = evaluate(
        ["bfi"],
        backend=_Stating(),
        limit=2,
        conditions=["verbalized"],
        output=tmp_path,
        session=fresh_plugins,
    )
    assert is_verbalized_only(res)
    items = stated_items(tmp_path / "samples.jsonl")
    assert [(i.item, i.status) for i in items] == [("1", "ok"), ("2", "unparsed")]
    print_stated(res, tmp_path)
    out = capsys.readouterr().out
    # 10/95 = 10.5%, 25/95 = 26.3% (renormalised by hand)
    assert "1: 10.5%  2: 21.1%  3: 31.6%  4: 26.3%  5: 10.5%" in out
    assert "unparsed" in out and "no share for option(s) 3" in out  # the table may wrap the rest
    assert "1 of 2 replies parsed" in out
    assert "there is no answer to score, so no scale scores" in " ".join(out.split())


def test_a_run_without_verbalized_cells_prints_no_stated_table(fresh_plugins, tmp_path, capsys):
    from psymetrics_core.administer.distribution import is_verbalized_only
    from psymetrics_core.administer.runner import evaluate
    from psymetrics_core.cli.stated_screen import print_stated

    res = evaluate(["bfi"], backend=_Stating(), limit=2, output=tmp_path, session=fresh_plugins)
    assert not is_verbalized_only(res)
    print_stated(res, tmp_path)
    assert capsys.readouterr().out == ""


def test_a_verbalized_population_run_keeps_its_distributions(fresh_plugins, tmp_path: Path):
    from psymetrics_core.administer.runner import evaluate
    from psymetrics_core.records.read import load_run_data
    from psymetrics_core.study.population import BuildSpec, build_population, write_population

    pop = tmp_path / "pop.jsonl"
    write_population(pop, build_population(BuildSpec(generate="binary", n=3, seed=3)))
    res = evaluate(
        ["bfi"],
        backend=_Stating(),
        limit=2,
        conditions=["verbalized"],
        population=pop,
        output=tmp_path / "run",
        session=fresh_plugins,
    )
    lines = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and sum(x["stated_shares"] is not None for x in lines) == 3
    assert all("people like you" in x["prompt"]["messages"][-1]["content"] for x in lines)
    assert res["distribution"]["verbalized"]["cells"] == 3
    load_run_data(tmp_path / "run")  # the records agree with each other (parsed counts)
