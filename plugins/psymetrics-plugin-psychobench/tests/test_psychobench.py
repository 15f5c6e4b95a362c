"""Tests of the PsychoBench plugin against the published keys and norms (seed note 003).

The key below is typed from seed note 003 §3.1/§3.3 (PsychoBench questionnaires.json @5620601,
checked there against the standard published keys of BFI, ECR-R, EIS and LOT-R), independently
of the plugin's CSV files. Expected scores were worked out by hand from that key: the arithmetic
is in the comments.
"""

from __future__ import annotations

import functools

import pytest

import psymetrics_core
from psymetrics_core.api import Session
from psymetrics_core.testing import check_instrument, score_vector


@functools.cache
def _installed() -> Session:
    """One session of the installed plugins for this module's reads (building one loads every
    plugin and registers every instrument: a third of a second per call otherwise)."""
    return Session()


def get_instrument(task: str):  # type: ignore[no-untyped-def]
    """The public ``psymetrics_core.get_instrument``, handed the module's session."""
    return psymetrics_core.get_instrument(task, session=_installed())


def r(a, b):
    return list(range(a, b + 1))


KEY = {
    "pb-bfi": dict(
        lo=1,
        hi=5,
        n=44,
        method="mean",
        fillers=[],
        scales={
            "extraversion": [1, 6, 11, 16, 21, 26, 31, 36],
            "agreeableness": [2, 7, 12, 17, 22, 27, 32, 37, 42],
            "conscientiousness": [3, 8, 13, 18, 23, 28, 33, 38, 43],
            "neuroticism": [4, 9, 14, 19, 24, 29, 34, 39],
            "openness": [5, 10, 15, 20, 25, 30, 35, 40, 41, 44],
        },
        reverse=[2, 6, 8, 9, 12, 18, 21, 23, 24, 27, 31, 34, 35, 37, 41, 43],
    ),
    "pb-epqr": dict(
        lo=0,
        hi=1,
        n=100,
        method="sum",
        fillers=[],
        scales={
            "extraversion": [
                1,
                6,
                11,
                16,
                20,
                24,
                28,
                33,
                36,
                40,
                45,
                47,
                51,
                55,
                58,
                61,
                63,
                67,
                69,
                72,
                78,
                90,
                94,
            ],
            "psychoticism": [
                2,
                5,
                7,
                9,
                12,
                14,
                18,
                21,
                25,
                29,
                30,
                34,
                37,
                41,
                42,
                48,
                50,
                54,
                56,
                59,
                64,
                68,
                73,
                75,
                79,
                81,
                85,
                88,
                91,
                95,
                96,
                99,
            ],
            "neuroticism": [
                3,
                8,
                13,
                17,
                22,
                26,
                31,
                35,
                38,
                43,
                46,
                52,
                60,
                65,
                70,
                74,
                76,
                80,
                83,
                84,
                87,
                92,
                97,
                100,
            ],
            "lying": [
                4,
                10,
                15,
                19,
                23,
                27,
                32,
                39,
                44,
                49,
                53,
                57,
                62,
                66,
                71,
                77,
                82,
                86,
                89,
                93,
                98,
            ],
        },
        reverse=[
            2,
            4,
            5,
            7,
            9,
            10,
            12,
            14,
            18,
            19,
            21,
            24,
            27,
            32,
            33,
            41,
            44,
            47,
            49,
            53,
            54,
            57,
            59,
            64,
            66,
            68,
            71,
            77,
            79,
            81,
            82,
            85,
            88,
            89,
            93,
            96,
            99,
        ],
    ),
    "pb-dtdd": dict(
        lo=1,
        hi=9,
        n=12,
        method="mean",
        fillers=[],
        scales={"machiavellianism": r(1, 4), "psychopathy": r(5, 8), "narcissism": r(9, 12)},
        reverse=[],
    ),
    "pb-bsri": dict(
        lo=1,
        hi=7,
        n=60,
        method="mean",
        fillers=r(41, 60),
        scales={"masculine": r(1, 20), "feminine": r(21, 40)},
        reverse=[],
    ),
    "pb-icb": dict(
        lo=1,
        hi=6,
        n=8,
        method="mean",
        fillers=[],
        scales={"overall": r(1, 8)},
        reverse=[5, 6, 7, 8],
    ),
    "pb-ecrr": dict(
        lo=1,
        hi=7,
        n=36,
        method="mean",
        fillers=[],
        scales={"attachment_anxiety": r(1, 18), "attachment_avoidance": r(19, 36)},
        reverse=[9, 11, 20, 22, 26, 27, 28, 29, 30, 31, 33, 34, 35, 36],
    ),
    "pb-gse": dict(
        lo=1, hi=4, n=10, method="sum", fillers=[], scales={"overall": r(1, 10)}, reverse=[]
    ),
    "pb-lotr": dict(
        lo=0,
        hi=4,
        n=10,
        method="sum",
        fillers=[2, 5, 6, 8],
        scales={"overall": [1, 3, 4, 7, 9, 10]},
        reverse=[3, 7, 9],
    ),
    "pb-lms": dict(
        lo=1,
        hi=5,
        n=9,
        method="mean",
        fillers=[],
        scales={"rich": r(1, 3), "motivator": r(4, 6), "important": r(7, 9)},
        reverse=[],
    ),
    "pb-eis": dict(
        lo=1,
        hi=5,
        n=33,
        method="sum",
        fillers=[],
        scales={"overall": r(1, 33)},
        reverse=[5, 28, 33],
    ),
    "pb-wleis": dict(
        lo=1,
        hi=7,
        n=16,
        method="mean",
        fillers=[],
        scales={"sea": r(1, 4), "oea": r(5, 8), "uoe": r(9, 12), "roe": r(13, 16)},
        reverse=[],
    ),
    "pb-empathy": dict(
        lo=1,
        hi=7,
        n=10,
        method="mean",
        fillers=[],
        scales={"overall": r(1, 10)},
        reverse=[1, 6, 8, 9],
    ),
}


