"""``psym fidelity`` inputs: run directories (sampled, logprob and verbalized distributions, from
a population with persona labels), answers CSVs long and wide (R psychTools' bfi as exported to
../shared/data/psych-bfi/), distribution tables, survey weights, subgroups and steerability, and
the command line (``psym fidelity``, ``psym analyze RUN --human``).

The runs are written by ``evaluate()`` with a scripted backend (a unit test: the distribution must
follow from the recorded answers); the logprob and verbalized fields are written into the sample
lines by hand, as the contract of SampleRecord (``option_probs``, ``option_mass``,
``stated_shares``) describes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity
from psymetrics_core.analysis.fidelity.output import tidy_tables
from psymetrics_core.base.types import Completion
from psymetrics_core.cli import main
from psymetrics_core.pluginsys.session import Session

BFI = Path(__file__).resolve().parents[3] / "shared" / "data" / "psych-bfi" / "bfi.csv"
needs_bfi = pytest.mark.skipif(not BFI.is_file(), reason="../shared/data/psych-bfi not here")


class _Scripted:
    """Answers the i-th prompt with ``answers[i % len]`` (a fake model, unit tests only)."""

    name = "scripted"

    def __init__(self, answers: list[object]) -> None:
        self.answers = answers
        self.i = 0

    def generate(self, prompts, settings, reporter=None):
        out = []
        for _ in prompts:
            out.append(Completion(text=str(self.answers[self.i % len(self.answers)])))
            self.i += 1
            if reporter:
                reporter.advance()
        return out

    def identity(self):
        return {"backend": self.name}


def _population(tmp_path: Path) -> Path:
    pop = tmp_path / "pop.jsonl"
    lines = [
        {
            "id": f"p{i}",
            "persona": f"Person {i}.",
            "labels": {"gender": str(1 + i % 2)},
            "source": {"file": "x.csv", "row": i + 2, "sha256": "0" * 64},
            "licence": "CC0-1.0",
        }
        for i in range(4)
    ]
    pop.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return pop


@pytest.fixture(scope="module")
def pop_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 personas x the first 3 items of ipip-bfi25; answers 2, 5, 5, then 'no idea' (unparsed),
    cycling over the 12 prompts in the run's order."""
    from psymetrics_core import evaluate

    tmp = tmp_path_factory.mktemp("fid")
    out = tmp / "run"
    evaluate(
        ["ipip-bfi25"],
        backend=_Scripted([2, 5, 5, "no idea"]),
        limit=3,
        output=out,
        population=_population(tmp),
        seed=3,
    )
    return out


def _lines(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]


def _expected_shares(run: Path, item: str) -> dict[str, float]:
    """The sampled distribution computed from the recorded answers directly."""
    answers = [r["answer"] for r in _lines(run) if r["item"] == item]
    parsed = [a for a in answers if a is not None]
    return {str(v): parsed.count(v) / len(parsed) for v in range(1, 7)}


def _human(tmp_path: Path) -> Path:
    rows = ["respondent,gender,item,response,weight"]
    for i in range(8):
        for item in ("A1", "A2", "A3"):
            rows.append(f"h{i},{1 + i % 2},{item},{1 + (i + len(item)) % 6},{1 + i % 3}")
    path = tmp_path / "human.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_sampled_run_distribution_follows_the_recorded_answers(pop_run: Path, tmp_path: Path):
    r = fidelity(
        pop_run, _human(tmp_path), Session(), FidelityOptions(n_boot=50, groups=("gender",))
    )
    assert r.model.method == "sampled" and r.model.kind == "run" and r.model.clusters == 4
    assert r.task == "ipip-bfi25" and [it.item for it in r.items] == ["A1", "A2", "A3"]
    for it in r.items:
        got = dict(zip(it.model.options.values, it.model.shares, strict=True))
        assert got == pytest.approx(_expected_shares(pop_run, it.item))
    unparsed = sum(1 for x in _lines(pop_run) if x["answer"] is None)
    assert sum(it.model.nonsub[2] * 4 for it in r.items) == pytest.approx(unparsed)
    # steerability: persona labels gender 1/2 meet the human file's gender column
    assert [(g.value, g.n_model, g.n_human) for g in r.groups] == [("1", 2, 4), ("2", 2, 4)]
    assert all(g.model_steered.value is not None for g in r.groups)


def test_human_weights_are_honoured(pop_run: Path, tmp_path: Path):
    r = fidelity(pop_run, _human(tmp_path), Session(), FidelityOptions(n_boot=0))
    # A1: respondents h0..h7 answer 1 + (i + 2) % 6 with weight 1 + i % 3 (by hand):
    # i:answer/weight 0:3/1 1:4/2 2:5/3 3:6/1 4:1/2 5:2/3 6:3/1 7:4/2 -> total 15
    want = {"1": 2 / 15, "2": 3 / 15, "3": 2 / 15, "4": 4 / 15, "5": 3 / 15, "6": 1 / 15}
    a1 = r.items[0].human
    assert dict(zip(a1.options.values, a1.shares, strict=True)) == pytest.approx(want)


def _persona(rec: dict) -> str:
    return next(v["respondent"] for v in rec["condition_info"].values() if "respondent" in v)


