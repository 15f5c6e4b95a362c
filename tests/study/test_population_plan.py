"""``psym plan --population``: a population study as a plan (issue 25). Respondents are cells,
so shards split them; the merged shards equal one ``psym eval --population`` run sample by
sample (against a loopback server whose answers depend on the persona); a changed population
file or persona template is refused with one line; old plans keep their hashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # for benchmarks/
from benchmarks.latency_server import LatencyServer  # noqa: E402
from psymetrics_core.base.errors import PsymError  # noqa: E402
from psymetrics_core.cli import cli  # noqa: E402
from psymetrics_core.pluginsys.session import Session  # noqa: E402
from psymetrics_core.study.plan import (  # noqa: E402
    PlanSettings,
    build_plan,
    check_plan_inputs,
    read_plan,
    write_plan,
)

PSYM = [sys.executable, "-m", "psymetrics_core"]


def _psym(
    args: list[str], cache: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PSYM_CACHE_DIR": str(cache)}
    return subprocess.run(PSYM + args, env=env, capture_output=True, text=True, cwd=cwd)


def _population(tmp_path: Path, process: bool = False) -> Path:
    """The 32 binary Big Five profiles (generated: no third-party text), built in this process
    or (``process``) by a real ``psym population build``."""
    pop = tmp_path / "big5.jsonl"
    argv = ["population", "build", "--generate", "binary", "-o", str(pop)]
    if process:
        r = _psym(argv, tmp_path / "c")
        assert r.returncode == 0, r.stderr
    else:
        res = CliRunner().invoke(cli, argv)
        assert res.exit_code == 0, res.output
    return pop


def _by_persona(messages: list[dict[str, str]]) -> str:
    """The loopback model: an answer that depends on the persona (extraversion) and the item."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    user = messages[-1]["content"]
    return str(5 if "extroverted" in system else 1 + len(user) % 3)


def _samples(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (directory / "samples.jsonl").read_text().splitlines()]


def _eval_args(pop: Path, base_url: str) -> list[str]:
    return [
        "--tasks",
        "bfi",
        "--limit",
        "4",
        "--population",
        str(pop),
        "--sample",
        "6",
        "--persona-template",
        "serapio-garcia",
        "--condition",
        "original",
        "--condition",
        "reversed-options",
        "--model",
        "openai-chat",
        "--model-args",
        f"base_url={base_url},model=m,concurrency=2",
    ]


def test_plan_lists_one_unit_per_respondent_and_records_the_hashes(tmp_path: Path) -> None:
    pop = _population(tmp_path)
    out = tmp_path / "plan.jsonl"
    r = _psym(["plan", *_eval_args(pop, "http://127.0.0.1:9/v1"), "-o", str(out)], tmp_path / "c")
    assert r.returncode == 0, r.stderr
    assert "12 units" in r.stdout  # 6 sampled respondents x 2 conditions
    plan = read_plan(out)
    assert plan.settings.config.population == pop.resolve()
    config = plan.settings.config
    assert config.persona_template == "serapio-garcia" and config.sample == 6
    assert plan.versions["population"] == __import__("hashlib").sha256(pop.read_bytes()).hexdigest()
    assert len(plan.versions["persona_template"]) == 64
    cells = [u.cell for u in plan.units]
    assert all(c.startswith("respondent=bin-") for c in cells)
    assert len({c.split("+")[0] for c in cells}) == 6
    # shards split the respondents (every N-th unit: respondent-major order)
    s1, s2 = ({u.cell.split("+")[0] for u in plan.shard(i, 2)} for i in (1, 2))
    assert s1 and s2 and len(s1 | s2) == 6
    # the template file and the sample are part of the plan's hash
    other = build_plan(
        PlanSettings.of(
            tasks=("bfi",), model="openai-chat", limit=4, population=str(pop), sample=5
        ),
        Session(),
    )
    assert len(other.units) == 5 and other.hash != plan.hash


