"""Benchmarks of issue 15, run by ``benchmarks/run.py``: local model speed against its floor,
model reload, a whole grid against the latency bound, and shards on two workers.

Every number is a ratio of two things measured side by side in the same run.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

_INSTALL_STATE = ("file-hashes.json",)


def fresh_cache(path: Path, root: Path) -> Path:
    """An empty response cache at ``path`` carrying what an installation computes once and
    keeps in ``root`` (the dequantised models, the ONNX layer graphs and the model-file hashes:
    see the README's cache section), as a second run on any machine has it."""
    path.mkdir(parents=True)
    (root / "models").mkdir(parents=True, exist_ok=True)  # a machine that never converted one
    (path / "models").symlink_to(root / "models", target_is_directory=True)
    for folder in ("onnx-graphs",):  # layer graphs, built once
        if (root / folder).is_dir():
            shutil.copytree(root / folder, path / folder)
    for name in _INSTALL_STATE:
        if (root / name).is_file():
            shutil.copyfile(root / name, path / name)
    return path


_RELOAD = """
import importlib, json, time
from psymetrics_core.api import session_or_default
be = session_or_default().make_backend("smollm2")
engine = be.scoring_engine()  # what --mode logprob scores with: onnxruntime on a CPU
t0 = time.perf_counter()
importlib.import_module(engine)
t1 = time.perf_counter()
assert be._native_engine() is not None
t2 = time.perf_counter()
print(json.dumps({"engine": engine, "imports": t1 - t0, "reload": t2 - t1}))
"""


def reload_times(env: dict[str, str]) -> dict[str, Any]:
    """A fresh process: import the option-scoring engine (ONNX Runtime on a CPU), then reload
    the converted SmolLM2 copy and its tokenizer as ``--mode logprob`` does (transformers is
    not imported). Best of three processes (the page cache is warm after the first)."""
    best: dict[str, Any] = {}
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", _RELOAD], env=env, capture_output=True, text=True, check=True
        ).stdout
        d = json.loads(out.strip().splitlines()[-1])
        best = {k: min(v, best.get(k, v)) if isinstance(v, float) else v for k, v in d.items()}
    return best


def startup_imports(env: dict[str, str]) -> dict[str, Any]:
    """Modules ``psym eval --help`` / ``psym plan --help`` import, and how long that takes."""
    out: dict[str, Any] = {}
    for cmd in ("eval", "run"):
        best = None
        for _ in range(3):
            start = time.perf_counter()
            r = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "psymetrics_core", cmd, "--help"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            wall = time.perf_counter() - start
            best = wall if best is None else min(best, wall)
        loaded = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines()}
        heavy = [
            m
            for m in ("torch", "transformers", "numpy", "scipy", "pandas", "aiohttp")
            if m in loaded
        ]
        out[cmd] = {"seconds": best, "heavy_imports": heavy}
    return out


def _logprob_prompts(tasks: tuple[str, ...], limit: int | None, **options: Any) -> list[list[Any]]:
    """The logprob prompts of each task, as psym renders them (recorded, no model call), one
    list per task (``options``: more of ``evaluate``'s, e.g. ``population``)."""
    from psymetrics_core.administer.runner import evaluate
    from psymetrics_core.backends.base import GenerationSettings
    from psymetrics_core.base.types import Completion
    from psymetrics_core.pluginsys.session import Session

    groups: list[list[Any]] = []

    class Recorder:
        name = "recorder"
        chunk_size = 1_000_000

        def identity(self) -> dict[str, Any]:
            return {"backend": "recorder"}

        def option_logprobs(
            self, prompts: Any, settings: GenerationSettings, progress: Any = None
        ) -> list[Completion]:
            groups.append(list(prompts))
            return [Completion(option_logprobs=tuple(0.0 for _ in p.options)) for p in prompts]

    session = Session()
    per_task = []
    for t in tasks:  # one group per task: what a cached ``psym eval`` sends (scheduler.py)
        groups.clear()
        evaluate(
            [t],
            mode="logprob",
            limit=limit,
            session=session,
            backend=Recorder(),
            cache=False,
            **options,
        )
        per_task.append([p for g in groups for p in g])
    return per_task


