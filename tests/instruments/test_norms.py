"""Norm groups in the instrument schema, z-scores in results, and their display."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError, SpecError
from psymetrics_core.base.types import ScaleScore
from psymetrics_core.instruments.norms import (
    norm_comparison,
    parse_norm_group_option,
    resolve_norm_group,
)
from psymetrics_core.instruments.spec import load_instrument

SPEC = """schema_version: 1
id: normdemo
name: Norm demo
version: "1"
citation: test
license: {status: test, redistributable: true}
item_source: test
forms: {original: items.csv}
response_scales:
  default: {min: 1, max: 5, labels: [a, b, c, d, e]}
scales:
  alpha:
    method: mean
    norms:
      - {group: Men, mean: 3.0, sd: 0.5, n: 100, source: "Test (2020)", year: 2020}
      - {group: Women, mean: 2.0, sd: 0.8, n: 120, source: "Test (2020)"}
  beta:
    method: sum
    norms:
      - {group: Women, mean: 6.0, sd: 2.0, n: 120, source: "Test (2020)"}
prompt: {instruction: Rate.}
"""
ITEMS = "id,text,scale,reverse\n1,One,alpha,0\n2,Two,alpha,1\n3,Three,beta,0\n4,Four,beta,0\n"


def _write(tmp_path: Path, spec: str = SPEC) -> Path:
    (tmp_path / "instrument.yaml").write_text(spec)
    (tmp_path / "items.csv").write_text(ITEMS)
    return tmp_path


def test_norms_load_in_order(tmp_path):
    inst = load_instrument(_write(tmp_path))
    assert inst.norm_groups() == ["Men", "Women"]
    men = inst.scales["alpha"].norms[0]
    assert (men.group, men.mean, men.sd, men.n, men.year) == ("Men", 3.0, 0.5, 100, 2020)
    assert inst.scales["beta"].norms[0].year is None


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("duplicate", "listed twice"),
        ("sd: -1, n: 100, source", "must be positive"),
        ("sd: 0.5, n: 0, source", "positive whole number"),
        ('sd: "x", n: 100, source', "expected a number"),
    ],
)
def test_bad_norms_name_the_field(tmp_path, bad, message):
    if bad == "duplicate":  # a group name used twice for one scale
        spec = SPEC.replace("group: Women, mean: 2.0", "group: Men, mean: 2.0")
    else:
        spec = SPEC.replace("sd: 0.5, n: 100, source", bad)
    with pytest.raises(SpecError, match=message) as exc:
        load_instrument(_write(tmp_path, spec))
    assert "scales.alpha.norms[" in str(exc.value)


def test_missing_source_is_an_error(tmp_path):
    spec = SPEC.replace(', source: "Test (2020)", year: 2020', "")
    with pytest.raises(SpecError, match=r"scales.alpha.norms\[0\].source"):
        load_instrument(_write(tmp_path, spec))


def test_z_scores_by_hand(tmp_path):
    inst = load_instrument(_write(tmp_path))
    scores = {
        "alpha": ScaleScore("alpha", 4.0, 2, 2, "mean"),
        "beta": ScaleScore("beta", 9.0, 2, 2, "sum"),
    }
    men = norm_comparison(inst, scores, "Men")
    assert set(men) == {"alpha"}  # beta has no "Men" norm
    assert men["alpha"]["z"] == pytest.approx(2.0)  # (4 - 3) / 0.5
    women = norm_comparison(inst, scores, "Women")
    assert women["alpha"]["z"] == pytest.approx(2.5)  # (4 - 2) / 0.8
    assert women["beta"]["z"] == pytest.approx(1.5)  # (9 - 6) / 2
    partial = {"beta": ScaleScore("beta", 4.0, 2, 1, "sum")}  # a sum over 1 of 2 items
    assert norm_comparison(inst, partial, "Women")["beta"]["z"] is None


def test_resolve_norm_group(tmp_path):
    inst = load_instrument(_write(tmp_path))
    assert resolve_norm_group(inst, None) == "Men"  # the first group is the default
    assert resolve_norm_group(inst, "Women") == "Women"
    assert resolve_norm_group(inst, {"*": "Crowd"}) == "Men"  # another task's group: default
    assert resolve_norm_group(inst, {"normdemo": "Women", "*": "Men"}) == "Women"
    with pytest.raises(PsymError, match="no norm group 'Crowd'"):
        resolve_norm_group(inst, {"normdemo": "Crowd"})
    assert parse_norm_group_option(["Female", "bfi=Crowd"]) == {"*": "Female", "bfi": "Crowd"}


class _Scripted:
    """A unit-test backend that always answers "4"."""

    def identity(self):
        return {"name": "scripted"}

    def generate(self, prompts, settings, reporter=None):
        from psymetrics_core.base.types import Completion

        return [Completion(text="4") for _ in prompts]


def test_results_carry_z_scores(tmp_path, monkeypatch, fresh_plugins):
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(_write(tmp_path)))
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(["normdemo"], backend=_Scripted(), norm_group="Women", session=fresh_plugins)
    entry = res["tasks"]["normdemo"]
    assert entry["norm_group"] == "Women"
    # alpha = mean(4, 6 - 4) = 3.0 -> z = (3 - 2) / 0.8; beta = 4 + 4 = 8 -> z = (8 - 6) / 2
    assert entry["scales"]["alpha"]["z"] == pytest.approx(1.25)
    assert entry["scales"]["beta"]["z"] == pytest.approx(1.0)
    assert entry["scales"]["alpha"]["norm"]["n"] == 120
    default = evaluate(["normdemo"], backend=_Scripted(), session=fresh_plugins)["tasks"][
        "normdemo"
    ]
    assert default["norm_group"] == "Men"
    assert default["scales"]["alpha"]["z"] == pytest.approx(0.0)  # (3 - 3) / 0.5
    assert "z" not in default["scales"]["beta"]
    with pytest.raises(PsymError, match="no task in this run has the norm group 'Crowd'"):
        evaluate(["normdemo"], backend=_Scripted(), norm_group="Crowd", session=fresh_plugins)


def test_show_prints_norms(tmp_path, monkeypatch, fresh_plugins):
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(_write(tmp_path)))
    from psymetrics_core.cli import cli

    out = CliRunner().invoke(cli, ["show", "normdemo"], terminal_width=200, obj=fresh_plugins)
    assert out.exit_code == 0, out.output
    assert "human norms (default group for z-scores: Men)" in out.output
    assert "Women" in out.output and "Test (2020)" in out.output
    data = json.loads(
        CliRunner().invoke(cli, ["show", "normdemo", "--json"], obj=fresh_plugins).output
    )
    assert data["norm_groups"] == ["Men", "Women"]
    assert data["scales"]["beta"]["norms"][0]["mean"] == 6.0


def test_bfi_has_psychobench_norms(fresh_plugins):
    norms = fresh_plugins.get_instrument("bfi").scales["openness"].norms
    assert [(g.group, g.mean, g.sd, g.n) for g in norms] == [("Crowd", 3.92, 0.66, 6076)]


def test_analyze_reads_spec_norms(fresh_plugins):
    """`psym analyze` compares with the same norm groups the spec declares."""
    from psymetrics_core.analysis.norms import norm_groups

    bfi = fresh_plugins.get_instrument("bfi")
    groups = norm_groups(bfi)
    assert groups["openness"] == [
        {
            "name": "Crowd",
            "mean": 3.92,
            "sd": 0.66,
            "n": 6076,
            "source": bfi.scales["openness"].norms[0].source,
            "year": 2003,
        }
    ]


def test_eval_cli_rejects_an_unknown_norm_group_before_loading_a_model(fresh_plugins):
    from psymetrics_core.cli import cli

    res = CliRunner().invoke(
        cli,
        ["eval", "--tasks", "bfi", "--norm-group", "Nope", "--model", "no-such-backend"],
        obj=fresh_plugins,
    )
    assert res.exit_code != 0
    assert "no task in this run has the norm group 'Nope' (groups: Crowd)" in str(res.exception)


@pytest.mark.model
def test_real_model_results_carry_z(smollm2, tmp_path, fresh_plugins):
    """Two BFI and two GSE items on SmolLM2: z where a mean scale has answers, none for a
    partial sum (GSE is a sum of 10 items, 2 asked)."""
    from psymetrics_core.administer.runner import evaluate

    res = evaluate(
        ["bfi", "pb-gse"], backend=smollm2, limit=2, output=tmp_path, session=fresh_plugins
    )
    bfi = res["tasks"]["bfi"]["scales"]
    for name in ("extraversion", "agreeableness"):  # items 1 and 2
        s = bfi[name]
        if s["score"] is not None:
            assert s["z"] == pytest.approx((s["score"] - s["norm"]["mean"]) / s["norm"]["sd"])
        assert s["norm"]["group"] == "Crowd" and s["norm"]["n"] == 6076
    gse = res["tasks"]["pb-gse"]["scales"]["overall"]
    assert gse["n_items"] == 10 and gse["n_answered"] <= 2
    assert gse["norm"]["mean"] == 29.55 and gse["z"] is None
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["tasks"]["bfi"]["norm_group"] == "Crowd"
