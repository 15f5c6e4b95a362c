"""Fuzz cases of ``psym analyze --task bfi --responses FILE`` with the population analyses
(issue 25): persona-cluster columns and label columns that do not fit; each case must end in
one line naming the option, column or respondent."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import expect_clean_error, shared_session

from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.responses import analyze_responses

GOOD = "".join(f"r{i},p{i % 3},{i % 2},{j},{1 + (i + j) % 5}\n" for i in range(9) for j in (1, 6))
HEADER = "respondent,persona,flag,item,response\n"

CASES = [
    # name, csv text, keyword arguments, expected fragment
    ("cluster-column-missing", HEADER + GOOD, {"cluster": "model"}, "--cluster model: "),
    (
        "persona-varies-within-respondent",
        HEADER + GOOD + "r0,p9,0,11,3\n",
        {},
        "--cluster persona: respondent 'r0' has more than one 'persona' value",
    ),
    (
        "named-cluster-varies",
        HEADER + GOOD + "r1,p1,0,11,3\n",
        {"cluster": "flag"},
        "--cluster flag: respondent 'r1' has more than one 'flag' value",
    ),
    (
        "criterion-unknown-label",
        HEADER + GOOD,
        {"criterion": (("extraversion", "age"),)},
        "--criterion extraversion=age: the respondents have no label 'age'",
    ),
    (
        "criterion-unknown-scale",
        HEADER + GOOD,
        {"criterion": (("grit", "flag"),)},
        "--criterion grit=flag: task bfi has no scale 'grit'",
    ),
    (
        "criterion-label-not-per-respondent",
        HEADER + GOOD.replace("r0,p0,0,6", "r0,p0,1,6"),
        {"criterion": (("extraversion", "flag"),)},
        "the respondents have no label 'flag'",
    ),
    (
        "missing-unknown-policy",
        HEADER + GOOD,
        {"missing": "mice"},
        "--missing 'mice': one of listwise, pairwise, fiml",
    ),
]


@pytest.mark.parametrize(("name", "text", "kwargs", "expect"), CASES, ids=[c[0] for c in CASES])
def test_fuzz_population_responses(
    tmp_path: Path, name: str, text: str, kwargs: dict, expect: str
) -> None:
    path = tmp_path / "long.csv"
    path.write_text(text)
    session = shared_session()
    out = expect_clean_error(
        lambda: analyze_responses("bfi", path, session, **_split(kwargs)),
        [expect.split(":")[0]],
        label=name,
    )
    assert expect in out.message, (name, out.message)


def _split(kwargs: dict) -> dict:
    """The case's keywords: criterion (and the bootstrap draws) go into the options record."""
    kw = dict(kwargs)
    kw["population"] = PopulationOptions(
        criterion=kw.pop("criterion", None), n_boot=0, missing=kw.pop("missing", "listwise")
    )
    return kw