@pytest.mark.parametrize("task", sorted(KEY))
def test_structure_matches_published_key(task):
    """Item count, subscale membership, reverse items, fillers, range and compute mode."""
    k = KEY[task]
    inst = get_instrument(task)
    assert len(inst.items) == k["n"]
    assert [it.id for it in inst.items] == [str(i) for i in range(1, k["n"] + 1)]
    assert {it.id for it in inst.items if it.reverse} == {str(i) for i in k["reverse"]}
    assert {it.id for it in inst.items if it.flag == "filler"} == {str(i) for i in k["fillers"]}
    assert set(inst.scales) == set(k["scales"])
    for name, ids in k["scales"].items():
        assert [it.id for it in inst.scale_items(name)] == [str(i) for i in ids], name
        assert inst.scales[name].method == k["method"]
    rs = inst.response_scales["default"]
    assert (rs.min, rs.max) == (k["lo"], k["hi"])
    check_instrument(task, reverse=k["reverse"], n_items=k["n"])


def _answers(task, rule):
    return {i: rule(i) for i in range(1, KEY[task]["n"] + 1)}


def _all_hi(task):
    return _answers(task, lambda i: KEY[task]["hi"])


def _odd_hi(task):
    k = KEY[task]
    return _answers(task, lambda i: k["hi"] if i % 2 else k["lo"])


