"""The ``question`` column (issue 33: each item as an open second-person question, for interview
administration) in the shipped item CSVs.

Questions ship exactly where item texts ship: a question is a paraphrase of its item, so an
instrument whose texts are user-supplied (``item_texts: user``: pvq40, sd3, eleven PsychoBench
scales) ships none. bfi's column is written with the interview administration, not here.
"""

from __future__ import annotations

import csv

import pytest

from psymetrics_core import get_instrument

WITH_QUESTIONS = ("pvq21", "bfi10", "mfq", "asi", "pb-bfi", "pb-gse")
TEXTS_NOT_SHIPPED = ("pvq40", "sd3", "pb-epqr", "pb-dtdd", "pb-bsri", "pb-cabin", "pb-icb")


def _rows(task: str, form: str) -> list[dict[str, str]]:
    inst = get_instrument(task)
    with (inst.spec_path.parent / inst.form_files[form]).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _forms(task: str) -> list[str]:
    return list(get_instrument(task).forms)


@pytest.mark.parametrize("task", WITH_QUESTIONS)
def test_every_row_of_every_form_has_a_question(task):
    inst = get_instrument(task)
    for form in _forms(task):
        rows = _rows(task, form)
        # the loader accepted the extra column and kept every item
        assert [r["id"] for r in rows] == [it.id for it in inst.forms[form]]
        for r in rows:
            q = r["question"]
            assert q == q.strip() and q.endswith("?"), (task, form, r["id"], q)
            assert "you" in q.lower().replace("?", " ").split() or "your" in q.lower(), q


@pytest.mark.parametrize("task", TEXTS_NOT_SHIPPED)
def test_no_questions_where_the_texts_are_not_shipped(task):
    assert not get_instrument(task).texts_shipped
    assert "question" not in _rows(task, "original")[0]


def test_asi_questions_keep_the_statement_verbatim():
    """Each ASI question asks the respondent's view of the unchanged statement, so its direction
    (and the reverse keying of items 3, 6, 7, 13, 18, 21) is the statement's."""
    for form in ("original", "alternate"):
        for r in _rows("asi", form):
            statement = r["text"].rstrip(".")
            body = r["question"].removeprefix("Do you think ").removeprefix("that, ")
            assert body.rstrip("?") == statement[0].lower() + statement[1:], (form, r["id"])


def test_mfq_relevance_questions_keep_the_consideration_verbatim():
    for form in ("original", "alternate"):
        for r in _rows("mfq", form):
            if r["response_scale"] == "relevance":
                assert r["question"] == (
                    "When you decide whether something is right or wrong, how relevant is "
                    + r["text"][0].lower()
                    + r["text"][1:]
                    + "?"
                )


def test_the_big_five_questions_agree_between_instruments():
    """A BFI item asked in pb-bfi and in bfi10 gets the same question (BFI-10 item -> BFI-44
    item per Rammstedt & John, 2007)."""
    long = {r["id"]: r["question"] for r in _rows("pb-bfi", "original")}
    short = {r["id"]: r["question"] for r in _rows("bfi10", "original")}
    in_bfi44 = {1: 6, 2: 22, 3: 23, 4: 9, 5: 41, 6: 36, 7: 2, 8: 3, 9: 39, 10: 20}
    for i, j in in_bfi44.items():
        assert short[str(i)] == long[str(j)], (i, j)
