"""Fuzz suite, studies: damaged plans (``psym run PLAN``), shard directories (``psym merge``),
cache export files (``psym cache import``), hostile Batch API replies (``psym batch``) and
secrets inside ``base_url``.

Every case must end in one ``PsymError`` line naming the file (or the endpoint), the line and
the field where there is one (``harness.expect_clean_error``: no other exception, one line,
within the time and memory bounds). Special files are private FIFOs, directories and symlinks
in ``tmp_path`` (no real device node is opened); the Batch API server is a real loopback HTTP
server in a thread, and the hanging server a real socket that accepts and never answers.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.study.plan import PlanSettings, build_plan, read_plan, write_plan

DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
BIG_INT = "9" * 5000
KEY = "sk-FUZZSECRET0123456789"


@pytest.fixture(scope="module")
def session() -> Session:
    return Session()


@pytest.fixture(scope="module")
def plan_lines(session: Session, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A valid plan (bfi, 2 items, 2 repeats = 2 units) as its text lines."""
    path = tmp_path_factory.mktemp("plan") / "plan.jsonl"
    write_plan(build_plan(PlanSettings(tasks=("bfi",), limit=2, repeats=2), session), path)
    return path.read_text(encoding="utf-8").splitlines()


def _header(edit: Callable[[dict[str, Any]], Any]) -> Callable[[list[str]], bytes]:
    def apply(lines: list[str]) -> bytes:
        h = json.loads(lines[0])
        edit(h)
        return "\n".join([json.dumps(h), *lines[1:]]).encode() + b"\n"

    return apply


def _settings(key: str, value: Any) -> Callable[[list[str]], bytes]:
    return _header(lambda h: h["settings"].__setitem__(key, value))


def _unit(edit: Callable[[dict[str, Any]], Any]) -> Callable[[list[str]], bytes]:
    def apply(lines: list[str]) -> bytes:
        u = json.loads(lines[1])
        edit(u)
        return "\n".join([lines[0], json.dumps(u), *lines[2:]]).encode() + b"\n"

    return apply


def _unit_field(key: str, value: Any) -> Callable[[list[str]], bytes]:
    return _unit(lambda u: u.__setitem__(key, value))


def _raw(text: bytes) -> Callable[[list[str]], bytes]:
    return lambda lines: text


def _line2(text: str) -> Callable[[list[str]], bytes]:
    return lambda lines: "\n".join([lines[0], text, *lines[2:]]).encode() + b"\n"


