"""One request stream per run: every prompt of every (task, cell, repeat) in one stream.

Cells run one after another, so an API backend would drain its ``--concurrency`` slots at the
end of every cell (and of every repeat's seed) and a local model would batch only within a
cell. Before the cells run, :func:`start_stream` asks every unit's kind for the unit's requests
(``TaskKind.requests``: the prompts rendered, nothing sent, nothing scored) and sends them from
a background thread through the backend's ``answer_mixed``: one pool of ``concurrency``
requests in flight across every task, cell and seed (local models: one call per task and
sampling setting, so the task's prompt prefix is shared).

Where the responses go does not change the stream. With a response cache the requests are
claimed in it under a second owner (a cache lease, as a concurrent run would) and each response
is stored in the cache as it arrives; the run's ``CachedBackend`` reads them there. Without one
(``--no-cache``) the stream keeps each response in memory until every cell that listed it has
read it, through the run's :class:`StreamedBackend`; nothing is written to disk.

Meanwhile the cells run exactly as before, in order: the run's backend waits for the streamed
requests (on the stream's condition, not by polling), so samples are written cell by cell as
their answers arrive, and samples, scores and their order are those of the cell-by-cell run.

Only units whose kind lists their requests ahead (the built-in ``questionnaire`` kind given item
by item) are streamed: other kinds' prompts may depend on earlier answers. A cell that is not
streamed waits for the stream to end first, so the backend never serves two callers. A request
a cell makes that the stream did not list is asked of the model by the cell itself.
``Stream.wait_for`` tells the cache which of its reads are this run's misses.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from psymetrics_core.backends.base import (
    Backend,
    GenerationSettings,
    Reporter,
    check_requests,
)
from psymetrics_core.backends.cache import (
    CachedBackend,
    ResponseCache,
    WrappedBackend,
    request_key,
)
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["Stream", "StreamedBackend", "start_stream"]


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
    # without a response cache: the responses kept for the cells, and how many of the cells'
    # listed requests still have to read each
    _held: dict[str, Completion] = field(default_factory=dict)
    _wanted: Counter[str] = field(default_factory=Counter)
    # the progress reporters of the cells that listed each request (once per listing): the
    # stream advances them as each response arrives, so a task's bar moves item by item
    _listeners: dict[str, list[Reporter]] = field(default_factory=dict)
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

    def take(self, keys: Sequence[str]) -> dict[str, Completion]:
        """Without a response cache: wait as :meth:`wait_for`, then hand out the responses the
        stream holds for ``keys``; one that every listed request has read is dropped."""
        self.wait_for(keys)
        with self._cond:
            got = {k: self._held[k] for k in keys if k in self._held}
            for k in keys:
                if k in got:
                    self._wanted[k] -= 1
                    if self._wanted[k] <= 0:
                        self._held.pop(k, None)
        return got

    def reported(self, keys: Sequence[str], progress: Reporter | None) -> set[str]:
        """The keys of ``keys`` the stream stored and advanced ``progress`` for as they
        arrived: a cell reading them must not advance its bar again."""
        if progress is None:
            return set()
        with self._cond:
            return {
                k
                for k in keys
                if k in self._stored and any(r is progress for r in self._listeners.get(k, ()))
            }

    def _report(self, keys: Sequence[str]) -> None:
        """Advance the reporters of the cells that listed ``keys`` (responses just stored)."""
        done: dict[int, tuple[Reporter, int]] = {}
        for k in keys:
            for rep in self._listeners.get(k, ()):
                done[id(rep)] = (rep, done.get(id(rep), (rep, 0))[1] + 1)
        for rep, n in done.values():
            rep.advance(n)

    def _keep(self, rows: Sequence[tuple[str, str, Completion]]) -> None:
        """Hold (key, mode, completion) rows for the cells (no response cache)."""
        with self._cond:
            self._held.update((k, c) for k, _, c in rows if self._wanted[k] > 0)

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
        with self._cond:
            self._held.clear()


class _Store(Protocol):
    """Where the stream's responses go: the response cache, or the stream's memory."""

    def claim(self, keys: list[str]) -> set[str]: ...
    def put(self, rows: list[tuple[str, str, Completion]]) -> None: ...
    def release(self, keys: list[str]) -> None: ...
    def close(self) -> None: ...


class _CacheStore:
    """The response cache, under a second owner: the cells wait for its leases."""

    def __init__(self, cached: CachedBackend) -> None:
        self.own = ResponseCache(cached.cache.path)
        self.label = cached.label

    def claim(self, keys: list[str]) -> set[str]:
        return set(self.own.lease(keys)[0])

    def put(self, rows: list[tuple[str, str, Completion]]) -> None:
        self.own.put_many([(key, self.label, mode, comp) for key, mode, comp in rows])

    def release(self, keys: list[str]) -> None:
        self.own.release(keys)

    def close(self) -> None:
        self.own.close()


class _MemoryStore:
    """The stream's own memory (no response cache): every request is this run's."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def claim(self, keys: list[str]) -> set[str]:
        return set(keys)

    def put(self, rows: list[tuple[str, str, Completion]]) -> None:
        self.stream._keep(rows)

    def release(self, keys: list[str]) -> None:
        pass

    def close(self) -> None:
        pass


