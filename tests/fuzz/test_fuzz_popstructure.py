"""Fuzz cases of the structural options of ``psym analyze`` (issue 25): ``--cfa-model FILE``
(files that are not lavaan syntax, names that are not items), ``--human FILE`` (the human
answers of an LLM-vs-human ladder) and ``--efa`` / ``--rotation``; each case must end in one
line naming the option, file and line where there is one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from harness import expect_clean_error, shared_session

from psymetrics_core.analysis.population.cfa_model import read_cfa_model
from psymetrics_core.analysis.population.options import PopulationOptions
from psymetrics_core.analysis.population.structure_options import StructureOptions
from psymetrics_core.analysis.responses import analyze_responses
from psymetrics_core.cli import cli

GOOD = "".join(f"r{i},{j},{1 + (i + j) % 5}\n" for i in range(9) for j in range(1, 45))
HEADER = "respondent,item,response\n"
BFI_MODEL = "E =~ 1 + 6 + 11\nA =~ 2 + 7 + 12\n"

MODEL_FILES = [
    # name, file text (None: a special file), expected fragment
    (
        "arrow-not-lavaan",
        "E =~ 1 + 6\nA <- 2 + 7\n",
        "line 2: expected 'factor =~ item + item' or 'a ~~ b', got 'A <- 2 + 7'",
    ),
    ("regression-only", "E ~ 1 + 6\n", "line 1: expected 'factor =~ item + item'"),
    ("empty-term", "E =~ 1 + + 6\n", "line 1: '' is not an item or factor name"),
    ("lhs-two-names", "E F =~ 1 + 6\n", "line 1: 'E F' is not a factor or item name"),
    ("term-with-space", "E =~ 1 + six items\n", "line 1: 'six items' is not an item"),
    ("only-comments", "# nothing here\n\n", "no 'factor =~ item + item' line"),
    ("empty-file", "", "no 'factor =~ item + item' line"),
    ("only-covariance", "a ~~ b\n", "no 'factor =~ item + item' line"),
    ("semicolon-bad-second", "E =~ 1 + 6; oops\n", "line 1: expected 'factor =~ item"),
    ("unicode-operator", "E \u2248 1 + 6\n", "line 1: expected 'factor =~ item"),
    ("not-utf8", b"E =~ 1 + 6\n\xff\xfe\n", "UTF-8"),
    ("directory", None, "is a directory"),
    ("missing", None, "no such file"),
    ("fifo", None, "expected a CFA model"),
]


def _model_path(tmp_path: Path, name: str, text: str | bytes | None) -> Path:
    path = tmp_path / "model.lav"
    if name == "directory":
        path.mkdir()
    elif name == "fifo":
        os.mkfifo(path)
    elif isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    return path


@pytest.mark.parametrize(("name", "text", "expect"), MODEL_FILES, ids=[c[0] for c in MODEL_FILES])
def test_fuzz_cfa_model_files(tmp_path: Path, name: str, text: object, expect: str) -> None:
    path = _model_path(tmp_path, name, text)  # type: ignore[arg-type]
    out = expect_clean_error(lambda: read_cfa_model(path), [], label=name)
    assert expect in out.message, (name, out.message)
    assert str(path) in out.message, (name, out.message)


DATA_CASES = [
    # name, model text, responses text, keyword arguments, expected fragment
    (
        "model-unknown-item",
        BFI_MODEL + "O =~ 5 + 10 + 99\n",
        HEADER + GOOD,
        {},
        "line 3: '99' is not a factor of the model or an item of task bfi",
    ),
    (
        "model-unknown-factor-in-covariance",
        BFI_MODEL + "E ~~ N\n",
        HEADER + GOOD,
        {},
        "line 3: 'N' is not a factor of the model or an item of task bfi",
    ),
    (
        "model-item-by-text",
        "E =~ talkative + 6\n",
        HEADER + GOOD,
        {},
        "line 1: 'talkative' is not a factor",
    ),
    (
        "human-with-group",
        BFI_MODEL,
        "respondent,model,item,response\n" + GOOD.replace(",", ",m,", 1),
        {"group": "model", "human": True},
        "--human: the groups are the source (llm, human); not with --group model",
    ),
    ("human-file-missing", BFI_MODEL, HEADER + GOOD, {"human": "absent"}, "no such file"),
    ("human-unknown-item", BFI_MODEL, HEADER + GOOD, {"human": "r0,99,3\n"}, "unknown item '99'"),
    ("human-value-out-of-range", BFI_MODEL, HEADER + GOOD, {"human": "r0,1,7\n"}, "line 2"),
    (
        "human-cluster-column-in-llm-only",
        BFI_MODEL,
        HEADER + GOOD,
        {"cluster": "persona", "human": "r0,1,3\n"},
        "--cluster persona: ",
    ),
]


@pytest.mark.parametrize(
    ("name", "model", "text", "kwargs", "expect"), DATA_CASES, ids=[c[0] for c in DATA_CASES]
)
def test_fuzz_structure_on_responses(
    tmp_path: Path, name: str, model: str, text: str, kwargs: dict, expect: str
) -> None:
    path = tmp_path / "long.csv"
    path.write_text(text)
    (tmp_path / "m.lav").write_text(model)
    kw = dict(kwargs)
    human = kw.pop("human", None)
    if isinstance(human, str):
        hpath = tmp_path / "human.csv"
        if human != "absent":
            hpath.write_text(HEADER + human)
        human = hpath
    elif human:
        human = path
    opts = StructureOptions(cfa_model=read_cfa_model(tmp_path / "m.lav"))
    session = shared_session()
    out = expect_clean_error(
        lambda: analyze_responses(
            "bfi",
            path,
            session,
            population=PopulationOptions(n_boot=0, structure=opts),
            human=human,
            **kw,
        ),
        [],
        label=name,
    )
    assert expect in out.message, (name, out.message)


OPTION_CASES = [
    # name, extra arguments, expected fragment of the one-line error
    ("rotation-without-efa", ["--rotation", "varimax"], "--rotation varimax: give --efa N|auto"),
    ("efa-zero", ["--efa", "0"], "expected a number of factors >= 1 or auto, got '0'"),
    ("efa-negative", ["--efa", "-2"], "expected a number of factors >= 1 or auto, got '-2'"),
    ("efa-word", ["--efa", "many"], "expected a number of factors >= 1 or auto, got 'many'"),
    ("efa-float", ["--efa", "2.5"], "got '2.5'"),
    ("rotation-unknown", ["--efa", "2", "--rotation", "spin"], "'spin' is not one of"),
    ("human-on-a-folder-that-is-no-run", ["--human", "h.csv"], "results.json: no such file"),
]


@pytest.mark.parametrize(("name", "args", "expect"), OPTION_CASES, ids=[c[0] for c in OPTION_CASES])
def test_fuzz_structure_options(tmp_path: Path, name: str, args: list[str], expect: str) -> None:
    res = CliRunner().invoke(cli, ["analyze", str(tmp_path), *args], obj=shared_session())
    assert res.exit_code != 0, (name, res.output)
    message = str(res.exception) if res.exit_code == 1 else res.output
    assert "Traceback" not in message and expect in message, (name, message)
    if res.exit_code == 1:
        assert "\n" not in message.strip(), (name, message)
