"""Order-test statistics (hand computations; statistics.stdev as the independent sd) and the
keyword annotations (rule, shipped files, user files)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from psymetrics_plugin_contamination.keywords import (
    keywords_for,
    load_keyword_file,
    mask_first,
    parse_keywords_option,
    rule_keyword,
    shipped_keywords,
)
from psymetrics_plugin_contamination.order_test import order_stats, permutations

from psymetrics_core import get_instrument, list_instruments
from psymetrics_core.api import PsymError, SpecError


def test_order_stats_by_hand() -> None:
    perm = [-10.0, -12.0, -8.0, -11.0]
    s = order_stats(-9.0, perm)
    # one permutation (-8) is >= -9: p = (1 + 1) / (4 + 1)
    assert s.p == pytest.approx(2 / 5)
    assert s.z == pytest.approx((-9.0 - (-10.25)) / statistics.stdev(perm))
    assert s.percentile == pytest.approx(3 / 4)
    best = order_stats(0.0, perm)
    assert best.p == pytest.approx(1 / 5)  # the smallest p with 4 permutations
    tie = order_stats(-10.0, [-10.0, -10.0])
    assert tie.p == 1.0 and tie.z is None and "sd 0" in (tie.z_reason or "")


def test_permutations_are_seeded_and_never_the_published_order() -> None:
    a = permutations(12, 50, seed=3)
    assert a == permutations(12, 50, seed=3) and a != permutations(12, 50, seed=4)
    assert len(a) == 50 and tuple(range(12)) not in a
    assert all(sorted(p) == list(range(12)) for p in a)
    assert permutations(1, 5, seed=1) == []


@pytest.mark.parametrize(
    ("text", "keyword"),
    [
        ("Is reserved", "reserved"),  # the paper's example keyword (Han et al., 2025, §2.1)
        ("Is talkative", "talkative"),
        ("Tends to find fault with others", "fault"),  # ties (tends/fault) go to the later word
        ("Is helpful and unselfish with others", "unselfish"),
    ],
)
def test_keyword_rule(text: str, keyword: str) -> None:
    assert rule_keyword(text) == keyword


def test_masking_first_whole_word_only() -> None:
    assert mask_first("Is reserved", "reserved") == ("Is [MASK]", "reserved")
    assert mask_first("Has an active imagination", "act") is None  # not inside "active"
    assert mask_first("Worries a lot", "worries") == ("[MASK] a lot", "Worries")


def test_shipped_files_exist_for_every_instrument_with_texts_and_follow_the_rule() -> None:
    shipped = [
        i
        for i in list_instruments().values()
        if i.kind == "questionnaire" and i.texts_shipped and all(it.text for it in i.items)
    ]
    assert {"bfi", "mfq", "asi", "sr2k", "pb-bfi", "pb-gse"} <= {i.id for i in shipped}
    for inst in shipped:
        path = shipped_keywords(inst.id)
        assert path is not None, inst.id
        head = path.read_text(encoding="utf-8").splitlines()[:3]
        assert any("OURS" in line for line in head)  # marked as ours
        texts = {it.id: it.text for it in inst.items}
        kws = load_keyword_file(path, texts, inst.id)
        assert {i: k.keyword for i, k in kws.items()} == {
            i: rule_keyword(t) for i, t in texts.items()
        }, inst.id


def test_user_supplied_texts_get_the_rule_at_run_time() -> None:
    kws, source = keywords_for("pvq40", {"1": "Thinking up new ideas is important to him."})
    assert kws["1"].keyword == "important" and "derived now" in source


def test_user_keyword_file_errors_name_file_and_line(tmp_path: Path) -> None:
    texts = {it.id: it.text for it in get_instrument("bfi").items}
    good = tmp_path / "kw.csv"
    good.write_text(
        "# mine\nid,keyword\n" + "".join(f"{i},{rule_keyword(t)}\n" for i, t in texts.items())
    )
    assert load_keyword_file(good, texts, "bfi")["6"].keyword == "reserved"
    bad = tmp_path / "bad.csv"
    bad.write_text("id,keyword\n1,talkative\n2,banana\n")
    with pytest.raises(SpecError, match=r"bad\.csv, row 3, field 'keyword': keyword 'banana'"):
        load_keyword_file(bad, texts, "bfi")
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("id,keyword\n99,talkative\n")
    with pytest.raises(SpecError, match=r"row 2, field 'id': unknown item id '99'"):
        load_keyword_file(unknown, texts, "bfi")
    partial = tmp_path / "partial.csv"
    partial.write_text("id,keyword\n1,talkative\n")
    with pytest.raises(SpecError, match=r"no keyword for item\(s\) 2, 3"):
        load_keyword_file(partial, texts, "bfi")
    nohead = tmp_path / "nohead.csv"
    nohead.write_text("item,word\n1,talkative\n")
    with pytest.raises(SpecError, match="row 1: missing column 'id'"):
        load_keyword_file(nohead, texts, "bfi")
    assert parse_keywords_option([str(good)], ["bfi"]) == {"bfi": good}
    with pytest.raises(PsymError, match="name the task"):
        parse_keywords_option([str(good)], ["bfi", "mfq"])