class StreamedBackend(WrappedBackend):
    """What the tasks of a run without a response cache call: the requests the run's stream
    fetched are read from the stream (:meth:`Stream.take`), the rest asked of the model. The
    wrapped backend's declared capabilities are this object's."""

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self.stream: Stream | None = None  # set while the run's stream is open

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Text completions, from the stream where it fetched them."""
        return self._call(self.backend.generate, prompts, settings, progress)

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Option log-likelihoods, from the stream where it fetched them."""
        return self._call(self.backend.option_logprobs, prompts, settings, progress)

    def _call(
        self,
        fn: Callable[..., list[Completion]],
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None,
    ) -> list[Completion]:
        if self.stream is None:
            return list(fn(prompts, settings, progress))
        keys = [request_key(self.identity_for_key, p, settings) for p in prompts]
        got = self.stream.take(keys)
        out: list[Completion | None] = [got.get(k) for k in keys]
        reported = self.stream.reported(keys, progress)  # counted as they arrived
        if progress is not None and got:
            progress.advance(sum(1 for k in keys if k in got and k not in reported))
        rest = [i for i, c in enumerate(out) if c is None]
        if rest:  # not listed by the stream, or the stream stopped: the cell asks itself
            fresh = fn([prompts[i] for i in rest], settings, progress)
            for i, comp in zip(rest, fresh, strict=True):
                out[i] = comp
        return [c for c in out if c is not None]


def start_stream(runs: Sequence[tuple[Any, Any]], front: CachedBackend | StreamedBackend) -> Stream:
    """Claim and start sending the prompts of ``runs`` ((kind, CellRun) pairs, in run order)
    through the backend wrapped by ``front`` (the run's ``CachedBackend``, or its
    ``StreamedBackend`` where the run has no response cache)."""
    pool = front.backend.supports_concurrency
    groups: dict[tuple[Any, ...], list[tuple[str, Prompt, GenerationSettings]]] = {}
    covered: set[int] = set()
    wanted: Counter[str] = Counter()  # each request's listed reads (duplicates asked once)
    listeners: dict[str, list[Reporter]] = {}
    for kind, run in runs:
        requests = kind.requests(run)
        if requests is None:  # prompts that depend on earlier answers: the cell asks itself
            continue
        covered.add(id(run))
        for prompt, settings in requests:
            key = request_key(front.identity_for_key, prompt, settings)
            wanted[key] += 1
            if run.reporter is not None:
                listeners.setdefault(key, []).append(run.reporter)
            if wanted[key] == 1:
                group = () if pool else (run.task.id,)  # answer_mixed groups by settings
                groups.setdefault(group, []).append((key, prompt, settings))
    stream = Stream(covered, _wanted=wanted, _listeners=listeners)
    if not wanted:
        return stream
    # refused here, in one line, before any request is claimed or sent (as call_backend does)
    check_requests(front.backend, [(p, s) for g in groups.values() for _, p, s in g])
    store: _Store = _CacheStore(front) if isinstance(front, CachedBackend) else _MemoryStore(stream)
    mine = store.claim(list(wanted))  # claimed before any cell runs
    stream.claimed = mine
    todo = [[r for r in g if r[0] in mine] for g in groups.values()]
    stream._thread = threading.Thread(
        target=_send, args=(stream, front.backend, store, [g for g in todo if g]), daemon=True
    )
    stream._thread.start()
    return stream


def _send(
    stream: Stream,
    backend: Backend,
    store: _Store,
    groups: list[list[tuple[str, Prompt, GenerationSettings]]],
) -> None:
    arrived: queue.Queue[tuple[str, str, Completion] | None] = queue.Queue()
    writer = threading.Thread(target=_store, args=(stream, store, arrived), daemon=True)
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

            backend.answer_mixed([(p, s) for _, p, s in group], on_result)
    except _Stopped:
        pass
    except BaseException as exc:  # the cells fetch what is left themselves and fail there
        stream.error = exc
    finally:
        arrived.put(None)
        writer.join()
        store.release([k for g in groups for k, _, _ in g if k not in stream._stored])
        store.close()
        stream._mark(None)


def _store(
    stream: Stream,
    store: _Store,
    arrived: queue.Queue[tuple[str, str, Completion] | None],
) -> None:
    """Store the responses as they arrive (everything waiting at once: in the cache, one
    transaction) and tell the cells which are stored; ends at the ``None`` sentinel."""
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
            store.put(rows)
        except BaseException as exc:  # the cells fetch these themselves
            stream.error = stream.error or exc
            continue
        stream.fetched += len(rows)
        keys = [key for key, _, _ in rows]
        stream._mark(keys)
        try:
            stream._report(keys)
        except Exception as exc:  # a failing progress bar must not lose stored answers
            stream.error = stream.error or exc
