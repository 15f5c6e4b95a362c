"""Fuzz cases of your own survey data (issue 31, item 7): ``psym analyze --responses FILE``
without ``--task``, wide or long, with ``--cfa-model``, ``--group``, ``--cluster``, ``--human``,
``--criterion`` and ``--irt``. Each malformed file or option ends in one ``psym:`` line naming
the file (and its line and column, where there is one) and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli

from psymetrics_core.base.errors import PsymError

WIDE = "respondent,school,x1,x2,x3\n" + "".join(
    f"r{i},{'ab'[i % 2]},{1 + i % 5}.5,{(i * 7) % 5},{(i * 3) % 4}\n" for i in range(12)
)
LONG = "respondent,item,response\n" + "".join(
    f"r{i},q{j},{(i + j) % 5}.25\n" for i in range(12) for j in range(1, 4)
)
MODEL = "F =~ x1 + x2 + x3\n"

CASES = [
    # name, file text (bytes: written raw), extra arguments, expected fragments
    (
        "not-a-number",
        WIDE.replace("r3,b,4.5", "r3,b,abc"),
        ["--group", "school"],
        [
            "FILE, line 5, column x1: 'abc' is not a number (expected a number, or an empty cell",
            "without --cfa-model every column but respondent",
        ],
    ),
    (
        "decimal-comma",
        WIDE.replace("r1,b,2.5", 'r1,b,"2,5"'),
        ["--cfa-model", "MODEL"],
        ["FILE, line 3, column x1: '2,5' is not a number"],
    ),
    (
        "infinity",
        WIDE.replace("r2,a,3.5", "r2,a,inf"),
        ["--cfa-model", "MODEL"],
        ["FILE, line 4, column x1: 'inf' is not a number"],
    ),
    (
        "nan-text",
        WIDE.replace("r2,a,3.5", "r2,a,NaN"),
        ["--cfa-model", "MODEL"],
        ["FILE, line 4, column x1: 'NaN' is not a number"],
    ),
    (
        "beyond-bound",
        WIDE.replace("r2,a,3.5", "r2,a,1e13"),
        ["--cfa-model", "MODEL"],
        ["FILE, line 4, column x1: '1e13' is a number beyond ±1e12"],
    ),
    (
        "text-label-without-model",
        "respondent,city,x1\nr1,Paris,1\n",
        [],
        ["FILE, line 2, column city: 'Paris' is not a number", "without --cfa-model"],
    ),
    ("empty-file", "", [], ["FILE: empty file (expected a header line"]),
    ("blank-lines-only", "\n\n\n", [], ["FILE: empty file"]),
    ("header-only", "respondent,x1,x2\n", [], ["FILE: no respondent rows"]),
    ("column-twice", "x1,x2,x1\n1,2,3\n", [], ["FILE, line 1: column 'x1' appears twice"]),
    (
        "model-column-missing",
        WIDE,
        ["--cfa-model", "MODEL9"],
        [
            "--cfa-model MODEL9, line 2: 'x9' is not a factor of the model or an item column of "
            "FILE (item columns: school, x1, x2, x3)"
        ],
    ),
    (
        "factor-named-like-a-column",
        WIDE,
        ["--cfa-model", "MODELF"],
        ["--cfa-model MODELF, line 2: factor 'x1' is named like an item column of FILE"],
    ),
    (
        "model-names-the-group",
        WIDE,
        ["--cfa-model", "MODELS", "--group", "school"],
        ["'school' is not a factor of the model or an item column of FILE"],
    ),
    (
        "group-column-missing",
        WIDE,
        ["--cfa-model", "MODEL", "--group", "gender"],
        ["--group gender: FILE has no column 'gender' (columns: respondent, school, x1"],
    ),
    (
        "group-cell-empty",
        WIDE.replace("r4,a,", "r4,,"),
        ["--cfa-model", "MODEL", "--group", "school"],
        ["FILE, line 6: empty 'school'"],
    ),
    (
        "respondent-twice",
        WIDE + "r3,b,1,2,3\n",
        ["--cfa-model", "MODEL"],
        ["FILE, line 14: respondent 'r3' appears twice (line 5"],
    ),
    (
        "respondent-empty",
        WIDE.replace("r5,b,", ",b,"),
        ["--cfa-model", "MODEL"],
        ["FILE, line 7: empty 'respondent'"],
    ),
    (
        "no-item-columns",
        "respondent,school\nr1,a\n",
        ["--group", "school"],
        ["FILE: no item columns"],
    ),
    (
        "cluster-column-missing",
        WIDE,
        ["--cfa-model", "MODEL", "--cluster", "who"],
        ["--cluster who: FILE has no column 'who'"],
    ),
    (
        "criterion-scale-missing",
        WIDE,
        ["--cfa-model", "MODEL", "--criterion", "G=school"],
        ["--criterion G=school: survey.csv has no scale 'G' (scales: F)"],
    ),
    (
        "criterion-label-missing",
        WIDE,
        ["--cfa-model", "MODEL", "--criterion", "F=age"],
        ["--criterion F=age: the respondents have no label 'age' (label columns of FILE: school)"],
    ),
    (
        "irt-continuous",
        WIDE,
        ["--cfa-model", "MODEL", "--irt"],
        ["--irt: FILE, line 2, column x1: 1.5 is not an integer category"],
    ),
    (
        "task-prefixed-model",
        WIDE,
        ["--cfa-model", "bfi=MODEL"],
        ["--cfa-model bfi=MODEL: TASK= names a task's items"],
    ),
    ("form-without-task", WIDE, ["--form", "short"], ["--form short: a form of --task TASK"]),
    (
        "long-not-a-number",
        LONG.replace("r2,q1,3.25", "r2,q1,three"),
        [],
        ["FILE, line 8, column response: 'three' is not a number"],
    ),
    (
        "long-answer-twice",
        LONG + "r0,q1,2\n",
        [],
        ["FILE, line 38: respondent 'r0' answers item 'q1' twice"],
    ),
    ("long-item-empty", LONG.replace("r1,q2,", "r1,,"), [], ["FILE, line 6: empty 'item'"]),
    (
        "long-model-item-missing",
        LONG,
        ["--cfa-model", "MODELQ"],
        ["line 1: 'q4' is not a factor of the model or an item of FILE (items: q1, q2, q3)"],
    ),
    (
        "long-irt-continuous",
        LONG,
        ["--irt"],
        ["--irt: FILE, line 2, column response: 1.25 is not an integer category"],
    ),
    ("not-utf8", b"respondent,x1\nr1,\xff\n", [], ["FILE, line 2: not UTF-8"]),
    ("nul-byte", "respondent,x1\nr1,1\x00\n", [], ["FILE, line 2: a NUL byte"]),
    ("unterminated-quote", 'respondent,x1\nr1,"1\n', [], ["FILE, line", "unreadable CSV"]),
]


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Load the CLI and the plugins once, outside the timed cases."""
    empty = tmp_path_factory.mktemp("warm") / "empty.csv"
    empty.write_text("")
    with pytest.raises(PsymError):
        run_cli(["analyze", "--responses", str(empty)])


