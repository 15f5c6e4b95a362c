"""The report's "How human-like are the answers?" section (``psym report RUN --human FILE``).

The section reads the fidelity library's result through ``report.fidelity_section``'s views.
Most tests hand it a stand-in library (unit tests only: fixed figures, so what the page shows is
checked against values computed by hand); the last runs the real library where it is installed.
"""

from __future__ import annotations

import csv
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from psymetrics_core.base.types import Completion
from psymetrics_core.report import build_report, load_runs_for_report
from psymetrics_core.report.fidelity_figures import most_divergent
from psymetrics_core.report.fidelity_section import (
    FidelityLibrary,
    fidelity_context,
    fidelity_of_item,
)


@dataclass(frozen=True)
class Est:
    value: float | None
    low: float | None = None
    high: float | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Opts:
    values: tuple[str, ...] = ("1", "2", "3")
    labels: tuple[str, ...] = ("low", "mid", "high")


@dataclass(frozen=True)
class Dist:
    shares: tuple[float, ...]
    nonsub: tuple[float, ...] = (0.0, 0.0, 0.0)
    n: int = 10
    options: Opts = field(default_factory=Opts)


@dataclass(frozen=True)
class Item:
    item: str
    w1: Est
    model: Dist = field(default_factory=lambda: Dist((0.2, 0.3, 0.5)))
    human: Dist = field(default_factory=lambda: Dist((0.3, 0.4, 0.3), n=300))
    scales: tuple[str, ...] = ("x",)
    n_model: int = 10
    n_human: int = 300
    tv: Est = Est(0.2, 0.1, 0.3)
    simbench: Est = Est(12.5, 1.0, 20.0)
    jsd: Est = Est(0.05)
    ks: Est = Est(0.1)


@dataclass(frozen=True)
class Scale:
    scale: str = "overall"
    items: int = 3
    representativeness: Est = Est(0.8, 0.75, 0.85)
    simbench: Est = Est(10.0, 5.0, 15.0)
    tv: Est = Est(0.2)
    jsd: Est = Est(0.05)
    ks: Est = Est(0.1)


@dataclass(frozen=True)
class Ceiling(Scale):
    splits: int = 100
    n_sample: int = 150
    n_rest: int = 150
    representativeness: Est = Est(0.96, 0.95, 0.97)


@dataclass(frozen=True)
class Group:
    column: str = "gender"
    value: str = "2"
    n_human: int = 134
    n_model: int = 0
    model_all: Est = Est(0.81, 0.8, 0.82)
    model_steered: Est = Est(None, reason="no persona carries it")
    steer_gain: Est = Est(None, reason="no persona carries it")
    human_others: Est = Est(0.97, 0.96, 0.98)
    simbench_all: Est = Est(9.0)
    simbench_steered: Est = Est(None)


@dataclass(frozen=True)
class Side:
    path: str
    method: str = "verbalized"
    units: int = 1
    clusters: int = 1
    rows: int = 3
    outside_mass: float | None = None


@dataclass
class Result:
    model: Side
    human: Side
    items: list[Item]
    n_boot: int = 200
    overall: Scale = field(default_factory=Scale)
    norm_items: list[str] = field(default_factory=lambda: ["a", "b", "c"])
    ceiling: Ceiling | None = field(default_factory=Ceiling)
    same_n: Ceiling | None = field(
        default_factory=lambda: Ceiling(
            n_sample=1, n_rest=299, representativeness=Est(0.7, 0.5, 0.9)
        )
    )
    groups: list[Group] = field(default_factory=lambda: [Group()])
    not_compared: dict[str, str] = field(default_factory=lambda: {"d": "no human answers"})
    notes: list[str] = field(default_factory=lambda: ["a note from the library"])


ITEMS = [
    Item("a", Est(0.2, 0.1, 0.3)),
    Item("b", Est(0.4, 0.35, 0.5)),
    Item("c", Est(None, reason="one option")),
]


def _fmt(e: Est, metric: str) -> str:
    if e.value is None:
        return f"n/a ({e.reason})" if e.reason else "n/a"
    return f"{metric}={e.value:g}" + (f" [{e.low:g}, {e.high:g}]" if e.low is not None else "")


def _library(seen: list) -> FidelityLibrary:
    def compare(run, human, session, groups):
        seen.append((Path(run).name, Path(human).name, tuple(groups)))
        return Result(Side(str(run)), Side(str(human), method="answers", units=300), ITEMS)

    return FidelityLibrary(compare, _fmt, {"w1": "W1 source", "simbench": "SimBench source"})


