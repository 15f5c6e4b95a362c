"""Benchmarks of issue 25 ("Scale"), run by ``benchmarks/run.py``: a population run against the
latency bound in one request stream, and ``psym analyze --responses`` of a population the size
of the state of the art's design (1,250 respondents x 419 items) in time and peak memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _personas(work: Path, n: int) -> Path:
    """A synthetic, licence-clean persona source built into a population file (``psym population
    build``), ``n`` respondents with a label each."""
    from psymetrics_core.study.population import BuildSpec, build_population, write_population

    src = work / "personas.jsonl"
    rows = [
        {
            "id": f"p{i:05d}",
            "persona": f"a person born in town {i} who enjoys hobby {i % 17}",
            "extraversion": i % 2,
        }
        for i in range(n)
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pop = work / "population.jsonl"
    write_population(pop, build_population(BuildSpec(source=src, licence="CC0-1.0")))
    return pop


def population_throughput(
    latency: float, concurrency: int, work: Path, respondents: int = 190
) -> dict[str, Any]:
    """``evaluate`` of bfi for every respondent of a population (``psym eval --population``) at
    ``concurrency`` against the loopback server, with a fresh response cache
    (``scale.timed_stream``)."""
    from benchmarks.scale import timed_stream

    work.mkdir(parents=True, exist_ok=True)
    pop = _personas(work, respondents)
    out = timed_stream(
        latency,
        concurrency,
        work / "cache",
        ["bfi"],
        population=pop,
        persona_template="serapio-garcia",
        output=work / "run",
    )
    size = (work / "run" / "results.json").stat().st_size
    return {"respondents": respondents, **out, "results_mb": size / 1e6}


_SPEC = """\
schema_version: 1
id: {task}
name: Synthetic {n_items}-item instrument (benchmarks/population.py)
version: "1"
citation: none (simulated for the benchmark)
license: {{status: written for the benchmark}}
item_source: generated
forms: {{original: items.csv}}
response_scales:
  default: {{min: 1, max: 5, labels: [one, two, three, four, five]}}
scales:
{scales}prompt: {{instruction: Answer.}}
"""


def write_instrument(
    folder: Path, task: str = "synth419", n_items: int = 419, seed: int = 7
) -> dict[str, list[tuple[str, bool]]]:
    """A questionnaire spec of ``n_items`` items over scales of 10-20 items (1-5 scale, about a
    quarter reverse-keyed) in ``folder/task`` (for ``PSYM_INSTRUMENTS_PATH=folder``); returns
    scale -> [(item id, reverse)]."""
    import numpy as np

    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) < n_items:
        sizes.append(int(rng.integers(10, 21)))
    sizes[-1] -= sum(sizes) - n_items
    if sizes[-1] < 10:  # fold a short tail into the scales before it (at most 20 items each)
        tail = sizes.pop()
        for _ in range(tail):
            sizes[min(range(len(sizes)), key=sizes.__getitem__)] += 1
    scales: dict[str, list[tuple[str, bool]]] = {}
    n = 0
    for s, size in enumerate(sizes):
        scales[f"s{s:02d}"] = [(str(n + j + 1), bool(rng.random() < 0.25)) for j in range(size)]
        n += size
    root = folder / task
    root.mkdir(parents=True, exist_ok=True)
    text = "".join(f"  {s}: {{method: mean}}\n" for s in scales)
    (root / "instrument.yaml").write_text(_SPEC.format(task=task, n_items=n_items, scales=text))
    rows = ["id,text,scale,reverse"] + [
        f"{i},statement {i},{s},{int(r)}" for s, its in scales.items() for i, r in its
    ]
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    return scales


def simulate_long(
    path: Path,
    scales: dict[str, list[tuple[str, bool]]],
    respondents: int = 1250,
    personas: int = 50,
    seed: int = 11,
) -> None:
    """Answers of ``respondents`` (``personas`` personas x prompt variants) from a one-factor
    model per scale (loadings 0.4-0.8, correlated factors), cut into 1-5 ratings, written as a
    long CSV ``respondent,persona,item,response`` plus the persona's label ``label_s00``."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    k = len(scales)
    phi = 0.3 * np.ones((k, k)) + 0.7 * np.eye(k)
    persona = np.arange(respondents) % personas
    trait = rng.multivariate_normal(np.zeros(k), phi, size=personas)
    eta = 0.8 * trait[persona] + 0.6 * rng.multivariate_normal(np.zeros(k), phi, respondents)
    cols, items = [], []
    for f, its in enumerate(scales.values()):
        lam = rng.uniform(0.4, 0.8, len(its))
        x = eta[:, [f]] * lam + rng.standard_normal((respondents, len(its))) * np.sqrt(1 - lam**2)
        x = np.where([r for _, r in its], -x, x)
        cols.append(np.digitize(x, [-1.2, -0.4, 0.4, 1.2]) + 1)
        items += [i for i, _ in its]
    wide = np.hstack(cols)
    who = np.repeat([f"r{i:05d}" for i in range(respondents)], len(items))
    frame = pd.DataFrame(
        {
            "respondent": who,
            "persona": np.repeat([f"p{p:03d}" for p in persona], len(items)),
            "item": np.tile(items, respondents),
            "response": wide.reshape(-1),
            "label_s00": np.repeat(np.round(trait[persona, 0], 3), len(items)),
        }
    )
    frame.to_csv(path, index=False)