@pytest.mark.parametrize(("name", "text", "args", "expect"), CASES, ids=[c[0] for c in CASES])
def test_fuzz_survey(
    tmp_path: Path, name: str, text: str | bytes, args: list[str], expect: list[str]
) -> None:
    path = tmp_path / "survey.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    models = {
        "MODEL": MODEL,
        "MODEL9": MODEL + "G =~ x1 + x9\n",
        "MODELS": MODEL + "G =~ x1 + school\n",
        "MODELQ": "F =~ q1 + q2 + q4\n",
        "MODELF": "F =~ x2 + x3\nx1 =~ x2 + x3\n",
    }
    subst = {"FILE": str(path)}
    for key, model in models.items():
        subst[key] = str(tmp_path / f"{key.lower()}.lav")
        Path(subst[key]).write_text(model)

    def fill(s: str) -> str:
        for key in sorted(subst, key=len, reverse=True):  # MODEL9 before MODEL
            s = s.replace(key, subst[key])
        return s

    argv = ["analyze", "--responses", str(path), *map(fill, args)]
    out = expect_clean_error(lambda: run_cli(argv), [str(path), "--"], label=name)
    for fragment in expect:
        assert fill(fragment) in out.message, (name, out.message)


@pytest.mark.parametrize("kind", ["directory", "missing"])
def test_fuzz_survey_path(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "survey.csv"
    if kind == "directory":
        path.mkdir()
    out = expect_clean_error(
        lambda: run_cli(["analyze", "--responses", str(path)]), [str(path)], label=kind
    )
    assert ("is a directory" if kind == "directory" else "does not exist") in out.message or (
        "no such file" in out.message
    ), out.message


def test_fuzz_survey_human_lacks_an_item(tmp_path: Path) -> None:
    first, second = tmp_path / "llm.csv", tmp_path / "human.csv"
    first.write_text(WIDE)
    second.write_text(WIDE.replace("x3\n", "x4\n", 1))
    model = tmp_path / "m.lav"
    model.write_text(MODEL)
    argv = ["analyze", "--responses", str(first), "--human", str(second), "--cfa-model", str(model)]
    out = expect_clean_error(lambda: run_cli(argv), [str(second)], label="human-lacks-item")
    assert f"{second}: no item column 'x3' (expected the items of --responses: x1, x2, x3)" in (
        out.message
    )