def floor_seconds(be: Any, groups: list[list[Any]]) -> float:
    """One batched forward per task with the task's shared prefix computed once (no Python
    per-row work, tokenisation excluded): the hardware floor of option scoring."""
    import copy

    import torch
    from psymetrics_plugin_hf.hf_fast import _common_prefix, _rows

    model = be._model
    prepared = []
    for prompts in groups:
        rows = _rows(be, prompts)
        n = _common_prefix(rows)
        width = max(len(r.tokens) for r in rows) - n
        pad = be._tok.pad_token_id or 0
        ids = torch.tensor([r.tokens[n:] + [pad] * (width - len(r.tokens) + n) for r in rows])
        keep = torch.tensor(sorted({p - n for r in rows for p, _, _ in r.reads}))
        prepared.append((torch.tensor([rows[0].tokens[:n]]), ids, keep))
    start = time.perf_counter()
    with torch.inference_mode():
        for prefix, ids, keep in prepared:
            past = model(input_ids=prefix, use_cache=True).past_key_values
            past = copy.deepcopy(past)
            past.batch_repeat_interleave(ids.shape[0])
            model(input_ids=ids, past_key_values=past, logits_to_keep=keep)
    return time.perf_counter() - start


def inference_vs_floor(limit: int | None) -> dict[str, Any]:
    """psym's ``option_logprobs`` on bfi+mfq against :func:`floor_seconds`, best of 3 each."""
    from psymetrics_core.api import session_or_default
    from psymetrics_core.backends.base import GenerationSettings

    be = session_or_default().make_backend("smollm2")
    be._load()
    groups = _logprob_prompts(("bfi", "mfq"), limit)
    settings = GenerationSettings(mode="logprob")
    for g in groups:  # warm-up (allocator, kernels)
        be.option_logprobs(g[:4], settings)
    ours, floor = [], []
    for _ in range(3):
        start = time.perf_counter()
        for g in groups:
            be.option_logprobs(g, settings)
        ours.append(time.perf_counter() - start)
        floor.append(floor_seconds(be, groups))
    n = sum(len(g) for g in groups)
    return {"items": n, "psym_s": min(ours), "floor_s": min(floor), "ratio": min(ours) / min(floor)}


def compute_bound(limit: int | None) -> dict[str, Any]:
    """The arithmetic of option scoring on bfi+mfq at this machine's matrix-multiply peak.

    With perfect prefix sharing every distinct token prefix of the scored rows (the nodes of
    their token trie) is computed once; each costs two FLOPs per weight of the transformer
    blocks, and each prompt one vocabulary projection. The peak is the best float32 matrix
    multiply of the MLP's shape on this machine's threads, measured here.
    """
    import torch
    from psymetrics_plugin_hf.hf_fast import _rows

    from psymetrics_core.api import session_or_default

    be = session_or_default().make_backend("smollm2")
    engine = be._native_engine()[0]
    groups = _logprob_prompts(("bfi", "mfq"), limit)
    tokens = prompts = 0
    for prompts_of_task in groups:
        rows = _rows(be, prompts_of_task)
        tokens += len({tuple(r.tokens[:i]) for r in rows for i in range(1, len(r.tokens) + 1)})
        prompts += len(prompts_of_task)
    # the matrices of the blocks (the norms' vectors are not multiplied)
    block_weights = sum(
        math.prod(w.shape) for layer in engine.layers for w in layer.values() if len(w.shape) == 2
    )
    flops = 2 * block_weights * tokens + 2 * math.prod(engine.lm_head.shape) * prompts
    h = engine.shape.hidden
    sh = max(w.shape[0] for w in engine.layers[0].values() if len(w.shape) == 2)  # the MLP's
    a, b = torch.randn(2048, h), torch.randn(sh, h)
    best = float("inf")
    for _ in range(20):
        start = time.perf_counter()
        a @ b.T
        best = min(best, time.perf_counter() - start)
    peak = 2 * 2048 * h * sh / best
    return {"tokens": tokens, "flops": flops, "peak_flops": peak, "seconds": flops / peak}


def _start_server(latency: float) -> tuple[Any, str]:
    sys.path.insert(0, str(REPO))
    from benchmarks.latency_server import LatencyServer

    srv = LatencyServer(latency=latency)
    srv.__enter__()
    return srv, srv.base_url


