"""Response cache: every model response is stored in SQLite before it is used.

A response is keyed by (model identity, rendered request, sampling settings, seed), so re-running
a command makes no model calls and a run killed half-way repeats none of its finished requests.
The database lives in ``cache_dir()/responses.sqlite3`` (``$PSYM_CACHE_DIR`` or the user cache
directory); WAL journaling and a busy timeout let several runs write to it at once.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .backends.base import GenerationSettings, Reporter
from .backends.local_model import cache_dir
from .errors import PsymError
from .types import Completion, Prompt

__all__ = [
    "ResponseCache",
    "CachedBackend",
    "CacheStats",
    "cache_path",
    "request_key",
    "model_identity",
]

DB_NAME = "responses.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""
# identity fields that never change a response (speed knobs, library versions stay in)
_VOLATILE = ("batch_size", "concurrency", "max_retries", "timeout", "threads", "prefix_cache")


def cache_path() -> Path:
    """Where the response database is: ``<cache dir>/responses.sqlite3``."""
    return cache_dir() / DB_NAME


def model_identity(backend: Any) -> dict[str, Any]:
    """The part of a backend's identity that determines its responses (no speed knobs)."""
    ident = backend.cache_identity() if hasattr(backend, "cache_identity") else backend.identity()
    return {k: v for k, v in dict(ident).items() if k not in _VOLATILE}


def request_key(identity: dict[str, Any], prompt: Prompt, settings: GenerationSettings) -> str:
    """SHA-256 over model identity, the rendered request, sampling settings and seed."""
    payload = {
        "model": identity,
        "request": prompt.to_json(),
        "settings": settings.to_json(),  # mode, max_new_tokens, temperature, seed
    }
    if settings.mode == "logprob":  # sampling knobs do not change likelihoods
        payload["settings"] = {"mode": "logprob"}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _encode(c: Completion) -> str:
    lps = None
    if c.option_logprobs is not None:
        lps = [None if math.isinf(x) and x < 0 else x for x in c.option_logprobs]
    return json.dumps({"text": c.text, "option_logprobs": lps, "meta": c.meta}, ensure_ascii=False)


def _decode(blob: str) -> Completion:
    d = json.loads(blob)
    lps = d.get("option_logprobs")
    return Completion(
        text=d.get("text"),
        option_logprobs=(
            None if lps is None else tuple(float("-inf") if x is None else x for x in lps)
        ),
        meta=dict(d.get("meta") or {}),
    )


@dataclass
class CacheStats:
    """What ``psym cache info`` shows."""

    path: Path
    entries: int
    size_bytes: int
    models: dict[str, int]


class ResponseCache:
    """A SQLite store of responses, safe for concurrent writers (WAL + busy timeout)."""

    def __init__(self, path: Path | None = None, timeout: float = 60.0) -> None:
        self.path = Path(path) if path is not None else cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), timeout=timeout, check_same_thread=False, isolation_level=None
            )
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise PsymError(f"response cache {self.path}: {exc}") from exc
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, Completion]:
        """The cached completions among ``keys``."""
        out: dict[str, Completion] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT key, response FROM responses WHERE key IN ({marks})", part
                ).fetchall()
                out.update({k: _decode(r) for k, r in rows})
        return out

    def put(self, key: str, model: str, mode: str, completion: Completion) -> None:
        """Store one response durably (committed before this returns)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, mode, response, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, model, mode, _encode(completion), time.time()),
            )

    def stats(self) -> CacheStats:
        """Entry counts by model, and the size of the database files."""
        with self._lock:
            n = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            models = dict(
                self._db.execute(
                    "SELECT model, COUNT(*) FROM responses GROUP BY model ORDER BY 2 DESC"
                ).fetchall()
            )
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
            if p.exists()
        )
        return CacheStats(self.path, int(n), size, models)

    def clear(self) -> int:
        """Delete every stored response; returns how many there were."""
        with self._lock:
            n = int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            self._db.execute("DELETE FROM responses")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._db.execute("VACUUM")
        return n

    def rows(self, model: str | None = None) -> list[tuple[str, str, str, str, float]]:
        """Every stored (key, model, mode, response, created), optionally of one model label."""
        sql = "SELECT key, model, mode, response, created FROM responses"
        with self._lock:
            if model is None:
                return list(self._db.execute(sql + " ORDER BY key").fetchall())
            return list(self._db.execute(sql + " WHERE model = ? ORDER BY key", (model,)))

    def add_rows(self, rows: Sequence[tuple[str, str, str, str, float]]) -> int:
        """Store rows from :meth:`rows` of another cache, keeping entries already here."""
        with self._lock:
            before = self._db.total_changes
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR IGNORE INTO responses (key, model, mode, response, created) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            self._db.execute("COMMIT")
            return int(self._db.total_changes - before)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


class CachedBackend:
    """Wraps a backend: answers from the cache, asks the model only for what is missing.

    Each new response is committed as soon as the backend hands it over (per prompt where the
    backend accepts ``on_result``, else per call), before the pipeline uses it.
    """

    def __init__(self, backend: Any, cache: ResponseCache) -> None:
        self.backend = backend
        self.cache = cache
        self.identity_for_key = model_identity(backend)
        self.label = str(self.identity_for_key.get("model") or getattr(backend, "name", "?"))
        self.hits = 0
        self.misses = 0

    def summary(self) -> dict[str, Any]:
        """Hits and misses of this run, for ``results.json`` (misses = model calls made)."""
        return {"path": str(self.cache.path), "hits": self.hits, "misses": self.misses}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def identity(self) -> dict[str, Any]:
        """The wrapped backend's identity."""
        return dict(self.backend.identity())

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Text completions, from the cache where stored."""
        return self._call("generate", prompts, settings, progress)

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Option log-likelihoods, from the cache where stored."""
        return self._call("option_logprobs", prompts, settings, progress)

    def _call(
        self,
        method: str,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None,
    ) -> list[Completion]:
        keys = [request_key(self.identity_for_key, p, settings) for p in prompts]
        found = self.cache.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(prompts) - len(missing)
        self.misses += len(missing)
        if progress is not None and len(missing) < len(prompts):
            progress.advance(len(prompts) - len(missing))
        if missing:
            sub = [prompts[i] for i in missing]
            stored: set[int] = set()

            def on_result(j: int, comp: Completion) -> None:
                self.cache.put(keys[missing[j]], self.label, settings.mode, comp)
                stored.add(j)

            fn: Callable[..., list[Completion]] = getattr(self.backend, method)
            if getattr(self.backend, "accepts_on_result", False):
                fresh = fn(sub, settings, progress, on_result=on_result)
            else:
                fresh = fn(sub, settings, progress)
            for j, comp in enumerate(fresh):
                if j not in stored:
                    on_result(j, comp)
                found[keys[missing[j]]] = comp
        return [found[k] for k in keys]