class _Stating:
    """A scripted model (unit tests only): random stated shares, a random answer otherwise."""

    def identity(self):
        return {"backend": "stating"}

    def generate(self, prompts, settings, progress=None):
        rng = random.Random(settings.seed)
        out = []
        for p in prompts:
            if "percentage of" in p.text:
                w = [rng.randint(1, 9) for _ in p.options]
                text = "\n".join(
                    f"{o.value} = {100 * x / sum(w):.1f}%"
                    for o, x in zip(p.options, w, strict=True)
                )
            else:
                text = str(rng.choice([1, 2, 3, 4, 5]))
            out.append(Completion(text=text))
        return out


@pytest.fixture
def run_dir(fresh_plugins, tmp_path: Path) -> Path:
    from psymetrics_core.administer.runner import evaluate

    out = tmp_path / "verbal"
    evaluate(
        ["bfi"],
        backend=_Stating(),
        limit=4,
        conditions=["verbalized"],
        output=out,
        session=fresh_plugins,
    )
    return out


def test_an_items_fidelity_is_one_minus_w1_with_the_interval_turned_round():
    assert fidelity_of_item(ITEMS[0]) == pytest.approx((0.8, 0.7, 0.9))
    assert fidelity_of_item(ITEMS[2]) == (None, None, None)
    assert [it.item for it in most_divergent(ITEMS, 6)] == ["b", "a"]  # undefined W1 left out


def test_the_section_shows_the_librarys_figures(fresh_plugins, run_dir, tmp_path):
    human = tmp_path / "people.csv"
    human.write_text("respondent,item,response\n")
    runs = load_runs_for_report([run_dir])
    seen: list = []
    ctx = fidelity_context(runs, human, ["gender"], fresh_plugins, library=_library(seen))
    assert seen == [("verbal", "people.csv", ("gender",))]
    html = build_report(runs, fresh_plugins, fidelity=ctx)
    start = html.index('<section id="fidelity">')
    sec = html[start : html.index("</section>", start)]
    assert "How human-like are the answers?" in sec
    assert "verbalized — the shares it stated" in sec  # the run's distribution method
    # overall against the ceiling, formatted by the library's fmt
    assert "representativeness=0.7 [0.5, 0.9]" in sec  # people at the model's n (1 of 300)
    assert "1 random respondents against the other 299" in sec
    assert (
        "representativeness=0.8 [0.75, 0.85]" in sec
        and "representativeness=0.96 [0.95, 0.97]" in sec
    )
    # per item: 1 - W1 by hand: 1 - 0.2 = 0.800, interval [1 - 0.3, 1 - 0.1]
    assert "0.800 [0.700, 0.900]" in sec and "0.600 [0.500, 0.650]" in sec
    assert "w1=0.2 [0.1, 0.3]" in sec and "n/a (one option)" in sec
    assert len(re.findall(r"<svg", sec)) == 2  # the per-item figure and the stacked bars
    assert "model vs human answer shares on the 2 most divergent items" in sec
    assert "no persona carries it" in sec and "134" in sec  # the subgroup table
    assert "not compared: d — no human answers" in sec and "a note from the library" in sec
    assert 'href="#fidelity"' in html


def test_without_human_there_is_no_section(fresh_plugins, run_dir):
    runs = load_runs_for_report([run_dir])
    assert fidelity_context(runs, None, [], fresh_plugins) is None
    assert '<section id="fidelity">' not in build_report(runs, fresh_plugins)


def test_human_group_without_human_is_refused(fresh_plugins, run_dir, tmp_path, capsys):
    from psymetrics_core.cli import main

    argv = ["report", str(run_dir), "--human-group", "gender", "-o", str(tmp_path / "r.html")]
    with pytest.raises(SystemExit) as exc:
        main(argv, session=fresh_plugins)
    assert exc.value.code == 1
    assert capsys.readouterr().err.strip() == "psym: error: --human-group: give --human FILE too"
    assert not (tmp_path / "r.html").exists()


def _human_csv(path: Path) -> Path:
    rng = random.Random(3)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["respondent", "item", "response"])
        for r in range(60):
            for item in ("1", "2", "3", "4"):
                w.writerow([f"p{r}", item, rng.choice([1, 2, 3, 3, 4, 4, 5])])
    return path


def test_the_real_library_reads_the_same_on_the_page(fresh_plugins, run_dir, tmp_path):
    from psymetrics_core.analysis.fidelity import FidelityOptions, fidelity
    from psymetrics_core.analysis.fidelity.output import fmt

    human = _human_csv(tmp_path / "people.csv")
    runs = load_runs_for_report([run_dir])
    html = build_report(
        runs, fresh_plugins, fidelity=fidelity_context(runs, human, [], fresh_plugins)
    )
    res = fidelity(run_dir, human, fresh_plugins, FidelityOptions())
    assert res.model.method == "verbalized"
    assert fmt(res.overall.representativeness, "representativeness") in html
    assert fmt(res.items[0].w1, "w1") in html