def server_process(latency: float) -> tuple[subprocess.Popen[bytes], str]:
    """``benchmarks/latency_server.py`` in its own process (as a real server would be: its
    threads do not share this process's interpreter with the client)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.latency_server",
            "--latency",
            str(latency),
            "--port",
            str(port),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                break
        except OSError:
            time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}/v1"


def timed_stream(
    latency: float, concurrency: int, env_cache: Path, tasks: list[str], **options: Any
) -> dict[str, Any]:
    """``evaluate`` of ``tasks`` (with ``options``) against the loopback server adding
    ``latency`` per request, at ``concurrency``, with the response cache in ``env_cache``; the
    plugins are loaded before the clock starts (a process-wide one-off). The requests are
    counted by the server; returns them with the wall time and the share of the bound."""
    import urllib.request

    from psymetrics_core.administer.runner import evaluate
    from psymetrics_core.pluginsys.session import Session

    session = Session()
    session.instruments()
    proc, base = server_process(latency)
    old = os.environ.get("PSYM_CACHE_DIR")
    os.environ["PSYM_CACHE_DIR"] = str(env_cache)
    try:
        start = time.perf_counter()
        evaluate(
            tasks,
            model="openai-chat",
            model_args=f"base_url={base},model=stub",
            concurrency=concurrency,
            session=session,
            **options,
        )
        wall = time.perf_counter() - start
        with urllib.request.urlopen(f"{base}/stats", timeout=10) as resp:
            stats = json.loads(resp.read())
    finally:
        proc.terminate()
        proc.wait()
        if old is None:
            os.environ.pop("PSYM_CACHE_DIR", None)
        else:
            os.environ["PSYM_CACHE_DIR"] = old
    n = int(stats["requests"])
    bound = concurrency / latency
    return {
        "requests": n,
        "wall_s": wall,
        "throughput": n / wall,
        "bound": bound,
        "of_bound": n / wall / bound,
        "server_peak": stats["peak"],
    }


def grid_throughput(
    latency: float, concurrency: int, env_cache: Path, *, cache: bool = True
) -> dict[str, Any]:
    """A bfi,mfq,asi x 2 conditions x 3 repeats grid (``timed_stream``), with a fresh response
    cache or with none (``cache=False``, as ``--no-cache``)."""
    return timed_stream(
        latency,
        concurrency,
        env_cache,
        ["bfi", "mfq", "asi"],
        conditions=["original", "reversed-options"],
        repeats=3,
        temperature=0.7,
        cache=cache,
    )


def _shard_plan_args(base: str, plan: Path) -> list[str]:
    """`psym plan` arguments for the shard benchmark: bfi,mfq, 2 conditions, 2 repeats, 25 items."""
    head = "plan --tasks bfi,mfq --model openai-chat --model-args".split()
    tail = (
        "--condition original --condition reversed-options --repeats 2 --temperature 0.7 "
        "--limit 25 --output"
    ).split()
    return [*head, f"base_url={base},model=stub,concurrency=2", *tail, str(plan)]


def shard_speedup(latency: float, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """A latency-bound plan (concurrency 2) as one process vs 2 shard processes + merge."""
    srv, base = _start_server(latency)
    psym = [sys.executable, "-m", "psymetrics_core"]
    try:
        plan = work / "shard-plan.jsonl"
        subprocess.run(
            psym + _shard_plan_args(base, plan), env=env, check=True, capture_output=True
        )

        def run(args: list[str], cache: str) -> subprocess.Popen[bytes]:
            root = Path(env["PSYM_CACHE_DIR"])
            e = {**env, "PSYM_CACHE_DIR": str(fresh_cache(work / cache, root))}
            return subprocess.Popen(
                psym + args, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )

        start = time.perf_counter()
        assert run(["run", str(plan), "--output", str(work / "one")], "c1").wait() == 0
        single = time.perf_counter() - start
        before = srv.requests
        start = time.perf_counter()
        procs = [
            run(["run", str(plan), "--shard", f"{i}/2", "--output", str(work / f"s{i}")], f"c2-{i}")
            for i in (1, 2)
        ]
        assert all(p.wait() == 0 for p in procs)
        merge = ["merge", str(work / "s1"), str(work / "s2"), "--output", str(work / "merged")]
        assert run(merge, "c3").wait() == 0
        sharded = time.perf_counter() - start
        requests = srv.requests - before
    finally:
        srv.__exit__()
    one, merged = (work / d / "samples.jsonl" for d in ("one", "merged"))
    same = one.read_text() == merged.read_text()
    return {
        "requests": requests,
        "single_s": single,
        "sharded_s": sharded,
        "speedup": single / sharded,
        "identical_samples": same,
    }
