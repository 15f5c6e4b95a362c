"""``psym new-plugin`` writes an installable, tested plugin; ``check_instrument`` catches errors."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from psym_inprocess import Ran, psym_main

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.kit import new_plugin


def test_new_plugin_is_installable_listed_and_its_test_passes(tmp_path):
    """Generate `demo`, pip-install it into a target folder, list it, run its own tests.

    The plugin goes into ``--target`` (added to PYTHONPATH for the subprocesses) instead of the
    test environment, so nothing needs uninstalling; removing tmp_path cleans it up.
    """
    from psymetrics_core.cli import cli

    res = CliRunner().invoke(cli, ["new-plugin", "demo", "--directory", str(tmp_path)])
    assert res.exit_code == 0, res.output
    root = tmp_path / "psymetrics-plugin-demo"
    assert not (root / "setup.cfg").exists() and not (root / "setup.py").exists()
    for rel in (
        "pyproject.toml",
        "README.md",
        "psymetrics_plugin_demo/__init__.py",
        "psymetrics_plugin_demo/instruments/demo/instrument.yaml",
        "psymetrics_plugin_demo/instruments/demo/items.csv",
        "tests/test_demo.py",
    ):
        assert (root / rel).is_file(), rel
    readme = (root / "README.md").read_text()
    assert "**Citation:**" in readme and "**Licence status:**" in readme
    site = tmp_path / "site"
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(root),
        ],
        capture_output=True,
        text=True,
    )
    assert pip.returncode == 0, pip.stderr
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    listed = subprocess.run(
        [sys.executable, "-m", "psymetrics_core", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert listed.returncode == 0, listed.stderr
    assert '"task": "demo"' in listed.stdout
    assert '"distribution": "psymetrics-plugin-demo"' in listed.stdout
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout


def test_new_plugin_refuses_bad_names_and_existing_folders(tmp_path):
    with pytest.raises(PsymError, match="lower-case letters"):
        new_plugin("Bad_Name", tmp_path)
    new_plugin("ok-name", tmp_path)
    assert (tmp_path / "psymetrics-plugin-ok-name" / "psymetrics_plugin_ok_name").is_dir()
    with pytest.raises(PsymError, match="already exists"):
        new_plugin("ok-name", tmp_path)


def _local_plugin(tmp_path: Path, items: str, labels: str = "[a, b, c, d, e]") -> Path:
    """A generated skeleton's instrument, edited, served through PSYM_INSTRUMENTS_PATH."""
    root = new_plugin("kitcheck", tmp_path)
    folder = root / "psymetrics_plugin_kitcheck" / "instruments" / "kitcheck"
    spec = folder / "instrument.yaml"
    text = spec.read_text().replace(
        "[Strongly disagree, Disagree, Neither agree nor disagree, Agree, Strongly agree]", labels
    )
    spec.write_text(text)
    (folder / "items.csv").write_text(items)
    return folder


GOOD = "id,text,scale,reverse,flag\n1,A,alpha,0,\n2,B,alpha,1,\n3,C,beta,0,\n4,D,beta,1,\n"


def test_check_instrument_passes_and_catches_a_wrong_reverse_key(
    tmp_path, monkeypatch, fresh_plugins
):
    from psymetrics_core.testing import check_instrument, score_vector

    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(_local_plugin(tmp_path, GOOD)))
    check_instrument("kitcheck", reverse={2, 4}, scale_sizes={"alpha": 2, "beta": 2}, n_items=4)
    # alpha = mean(5, 6 - 1) = 5; beta = mean(2, 6 - 4) = 2
    assert score_vector("kitcheck", {1: 5, 2: 1, 3: 2, 4: 4}) == {"alpha": 5.0, "beta": 2.0}
    assert score_vector("kitcheck", {1: 5, 2: 1}, session=fresh_plugins)["alpha"] == 5.0
    with pytest.raises(AssertionError, match=r"extra \['4'\], missing \['3'\]"):
        check_instrument("kitcheck", reverse={2, 3})
    with pytest.raises(AssertionError, match="scale 'alpha' has 2 items, not 3"):
        check_instrument("kitcheck", scale_sizes={"alpha": 3})


