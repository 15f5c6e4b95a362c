"""Fuzz suite, studies: damaged plans (``psym run PLAN``), shard directories (``psym merge``),
and secrets inside ``base_url``; shard directories (``psym merge``), cache export files
(``psym cache import``) and hostile Batch API replies (``psym batch``) are in test_fuzz_merge.py,
test_fuzz_cache_import.py and test_fuzz_batch.py, and this file counts the cases of all four.

Every case must end in one ``PsymError`` line naming the file (or the endpoint), the line and
the field where there is one (``harness.expect_clean_error``: no other exception, one line,
within the time and memory bounds). Special files are private FIFOs, directories and symlinks
in ``tmp_path`` (no real device node is opened); the Batch API server is a real loopback HTTP
server in a thread, and the hanging server a real socket that accepts and never answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import expect_clean_error, shared_session
from studies_shared import BIG_INT, DEEP_ARRAY, DEEP_OBJECT, KEY, SPECIAL
from test_fuzz_batch import BATCH_CASES, OUTPUT_CASES, STATE_CASES, STATUS_CASES
from test_fuzz_cache_import import IMPORT_CASES, IMPORT_SPECIAL
from test_fuzz_merge import SHARD_CASES

from psymetrics_core.base.errors import PsymError
from psymetrics_core.pluginsys.session import Session
from psymetrics_core.study.plan import PlanSettings, build_plan, read_plan, write_plan


@pytest.fixture(scope="module")
def session() -> Session:
    return shared_session()


@pytest.fixture(scope="module")
def plan_lines(session: Session, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A valid plan (bfi, 2 items, 2 repeats = 2 units) as its text lines."""
    path = tmp_path_factory.mktemp("plan") / "plan.jsonl"
    write_plan(build_plan(PlanSettings.of(tasks=("bfi",), limit=2, repeats=2), session), path)
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
    ("judge-batch-zero", _settings("judge_batch", 0), "field 'settings.judge_batch'"),
    ("judge-batch-text", _settings("judge_batch", "10"), "field 'settings.judge_batch'"),
    ("judge-batch-bool", _settings("judge_batch", True), "field 'settings.judge_batch'"),
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


@pytest.mark.parametrize("name, make, expect", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_fuzz_plan_special_files(tmp_path: Path, name: str, make: Any, expect: str) -> None:
    path = make(tmp_path)
    out = expect_clean_error(lambda: read_plan(path), [str(path)], label=f"plan {name}")
    assert expect in out.message, out.message


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
    settings = PlanSettings.of(tasks=("bfi",), model="openai-chat", limit=1, **kw)
    out = expect_clean_error(lambda: build_plan(settings, session), ["base_url"], label=name)
    assert "secrets" in out.message and KEY not in out.message


def test_a_plain_base_url_is_not_a_secret(session: Session) -> None:
    args = {"base_url": "https://api.example/v1?x=1", "model": "m", "api_key_env": "K"}
    settings = PlanSettings.of(tasks=("bfi",), model="openai-chat", model_args=args, limit=1)
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
