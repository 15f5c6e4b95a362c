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
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter, as_backend
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.paths import cache_dir
from psymetrics_core.base.types import Completion, Prompt

__all__ = [
    "WrappedBackend",
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
);
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL
);
"""
LEASE_SECONDS = 900.0  # a lease of a process on another host is trusted this long
_POLL = 0.05  # seconds between looks at a key another run is fetching
# identity fields that never change a response (speed knobs, library versions stay in)
_VOLATILE = ("batch_size", "concurrency", "max_retries", "timeout", "threads", "prefix_cache")


def cache_path() -> Path:
    """Where the response database is: ``<cache dir>/responses.sqlite3``."""
    return cache_dir() / DB_NAME


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: it exists
        return True
    return True


def model_identity(backend: Any) -> dict[str, Any]:
    """The part of a backend's identity that determines its responses (no speed knobs)."""
    ident = as_backend(backend).cache_identity()
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


def _held(row: tuple[Any, ...], host: str) -> bool:
    """Whether a lease row (owner, host, pid, expires) still binds other runs."""
    _owner, lease_host, pid, expires = row
    if lease_host == host:
        return _alive(int(pid))
    return float(expires) > time.time()


@dataclass
class CacheStats:
    """What ``psym cache info`` shows."""

    path: Path
    entries: int
    size_bytes: int
    models: dict[str, int]


def _enable_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Switch ``db`` to write-ahead logging. SQLite answers "database is locked" at once, without
    waiting for the busy timeout, when several processes switch a new file at the same moment
    (shards starting together on one cache): the switch is retried until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class ResponseCache:
    """A SQLite store of responses, safe for concurrent writers (WAL + busy timeout)."""

    def __init__(self, path: Path | None = None, timeout: float = 60.0) -> None:
        self.path = Path(path) if path is not None else cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and not self.path.is_file():
                raise PsymError(f"response cache {self.path}: is not a file")
            self._db = sqlite3.connect(
                str(self.path), timeout=timeout, check_same_thread=False, isolation_level=None
            )
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            _enable_wal(self._db, timeout)
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise PsymError(f"response cache {self.path}: {exc}") from None
        except OSError as exc:
            raise PsymError(
                f"response cache directory {self.path.parent}: {exc.strerror or exc} "
                "(set PSYM_CACHE_DIR to a writable folder, or use --no-cache)"
            ) from None
        self._lock = threading.Lock()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"

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
        """Store one response durably (committed before this returns) and end its lease."""
        self.put_many([(key, model, mode, completion)])

    def put_many(self, rows: Sequence[tuple[str, str, str, Completion]]) -> None:
        """Store (key, model, mode, completion) rows in one transaction (committed before this
        returns) and end their leases."""
        now = time.time()
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT OR REPLACE INTO responses (key, model, mode, response, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [(k, model, mode, _encode(c), now) for k, model, mode, c in rows],
                )
                self._db.executemany("DELETE FROM leases WHERE key = ?", [(r[0],) for r in rows])
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise PsymError(
                    f"response cache {self.path}: cannot store a response ({exc})"
                ) from None

    def lease(self, keys: Sequence[str]) -> tuple[list[str], list[str]]:
        """Claim ``keys`` for this process: (claimed by us, being fetched by another run).

        A key already stored is in neither list. Leases of dead processes (same host) and
        expired leases are taken over.
        """
        mine: list[str] = []
        theirs: list[str] = []
        host = socket.gethostname()
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for key in dict.fromkeys(keys):
                    if self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone():
                        continue
                    row = self._db.execute(
                        "SELECT owner, host, pid, expires FROM leases WHERE key = ?", (key,)
                    ).fetchone()
                    if row is not None and row[0] != self.owner and _held(row, host):
                        theirs.append(key)
                        continue
                    self._db.execute(
                        "INSERT OR REPLACE INTO leases (key, owner, host, pid, expires) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (key, self.owner, host, os.getpid(), time.time() + LEASE_SECONDS),
                    )
                    mine.append(key)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise PsymError(f"response cache {self.path}: {exc}") from None
        return mine, theirs

    def release(self, keys: Sequence[str]) -> None:
        """End this process's leases on ``keys`` (the requests failed or were not made)."""
        with self._lock:
            try:
                for start in range(0, len(keys), 500):
                    part = list(keys[start : start + 500])
                    marks = ",".join("?" * len(part))
                    self._db.execute(
                        f"DELETE FROM leases WHERE owner = ? AND key IN ({marks})",
                        [self.owner, *part],
                    )
            except sqlite3.Error:
                pass  # a lease left behind expires with its process

    def _rollback(self) -> None:
        try:
            self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

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
            self._db.execute("DELETE FROM leases")
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


