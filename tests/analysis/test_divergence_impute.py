"""An interview run scored with ``--impute midpoint`` is its own method in the divergence
section (``interview+impute-midpoint``), never pooled under ``interview`` with an unimputed run
of the same model: two small runs against the loopback subject-and-judge server
(tests/administer/interview_server.py), the subject answering as Ann and declining item 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.analysis.divergence import load_constructs, profiles_of
from psymetrics_core.cli import cli
from tests.administer.interview_server import InterviewServer, Persona
from tests.administer.test_interview import ANN, DECLINED, _questions

IMPUTED = "interview+impute-midpoint:bfi"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    tmp = tmp_path_factory.mktemp("impute")
    # no persona condition (a persona's administrations are left out of profiles): the server
    # answers a request without a system message as "nobody"
    with InterviewServer({"nobody": Persona(ANN, frozenset({DECLINED}))}, _questions()) as srv:
        out = []
        for name, extra in (("plain", []), ("imputed", ["--impute", "midpoint"])):
            argv = ["eval", "--tasks", "bfi", "--model", "openai-chat", "--model-args"]
            argv += [f"base_url={srv.base_url},model=subject", "--judge", "openai-chat"]
            argv += ["--judge-model-args", f"base_url={srv.base_url},model=judge"]
            argv += ["--condition", "interview", "--label", "ann", "-o", str(tmp / name)]
            res = CliRunner().invoke(cli, [*argv, *extra])
            assert res.exit_code == 0, res.output
            out.append(tmp / name)
        yield out[0], out[1]


def test_an_imputed_interview_is_its_own_method(runs: tuple[Path, Path]) -> None:
    found = {p.key: p for p in profiles_of(list(runs), load_constructs())}
    assert set(found) == {"interview:bfi", IMPUTED}
    # Ann's extraversion: 7 answered items at 5 (item 1 declined: missing) vs the declined
    # item imputed as the midpoint 3, (7 * 5 + 3) / 8 = 4.75
    assert found["interview:bfi"].scores["extraversion"] == pytest.approx(5.0)
    assert found[IMPUTED].scores["extraversion"] == pytest.approx(4.75)
    assert found[IMPUTED].run == str(runs[1])


def test_text_json_and_report_name_the_imputed_method(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    text = CliRunner().invoke(cli, ["analyze", *map(str, runs)])
    assert text.exit_code == 0, text.output
    assert IMPUTED in text.output and f"interview:bfi vs {IMPUTED}" in text.output
    data = CliRunner().invoke(cli, ["analyze", *map(str, runs), "--json"])
    section = json.loads(data.output)["sections"]["divergence"]
    methods = {p["key"]: p["method"] for p in section["profiles"]}
    assert methods == {"interview:bfi": "interview", IMPUTED: "interview+impute-midpoint"}
    (pair,) = section["pairs"]
    # two methods (as interview vs interview-dimensions), compared like any other pair
    assert (pair["first"], pair["second"], pair["kind"]) == (
        "interview:bfi",
        IMPUTED,
        "cross-method",
    )
    report = tmp_path / "report.html"
    res = CliRunner().invoke(cli, ["report", *map(str, runs), "-o", str(report)])
    assert res.exit_code == 0, res.output
    html = report.read_text(encoding="utf-8")
    part = html[html.index('<section id="divergence">') :]
    assert IMPUTED in part[: part.index("</section>")]