def _rewrite(run: Path, out: Path, edit) -> Path:
    import shutil

    shutil.copytree(run, out)
    recs = [edit(x) for x in _lines(run)]
    (out / "samples.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    return out


def test_logprob_run_is_the_mean_of_option_probs(pop_run: Path, tmp_path: Path):
    def edit(rec: dict) -> dict:
        first = _persona(rec) in ("p0", "p1")
        probs = {1: 0.5, 2: 0.5} if first else {1: 0.1, 6: 0.9}
        rec["option_probs"] = {str(k): 0.0 for k in range(1, 7)} | {
            str(k): v for k, v in probs.items()
        }
        rec["option_mass"] = 0.8 if first else 0.6
        return rec

    run = _rewrite(pop_run, tmp_path / "lp", edit)
    r = fidelity(run, _human(tmp_path), Session(), FidelityOptions(n_boot=0))
    assert r.model.method == "logprob"
    # two personas at (0.5, 0.5, 0...) and two at (0.1, 0, 0, 0, 0, 0.9): the mean
    assert r.items[0].model.shares == pytest.approx((0.3, 0.25, 0.0, 0.0, 0.0, 0.45))
    assert r.model.outside_mass == pytest.approx(1 - 0.7)


class _StatesShares(_Scripted):
    """Says 20/20/60% for options 1-3 to every prompt except Person 3's, who has no idea (a fake
    model, unit tests only)."""

    def generate(self, prompts, settings, reporter=None):
        shares = "1 = 20%\n2 = 20%\n3 = 60%\n4 = 0%\n5 = 0%\n6 = 0%"
        out = []
        for p in prompts:
            said = "no idea" if any("Person 3." in m["content"] for m in p.messages) else shares
            out.append(Completion(text=said))
            if reporter:
                reporter.advance()
        return out


def test_verbalized_run_is_the_mean_of_stated_shares(tmp_path: Path):
    # a real verbalized administration (--condition verbalized) of a scripted model
    from psymetrics_core import evaluate

    run = tmp_path / "vb"
    evaluate(
        ["ipip-bfi25"],
        backend=_StatesShares([]),
        limit=3,
        output=run,
        population=_population(tmp_path),
        conditions=("verbalized",),
        seed=3,
    )
    assert sum(r["stated_shares"] is not None for r in _lines(run)) == 9  # p3's 3 did not parse
    r = fidelity(run, _human(tmp_path), Session(), FidelityOptions(n_boot=0))
    assert r.model.method == "verbalized"
    it = r.items[0]
    assert it.model.shares == pytest.approx((0.2, 0.2, 0.6, 0.0, 0.0, 0.0))
    assert it.model.nonsub == pytest.approx((0.0, 0.0, 0.25))  # p3's reply did not parse


@needs_bfi
def test_wide_bfi_export_against_its_own_long_form(tmp_path: Path):
    # the same people in both layouts: every distance is 0 and representativeness 1
    import pandas as pd

    d = pd.read_csv(BFI, dtype=str, keep_default_na=False)
    items = list(d.columns[1:26])
    long = d.melt(
        id_vars=["respondent", "gender"], value_vars=items, var_name="item", value_name="response"
    )
    path = tmp_path / "bfi_long.csv"
    long.to_csv(path, index=False)
    r = fidelity(path, BFI, Session(), FidelityOptions(task="ipip-bfi25", n_boot=20))
    assert r.human.units == 2800 and len(r.items) == 25
    assert r.overall.representativeness.value == pytest.approx(1.0)
    assert r.overall.simbench.value == pytest.approx(100.0)
    # A1's shares of psych's bfi, counted by pandas (NA = not answered, kept apart)
    a1 = d["A1"][d["A1"] != ""].astype(int).value_counts(normalize=True).sort_index()
    assert r.items[0].human.shares == pytest.approx(tuple(a1.to_numpy()))
    assert r.items[0].human.nonsub[2] == pytest.approx((d["A1"] == "").mean())
    assert r.ceiling is not None and 0.95 < r.ceiling.representativeness.value < 1.0
    tables = tidy_tables(r)
    assert set(tables["items"]["metric"]) == {"w1", "tv", "simbench", "jsd", "ks"}
    assert len(tables["items"]) == 25 * 5


def test_cli_json_and_exports(pop_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    human = _human(tmp_path)
    main(
        [
            "fidelity",
            str(pop_run),
            str(human),
            "--bootstrap",
            "30",
            "--json",
            "-o",
            str(tmp_path / "out"),
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert data["model"]["method"] == "sampled" and data["n_boot"] == 30
    assert "Santurkar" in data["sources"]["representativeness"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "fidelity.json",
        "fidelity_distributions.csv",
        "fidelity_items.csv",
        "fidelity_overall.csv",
        "fidelity_scales.csv",
    ]
    saved = json.loads((tmp_path / "out" / "fidelity.json").read_text())
    assert saved["overall"] == data["overall"]


def test_analyze_run_with_human_shows_the_fidelity_section(
    pop_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    main(["analyze", str(pop_run), "--human", str(_human(tmp_path)), "--human-group", "gender"])
    out = capsys.readouterr().out
    assert "Human fidelity" in out and "representativeness" in out and "SimBench" in out
    assert "group gender = 2 (humans 4, personas 2)" in out


def test_a_verbalized_run_where_nothing_parsed_stays_verbalized(tmp_path: Path):
    # SmolLM2's case: no reply names its shares; the run is not read as sampled answers
    from psymetrics_core import evaluate

    run = tmp_path / "vb0"
    evaluate(
        ["ipip-bfi25"],
        backend=_Scripted(["no idea"]),
        limit=2,
        output=run,
        population=_population(tmp_path),
        conditions=("verbalized",),
        seed=3,
    )
    r = fidelity(run, _human(tmp_path), Session(), FidelityOptions(n_boot=0))
    assert r.model.method == "verbalized"
    assert r.items[0].model.nonsub == pytest.approx((0.0, 0.0, 1.0))  # all unparsed
