"""Provenance of a run for ``results.json``: command line, git commit, sha256 of files used.

``results.json`` gets ``provenance: {command, git_commit, git_dirty, files: [{role, path,
sha256, bytes}]}``. Files: the model weights (a GGUF or safetensors file of a local backend),
every instrument spec and item CSV, ``--items`` texts, persona files and behaviour-task data
files. Secrets in the command line (``api_key=...``, ``--token X``) are replaced by ``***``.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.paths import cache_dir
from psymetrics_core.base.reading import load_yaml
from psymetrics_core.base.redaction import redact_url
from psymetrics_core.base.writing import store_quietly

__all__ = ["command_line", "git_commit", "sha256_file", "file_records", "run_provenance"]

_SECRET = re.compile(r"(?i)((?:api[_-]?key|token|secret|password|authorization)[^=\s,]*=)([^,\s]+)")
_SECRET_FLAG = re.compile(r"(?i)^--?(api[_-]?key|token|secret|password)$")
_URL_USERINFO = re.compile(r"(://)[^/@\s,]+@")  # user:key@ inside a URL
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s,]+")  # a URL inside an argument
_HASHES: dict[tuple[str, int, int], str] = {}


def command_line(argv: Sequence[str] | None = None) -> list[str]:
    """The command line that started this process, secrets redacted."""
    args = list(sys.argv if argv is None else argv)
    out: list[str] = []
    hide_next = False
    for i, a in enumerate(args):
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        if i == 0:
            a = Path(a).name
        hide_next = bool(_SECRET_FLAG.match(a))
        a = _URL.sub(lambda m: redact_url(m.group(0)), _URL_USERINFO.sub(r"\1***@", a))
        out.append(_SECRET.sub(lambda m: m.group(1) + "***", a))
    return out


def git_commit(path: Path | None = None) -> dict[str, Any] | None:
    """HEAD commit (and whether the tree is dirty) of the checkout psymetrics runs from."""
    where = path or Path(__file__).resolve().parents[2]
    if not (where / ".git").exists():
        return None
    try:  # one call: the header line names HEAD, every other line is a changed tracked file
        out = subprocess.run(
            [
                "git",
                "-C",
                str(where),
                "status",
                "--porcelain=v2",
                "--branch",
                "--untracked-files=no",
            ],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    heads = [x.split()[-1] for x in out if x.startswith("# branch.oid ")]
    if not heads or not re.fullmatch(r"[0-9a-f]{40,64}", heads[0]):
        return None  # no commit yet
    head, dirty = heads[0], [x for x in out if not x.startswith("#")]
    return {"commit": head, "dirty": bool(dirty)}


_MEMO_MIN_BYTES = 4 << 20  # files this large (model weights) keep their hash across runs
_MEMO_FILE = "file-hashes.json"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _read_memo() -> dict[str, Any]:
    """The memo of large files' hashes (empty when absent, unreadable or malformed)."""
    try:
        data = json.loads((cache_dir() / _MEMO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_memo(memo: dict[str, Any]) -> None:
    """Replace the memo atomically; a read-only or full cache only costs hashing again."""
    store_quietly(cache_dir() / _MEMO_FILE, json.dumps(memo, sort_keys=True))


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, memoised by path, size, modification time and inode: in this
    process for every file, and in the cache directory (``file-hashes.json``) for files of
    4 MiB or more (model weights), so a run does not re-read a model it has hashed before."""
    st = path.stat()
    resolved = str(path.resolve())
    key = (resolved, st.st_size, st.st_mtime_ns)
    if key in _HASHES:
        return _HASHES[key]
    stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
    memo = _read_memo() if st.st_size >= _MEMO_MIN_BYTES else None
    entry = memo.get(resolved) if memo is not None else None
    if (
        isinstance(entry, dict)
        and entry.get("stamp") == stamp
        and _SHA256.fullmatch(str(entry.get("sha256")))
    ):
        _HASHES[key] = entry["sha256"]
        return _HASHES[key]
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    _HASHES[key] = h.hexdigest()
    if memo is not None:
        memo[resolved] = {"stamp": stamp, "sha256": _HASHES[key]}
        _write_memo(memo)
    return _HASHES[key]


def _model_files(identity: Mapping[str, Any]) -> list[Path]:
    pretrained = identity.get("pretrained") or identity.get("model_path") or identity.get("path")
    if not pretrained:
        return []
    p = Path(str(pretrained))
    gguf = identity.get("gguf_file")
    if p.is_dir() and gguf and (p / str(gguf)).is_file():
        return [p / str(gguf)]
    if p.is_file():
        return [p]
    if p.is_dir():
        return sorted(f for f in p.iterdir() if f.suffix in (".gguf", ".safetensors", ".bin"))
    return []


def _spec_files(spec: Path, form_files: Mapping[str, str]) -> list[Path]:
    """The spec and its item CSVs (from the loaded instrument, else read from the spec)."""
    files = [spec]
    if form_files:
        return files + [spec.parent / rel for rel in form_files.values()]
    try:
        forms = (load_yaml(spec) or {}).get("forms") or {}
    except (OSError, ValueError, AttributeError, PsymError):
        return files
    if isinstance(forms, dict):
        files += [spec.parent / str(rel) for rel in forms.values()]
    return files


def file_records(
    identity: Mapping[str, Any] | None,
    instruments: Iterable[Any] = (),
    item_files: Mapping[str, str | Path] | None = None,
    condition_args: Iterable[str] = (),
    task_options: Mapping[str, Mapping[str, Any]] | None = None,
    other: Iterable[tuple[str, Path]] = (),
) -> list[dict[str, Any]]:
    """sha256 records of every existing file a run used, each listed once (``other``: more
    (role, path) pairs, e.g. a population file and its persona template)."""
    found: list[tuple[str, Path]] = [("model", f) for f in _model_files(identity or {})]
    for inst in instruments:
        if getattr(inst, "spec_path", None):
            spec_files = _spec_files(Path(inst.spec_path), getattr(inst, "form_files", {}))
            found += [(f"items:{inst.id}", f) for f in spec_files]
    found += [(f"item texts:{k}", Path(str(v))) for k, v in (item_files or {}).items()]
    for arg in condition_args:
        _, _, value = arg.partition("=")
        if value and Path(value).is_file():
            found.append(("persona/condition", Path(value)))
    for task, opts in (task_options or {}).items():
        for key, value in (opts or {}).items():
            if isinstance(value, str | Path) and value and Path(str(value)).is_file():
                found.append((f"data:{task}.{key}", Path(str(value))))
    found += [(role, Path(path)) for role, path in other]
    out, seen = [], set()
    for role, path in found:
        if not path.is_file() or path.resolve() in seen:
            continue
        seen.add(path.resolve())
        out.append(
            {
                "role": role,
                "path": str(path),
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
            }
        )
    return out


def run_provenance(
    identity: Mapping[str, Any] | None,
    instruments: Iterable[Any] = (),
    item_files: Mapping[str, str | Path] | None = None,
    condition_args: Iterable[str] = (),
    task_options: Mapping[str, Mapping[str, Any]] | None = None,
    argv: Sequence[str] | None = None,
    other: Iterable[tuple[str, Path]] = (),
) -> dict[str, Any]:
    """The ``provenance`` record of ``results.json``."""
    git = git_commit()
    return {
        "command": command_line(argv),
        "git_commit": git["commit"] if git else None,
        "git_dirty": git["dirty"] if git else None,
        "files": file_records(
            identity, instruments, item_files, condition_args, task_options, other
        ),
    }