def _drop(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda d: d.pop(key)


# (name, edit of the valid plan's lines -> file bytes, text the message must hold)
PLAN_CASES: list[tuple[str, Callable[[list[str]], bytes], str]] = [
    ("not-utf8", _raw(b'{"psym_plan": 1, "x": "caf\xe9"}\n'), "line 1: not UTF-8"),
    ("binary-junk", _raw(bytes(range(256)) * 4), "not UTF-8"),
    ("empty", _raw(b""), "empty plan"),
    ("blank-lines", _raw(b"\n \n\t\n"), "empty plan"),
    ("nested-array-100k", _raw(DEEP_ARRAY.encode()), "line 1: invalid JSON"),
    ("nested-object-100k", _raw(DEEP_OBJECT.encode()), "line 1: invalid JSON"),
    ("unit-nested-100k", _line2(DEEP_ARRAY), "line 2: invalid JSON"),
    ("header-not-object", _raw(b"[1, 2]\n"), "line 1: expected a JSON object"),
    ("header-huge-int", _raw(f'{{"psym_plan": {BIG_INT}}}\n'.encode()), "line 1"),
    ("header-nan", _raw(b'{"psym_plan": NaN}\n'), "line 1"),
    ("no-format", _header(_drop("psym_plan")), "field 'psym_plan'"),
    ("format-2", _header(lambda h: h.__setitem__("psym_plan", 2)), "field 'psym_plan'"),
    ("header-extra-field", _header(lambda h: h.__setitem__("x", 1)), "field 'x'"),
    ("hash-int", _header(lambda h: h.__setitem__("hash", 5)), "field 'hash'"),
    ("hash-short", _header(lambda h: h.__setitem__("hash", "abc")), "field 'hash'"),
    ("no-settings", _header(_drop("settings")), "field 'settings'"),
    ("settings-list", _header(lambda h: h.__setitem__("settings", [])), "field 'settings'"),
    ("settings-extra", _settings("surprise", 1), "field 'settings.surprise'"),
    ("settings-no-tasks", _header(lambda h: h["settings"].pop("tasks")), "settings.tasks"),
    ("tasks-string", _settings("tasks", "bfi"), "field 'settings.tasks'"),
    ("tasks-empty", _settings("tasks", []), "field 'settings.tasks'"),
    ("tasks-of-ints", _settings("tasks", [1]), "field 'settings.tasks.0'"),
    ("seed-string", _settings("seed", "1234"), "field 'settings.seed'"),
    ("seed-float", _settings("seed", 1.5), "field 'settings.seed'"),
    ("seed-10e40", _settings("seed", 10**40), "field 'settings.seed'"),
    ("seed-bool", _settings("seed", True), "field 'settings.seed'"),
    ("repeats-zero", _settings("repeats", 0), "field 'settings.repeats'"),
    ("limit-negative", _settings("limit", -1), "field 'settings.limit'"),
    ("temperature-string", _settings("temperature", "hot"), "field 'settings.temperature'"),
    ("model-null", _settings("model", None), "field 'settings.model'"),
    ("model-args-list", _settings("model_args", ["a"]), "field 'settings.model_args'"),
    ("model-args-int-value", _settings("model_args", {"a": 1}), "settings.model_args.a"),
    ("task-options-flat", _settings("task_options", {"bfi": "x"}), "settings.task_options"),
    ("conditions-dict", _settings("conditions", {}), "field 'settings.conditions'"),
    ("versions-missing", _header(_drop("versions")), "field 'versions'"),
    ("versions-extra", _header(lambda h: h["versions"].__setitem__("x", 1)), "versions.x"),
    (
        "versions-instruments-list",
        _header(lambda h: h["versions"].__setitem__("instruments", ["bfi"])),
        "field 'versions.instruments'",
    ),
    ("unit-not-json", _line2("{not json"), "line 2: invalid JSON"),
    ("unit-not-object", _line2("[]"), "line 2: expected a JSON object"),
    ("unit-huge-int", _line2(f'{{"index": {BIG_INT}}}'), "line 2"),
    ("unit-infinity", _line2('{"index": Infinity}'), "line 2"),
    ("unit-extra-field", _unit_field("note", "hi"), "line 2, field 'note'"),
    ("unit-extra-1mb-field", _unit_field("pad", "x" * 1_000_000), "line 2, field 'pad'"),
    ("unit-missing-hash", _unit(_drop("hash")), "line 2, field 'hash'"),
    ("unit-missing-task", _unit(_drop("task")), "line 2, field 'task'"),
    ("unit-index-string", _unit_field("index", "0"), "line 2, field 'index'"),
    ("unit-index-skipped", _unit_field("index", 1), "line 2, field 'index'"),
    ("unit-index-negative", _unit_field("index", -1), "line 2, field 'index'"),
    ("unit-repeat-float", _unit_field("repeat", 0.5), "line 2, field 'repeat'"),
    ("unit-seed-10e40", _unit_field("seed", 10**40), "line 2, field 'seed'"),
    ("unit-task-null", _unit_field("task", None), "line 2, field 'task'"),
    ("unit-cell-list", _unit_field("cell", ["original"]), "line 2, field 'cell'"),
    ("unit-model-changed", _unit_field("model", "other"), "line 2, field 'model'"),
    ("unit-hash-not-hex", _unit_field("hash", "z" * 64), "line 2, field 'hash'"),
    ("unit-hash-edited", _unit_field("hash", "0" * 64), "line 2, field 'hash'"),
    ("unit-repeat-edited", _unit_field("repeat", 1), "line 2, field 'hash'"),
    ("unit-dropped", lambda lines: "\n".join(lines[:2]).encode() + b"\n", "field 'hash'"),
    ("unit-duplicated", lambda lines: "\n".join([*lines, lines[1]]).encode(), "field 'index'"),
    ("nul-bytes", _line2("\x00" * 10), "line 2"),
    (
        "secret-userinfo",
        _settings("model_args", {"base_url": f"https://u:{KEY}@h.example/v1"}),
        "settings.model_args.base_url",
    ),
    (
        "secret-query",
        _settings("model_args", {"base_url": f"https://h.example/v1?api_key={KEY}"}),
        "settings.model_args.base_url",
    ),
    (
        "secret-judge-url",
        _settings("judge_model_args", {"base_url": f"http://h/?key={KEY}"}),
        "settings.judge_model_args.base_url",
    ),
    ("secret-api-key-arg", _settings("model_args", {"api_key": KEY}), "model_args.api_key"),
]


@pytest.mark.parametrize("name, edit, expect", PLAN_CASES, ids=[c[0] for c in PLAN_CASES])
def test_fuzz_plan_files(
    plan_lines: list[str], tmp_path: Path, name: str, edit: Any, expect: str
) -> None:
    path = tmp_path / "plan.jsonl"
    path.write_bytes(edit(plan_lines))
    out = expect_clean_error(lambda: read_plan(path), [str(path)], label=f"plan {name}")
    assert expect in out.message, out.message
    assert KEY not in out.message and len(out.message) < 1000, out.message


def _unblock(fifo: Path, seconds: float = 30.0) -> None:
    """Open ``fifo`` for writing once a reader has opened it, then close it (the reader sees an
    end of file): a reader that wrongly opens the FIFO fails its case instead of hanging."""

    def run() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet (ENXIO), or the FIFO is gone
                time.sleep(0.1)
                continue
            os.close(fd)
            return

    threading.Thread(target=run, daemon=True).start()


def _fifo(tmp_path: Path) -> Path:
    p = tmp_path / "fifo"
    os.mkfifo(p)
    _unblock(p)
    return p


def _proc_link(tmp_path: Path) -> Path:
    p = tmp_path / "environ.jsonl"
    p.symlink_to("/proc/self/environ")  # only stat()ed: the reader refuses it unopened
    return p


def _directory(tmp_path: Path) -> Path:
    p = tmp_path / "dir.jsonl"
    p.mkdir()
    return p


def _fifo_link(tmp_path: Path) -> Path:
    target = _fifo(tmp_path)
    p = tmp_path / "link.jsonl"
    p.symlink_to(target)
    return p


def _over_cap(tmp_path: Path) -> Path:
    """A unit line with an extra 50 MB field: over the input size cap, refused unread."""
    p = tmp_path / "big.jsonl"
    with p.open("wb") as fh:
        fh.write(b'{"psym_plan": 1}\n{"index": 0, "pad": "')
        fh.write(b"x" * 50_000_000)
        fh.write(b'"}\n')
    return p


SPECIAL: list[tuple[str, Callable[[Path], Path], str]] = [
    ("fifo", _fifo, "FIFO"),
    ("symlink-to-fifo", _fifo_link, "FIFO"),
    ("directory", _directory, "directory"),
    ("symlink-to-procfs", _proc_link, "procfs"),
    ("missing", lambda t: t / "nowhere.jsonl", "no such file"),
    ("over-size-cap-50mb-field", _over_cap, "limit"),
]


@pytest.mark.parametrize("name, make, expect", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_fuzz_plan_special_files(tmp_path: Path, name: str, make: Any, expect: str) -> None:
    path = make(tmp_path)
    out = expect_clean_error(lambda: read_plan(path), [str(path)], label=f"plan {name}")
    assert expect in out.message, out.message


# -- shards and merge ---------------------------------------------------------------------------


class _Scripted:
    """Answers every prompt "3" (a fake model: unit tests only)."""

    def generate(self, prompts: Any, settings: Any, reporter: Any = None) -> list[Completion]:
        return [Completion(text="3") for _ in prompts]

    def identity(self) -> dict[str, Any]:
        return {"backend": "scripted"}


@pytest.fixture(scope="module")
def shards(session: Session, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two complete shard directories of one plan (bfi, 2 items, 2 repeats)."""
    from psymetrics_core.study.shard import run_plan

    base = tmp_path_factory.mktemp("shards")
    plan = build_plan(PlanSettings(tasks=("bfi",), limit=2, repeats=2), session)
    for i in (1, 2):
        run_plan(plan, base / f"s{i}", (i, 2), session=session, backend=_Scripted(), cache=False)
    return base / "s1", base / "s2"


def _json_edit(fname: str, edit: Callable[[Any], Any]) -> Callable[[Path], None]:
    def apply(d: Path) -> None:
        data = json.loads((d / fname).read_text())
        edit(data)
        (d / fname).write_text(json.dumps(data))

    return apply


def _write(fname: str, raw: bytes) -> Callable[[Path], None]:
    return lambda d: (d / fname).write_bytes(raw)


def _record(key: str, value: Any) -> Callable[[Path], None]:
    return _json_edit("shard.json", lambda r: r.__setitem__(key, value))


def _special_shard(d: Path) -> None:
    (d / "shard.json").unlink()
    os.mkfifo(d / "shard.json")
    _unblock(d / "shard.json")


def _other_plan(d: Path) -> None:
    _record("plan", "f" * 64)(d)


def _drop_task(d: Path) -> None:
    _json_edit("results.json", lambda r: r["tasks"].pop("bfi"))(d)


def _drop_runs(d: Path) -> None:
    _json_edit("results.json", lambda r: r["tasks"]["bfi"].__setitem__("runs", []))(d)


# (name, edit of shard 2's directory, text the message must hold); merge of shard 1 and shard 2
SHARD_CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("shard-json-not-json", _write("shard.json", b"{nope"), "shard.json"),
    ("shard-json-not-utf8", _write("shard.json", b'{"plan": "\xff"}'), "shard.json"),
    ("shard-json-list", _write("shard.json", b"[]"), "shard.json"),
    ("shard-json-nested-100k", _write("shard.json", DEEP_ARRAY.encode()), "shard.json"),
    ("shard-json-huge-int", _write("shard.json", f'{{"plan": {BIG_INT}}}'.encode()), "shard.json"),
    ("shard-json-fifo", _special_shard, "FIFO"),
    ("shard-plan-int", _record("plan", 7), "field 'plan'"),
    ("shard-plan-missing", _json_edit("shard.json", lambda r: r.pop("plan")), "field 'plan'"),
    ("shard-units-string", _record("units", "abc"), "field 'units'"),
    ("shard-units-not-hashes", _record("units", [1, 2]), "field 'units.0'"),
    ("shard-units-missing", _json_edit("shard.json", lambda r: r.pop("units")), "field 'units'"),
    ("shard-shard-string", _record("shard", "2/2"), "field 'shard'"),
    ("shard-shard-three", _record("shard", [1, 2, 3]), "field 'shard'"),
    ("shard-shard-i-over-n", _record("shard", [3, 2]), "field 'shard'"),
    ("shard-complete-string", _record("complete", "yes"), "field 'complete'"),
    ("shard-extra-field", _record("note", 1), "field 'note'"),
    ("shard-incomplete", _record("complete", False), "incomplete"),
    ("shard-units-empty", _record("units", []), "in no shard"),
    ("shard-units-stray", _record("units", ["e" * 64]), "not in the plan"),
    ("shards-of-different-plans", _other_plan, "different plans"),
    ("results-missing", lambda d: (d / "results.json").unlink(), "no results.json"),
    ("results-task-missing", _drop_task, "field 'task"),
    ("results-runs-missing", _drop_runs, "runs"),
    ("results-nested-100k", _write("results.json", DEEP_ARRAY.encode()), "results.json"),
    ("results-huge-int", _write("results.json", f'{{"tasks": {BIG_INT}}}'.encode()), "results"),
    (
        "samples-huge-int",
        _write("samples.jsonl", f'{{"repeat": {BIG_INT}}}\n'.encode()),
        "samples.jsonl",
    ),
    ("samples-no-task", _write("samples.jsonl", b'{"x": 1}\n'), "samples.jsonl, line 1"),
    ("samples-not-utf8", _write("samples.jsonl", b'{"task": "\xff"}\n'), "samples.jsonl, line 1"),
    ("samples-list", _write("samples.jsonl", b"[1]\n"), "samples.jsonl, line 1"),
    ("plan-copy-damaged", _write("plan.jsonl", b"{}\n"), "plan.jsonl"),
]


@pytest.mark.parametrize("name, edit, expect", SHARD_CASES, ids=[c[0] for c in SHARD_CASES])
def test_fuzz_merge_damaged_shards(
    shards: tuple[Path, Path], session: Session, tmp_path: Path, name: str, edit: Any, expect: str
) -> None:
    from psymetrics_core.study.merge import merge_runs

    one, two = tmp_path / "s1", tmp_path / "s2"
    shutil.copytree(shards[0], one)
    shutil.copytree(shards[1], two)
    edit(two)
    # merge reads the plan copy of the first shard given
    dirs = [two, one] if name == "plan-copy-damaged" else [one, two]
    out = expect_clean_error(
        lambda: merge_runs(dirs, tmp_path / "merged", session), [], label=f"merge {name}"
    )
    assert expect in out.message, out.message
    assert not (tmp_path / "merged" / "results.json").exists()


def test_the_undamaged_shards_merge(
    shards: tuple[Path, Path], session: Session, tmp_path: Path
) -> None:
    """The base of the shard cases merges: each failure above is its edit's."""
    from psymetrics_core.study.merge import merge_runs

    report = merge_runs(list(shards), tmp_path / "merged", session)
    assert report.units == 2 and report.samples == 4


def test_fuzz_merge_two_damaged_shards(
    shards: tuple[Path, Path], session: Session, tmp_path: Path
) -> None:
    """Both shards damaged at once (wrong types in one, missing fields in the other)."""
    from psymetrics_core.study.merge import merge_runs

    one, two = tmp_path / "s1", tmp_path / "s2"
    shutil.copytree(shards[0], one)
    shutil.copytree(shards[1], two)
    _record("units", {"a": 1})(one)
    _json_edit("shard.json", lambda r: r.pop("complete"))(two)
    out = expect_clean_error(lambda: merge_runs([one, two], tmp_path / "m", session), ["shard"])
    assert "field 'units'" in out.message


# -- cache import -------------------------------------------------------------------------------

GOOD_RESPONSE = json.dumps({"text": "3", "option_logprobs": None, "meta": {}})


def _cache_line(**changes: Any) -> str:
    row: dict[str, Any] = {
        "key": "a" * 64,
        "model": "m",
        "mode": "generate",
        "response": GOOD_RESPONSE,
        "created": 1.0,
    }
    for k, v in changes.items():
        if v is _DROP:
            row.pop(k)
        else:
            row[k] = v
    return json.dumps(row)


_DROP = object()


def _lines(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


IMPORT_CASES: list[tuple[str, str, bytes, str]] = [
    ("not-utf8", "x.jsonl", b'{"key": "caf\xe9"}\n', "line 1: not UTF-8"),
    ("binary-junk", "x.jsonl", bytes(range(1, 256)) * 4, "line 1"),
    ("nested-array-100k", "x.jsonl", DEEP_ARRAY.encode() + b"\n", "line 1: invalid JSON"),
    ("nested-object-100k", "x.jsonl", DEEP_OBJECT.encode() + b"\n", "line 1: invalid JSON"),
    (
        "response-nested-100k",
        "x.jsonl",
        _lines(_cache_line(response=DEEP_ARRAY)),
        "field 'response'",
    ),
    (
        "huge-int",
        "x.jsonl",
        _lines(_cache_line(created=0).replace("0}", f"{BIG_INT}}}")),
        "line 1",
    ),
    ("nan", "x.jsonl", _lines(_cache_line().replace("1.0", "NaN")), "line 1"),
    (
        "infinite-created",
        "x.jsonl",
        _lines(_cache_line().replace("1.0", "1e999")),
        "field 'created'",
    ),
    ("not-object", "x.jsonl", b"[1, 2]\n", "line 1: expected a JSON object"),
    ("missing-key", "x.jsonl", _lines(_cache_line(key=_DROP)), "field 'key'"),
    ("missing-model", "x.jsonl", _lines(_cache_line(model=_DROP)), "field 'model'"),
    ("missing-response", "x.jsonl", _lines(_cache_line(response=_DROP)), "field 'response'"),
    ("extra-field", "x.jsonl", _lines(_cache_line(extra="x")), "field 'extra'"),
    ("key-short", "x.jsonl", _lines(_cache_line(key="abc")), "field 'key'"),
    ("key-int", "x.jsonl", _lines(_cache_line(key=5)), "field 'key'"),
    ("model-list", "x.jsonl", _lines(_cache_line(model=["m"])), "field 'model'"),
    ("created-string", "x.jsonl", _lines(_cache_line(created="yesterday")), "field 'created'"),
    (
        "response-object",
        "x.jsonl",
        _lines(_cache_line(response={"text": "3"})),
        "field 'response'",
    ),
    ("response-not-json", "x.jsonl", _lines(_cache_line(response="{nope")), "field 'response'"),
    (
        "response-text-int",
        "x.jsonl",
        _lines(_cache_line(response='{"text": 3, "option_logprobs": null, "meta": {}}')),
        "field 'response'",
    ),
    ("response-list", "x.jsonl", _lines(_cache_line(response="[]")), "field 'response'"),
    ("bad-second-line", "x.jsonl", _lines(_cache_line(), "{"), "line 2"),
    (
        "truncated-gzip",
        "x.jsonl.gz",
        gzip.compress(_lines(_cache_line()) * 50)[:40],
        "gzip",
    ),
    ("not-gzip", "x.jsonl.gz", _lines(_cache_line()), "gzip"),
    ("gzip-not-utf8", "x.jsonl.gz", gzip.compress(b'{"key": "\xff"}\n'), "line 1"),
    ("gzip-nested-100k", "x.jsonl.gz", gzip.compress(DEEP_ARRAY.encode()), "line 1"),
]


@pytest.fixture()
def cache(tmp_path: Path) -> Iterator[Any]:
    from psymetrics_core.backends.cache import ResponseCache

    c = ResponseCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


@pytest.mark.parametrize("name, fname, raw, expect", IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_fuzz_cache_import(
    cache: Any, tmp_path: Path, name: str, fname: str, raw: bytes, expect: str
) -> None:
    from psymetrics_core.backends.cache_transfer import import_cache

    path = tmp_path / fname
    path.write_bytes(raw)
    out = expect_clean_error(lambda: import_cache(cache, path), [str(path)], label=name)
    assert expect in out.message, out.message
    assert cache.stats().entries == 0  # a damaged file adds nothing


IMPORT_SPECIAL = [c for c in SPECIAL if c[0] != "over-size-cap-50mb-field"]


@pytest.mark.parametrize("name, make, expect", IMPORT_SPECIAL, ids=[c[0] for c in IMPORT_SPECIAL])
def test_fuzz_cache_import_special_files(
    cache: Any, tmp_path: Path, name: str, make: Any, expect: str
) -> None:
    from psymetrics_core.backends.cache_transfer import import_cache

    path = make(tmp_path)
    out = expect_clean_error(lambda: import_cache(cache, path), [str(path)], label=name)
    assert expect in out.message, out.message


def test_fuzz_cache_import_line_over_cap(
    cache: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psymetrics_core.backends.cache_transfer import import_cache

    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", "4096")
    for fname, raw in (("x.jsonl", b"x" * 10_000), ("x.jsonl.gz", gzip.compress(b"x" * 10_000))):
        path = tmp_path / fname
        path.write_bytes(raw)
        out = expect_clean_error(lambda p=path: import_cache(cache, p), [str(path)])  # type: ignore[misc]
        assert "line 1" in out.message and "limit" in out.message


# -- Batch API replies --------------------------------------------------------------------------


class BatchScript:
    """A loopback server with the Batch API's endpoints, each answered as scripted."""

    def __init__(self, replies: dict[str, tuple[int, bytes]]) -> None:
        self.replies = replies
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                key = next((k for k in owner.replies if k in self.path), None)
                status, body = owner.replies.get(key or "", (404, b'{"error": "no"}'))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer  # noqa: N815

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _j(obj: Any) -> bytes:
    return json.dumps(obj).encode()


FILE_OK = (200, _j({"id": "file-1", "object": "file"}))
BATCH_OK = (200, _j({"id": "batch-1", "status": "validating"}))

# (name, replies by path, endpoint named, field named or "")
BATCH_CASES: list[tuple[str, dict[str, tuple[int, bytes]], str, str]] = [
    ("files-not-json", {"/files": (200, b"<html>")}, "POST /files", "not JSON"),
    ("files-list", {"/files": (200, b"[]")}, "POST /files", "not a JSON object"),
    ("files-nested-100k", {"/files": (200, DEEP_ARRAY.encode())}, "POST", "max_response"),
    ("files-no-id", {"/files": (200, _j({"object": "file"}))}, "POST /files", "field 'id'"),
    ("files-id-int", {"/files": (200, _j({"id": 7}))}, "POST /files", "field 'id'"),
    ("files-id-null", {"/files": (200, _j({"id": None}))}, "POST /files", "field 'id'"),
    (
        "files-id-path",
        {"/files": (200, _j({"id": "../../admin?x=1"}))},
        "POST /files",
        "field 'id'",
    ),
    ("files-id-huge", {"/files": (200, _j({"id": "f" * 500}))}, "POST /files", "field 'id'"),
    ("files-id-is-key", {"/files": (200, _j({"id": KEY}))}, "POST /files", "API key"),
    (
        "files-http-401-echo",
        {"/files": (401, _j({"error": {"message": f"bad key {KEY}"}}))},
        "/files",
        "HTTP 401",
    ),
    ("files-http-500", {"/files": (500, b"oops")}, "/files", "HTTP 500"),
    (
        "batches-not-json",
        {"/files": FILE_OK, "/batches": (200, b"nope")},
        "POST /batches",
        "not JSON",
    ),
    (
        "batches-no-id",
        {"/files": FILE_OK, "/batches": (200, _j({"status": "validating"}))},
        "POST /batches",
        "field 'id'",
    ),
    (
        "batches-no-status",
        {"/files": FILE_OK, "/batches": (200, _j({"id": "b1"}))},
        "POST /batches",
        "field 'status'",
    ),
    (
        "batches-status-int",
        {"/files": FILE_OK, "/batches": (200, _j({"id": "b", "status": 1}))},
        "POST /batches",
        "field 'status'",
    ),
    (
        "batches-status-is-key",
        {"/files": FILE_OK, "/batches": (200, _j({"id": "b", "status": KEY}))},
        "POST /batches",
        "field 'status'",
    ),
    (
        "batches-id-is-key",
        {"/files": FILE_OK, "/batches": (200, _j({"id": KEY, "status": "validating"}))},
        "POST /batches",
        "API key",
    ),
    (
        "batches-counts-string",
        {
            "/files": FILE_OK,
            "/batches": (
                200,
                _j({"id": "b", "status": "validating", "request_counts": {"total": "5"}}),
            ),
        },
        "POST /batches",
        "field 'request_counts.total'",
    ),
    (
        "batches-output-id-int",
        {
            "/files": FILE_OK,
            "/batches": (200, _j({"id": "b", "status": "completed", "output_file_id": 5})),
        },
        "POST /batches",
        "field 'output_file_id'",
    ),
    (
        "batches-over-max-bytes",
        {
            "/files": FILE_OK,
            "/batches": (200, _j({"id": "b", "status": "validating", "pad": "x" * 5000})),
        },
        "/batches",
        "max_response",
    ),
    ("batches-http-404", {"/files": FILE_OK}, "/batches", "HTTP 404"),
]


@pytest.fixture(scope="module")
def batch_session(session: Session) -> Session:
    return session


def _batch_plan(tmp_path: Path, session: Session, base_url: str, **extra: str) -> Any:
    args = {"base_url": base_url, "model": "m", "api_key_env": "PSYM_FUZZ_KEY", **extra}
    settings = PlanSettings(tasks=("bfi",), model="openai-chat", model_args=args, limit=2)
    path = tmp_path / "plan.jsonl"
    write_plan(build_plan(settings, session), path)
    return read_plan(path)


@pytest.mark.parametrize(
    "name, replies, endpoint, field", BATCH_CASES, ids=[c[0] for c in BATCH_CASES]
)
def test_fuzz_batch_replies(
    session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    replies: dict[str, tuple[int, bytes]],
    endpoint: str,
    field: str,
) -> None:
    from psymetrics_core.study.batch import submit

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = BatchScript(replies)
    try:
        plan = _batch_plan(tmp_path, session, srv.base_url, max_response_bytes="1024")
        out = expect_clean_error(
            lambda: submit(plan, tmp_path / "b", session),
            [endpoint, endpoint.split()[-1]],
            label=name,
        )
    finally:
        srv.close()
    assert field in out.message, out.message
    assert KEY not in out.message, out.message
    assert not (tmp_path / "b" / "batch.json").exists()


STATUS_CASES: list[tuple[str, tuple[int, bytes], str]] = [
    ("status-no-status", (200, _j({"id": "b"})), "field 'status'"),
    ("status-unknown-status", (200, _j({"id": "b", "status": "done"})), "field 'status'"),
    ("status-id-list", (200, _j({"id": ["b"], "status": "completed"})), "field 'id'"),
    (
        "status-counts-list",
        (200, _j({"id": "b", "status": "completed", "request_counts": []})),
        "field 'request_counts'",
    ),
    ("status-not-json", (200, b"\xff\xfe"), "not JSON"),
    ("status-http-403-echo", (403, _j({"error": KEY})), "HTTP 403"),
]


def _state(directory: Path, url: str, **changes: Any) -> None:
    from psymetrics_core.study.batch import BatchState

    directory.mkdir(parents=True, exist_ok=True)
    BatchState(
        plan="a" * 64,
        base_url=url,
        api_key_env="PSYM_FUZZ_KEY",
        batch_id="b",
        input_file_id="f",
        requests=2,
        mode="generate",
    ).save(directory)
    if changes:
        _json_edit("batch.json", lambda d: d.update(changes))(directory)


@pytest.mark.parametrize("name, reply, field", STATUS_CASES, ids=[c[0] for c in STATUS_CASES])
def test_fuzz_batch_status_replies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, reply: Any, field: str
) -> None:
    from psymetrics_core.study.batch import status

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    srv = BatchScript({"/batches/": reply})
    try:
        _state(tmp_path / "b", srv.base_url)
        out = expect_clean_error(lambda: status(tmp_path / "b"), ["GET", "/batches/b"], label=name)
    finally:
        srv.close()
    assert field in out.message and KEY not in out.message, out.message


OUTPUT_CASES: list[tuple[str, bytes, str]] = [
    ("output-not-json", b"{nope\n", "line 1"),
    ("output-list", b"[1]\n", "line 1"),
    ("output-no-custom-id", _j({"response": {"status_code": 200}}) + b"\n", "field 'custom_id'"),
    ("output-custom-id-int", _j({"custom_id": 5}) + b"\n", "field 'custom_id'"),
    (
        "output-status-code-string",
        _j({"custom_id": "a" * 64, "response": {"status_code": "200"}}) + b"\n",
        "field 'response.status_code'",
    ),
    (
        "output-body-list",
        _j({"custom_id": "a", "response": {"status_code": 200, "body": []}}) + b"\n",
        "field 'response.body'",
    ),
    (
        "output-unknown-custom-id",
        _j({"custom_id": "zz", "response": None}) + b"\n",
        "not in the plan",
    ),
]


@pytest.mark.parametrize("name, content, field", OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_fuzz_batch_output_lines(
    session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    content: bytes,
    field: str,
) -> None:
    from psymetrics_core.study.batch import collect

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    done = _j({"id": "b", "status": "completed", "output_file_id": "out-1"})
    srv = BatchScript({"/files/out-1/content": (200, content), "/batches/b": (200, done)})
    try:
        plan = _batch_plan(tmp_path, session, srv.base_url)
        _state(tmp_path / "b", srv.base_url, plan=plan.hash)
        out = expect_clean_error(
            lambda: collect(plan, tmp_path / "b", session), ["/files/out-1/content"], label=name
        )
    finally:
        srv.close()
    assert field in out.message and KEY not in out.message, out.message


STATE_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("state-requests-string", {"requests": "2"}, "field 'requests'"),
    ("state-base-url-int", {"base_url": 5}, "field 'base_url'"),
    ("state-extra-field", {"surprise": 1}, "field 'surprise'"),
    ("state-batch-id-null", {"batch_id": None}, "field 'batch_id'"),
]


@pytest.mark.parametrize("name, changes, field", STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_fuzz_batch_state_file(tmp_path: Path, name: str, changes: Any, field: str) -> None:
    from psymetrics_core.study.batch import status

    _state(tmp_path / "b", "http://127.0.0.1:9/v1", **changes)
    out = expect_clean_error(lambda: status(tmp_path / "b"), ["batch.json"], label=name)
    assert field in out.message, out.message


@pytest.mark.parametrize("what", ["nested-100k", "fifo", "missing"])
def test_fuzz_batch_state_special(tmp_path: Path, what: str) -> None:
    from psymetrics_core.study.batch import status

    d = tmp_path / "b"
    d.mkdir()
    if what == "nested-100k":
        (d / "batch.json").write_text(DEEP_ARRAY)
    elif what == "fifo":
        os.mkfifo(d / "batch.json")
        _unblock(d / "batch.json")
    out = expect_clean_error(lambda: status(d), ["batch.json"], label=what)
    assert {"nested-100k": "nested", "fifo": "FIFO", "missing": "not found"}[what] in out.message


class _Silent:
    """A real loopback socket that accepts connections and never reads nor answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.conns: list[socket.socket] = []
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            # closed after 8 s, so a client without a timeout fails its case instead of hanging
            timer = threading.Timer(8.0, conn.close)
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("call", ["submit", "status"])
def test_fuzz_batch_silent_server_ends_within_the_timeout(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    from psymetrics_core.study.batch import status, submit

    monkeypatch.setenv("PSYM_FUZZ_KEY", KEY)
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = _Silent()
    try:
        if call == "submit":
            plan = _batch_plan(tmp_path, session, srv.base_url, timeout="1")
            fn: Callable[[], Any] = lambda: submit(plan, tmp_path / "b", session)  # noqa: E731
        else:
            _state(tmp_path / "b", srv.base_url)
            fn = lambda: status(tmp_path / "b", timeout=1.0)  # noqa: E731
        t0 = time.monotonic()
        out = expect_clean_error(fn, ["timeout"], label=call)
        assert time.monotonic() - t0 < 6, out.message
    finally:
        srv.close()


@pytest.mark.parametrize("task", ["moral-advice", "sct"])
def test_fuzz_batch_refuses_judged_tasks(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    from psymetrics_core.study.batch import submit

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    srv = BatchScript({"/files": FILE_OK, "/batches": BATCH_OK})
    try:
        args = {"base_url": srv.base_url, "model": "m"}
        settings = PlanSettings(tasks=(task,), model="openai-chat", model_args=args, limit=1)
        plan = build_plan(settings, session)
        out = expect_clean_error(lambda: submit(plan, tmp_path / "b", session), [task])
    finally:
        srv.close()
    assert "judge" in out.message and not (tmp_path / "b" / "batch.json").exists()


# -- secrets in base_url ------------------------------------------------------------------------

SECRET_URLS = [
    ("userinfo", f"https://user:{KEY}@api.example/v1"),
    ("user-only", f"https://{KEY}@api.example/v1"),
    ("query-api-key", f"https://api.example/v1?api_key={KEY}"),
    ("query-key", f"https://api.example/v1?key={KEY}"),
    ("query-token", f"https://api.example/v1?x=1&access_token={KEY}"),
    ("query-api-dash-key", f"https://api.example/v1?api-key={KEY}"),
]


@pytest.mark.parametrize("name, url", SECRET_URLS, ids=[c[0] for c in SECRET_URLS])
@pytest.mark.parametrize("which", ["model_args", "judge_model_args"])
def test_fuzz_secret_in_base_url_never_reaches_a_plan(
    session: Session, tmp_path: Path, name: str, url: str, which: str
) -> None:
    args = {"base_url": url, "model": "m"}
    kw: dict[str, Any] = {which: args}
    if which == "judge_model_args":
        kw["judge_model"] = "openai-chat"
    settings = PlanSettings(tasks=("bfi",), model="openai-chat", limit=1, **kw)
    out = expect_clean_error(lambda: build_plan(settings, session), ["base_url"], label=name)
    assert "secrets" in out.message and KEY not in out.message


def test_a_plain_base_url_is_not_a_secret(session: Session) -> None:
    args = {"base_url": "https://api.example/v1?x=1", "model": "m", "api_key_env": "K"}
    settings = PlanSettings(tasks=("bfi",), model="openai-chat", model_args=args, limit=1)
    assert build_plan(settings, session).units


def test_fuzz_case_count() -> None:
    """How many named cases this file adds, per class (reported in the issue's closing note)."""
    counts = {
        "plans": len(PLAN_CASES) + len(SPECIAL),
        "shards/merge": len(SHARD_CASES) + 1,
        "cache import": len(IMPORT_CASES) + len(IMPORT_SPECIAL) + 2,
        "batch": len(BATCH_CASES)
        + len(STATUS_CASES)
        + len(OUTPUT_CASES)
        + len(STATE_CASES)
        + 3
        + 2
        + 2,
        "base_url secrets": 2 * len(SECRET_URLS),
    }
    assert all(n >= 10 for n in counts.values()), counts
    with pytest.raises(PsymError):  # the suite's own sanity: a plain error is a PsymError
        raise PsymError("x")