def test_check_instrument_catches_labels_that_do_not_parse(tmp_path, monkeypatch, fresh_plugins):
    from psymetrics_core.testing import check_instrument

    # every label must read back as its own value; "1 or 2" (the label of 2) reads as 1
    folder = _local_plugin(tmp_path, GOOD, labels="[no, agree, 3, 4, 5]")
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(folder))
    check_instrument("kitcheck", session=fresh_plugins)  # distinct labels parse back
    spec = folder / "instrument.yaml"
    spec.write_text(spec.read_text().replace("[no, agree, 3, 4, 5]", "[x, 1 or 2, 3, 4, 5]"))
    fresh_plugins.refresh()
    with pytest.raises(AssertionError, match="reply '1 or 2' parses to 1, not 2"):
        check_instrument("kitcheck", session=fresh_plugins)


def test_new_plugin_is_a_pyproject_distribution_that_builds(tmp_path):
    """PEP 621 metadata depending on psymetrics-core; `python -m build` makes a full wheel."""
    root = new_plugin("demo", tmp_path)
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert meta["build-system"]["build-backend"] == "setuptools.build_meta"
    assert meta["project"]["name"] == "psymetrics-plugin-demo"
    assert meta["project"]["dependencies"] == ["psymetrics-core>=0.1.0"]
    assert meta["project"]["entry-points"]["psymetrics"] == {"demo": "psymetrics_plugin_demo"}
    readme = (root / "README.md").read_text()
    assert "## Publish" in readme and "python -m build" in readme and "twine upload" in readme
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--outdir",
            str(tmp_path / "dist"),
            str(root),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "warning" not in (res.stdout + res.stderr).lower()
    with zipfile.ZipFile(tmp_path / "dist" / "psymetrics_plugin_demo-0.1.0-py3-none-any.whl") as w:
        names = set(w.namelist())
        metadata = w.read("psymetrics_plugin_demo-0.1.0.dist-info/METADATA").decode()
    assert "psymetrics_plugin_demo/instruments/demo/instrument.yaml" in names
    assert "psymetrics_plugin_demo/instruments/demo/items.csv" in names
    assert "Requires-Dist: psymetrics-core>=0.1.0" in metadata
    assert (tmp_path / "dist" / "psymetrics_plugin_demo-0.1.0.tar.gz").is_file()


def test_validate_refuses_the_kits_placeholders(tmp_path):
    """`psym validate` fails while REPLACE is left in citation, licence, item source or norms."""
    root = new_plugin("demo", tmp_path)
    folder = root / "psymetrics_plugin_demo" / "instruments" / "demo"
    spec = folder / "instrument.yaml"

    def validate() -> Ran:
        """``psym validate FOLDER``: psym's main in this process (the first call is the
        console script's process below)."""
        return psym_main(["validate", folder])

    res = subprocess.run(
        [sys.executable, "-m", "psymetrics_core", "validate", str(folder)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1, res.stderr  # one line, no traceback
    assert "REPLACE placeholder in citation, license.status, item_source, " in res.stderr
    assert "scales.alpha.norms[0].source" in res.stderr and str(spec) in res.stderr
    assert validate() == Ran(1, res.stdout, res.stderr)  # the same in this process
    fixes = {
        (
            "REPLACE: full reference of the instrument (authors, year, title, journal, pages)."
        ): "Doe, J. (2024). A demo scale. Journal of Demos, 1, 1-2.",
        'REPLACE (e.g. "public domain", "free for non-commercial research use")': "public domain",
        (
            "REPLACE: where the item texts and the key were transcribed from (table, page, URL)."
        ): "Doe (2024), Table 1.",
    }
    text = spec.read_text()
    for old, new in fixes.items():
        assert old in text
        text = text.replace(old, new)
    spec.write_text(text)
    res = validate()
    assert res.returncode == 1 and "scales.alpha.norms[0].source" in res.stderr
    assert "citation" not in res.stderr and "license" not in res.stderr
    spec.write_text(text.replace("REPLACE: the publication the norms come from", "Doe (2024)"))
    res = validate()
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("ok: task 'demo'")


def test_the_scaffold_spec_points_to_the_page_that_lists_its_fields(tmp_path):
    """The scaffold's instrument.yaml sends authors to the instrument page (issue 31: it named
    a CONTRIBUTING.md that no longer lists the fields), and that page's spec reference lists
    every top-level field the scaffold writes."""
    import re

    import yaml

    new_plugin("demo", tmp_path)
    spec = (
        tmp_path / "psymetrics-plugin-demo/psymetrics_plugin_demo/instruments/demo/instrument.yaml"
    )
    text = spec.read_text()
    assert "docs/plugins/instrument.md" in text and "CONTRIBUTING" not in text
    page = (Path(__file__).resolve().parents[2] / "docs/plugins/instrument.md").read_text()
    reference = page.split("## Instrument spec reference", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_]+)", reference, re.M))
    assert set(yaml.safe_load(text)) - listed == set()
