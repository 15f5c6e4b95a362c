"""One request stream per run: every prompt of every (task, cell, repeat) in one stream.

Cells run one after another, so an API backend would drain its ``--concurrency`` slots at the
end of every cell (and of every repeat's seed) and a local model would batch only within a
cell. Before the cells run, :func:`start_stream` asks every unit's kind for the unit's requests
(``TaskKind.requests``: the prompts rendered, nothing sent, nothing scored), claims them
in the response cache under a second owner (a cache lease, as a concurrent run would) and sends
them from a background thread through the backend's ``answer_mixed``: one pool of
``concurrency`` requests in flight across every task, cell and seed (local models: one call per
task and sampling setting, so the task's prompt prefix is shared). Each response is stored in
the cache as it arrives.

Meanwhile the cells run exactly as before, in order: the run's ``CachedBackend`` waits for the
claimed requests (on the stream's condition, not by polling the cache), so samples are written
cell by cell as their answers arrive, and samples, scores and their order are those of the
cell-by-cell run.

Only runs with a response cache, and only units whose kind lists their requests ahead (the
built-in ``questionnaire`` kind given item by item), are streamed: other kinds' prompts may
depend on earlier answers. A cell that is not streamed waits for the stream to end first, so
the backend never serves two callers. The cells read what the stream fetched from the cache;
``Stream.wait_for`` tells the cache which of those reads are this run's misses.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from psymetrics_core.backends.base import GenerationSettings, check_requests
from psymetrics_core.backends.cache import CachedBackend, ResponseCache, request_key
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["Stream", "start_stream"]


class _Stopped(Exception):
    """Raised into the backend's pool when the run stops early: no further requests
    (``Backend.answer_mixed``: an exception from ``on_result`` stops further requests)."""


@dataclass
class Stream:
    """A stream sending in the background; ``close()`` ends it (see :func:`start_stream`)."""

    covered: set[int]  # id() of the CellRuns whose prompts the stream sends
    fetched: int = 0  # responses the stream received and stored
    error: BaseException | None = None
    claimed: set[str] = field(default_factory=set)  # cache keys this stream is fetching
    _stored: set[str] = field(default_factory=set)
    _handed: set[str] = field(default_factory=set)  # stored keys a cell has read already
    _finished: bool = False
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def wait_for(self, keys: Sequence[str]) -> set[str]:
        """Block until every key of ``keys`` the stream claimed is stored (or the stream
        ended): the run's ``CachedBackend`` calls this instead of polling the cache.

        Returns the keys of ``keys`` the stream stored that no cell has read before: the
        model was asked for them in this run, so the cache counts them as misses, not hits.
        """
        pending = self.claimed.intersection(keys)
        with self._cond:
            while not self._finished:
                pending -= self._stored
                if not pending:
                    break
                self._cond.wait(0.5)
            new = self._stored.intersection(keys) - self._handed
            self._handed |= new
        return new

    def _mark(self, keys: Sequence[str] | None) -> None:
        """Record ``keys`` as stored (None: the stream ended) and wake the waiting cells."""
        with self._cond:
            if keys is None:
                self._finished = True
            else:
                self._stored.update(keys)
            self._cond.notify_all()

    def wait(self) -> None:
        """Block until every claimed request is answered (or the stream failed)."""
        if self._thread is not None:
            self._thread.join()

    def before(self, run: Any) -> None:
        """Call before running ``run``: a cell the stream does not cover waits for it."""
        if id(run) not in self.covered:
            self.wait()

    def close(self) -> None:
        """Stop sending new requests, keep the ones in flight, and wait for them."""
        self._stop.set()
        self.wait()


def start_stream(runs: Sequence[tuple[Any, Any]], cached: CachedBackend) -> Stream:
    """Claim and start sending the prompts of ``runs`` ((kind, CellRun) pairs, in run order)
    through the backend wrapped by ``cached`` (the run's cached backend)."""
    pool = cached.backend.supports_concurrency
    groups: dict[tuple[Any, ...], list[tuple[str, Prompt, GenerationSettings]]] = {}
    covered: set[int] = set()
    seen: set[str] = set()
    for kind, run in runs:
        requests = kind.requests(run)
        if requests is None:  # prompts that depend on earlier answers: the cell asks itself
            continue
        covered.add(id(run))
        for prompt, settings in requests:
            key = request_key(cached.identity_for_key, prompt, settings)
            if key in seen:
                continue
            seen.add(key)
            group = () if pool else (run.task.id,)  # answer_mixed groups by settings
            groups.setdefault(group, []).append((key, prompt, settings))
    stream = Stream(covered)
    if not seen:
        return stream
    # refused here, in one line, before any request is claimed or sent (as call_backend does)
    check_requests(cached.backend, [(p, s) for g in groups.values() for _, p, s in g])
    own = ResponseCache(cached.cache.path)  # a second owner: the cells wait for its leases
    mine = set(own.lease(list(seen))[0])  # claimed before any cell runs
    stream.claimed = mine
    todo = [[r for r in g if r[0] in mine] for g in groups.values()]
    stream._thread = threading.Thread(
        target=_send, args=(stream, cached, own, [g for g in todo if g]), daemon=True
    )
    stream._thread.start()
    return stream


def _send(
    stream: Stream,
    cached: CachedBackend,
    own: ResponseCache,
    groups: list[list[tuple[str, Prompt, GenerationSettings]]],
) -> None:
    arrived: queue.Queue[tuple[str, str, Completion] | None] = queue.Queue()
    writer = threading.Thread(target=_store, args=(stream, cached, own, arrived), daemon=True)
    writer.start()  # commits what arrives, in small transactions, off the backend's thread
    try:
        for group in groups:
            if stream._stop.is_set():
                break

            def on_result(j: int, comp: Completion, group: Any = group) -> None:
                key, _, settings = group[j]
                arrived.put((key, settings.mode, comp))  # paid for: always stored
                if stream._stop.is_set():
                    raise _Stopped

            cached.backend.answer_mixed([(p, s) for _, p, s in group], on_result)
    except _Stopped:
        pass
    except BaseException as exc:  # the cells fetch what is left themselves and fail there
        stream.error = exc
    finally:
        arrived.put(None)
        writer.join()
        own.release([k for g in groups for k, _, _ in g if k not in stream._stored])
        own.close()
        stream._mark(None)


def _store(
    stream: Stream,
    cached: CachedBackend,
    own: ResponseCache,
    arrived: queue.Queue[tuple[str, str, Completion] | None],
) -> None:
    """Commit the responses as they arrive (everything waiting at once, in one transaction)
    and tell the cells which are stored; ends at the ``None`` sentinel."""
    done = False
    while not done:
        batch = [arrived.get()]
        while not arrived.empty() and len(batch) < 256:
            batch.append(arrived.get_nowait())
        done = batch[-1] is None
        rows = [b for b in batch if b is not None]
        if not rows:
            continue
        try:
            own.put_many([(key, cached.label, mode, comp) for key, mode, comp in rows])
        except BaseException as exc:  # the cells fetch these themselves
            stream.error = stream.error or exc
            continue
        stream.fetched += len(rows)
        stream._mark([key for key, _, _ in rows])
