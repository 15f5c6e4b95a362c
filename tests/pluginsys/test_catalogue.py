"""The plugin catalogue (registry/plugins.yaml), `psym plugins available` and `psym install`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.catalogue import catalogue, find_entry, install_command

REPO = Path(__file__).resolve().parents[2]
CATALOGUE = REPO / "registry" / "plugins.yaml"


def _distributions() -> dict[str, set[str]]:
    """Every plugins/* distribution of the checkout with the task ids its specs declare."""
    out: dict[str, set[str]] = {}
    for pyproject in sorted(REPO.glob("plugins/*/pyproject.toml")):
        name = tomllib.loads(pyproject.read_text())["project"]["name"]
        tasks = set()
        for spec in pyproject.parent.glob("*/instruments/*/instrument.yaml"):
            tasks.add(str(yaml.safe_load(spec.read_text())["id"]))
        out[name] = tasks
    return out


def test_every_checkout_plugin_is_catalogued_with_its_tasks(fresh_plugins):
    entries = {e.distribution: e for e in catalogue(CATALOGUE)}
    dists = _distributions()
    assert {"psymetrics-plugin-bfi", "psymetrics-plugin-psychobench"} <= set(dists)
    registered: dict[str, set[str]] = {}
    for inst in fresh_plugins.instruments().values():
        if inst.plugin and inst.plugin.distribution:
            registered.setdefault(inst.plugin.distribution, set()).add(inst.id)
    for dist, tasks in dists.items():
        assert dist in entries, f"{dist} is missing from registry/plugins.yaml"
        # tasks from the shipped specs, plus any a code plugin registers when installed
        want = tasks | registered.get(dist, set())
        assert set(entries[dist].tasks) == want, dist


def test_catalogue_lists_the_known_plugins():
    entries = catalogue(CATALOGUE)
    names = {e.name: e for e in entries}
    expected = {
        "bfi": ["bfi", "bfi10"],
        "mfq": ["mfq"],
        "asi": ["asi"],
        "sr2k": ["sr2k"],
        "pvq": ["pvq40", "pvq21"],
        "sd3": ["sd3"],
        "mbti": ["16p"],
        "refletter": ["refletter"],
        "housing": ["housing"],
        "moral-advice": ["moral-advice"],
    }
    for name, tasks in expected.items():
        assert list(names[name].tasks) == tasks
        assert names[name].distribution == f"psymetrics-plugin-{name}"
    assert len(names["psychobench"].tasks) == 13
    for e in entries:
        assert e.licence and e.citation


def test_plugins_available_shows_installed_and_not(fresh_plugins):
    from psymetrics_core.cli import cli

    res = CliRunner().invoke(cli, ["plugins", "available", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.output)}
    assert rows["bfi"]["installed"] == "0.1.0"  # installed by `make setup`
    assert set(rows) == {e.name for e in catalogue(CATALOGUE)}
    plain = CliRunner().invoke(cli, ["plugins", "--json"])  # the group still lists installed
    assert plain.exit_code == 0 and '"name": "bfi"' in plain.output


def test_install_uses_the_checkout_then_the_index(tmp_path):
    entry = find_entry("psychobench", catalogue(CATALOGUE))
    assert install_command(entry, REPO) == [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-e",
        str(REPO / "plugins" / "psymetrics-plugin-psychobench"),
    ]
    # a checkout without that folder (or an installed core): from the package index
    assert install_command(entry, tmp_path) == [
        sys.executable,
        "-m",
        "pip",
        "install",
        "psymetrics-plugin-psychobench",
    ]
    # naming an index installs from it, even in a checkout; the URLs go to pip unchanged
    assert install_command(entry, REPO, "http://127.0.0.1:1/simple/", ("file:///x",)) == [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--index-url",
        "http://127.0.0.1:1/simple/",
        "--extra-index-url",
        "file:///x",
        "psymetrics-plugin-psychobench",
    ]
    assert find_entry("pb-gse", catalogue(CATALOGUE)).name == "psychobench"  # by task id
    with pytest.raises(PsymError, match="no plugin 'nosuch' in the catalogue"):
        find_entry("nosuch", catalogue(CATALOGUE))


def test_install_cli_dry_run():
    from psymetrics_core.cli import cli

    res = CliRunner().invoke(cli, ["install", "bfi", "--dry-run"])
    assert res.exit_code == 0
    local = str(REPO / "plugins" / "psymetrics-plugin-bfi")
    assert res.output.split() == [sys.executable, "-m", "pip", "install", "-e", local]


