"""``installed``: plugin entry points and distribution versions remembered between processes.
Every answer is compared with ``importlib.metadata``'s own, for a fresh memo, a recalled one,
after (un)installing and re-installing a distribution, after editing a plugin's entry points
in place, and with damaged memos."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from psymetrics_core.pluginsys import installed
from psymetrics_core.pluginsys.loader import ENTRY_POINT_GROUP


def _truth(group: str = ENTRY_POINT_GROUP) -> list[tuple]:
    """importlib.metadata's answer, computed independently of the memo."""
    out = []
    for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
        meta = ep.dist.metadata if ep.dist is not None else None
        out.append((ep.name, ep.value, meta and meta["Name"], meta and meta["Version"]))
    return out


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _plugin(site: Path, mod: str, version: str = "0.1.0", entry: str | None = None) -> Path:
    """A small installed distribution with one psymetrics entry point."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{mod}.py").write_text("from psymetrics_core import hookimpl\n")
    info = site / f"{mod}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mod}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[psymetrics]\n{entry or mod} = {mod}\n")
    return info


def test_answers_are_importlib_metadatas_fresh_and_recalled(cache, monkeypatch):
    truth = _truth()
    assert len(truth) >= 13  # the repository's plugins
    for _ in range(2):  # written, then read back
        assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == truth
        for dist in ("pydantic", "pluggy", "psymetrics-core"):
            assert installed.version(dist) == metadata.version(dist)
    memo = json.loads((cache / "installed.json").read_text())["installs"]
    mine = memo[installed._fingerprint()]
    assert len(mine["groups"][ENTRY_POINT_GROUP]["entries"]) == len(truth)

    pydantic_version = metadata.version("pydantic")

    def no_scan(*a, **k):
        raise AssertionError("the memo should have answered")

    monkeypatch.setattr(metadata, "entry_points", no_scan)
    monkeypatch.setattr(metadata, "distribution", no_scan)
    assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == truth
    assert installed.version("pydantic") == pydantic_version


def test_a_missing_distribution_is_not_found(cache):
    with pytest.raises(metadata.PackageNotFoundError):
        installed.version("no-such-distribution-psym")


def test_installing_reinstalling_editing_and_removing_are_seen(cache, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    names = lambda: {e.name: e for e in installed.plugin_entries(ENTRY_POINT_GROUP)}  # noqa: E731
    assert "zz_new" not in names()
    info = _plugin(site, "zz_new")
    assert names()["zz_new"].version == "0.1.0"  # installed: a new folder
    # re-installed with the same version but another entry point name: the folder is new
    import shutil

    shutil.rmtree(info)
    _plugin(site, "zz_new", entry="zz_renamed")
    assert "zz_renamed" in names() and "zz_new" not in names()
    # the entry point edited in place (same folder): the file's stamp changed
    ep_file = site / "zz_new-0.1.0.dist-info" / "entry_points.txt"
    ep_file.write_text("[psymetrics]\nzz_edited = zz_new\n")
    assert "zz_edited" in names()
    assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == _truth()
    shutil.rmtree(site / "zz_new-0.1.0.dist-info")  # removed
    assert "zz_edited" not in names()
    assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == _truth()


def test_load_entry_follows_module_and_attributes():
    assert installed.load_entry("os.path:join") is os.path.join
    assert installed.load_entry("json") is json
    assert installed.load_entry(" os : path.join ") is os.path.join
    with pytest.raises(AttributeError):
        installed.load_entry("os:no_such_attribute")
    with pytest.raises(ModuleNotFoundError):
        installed.load_entry("no_such_module_psym:x")


def test_a_second_process_does_not_read_distribution_metadata(tmp_path):
    """With the memo, loading the plugins and the model's identity versions imports no
    importlib.metadata (its import and scan of every distribution)."""
    code = """
import sys
from psymetrics_core.pluginsys import installed
from psymetrics_core.pluginsys.loader import make_plugin_manager
pm, records = make_plugin_manager()
print(sum(r.status == "ok" for r in records), installed.version("torch"))
print("importlib.metadata" in sys.modules)
"""
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache")}
    outs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        ).stdout.split()  # fmt: skip
        for _ in range(2)
    ]
    assert outs[0][:2] == outs[1][:2] and int(outs[0][0]) >= 13
    assert outs[0][1] == metadata.version("torch")
    assert outs[0][2] == "True" and outs[1][2] == "False"


def test_each_installation_keeps_its_own_answer(cache, tmp_path, monkeypatch):
    """`psym` and `python -m psymetrics_core` see different sys.path (the script's folder,
    the working directory): both are remembered, neither evicts the other."""
    first = [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)]
    with monkeypatch.context() as m:
        m.syspath_prepend(str(tmp_path / "elsewhere"))
        assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == first
    monkeypatch.setattr(metadata, "entry_points", lambda **k: pytest.fail("scanned again"))
    assert [tuple(e) for e in installed.plugin_entries(ENTRY_POINT_GROUP)] == first
    assert len(json.loads((cache / "installed.json").read_text())["installs"]) == 2