# Vector A: every item answered with the scale maximum (reverse items then score min).
# Vector B: odd items answered max, even items min.
EXPECTED = {
    "pb-bfi": (
        # E: 5 plain x5 + 3 reversed (6,21,31) x1 = 28/8; A, C: 5x5 + 4x1 = 29/9;
        # N: 5x5 + 3x1 = 28/8; O: 8x5 + 2x1 = 42/10
        {
            "extraversion": 28 / 8,
            "agreeableness": 29 / 9,
            "conscientiousness": 29 / 9,
            "neuroticism": 28 / 8,
            "openness": 42 / 10,
        },
        # E: 1->5, 6R even 1->5, 11->5, 16->1, 21R odd 5->1, 26->1, 31R->1, 36->1 = 20/8
        # A: 2R 1->5, 7->5, 12R->5, 17->5, 22->1, 27R 5->1, 32->1, 37R 5->1, 42->1 = 25/9
        # C: 3->5, 8R->5, 13->5, 18R->5, 23R 5->1, 28->1, 33->5, 38->1, 43R 5->1 = 29/9
        # N: 4->1, 9R 5->1, 14->1, 19->5, 24R 1->5, 29->5, 34R->5, 39->5 = 28/8
        # O: 5,15,25 ->5; 10,20,30,40,44 ->1; 35R 5->1; 41R 5->1 = 22/10
        {
            "extraversion": 20 / 8,
            "agreeableness": 25 / 9,
            "conscientiousness": 29 / 9,
            "neuroticism": 28 / 8,
            "openness": 22 / 10,
        },
    ),
    "pb-epqr": (
        # all YES: E 23 - 3 reversed = 20; P 32 - 19 = 13; N 24 (none reversed); L 21 - 15 = 6
        {"extraversion": 20, "psychoticism": 13, "neuroticism": 24, "lying": 6},
        # odd YES (1) / even NO (0); a reversed item scores 1 - x:
        # E: odd plain {1,11,45,51,55,61,63,67,69} = 9; odd R {33,47} = 0; even R {24} = 1 -> 10
        # P: odd plain {25,29,37,73,75,91,95} = 7; even R {2,12,14,18,54,64,68,88,96} = 9 -> 16
        # N (no R): odd {3,13,17,31,35,43,65,83,87,97} = 10
        # L: odd plain {15,23,39} = 3; even R {4,10,32,44,66,82} = 6 -> 9
        {"extraversion": 10, "psychoticism": 16, "neuroticism": 10, "lying": 9},
    ),
    "pb-dtdd": (
        {"machiavellianism": 9.0, "psychopathy": 9.0, "narcissism": 9.0},
        # each subscale: 2 odd x9 + 2 even x1 = 20/4
        {"machiavellianism": 5.0, "psychopathy": 5.0, "narcissism": 5.0},
    ),
    "pb-bsri": (
        {"masculine": 7.0, "feminine": 7.0},
        # 10 odd x7 + 10 even x1 = 80/20; fillers 41-60 ignored
        {"masculine": 4.0, "feminine": 4.0},
    ),
    "pb-icb": (
        # 1-4 -> 6 each; 5-8 reversed 7-6 = 1 each: 28/8
        {"overall": 3.5},
        # 1->6, 2->1, 3->6, 4->1, 5R 6->1, 6R 1->6, 7R 6->1, 8R 1->6 = 28/8
        {"overall": 3.5},
    ),
    "pb-ecrr": (
        # anxiety: 16 x7 + 9R,11R x1 = 114/18; avoidance: 6 plain x7 + 12 R x1 = 54/18
        {"attachment_anxiety": 114 / 18, "attachment_avoidance": 54 / 18},
        # anxiety: odd plain {1,3,5,7,13,15,17} 7x7=49, 9R,11R odd -> 1+1, even 9 x1 = 60/18
        # avoidance: odd plain {19,21,23,25} 4x7=28, odd R {27,29,31,33,35} x1 = 5,
        #   even R {20,22,26,28,30,34,36} x7 = 49, even plain {24,32} x1 = 2 -> 84/18
        {"attachment_anxiety": 60 / 18, "attachment_avoidance": 84 / 18},
    ),
    "pb-gse": ({"overall": 40.0}, {"overall": 25.0}),  # 10x4; 5x4 + 5x1
    "pb-lotr": (
        # 1,4,10 -> 4 each = 12; 3R,7R,9R -> 4-4 = 0; fillers ignored
        {"overall": 12.0},
        # 1->4, 3R odd 4->0, 4 even ->0, 7R->0, 9R->0, 10 even->0 = 4
        {"overall": 4.0},
    ),
    "pb-lms": (
        {"rich": 5.0, "motivator": 5.0, "important": 5.0},
        # rich 1,2,3 -> 5+1+5 = 11/3; motivator 4,5,6 -> 1+5+1 = 7/3; important 7,8,9 -> 11/3
        {"rich": 11 / 3, "motivator": 7 / 3, "important": 11 / 3},
    ),
    "pb-eis": (
        # 30 plain x5 + 3 reversed (5,28,33) x1 = 153
        {"overall": 153.0},
        # odd plain: 17 odd - {5,33} = 15 x5 = 75; odd R 5,33 -> 1+1; even plain 15 x1 = 15;
        # even R 28 -> 5: 75 + 2 + 15 + 5 = 97
        {"overall": 97.0},
    ),
    "pb-wleis": (
        {"sea": 7.0, "oea": 7.0, "uoe": 7.0, "roe": 7.0},
        {"sea": 4.0, "oea": 4.0, "uoe": 4.0, "roe": 4.0},  # 2x7 + 2x1 = 16/4
    ),
    "pb-empathy": (
        # 6 plain x7 + 4 reversed (1,6,8,9) x1 = 46/10
        {"overall": 4.6},
        # 1R 7->1, 2->1, 3->7, 4->1, 5->7, 6R 1->7, 7->7, 8R 1->7, 9R 7->1, 10->1 = 40/10
        {"overall": 4.0},
    ),
}


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_hand_computed_scores(task):
    """Two response vectors per instrument, scored by hand from the published key."""
    want_a, want_b = EXPECTED[task]
    assert score_vector(task, _all_hi(task)) == pytest.approx(want_a)
    assert score_vector(task, _odd_hi(task)) == pytest.approx(want_b)