def test_install_cli_passes_the_index_to_pip():
    from psymetrics_core.cli import cli

    args = ["install", "asi", "--dry-run", "--index-url", "http://127.0.0.1:9/simple/"]
    res = CliRunner().invoke(cli, [*args, "--extra-index-url", "https://example.org/simple/"])
    assert res.exit_code == 0, res.output
    assert res.output.split() == [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--index-url",
        "http://127.0.0.1:9/simple/",
        "--extra-index-url",
        "https://example.org/simple/",
        "psymetrics-plugin-asi",
    ]


def test_packaged_catalogue_is_the_registry(tmp_path, monkeypatch):
    """No link inside the package: a checkout (editable install) reads registry/plugins.yaml, and
    a built package reads the copy setup.py puts beside catalogue.py (the wheel test checks it is
    registry/plugins.yaml)."""
    from psymetrics_core.pluginsys import catalogue as cat

    assert not any(p.is_symlink() for p in (REPO / "psymetrics_core").rglob("*"))
    assert not cat._PACKAGED.exists()  # only a built package has the copy
    monkeypatch.delenv("PSYM_CATALOGUE", raising=False)
    assert cat.catalogue_path().samefile(CATALOGUE)
    shipped = tmp_path / "plugins.yaml"
    shipped.write_bytes(CATALOGUE.read_bytes())
    monkeypatch.setattr(cat, "_PACKAGED", shipped)
    assert cat.catalogue_path() == shipped


def test_plugins_available_from_any_directory(tmp_path):
    """`psym plugins available` run outside the checkout reads the packaged catalogue."""
    env = {k: v for k, v in os.environ.items() if k != "PSYM_CATALOGUE"}
    psym = Path(sys.executable).with_name("psym")
    res = subprocess.run(
        [str(psym), "plugins", "available", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert {r["name"] for r in json.loads(res.stdout)} == {e.name for e in catalogue(CATALOGUE)}


def test_install_runs_pip(tmp_path, monkeypatch):
    """`psym install` really runs pip: reinstall the (already installed) bfi plugin, no deps."""
    from psymetrics_core.pluginsys import catalogue as cat

    calls = []
    real = cat.subprocess.call

    def spy(cmd):
        calls.append(cmd)
        return real([*cmd, "--no-deps", "--no-build-isolation", "-q"])

    monkeypatch.setattr(cat.subprocess, "call", spy)
    cmd, status = cat.install("bfi")
    assert status == 0 and calls == [cmd]


def test_bad_catalogue_is_a_one_line_error(tmp_path):
    bad = tmp_path / "plugins.yaml"
    bad.write_text("plugins:\n  - name: x\n    distribution: y\n")
    with pytest.raises(PsymError, match=r"plugins\[0\] \(x\) lacks 'tasks'"):
        catalogue(bad)


def test_install_outside_a_checkout_explains_find_links(tmp_path, monkeypatch):
    """Outside a checkout pip looks in the package index, where psymetrics is not published yet:
    the failure ends in one line saying how to install from built wheels (issue 31). pip runs
    for real, against an empty local index (nothing is installed, no network)."""
    from psymetrics_core.cli import cli
    from psymetrics_core.pluginsys import catalogue as cat

    monkeypatch.setattr(cat, "checkout_root", lambda: None)
    monkeypatch.setenv("PSYM_CATALOGUE", str(CATALOGUE))  # an installed core's packaged copy
    # pip installs into a fresh folder, so the plugin installed here does not satisfy it
    monkeypatch.setenv("PIP_TARGET", str(tmp_path / "target"))
    empty = tmp_path / "index"
    empty.mkdir()
    monkeypatch.setenv("PIP_INDEX_URL", empty.as_uri())  # pip's configured index, offline
    res = CliRunner().invoke(cli, ["install", "asi"])
    assert res.exit_code == 1
    message = str(res.exception)
    assert message.startswith("pip failed (exit 1):") and "\n" not in message
    assert "psym install asi --find-links dist" in message and "make dist" in message


def test_install_from_built_wheels(tmp_path):
    from psymetrics_core.cli import cli
    from psymetrics_core.pluginsys import catalogue as cat

    dist = tmp_path / "dist"
    dist.mkdir()
    res = CliRunner().invoke(cli, ["install", "asi", "--dry-run", "--find-links", str(dist)])
    assert res.exit_code == 0, res.output
    # wheels named: from them, even inside a checkout (no editable install)
    pip = [sys.executable, "-m", "pip", "install"]
    assert res.output.split() == [*pip, "--find-links", str(dist), "psymetrics-plugin-asi"]
    missing = CliRunner().invoke(cli, ["install", "asi", "--find-links", str(tmp_path / "no")])
    assert missing.exit_code == 1 and "--find-links" in str(missing.exception)
    # a failure with wheels or an index named gets no hint to name wheels
    assert "make dist" not in cat.install_failure("asi", ["pip", "--find-links", "d", "x"], 1)
    assert "make dist" not in cat.install_failure("asi", ["pip", "--index-url", "u", "x"], 1)