def test_plans_without_a_population_keep_their_format_and_hash(tmp_path: Path) -> None:
    settings = PlanSettings.of(tasks=("bfi",), model="openai-chat", limit=2)
    path = tmp_path / "p.jsonl"
    write_plan(build_plan(settings, Session()), path)
    header = json.loads(path.read_text().splitlines()[0])
    # what main's plans held (so their unit hashes, which cover these, are unchanged)
    assert not {"population", "persona_template", "sample"} & set(header["settings"])
    assert set(header["versions"]) == {"psymetrics", "instruments", "item_files"}
    assert read_plan(path).hash == header["hash"]


def _in_process(
    monkeypatch: pytest.MonkeyPatch, args: list[str], cache: Path, cwd: Path | None = None
) -> Result:
    """``psym ARGS`` in this process, with its own cache (``PSYM_CACHE_DIR``) and working
    directory: the process itself (exit status, one-line stderr) is what the other tests of
    this file check with ``_psym``."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(cache))
    if cwd is not None:
        monkeypatch.chdir(cwd)
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("template", ["serapio-garcia", "persona.j2"])
def test_population_shards_merge_into_the_single_eval_run(
    tmp_path: Path, template: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pop = _population(tmp_path)
    (tmp_path / "persona.j2").write_text("You are {{ persona }}; your id is {{ id }}.")
    elsewhere = Path.cwd()  # run and merge: not where the plan named the template
    with LatencyServer(latency=0.0, answer=_by_persona) as srv:
        args = [*_eval_args(pop, srv.base_url), "--persona-template", template]
        plan = tmp_path / "plan.jsonl"
        # a template file named relative to where each command runs
        r = _in_process(monkeypatch, ["plan", *args, "-o", str(plan)], tmp_path / "c", tmp_path)
        assert r.exit_code == 0, r.output
        for i, cache in ((1, "ca"), (2, "cb")):  # two "machines", two caches
            r = _in_process(
                monkeypatch,
                ["run", str(plan), "--shard", f"{i}/2", "-o", str(tmp_path / f"s{i}")],
                tmp_path / cache,
                elsewhere,
            )
            assert r.exit_code == 0, r.output
        r = _in_process(
            monkeypatch,
            ["merge", str(tmp_path / "s2"), str(tmp_path / "s1"), "-o", str(tmp_path / "merged")],
            tmp_path / "ca",
            elsewhere,
        )
        assert r.exit_code == 0, r.output
        assert "48 samples" in r.stderr  # 6 respondents x 2 conditions x 4 items
        before = srv.requests
        r = _in_process(
            monkeypatch,
            ["eval", *args, "-o", str(tmp_path / "single")],
            tmp_path / "c-single",
            tmp_path,
        )
        assert r.exit_code == 0, r.output
        assert srv.requests - before == 48  # the single run really asked
    ours, theirs = _samples(tmp_path / "merged"), _samples(tmp_path / "single")
    assert len(ours) == len(theirs) == 48
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    assert {s["answer"] for s in ours} >= {1, 5}  # the persona changed the answers
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    single = json.loads((tmp_path / "single" / "results.json").read_text())
    assert merged["tasks"] == single["tasks"] and merged["conditions"] == single["conditions"]
    # the population entry is recomputed over every shard's respondents, not the head shard's
    shard = json.loads((tmp_path / "s1" / "results.json").read_text())["tasks"]
    for task, entry in merged["tasks"].items():
        # one group per level of the other condition ("": original; reversed-options), 6 each
        groups = {g["group"]: g["n_respondents"] for g in entry["population"]}
        assert groups == {"": 6, "reversed-options": 6}, groups
        part = {g["group"]: g["n_respondents"] for g in shard[task]["population"]}
        assert sum(part.values()) < sum(groups.values())
        # the task level is every merged cell too (issue 32 item 5), not the head shard's
        total = sum(r["n_items"] for r in entry["runs"])
        assert entry["n_items"] == total > shard[task]["n_items"]
        assert entry["condition"] == "population"
        # two levels of the other condition: no one mean for the task, each level's in population
        for scale in entry["scales"].values():
            assert scale["score"] is None and scale["reason"].startswith("2 levels"), scale


def test_a_changed_population_file_or_template_is_refused(tmp_path: Path) -> None:
    pop = _population(tmp_path, process=True)
    tmpl = tmp_path / "persona.j2"
    tmpl.write_text("You are {{ persona }}.")
    plan = tmp_path / "plan.jsonl"
    base = [
        "--tasks",
        "bfi",
        "--limit",
        "1",
        "--population",
        str(pop),
        "--sample",
        "2",
        "--persona-template",
        str(tmpl),
        "--model",
        "openai-chat",
        "--model-args",
        "base_url=http://127.0.0.1:9/v1,model=m",
    ]
    r = _psym(["plan", *base, "-o", str(plan)], tmp_path / "c")
    assert r.returncode == 0, r.stderr
    tmpl.write_text("You are {{ persona }}!")
    r = _psym(["run", str(plan), "-o", str(tmp_path / "run")], tmp_path / "c")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "persona.j2: the persona template has changed since the plan was written" in r.stderr
    tmpl.write_text("You are {{ persona }}.")
    pop.write_text(pop.read_text().replace("a character", "A character", 1))
    with pytest.raises(PsymError, match=r"big5.jsonl: the population file has changed since"):
        check_plan_inputs(read_plan(plan))
    r = _psym(["run", str(plan), "-o", str(tmp_path / "run2")], tmp_path / "c")
    assert r.returncode == 1 and r.stderr.strip().count("\n") == 0, r.stderr
    assert "population file has changed" in r.stderr and "psym plan" in r.stderr
    assert not (tmp_path / "run2" / "samples.jsonl").exists()


def test_sample_and_template_without_a_population_are_refused(tmp_path: Path) -> None:
    with pytest.raises(PsymError, match="--sample 3: needs --population"):
        build_plan(PlanSettings.of(tasks=("bfi",), sample=3), Session())
    with pytest.raises(PsymError, match="--persona-template genpt: needs --population"):
        build_plan(PlanSettings.of(tasks=("bfi",), persona_template="genpt"), Session())


def test_batch_of_a_population_plan_answers_every_respondent(tmp_path: Path) -> None:
    from benchmarks.batch_server import BatchServer

    pop = _population(tmp_path)
    with BatchServer(polls_before_done=0) as srv:
        plan = tmp_path / "plan.jsonl"
        args = [
            "--tasks",
            "bfi",
            "--limit",
            "3",
            "--population",
            str(pop),
            "--sample",
            "4",
            "--model",
            "openai-chat",
            "--model-args",
            f"base_url={srv.base_url},model=m",
        ]
        r = _psym(["plan", *args, "-o", str(plan)], tmp_path / "c")
        assert r.returncode == 0, r.stderr
        cache, bdir = tmp_path / "cache", tmp_path / "batch"
        r = _psym(["batch", "submit", str(plan), str(bdir)], cache)
        assert r.returncode == 0 and "12 requests" in r.stdout, r.stdout + r.stderr
        bodies = [json.loads(x)["body"] for x in (bdir / "requests.jsonl").read_text().splitlines()]
        personas = {b["messages"][0]["content"] for b in bodies}
        assert len(personas) == 4 and all(p.startswith("You are a character") for p in personas)
        r = _psym(["batch", "collect", str(plan), str(bdir)], cache)
        assert r.returncode == 0 and "stored 12 responses" in r.stdout, r.stdout + r.stderr
        r = _psym(["run", str(plan), "-o", str(tmp_path / "run")], cache)
        assert r.returncode == 0, r.stderr
        assert srv.online_requests == 0  # every respondent's answers came from the batch
    assert len(_samples(tmp_path / "run")) == 12
    pop.write_text(pop.read_text() + "\n")
    r = _psym(["batch", "submit", str(plan), str(tmp_path / "again")], cache)
    assert r.returncode == 1 and "population file has changed" in r.stderr, r.stderr