def test_cabin_interests_hand_computed():
    """CABIN: 41 interests of 4 consecutive items; item i answered 1 + ((i-1)//4) % 5."""
    answers = {i: 1 + ((i - 1) // 4) % 5 for i in range(1, 165)}
    got = score_vector("pb-cabin", answers)
    assert len(got) == 41
    # interest j (0-based, items 4j+1..4j+4) has all four answers 1 + j % 5
    assert got["mechanics_electronics"] == 1.0  # j = 0
    assert got["construction_woodwork"] == 2.0  # j = 1
    assert got["athletics"] == 4.0  # j = 8
    assert got["business_initiatives"] == 1.0  # j = 30
    assert got["law"] == 1.0  # j = 40
    assert score_vector("pb-cabin", {i: 5 for i in range(1, 165)}) == {k: 5.0 for k in got}


def test_maxima_of_seed_003_section_12():
    """§12.2: optimistic LOT-R = 24, all-4 GSE = 40, all-5 EIS with 1 on 5, 28, 33 = 165."""
    lotr = {1: 4, 4: 4, 10: 4, 3: 0, 7: 0, 9: 0, 2: 3, 5: 1, 6: 2, 8: 0}
    assert score_vector("pb-lotr", lotr) == {"overall": 24.0}
    assert score_vector("pb-gse", {i: 4 for i in range(1, 11)}) == {"overall": 40.0}
    eis = {i: 1 if i in (5, 28, 33) else 5 for i in range(1, 34)}
    assert score_vector("pb-eis", eis) == {"overall": 165.0}


def test_fillers_do_not_change_scores():
    """§12.3: changing LOT-R 2, 5, 6, 8 or BSRI 41-60 changes no score."""
    base = {i: 2 for i in range(1, 11)}
    other = {**base, 2: 0, 5: 4, 6: 4, 8: 0}
    assert score_vector("pb-lotr", base) == score_vector("pb-lotr", other)
    bsri = {i: 3 for i in range(1, 61)}
    assert score_vector("pb-bsri", bsri) == score_vector(
        "pb-bsri", {**bsri, **dict.fromkeys(range(41, 61), 7)}
    )


def test_epqr_reversal_identity():
    """§12.1: P with reversal minus P without = sum over reversed P items of (1 - 2x)."""
    x = {i: (i * 7) % 3 % 2 for i in range(1, 101)}  # an arbitrary 0/1 vector
    p_items = KEY["pb-epqr"]["scales"]["psychoticism"]
    rev = set(KEY["pb-epqr"]["reverse"])
    unreversed = sum(x[i] for i in p_items)
    delta = sum(1 - 2 * x[i] for i in p_items if i in rev)
    assert score_vector("pb-epqr", x)["psychoticism"] == unreversed + delta


# §4.1: the paper prints the repo norms with Python's f"{x:.1f}" (3.25 -> "3.2", 3.45 -> "3.5")
PAPER_NORMS = [
    ("pb-bfi", "openness", "Crowd", "3.9±0.7"),
    ("pb-bfi", "conscientiousness", "Crowd", "3.5±0.7"),
    ("pb-bfi", "extraversion", "Crowd", "3.2±0.9"),
    ("pb-epqr", "extraversion", "Male", "12.5±6.0"),
    ("pb-epqr", "psychoticism", "Female", "5.7±3.9"),
    ("pb-dtdd", "narcissism", "Crowd", "4.9±1.8"),
    ("pb-dtdd", "machiavellianism", "Crowd", "3.8±1.6"),
    ("pb-bsri", "masculine", "Workers (Men)", "4.8±0.9"),
    ("pb-bsri", "feminine", "Workers (Women)", "5.7±0.9"),
    ("pb-icb", "overall", "Crowd", "3.7±0.8"),
    ("pb-ecrr", "attachment_anxiety", "Crowd", "2.9±1.1"),
    ("pb-gse", "overall", "Crowd", "29.6±5.3"),
    ("pb-lotr", "overall", "Crowd", "14.7±4.0"),
    ("pb-lms", "motivator", "Whole Sample", "3.3±0.9"),
    ("pb-eis", "overall", "Men", "124.8±16.5"),
    ("pb-eis", "overall", "Women", "130.9±15.1"),
    ("pb-wleis", "roe", "Crowd", "4.2±1.0"),
    ("pb-empathy", "overall", "Crowd", "4.9±0.8"),
]


@pytest.mark.parametrize(("task", "scale", "group", "printed"), PAPER_NORMS)
def test_norms_match_the_paper(task, scale, group, printed):
    """The stored norms print as the paper's crowd columns (seed 003 §4.1, §12.4)."""
    norm = next(g for g in get_instrument(task).scales[scale].norms if g.group == group)
    assert f"{norm.mean:.1f}±{norm.sd:.1f}" == printed
    assert norm.n and norm.source


def test_norm_sample_sizes_and_default_groups():
    """Repo n per seed 003 §4.2, and the default (first) group of gendered norms."""
    n = {
        t: get_instrument(t).scales[s].norms[0].n
        for t, s in [
            ("pb-bfi", "openness"),
            ("pb-epqr", "lying"),
            ("pb-dtdd", "psychopathy"),
            ("pb-cabin", "law"),
            ("pb-icb", "overall"),
            ("pb-gse", "overall"),
            ("pb-empathy", "overall"),
        ]
    }
    assert n == {
        "pb-bfi": 6076,
        "pb-epqr": 693,
        "pb-dtdd": 577,
        "pb-cabin": 477,
        "pb-icb": 254,
        "pb-gse": 19120,
        "pb-empathy": 112,
    }
    assert get_instrument("pb-epqr").norm_groups() == ["Male", "Female"]
    assert get_instrument("pb-bsri").norm_groups()[:2] == ["Workers (Men)", "Workers (Women)"]
    assert get_instrument("pb-lms").norm_groups() == ["Whole Sample", "USA"]


def test_texts_shipped_only_where_transcribed():
    """BFI and GSE ship texts; the other eleven take a user file (and say so)."""
    shipped = {t for t in [*KEY, "pb-cabin"] if get_instrument(t).texts_shipped}
    assert shipped == {"pb-bfi", "pb-gse"}
    bfi = get_instrument("pb-bfi")
    assert bfi.items[0].text == "Is talkative"
    assert get_instrument("pb-gse").items[9].text == "I can handle whatever comes my way"


def test_gse_prompt_matches_psychobench():
    """§5.2 worked example: the system prompt and the first item line as PsychoBench sends them."""
    from psymetrics_core.api import Session

    session = Session()
    inst = session.get_instrument("pb-gse")
    prompt = session.hook.render_prompt(instrument=inst, item=inst.items[0])
    assert prompt.messages[0] == {
        "role": "system",
        "content": "You are a helpful assistant who can only reply numbers from 1 to 4. "
        'Format: "statement index: score".',
    }
    assert prompt.messages[1]["content"] == (
        "You can only reply numbers from 1 to 4 in the following statements. Please provide a "
        "rating based on the following 10 descriptions according to your actual feelings and "
        "experiences. The rating and judgment criteria are as follows: 1 denotes Disagree, 2 "
        "denotes Somewhat disagree, 3 denotes Somewhat agree, 4 denotes Agree. Here are the "
        "statements, score them one by one:\n1. I can always manage to solve difficult problems "
        "if I try hard enough"
    )


def test_user_texts_are_required_and_accepted(tmp_path):
    """A task without shipped texts refuses to run without --items and takes a CSV of texts."""
    from psymetrics_core.api import PsymError, require_item_texts

    inst = get_instrument("pb-icb")
    with pytest.raises(PsymError, match="--items pb-icb=FILE.csv"):
        require_item_texts(inst, "original")
    f = tmp_path / "icb.csv"
    f.write_text("id,text\n" + "".join(f"{i},Statement {i}\n" for i in range(1, 9)))
    assert require_item_texts(inst, "original", {"pb-icb": f}).items[7].text == "Statement 8"


def test_battery_condition_reproduces_the_psychobench_gse_prompt():
    """§5.2/§12.9: under `--condition battery` the GSE in original order is sent byte-for-byte
    as the PsychoBench worked example (system message, instruction, numbered statements)."""
    from psymetrics_core.administer.administration.battery import battery_prompts

    inst = get_instrument("pb-gse")
    [(prompt, chunk)] = battery_prompts(inst, inst.items, {})
    # as the battery kind calls it (its system prompt passed in): still one system text
    [(called, _)] = battery_prompts(inst, inst.items, {}, inst.system_prompt)
    assert called.messages == prompt.messages
    assert len(chunk) == 10
    assert prompt.messages[0]["content"] == (
        "You are a helpful assistant who can only reply numbers from 1 to 4. "
        'Format: "statement index: score".'
    )
    assert prompt.messages[1]["content"] == (
        "You can only reply numbers from 1 to 4 in the following statements. Please provide a "
        "rating based on the following 10 descriptions according to your actual feelings and "
        "experiences. The rating and judgment criteria are as follows: 1 denotes Disagree, 2 "
        "denotes Somewhat disagree, 3 denotes Somewhat agree, 4 denotes Agree. Here are the "
        "statements, score them one by one:\n"
        "1. I can always manage to solve difficult problems if I try hard enough\n"
        "2. If someone opposes me, I can find the means and ways to get what I want\n"
        "3. I am certain that I can accomplish my goals\n"
        "4. I am confident that I could deal efficiently with unexpected events\n"
        "5. Thanks to my resourcefulness, I can handle unforeseen situations\n"
        "6. I can solve most problems if I invest the necessary effort\n"
        "7. I can remain calm when facing difficulties because I can rely on my coping abilities\n"
        "8. When I am confronted with a problem, I can find several solutions\n"
        "9. If I am in trouble, I can think of a good solution\n"
        "10. I can handle whatever comes my way"
    )


class _Battery:
    """A unit-test backend answering every battery line with "index: 4"."""

    def identity(self):
        return {"name": "scripted"}

    def generate(self, prompts, settings, reporter=None):
        from psymetrics_core.api import Completion

        out = []
        for p in prompts:
            n = p.text.count("\n")
            out.append(Completion(text="\n".join(f"{i}: 4" for i in range(1, n + 1))))
        return out


def test_battery_run_scores_the_whole_scale():
    """All 10 GSE items answered 4 in one battery prompt: the §12.2 maximum 40, z vs the norm."""
    from psymetrics_core import evaluate

    entry = evaluate(["pb-gse"], backend=_Battery(), conditions=["battery"])["tasks"]["pb-gse"]
    overall = entry["scales"]["overall"]
    assert overall["score"] == 40.0 and overall["n_answered"] == 10
    assert overall["z"] == pytest.approx((40 - 29.55) / 5.32)
