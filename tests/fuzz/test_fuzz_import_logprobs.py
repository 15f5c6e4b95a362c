"""Fuzz suite: malformed CSVs for ``psym import logprobs`` (one line naming file, line, field).

Every case ends in one ``PsymError`` line (``harness.expect_clean_error``) and writes no run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import expect_clean_error

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session

HEAD = "scenario,response,logprob,tokens\n"
FULL = "".join(f"1025,{r},-{10 * r}.5,{r + 3}\n" for r in range(1, 6))

CASES: list[tuple[str, bytes, str]] = [
    ("empty-file", b"", "line 1"),
    ("header-only", HEAD.encode(), "no rows"),
    ("missing-column", b"scenario,response,logprob\n1025,1,-3\n", "missing tokens"),
    ("not-utf8", HEAD.encode() + b"1025,1,-3\xe9,4\n", "line 2"),
    ("nul-byte", HEAD.encode() + b"1025,1,\x00,4\n", "NUL"),
    ("unterminated-quote", HEAD.encode() + b'1025,1,"-3,4\n', "line"),
    ("unknown-scenario", (HEAD + "99999,1,-3,4\n").encode(), "field 'scenario'"),
    ("scenario-blank", (HEAD + ",1,-3,4\n").encode(), "field 'scenario'"),
    ("response-out-of-range", (HEAD + "1025,6,-3,4\n").encode(), "field 'response'"),
    ("response-negative", (HEAD + "1025,-1,-3,4\n").encode(), "field 'response'"),
    ("response-huge", (HEAD + "1025," + "9" * 400 + ",-3,4\n").encode(), "field 'response'"),
    ("logprob-positive", (HEAD + "1025,1,3,4\n").encode(), "field 'logprob'"),
    ("logprob-nan", (HEAD + "1025,1,nan,4\n").encode(), "field 'logprob'"),
    ("logprob-inf", (HEAD + "1025,1,-inf,4\n").encode(), "field 'logprob'"),
    ("logprob-text", (HEAD + "1025,1,abc,4\n").encode(), "field 'logprob'"),
    ("logprob-huge", (HEAD + "1025,1,-1e999,4\n").encode(), "field 'logprob'"),
    ("tokens-zero", (HEAD + "1025,1,-3,0\n").encode(), "field 'tokens'"),
    ("tokens-fraction", (HEAD + "1025,1,-3,2.5\n").encode(), "field 'tokens'"),
    ("tokens-huge", (HEAD + "1025,1,-3," + "9" * 400 + "\n").encode(), "field 'tokens'"),
    ("tokens-blank", (HEAD + "1025,1,-3,\n").encode(), "field 'tokens'"),
    ("duplicate-pair", (HEAD + FULL + "1025,3,-1,2\n").encode(), "given twice"),
    ("partial-scenario", (HEAD + "1025,1,-3,4\n1025,2,-3,4\n").encode(), "lacks response"),
    ("tokens-superscript-digit", (HEAD + "1025,1,-3,\u00b2\n").encode(), "field 'tokens'"),
    ("response-arabic-digit", (HEAD + "1025,\u0661,-3,4\n").encode(), "field 'response'"),
    ("binary-junk", bytes(range(1, 256)) * 4, "line"),
]


@pytest.fixture(scope="module")
def session() -> Session:
    import psymetrics_plugin_value_portrait as vp

    s = Session()
    if "value-portrait" not in s.instruments():
        s.register(vp, name="value-portrait")
    return s


def _invoke(session: Session, argv: list[str]) -> None:
    from click.testing import CliRunner

    from psymetrics_core.cli import cli

    res = CliRunner().invoke(cli, argv, obj=session)
    if res.exit_code == 0:
        return
    if isinstance(res.exception, PsymError):
        raise res.exception
    raise AssertionError(f"not a clean error: {res.exception!r} {res.output[-500:]}")


@pytest.mark.parametrize(("label", "content", "names"), CASES, ids=[c[0] for c in CASES])
def test_malformed_logprob_csv(session, tmp_path: Path, label, content, names):
    src = tmp_path / "scores.csv"
    src.write_bytes(content)
    out = tmp_path / "run"
    argv = ["import", "logprobs", str(src), "--task", "value-portrait", "--model", "m"]
    outcome = expect_clean_error(
        lambda: _invoke(session, [*argv, "-o", str(out)]), [names], label=label
    )
    assert str(src) in outcome.message or "--" in outcome.message, outcome.message
    assert not (out / "results.json").exists()


def test_special_inputs(session, tmp_path: Path):
    argv = ["import", "logprobs", "--task", "value-portrait", "--model", "m", "-o"]
    for label, path in [("missing", tmp_path / "nope.csv"), ("directory", tmp_path)]:
        expect_clean_error(
            lambda p=path: _invoke(session, [*argv, str(tmp_path / "run"), str(p)]),
            [str(path)],
            label=label,
        )
    src = tmp_path / "ok.csv"
    src.write_text(HEAD + FULL, encoding="utf-8")
    for label, task in [("unknown-task", "no-such-task"), ("questionnaire", "bfi")]:
        cmd = ["import", "logprobs", str(src), "--task", task, "--model", "m", "-o"]
        expect_clean_error(
            lambda c=cmd: _invoke(session, [*c, str(tmp_path / "run")]), [task], label=label
        )


def test_bad_output_folders(session, tmp_path: Path):
    src = tmp_path / "ok.csv"
    src.write_text(HEAD + FULL, encoding="utf-8")
    (tmp_path / "plain").write_text("x")
    argv = ["import", "logprobs", str(src), "--task", "value-portrait", "--model", "m", "-o"]
    for label, target, name in [
        ("empty", "", "''"),
        ("blank", "  ", "'  '"),
        ("regular-file", str(tmp_path / "plain"), "plain"),
        ("parent-is-file", str(tmp_path / "plain" / "sub"), "plain"),
    ]:
        expect_clean_error(lambda t=target: _invoke(session, [*argv, t]), [name], label=label)
    assert (tmp_path / "plain").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.csv", "plain"]
