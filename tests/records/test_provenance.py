"""Provenance file hashes and the git commit (psymetrics_core/provenance.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from psymetrics_core.records.provenance import git_commit


def test_large_file_hashes_are_memoised_across_runs_and_invalidated_by_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Model weights are hashed once per (size, mtime, inode); a changed file is re-hashed."""
    import hashlib
    import json
    import os

    from psymetrics_core.records import provenance

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    big = tmp_path / "weights.bin"
    big.write_bytes(os.urandom(5 << 20))
    truth = hashlib.sha256(big.read_bytes()).hexdigest()  # independent: hashlib on the bytes
    monkeypatch.setattr(provenance, "_HASHES", {})
    assert provenance.sha256_file(big) == truth
    memo_file = tmp_path / "cache" / "file-hashes.json"
    memo = json.loads(memo_file.read_text())
    assert memo[str(big.resolve())]["sha256"] == truth
    # a new process (empty in-process memo) trusts the memo: prove it by planting a value
    memo[str(big.resolve())]["sha256"] = "0" * 64  # a well-formed digest
    memo_file.write_text(json.dumps(memo))
    monkeypatch.setattr(provenance, "_HASHES", {})
    assert provenance.sha256_file(big) == "0" * 64
    # the file changes (same size, new mtime): re-hashed, memo updated
    big.write_bytes(os.urandom(5 << 20))
    os.utime(big, ns=(1, 1))
    monkeypatch.setattr(provenance, "_HASHES", {})
    fresh = hashlib.sha256(big.read_bytes()).hexdigest()
    assert provenance.sha256_file(big) == fresh != truth
    assert json.loads(memo_file.read_text())[str(big.resolve())]["sha256"] == fresh


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_git_head_and_dirty_match_git_itself(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert git_commit(repo) is None  # no commit yet
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    assert git_commit(repo) == {"commit": _git(repo, "rev-parse", "HEAD"), "dirty": False}
    (repo / "new.txt").write_text("untracked\n")
    assert git_commit(repo) == {"commit": _git(repo, "rev-parse", "HEAD"), "dirty": False}
    (repo / "a.txt").write_text("two\n")
    assert git_commit(repo) == {"commit": _git(repo, "rev-parse", "HEAD"), "dirty": True}
    assert git_commit(tmp_path / "elsewhere") is None  # not a checkout