class WrappedBackend(Backend):
    """A backend in front of another (the cache's, the run stream's): the wrapped backend's
    name, declared capabilities, concurrency, usage and identities are this object's."""

    accepts_on_result = False

    def __init__(self, backend: Any) -> None:
        self.backend = as_backend(backend)
        self.identity_for_key = model_identity(self.backend)
        self.name = self.backend.name
        self.chunk_size = self.backend.chunk_size
        self.supports_concurrency = self.backend.supports_concurrency
        self.concurrency = self.backend.concurrency
        self.supports_logprobs = self.backend.supports_logprobs
        self.supports_images = self.backend.supports_images
        self.supports_continuations = self.backend.supports_continuations
        self.supports_turn_end = self.backend.supports_turn_end

    def continuation_refusal(self) -> str:
        """The wrapped backend's own line refusing a continuation."""
        return self.backend.continuation_refusal()

    def turn_end_refusal(self) -> str:
        """The wrapped backend's own line refusing a whole reply (it may name an argument)."""
        return self.backend.turn_end_refusal()

    def set_concurrency(self, n: int) -> None:
        """Bound the wrapped backend's requests in flight."""
        self.backend.set_concurrency(n)
        self.concurrency = self.backend.concurrency

    def usage(self) -> dict[str, int] | None:
        """The wrapped backend's token usage."""
        return self.backend.usage()

    def identity(self) -> dict[str, Any]:
        """The wrapped backend's identity."""
        return dict(self.backend.identity())

    def cache_identity(self) -> dict[str, Any]:
        """The wrapped backend's cache identity."""
        return self.backend.cache_identity()


class CachedBackend(WrappedBackend):
    """Wraps a backend: answers from the cache, asks the model only for what is missing.

    Each new response is committed as soon as the backend hands it over (per prompt where the
    backend accepts ``on_result``, else per call), before the pipeline uses it. The wrapped
    backend's declared capabilities (``chunk_size``, ``concurrency``, ``usage()``, ...) are
    this object's.
    """

    def __init__(self, backend: Any, cache: ResponseCache) -> None:
        super().__init__(backend)
        self.cache = cache
        self.label = str(self.identity_for_key.get("model") or self.backend.name)
        self.hits = 0
        self.misses = 0
        # a scheduler.Stream fetching requests of this run in the background (None: none)
        self.stream: Any = None

    def summary(self) -> dict[str, Any]:
        """Hits and misses of this run, for ``results.json`` (misses = model calls made)."""
        return {"path": str(self.cache.path), "hits": self.hits, "misses": self.misses}

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
        streamed: set[str] = set()  # asked of the model by this run's stream: misses
        if self.stream is not None:  # wait for this run's own background stream first
            streamed = self.stream.wait_for(keys)
        count = Counter(keys)
        found = self.cache.get_many(keys)
        streamed &= found.keys()
        shown = set(found)  # keys whose positions the progress bar has counted
        # the stream advanced the bar for its own responses as they arrived
        told = self.stream.reported(keys, progress) if self.stream is not None else set()
        if progress is not None and shown - told:
            progress.advance(sum(count[k] for k in shown - told))
        first: dict[str, int] = {}  # each distinct missing request, fetched at most once
        for i, k in enumerate(keys):
            if k not in found:
                first.setdefault(k, i)
        fetched = 0
        while first:
            mine, theirs = self.cache.lease(list(first))
            if mine:
                self._fetch(
                    method, [(k, prompts[first[k]]) for k in mine], settings, found, progress
                )
                fetched += len(mine)
                shown.update(mine)  # the backend advanced the bar once for each
                extra = sum(count[k] - 1 for k in mine)
                if progress is not None and extra:
                    progress.advance(extra)
            elif theirs:  # another run is fetching these right now: wait for its answers
                time.sleep(_POLL)
            found.update(self.cache.get_many(list(first)))
            new = [k for k in first if k in found and k not in shown]
            if progress is not None and new:
                progress.advance(sum(count[k] for k in new))
            shown.update(new)
            first = {k: i for k, i in first.items() if k not in found}
            if first and not mine and not theirs:  # neither stored nor leased: retry the lease
                time.sleep(_POLL)
        self.misses += fetched + len(streamed)
        self.hits += len(keys) - fetched - len(streamed)
        return [found[k] for k in keys]

    def _fetch(
        self,
        method: str,
        todo: list[tuple[str, Prompt]],
        settings: GenerationSettings,
        found: dict[str, Completion],
        progress: Reporter | None,
    ) -> None:
        """Ask the model for the leased ``todo`` requests, storing each as it arrives."""
        stored: set[int] = set()

        def on_result(j: int, comp: Completion) -> None:
            self.cache.put(todo[j][0], self.label, settings.mode, comp)
            found[todo[j][0]] = comp
            stored.add(j)

        sub = [p for _, p in todo]
        fn: Callable[..., list[Completion]] = (
            self.backend.generate if method == "generate" else self.backend.option_logprobs
        )
        try:
            if self.backend.accepts_on_result:
                fresh = fn(sub, settings, progress, on_result=on_result)
            else:
                fresh = fn(sub, settings, progress)
            for j, comp in enumerate(fresh):
                if j not in stored:
                    on_result(j, comp)
        finally:
            self.cache.release([k for j, (k, _) in enumerate(todo) if j not in stored])