def analysis_at_scale(
    work: Path, respondents: int = 1250, n_items: int = 419, personas: int = 50
) -> dict[str, Any]:
    """``psym analyze --task synth419 --responses long.csv`` in a subprocess on a simulated
    population (``respondents`` = ``personas`` x prompt variants, ``n_items`` items): wall time
    and the peak resident memory of that process (``wait4``'s ``ru_maxrss``)."""
    work.mkdir(parents=True, exist_ok=True)
    scales = write_instrument(work / "instruments", n_items=n_items)
    long = work / "long.csv"
    simulate_long(long, scales, respondents=respondents, personas=personas)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PSYM_INSTRUMENTS_PATH"] = str(work / "instruments")
    cmd = [
        sys.executable,
        "-m",
        "psymetrics_core",
        "analyze",
        "--task",
        "synth419",
        "--responses",
        str(long),
        "--criterion",
        "s00=label_s00",
        "--json",
    ]
    out = work / "analysis.json"
    start = time.perf_counter()
    with out.open("w") as fh, (work / "analysis.log").open("w") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak, not earlier ones'
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        log = (work / "analysis.log").read_text()[-3000:]
        sys.exit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(cmd)}\n{log}")
    peak_kb = usage.ru_maxrss  # KiB on Linux
    pop = json.loads(out.read_text())["population"]["all"]
    fitted = sum(1 for c in pop["cfa"].values() if c["fit"] is not None)
    return {
        "rows": respondents * n_items,
        "respondents": respondents,
        "items": n_items,
        "scales": len(scales),
        "cfa_fitted": fitted,
        "wall_s": wall,
        "peak_gb": peak_kb * 1024 / 1e9,
        "command": " ".join(cmd[1:]),
    }


def _scored(out: Path) -> dict[tuple[str, str], tuple[Any, list[float]]]:
    """(respondent, item) -> (answer, option log-probabilities) of a run's samples."""
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {
        (r["condition"], r["item"]): (r["answer"], list(r["option_logprobs"].values()))
        for r in rows
    }


def prefix_sharing(work: Path, respondents: int = 4, items: int = 6) -> dict[str, Any]:
    """``psym eval --tasks bfi --mode logprob --population`` on the default model (SmolLM2 on
    CPU) of ``respondents`` generated trait-marker personas (about 80 tokens each, beginning
    alike) x the first ``items`` BFI items, with prefix sharing (the default: the ONNX engine
    computes each persona and the instruction once per respondent) and with
    ``--model-args prefix_cache=false`` (every prompt computed on its own, through
    transformers), in one process; each backend is loaded and warmed up before the clock
    starts; best of 2 runs each. The samples of the two are compared."""
    from psymetrics_core.administer.api import evaluate
    from psymetrics_core.api import session_or_default
    from psymetrics_core.study.population import BuildSpec, build_population, write_population

    work.mkdir(parents=True, exist_ok=True)
    pop = work / "markers.jsonl"
    write_population(pop, build_population(BuildSpec(generate="trait-markers", n=respondents)))
    run = {"mode": "logprob", "limit": items, "population": pop, "cache": False}
    walls: dict[str, float] = {}
    for label, args, times in (("shared", {}, 2), ("alone", {"prefix_cache": "false"}, 2)):
        be = session_or_default().make_backend("smollm2", args)
        evaluate(["bfi"], mode="logprob", limit=1, backend=be, cache=False)  # load, warm up
        best = float("inf")
        for _ in range(times):
            start = time.perf_counter()
            evaluate(["bfi"], backend=be, output=work / label, overwrite=True, **run)
            best = min(best, time.perf_counter() - start)
        walls[label] = best
        if label == "shared":  # its engine's tokenizer, loaded
            tokens = _tokens_run(be, items, pop)
    shared, alone = _scored(work / "shared"), _scored(work / "alone")
    pairs = [(a, b) for k, (_, lp) in shared.items() for a, b in zip(lp, alone[k][1], strict=True)]
    diff = max(abs(a - b) for a, b in pairs)
    return {
        "respondents": respondents,
        "items": items,
        "prompts": len(shared),
        "shared_s": walls["shared"],
        "alone_s": walls["alone"],
        "ratio": walls["alone"] / walls["shared"],
        "same_answers": sum(shared[k][0] == alone[k][0] for k in shared),
        "max_logprob_diff": diff,
        **tokens,
    }


def _tokens_run(be: Any, items: int, pop: Path) -> dict[str, int]:
    """Tokens the model runs for the population's prompts (padding excluded): each prompt on
    its own, and with each prefix group's prefix (``hf_fast._prefix_groups``) once."""
    from psymetrics_plugin_hf.hf_fast import _common_prefix, _prefix_groups, _rows

    from benchmarks.scale import _logprob_prompts

    (prompts,) = _logprob_prompts(("bfi",), items, population=pop)
    rows = _rows(be, prompts)
    groups = _prefix_groups(rows, _common_prefix(rows))
    shared = sum(g.prefix + sum(len(r.tokens) - g.prefix for r in g.rows) for g in groups)
    return {"tokens_alone": sum(len(r.tokens) for r in rows), "tokens_shared": shared}
