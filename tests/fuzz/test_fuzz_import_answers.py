"""Fuzz suite: malformed ratings CSVs and options of ``psym import answers``.

Every case must end in one ``psym:`` line naming the file and line or the field
(``harness.expect_clean_error``), and must leave no run behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import expect_clean_error, run_cli

HEAD = "respondent,item,response,condition\n"
CASES: list[tuple[str, bytes, list[str], str]] = [
    ("empty-file", b"", [], "x.csv"),
    ("header-only", HEAD.encode(), [], "no response rows"),
    ("missing-column", b"respondent,item\nm,1\n", [], "missing column(s) response"),
    ("unknown-item", (HEAD + "m,99,3,original\n").encode(), [], "line 2: unknown item '99'"),
    ("out-of-scale", (HEAD + "m,1,9,original\n").encode(), [], "line 2: response '9'"),
    ("not-a-number", (HEAD + "m,1,abc,original\n").encode(), [], "line 2: response 'abc'"),
    ("fraction", (HEAD + "m,1,2.5,original\n").encode(), [], "line 2: response '2.5'"),
    ("twice", (HEAD + "m,1,3,original\nm,1,4,original\n").encode(), [], "line 3"),
    ("empty-respondent", (HEAD + ",1,3,original\n").encode(), [], "line 2: empty respondent"),
    ("empty-condition", (HEAD + "m,1,3,\n").encode(), [], "line 2: empty 'condition'"),
    (
        "unknown-condition",
        (HEAD + "m,1,3,no-such-condition\n").encode(),
        [],
        "line 2, field 'condition'",
    ),
    (
        "one-condition-two-names",
        (HEAD + "m,1,3,reversed-options\nm,2,3,original+reversed-options\n").encode(),
        [],
        "line 3, field 'condition'",
    ),
    ("bad-option", (HEAD + "m,1,3,original\n").encode(), ["--condition", "nope"], "--condition"),
    ("not-utf8", b"respondent,item,response\nm,1,\xe9\n", [], "UTF-8"),
    ("binary-junk", bytes(range(1, 256)) * 4, [], "x.csv"),
    ("unknown-task", (HEAD + "m,1,3,original\n").encode(), ["--task", "nope"], "nope"),
]


@pytest.mark.parametrize(("name", "content", "extra", "expect"), CASES, ids=[c[0] for c in CASES])
def test_bad_answers_file(
    tmp_path: Path, name: str, content: bytes, extra: list[str], expect: str
) -> None:
    src = tmp_path / "x.csv"
    src.write_bytes(content)
    out = tmp_path / "run"
    argv = ["import", "answers", str(src), "--model", "m", "-o", str(out)]
    argv += extra if "--task" in extra else ["--task", "pvq40", *extra]
    outcome = expect_clean_error(lambda: run_cli(argv), [expect], label=name)
    assert expect in outcome.message
    assert not (out / "results.json").exists()


def test_directory_as_csv(tmp_path: Path) -> None:
    argv = ["import", "answers", str(tmp_path), "--task", "pvq40", "--model", "m"]
    argv += ["-o", str(tmp_path / "run")]
    expect_clean_error(lambda: run_cli(argv), [str(tmp_path)])
