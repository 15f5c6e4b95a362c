"""Fuzz suite (issue 14): hundreds of malformed inputs across every loader and CLI input surface.

Each input must end in one ``PsymError`` line naming the file, line or field, within a time and
memory bound (see ``harness.py``), never in a traceback, a hang or a silent success. Most cases
call the loaders in-process (fast); ``test_fuzz_cli_sample`` runs a sample through the real
``psym`` command in a subprocess under an address-space limit.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cases import (
    ALIAS_BOMB,
    BASE_ITEMS,
    BASE_PB,
    BASE_SPEC,
    CONDITIONS,
    DILEMMA_RAW,
    GENERATIONS_RAW,
    GRAPH_FILES,
    HOUSING_RAW,
    ITEM_TEXT_FILES,
    ITEMS_OPTION,
    ITEMS_RAW,
    KEYWORD_RAW,
    KEYWORD_TEXTS,
    LABELS_RAW,
    MANIFEST_RAW,
    MODEL_ARGS,
    PB_CASES,
    PB_RAW,
    PERSONA_RAW,
    PNG,
    RESPONSES_RAW,
    SAFETENSORS_RAW,
    SPEC_EDITS,
    SPEC_RAW,
    TASK_ARGS,
    all_case_count,
    dump_spec,
)
from harness import expect_clean_error
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psymetrics_core.base.errors import PsymError

FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


def _spec_dir(tmp_path: Path, spec: bytes, items: bytes = BASE_ITEMS.encode()) -> Path:
    d = tmp_path / "toy"
    d.mkdir(exist_ok=True)
    (d / "instrument.yaml").write_bytes(spec)
    (d / "items.csv").write_bytes(items)
    return d


def test_suite_has_at_least_300_inputs() -> None:
    assert all_case_count() >= 300, all_case_count()


def test_bases_are_valid(tmp_path: Path) -> None:
    """Every mutation starts from an input that loads: the failures below are the mutations'."""
    from psymetrics_core.instruments.psychobench import import_psychobench
    from psymetrics_core.instruments.spec import load_instrument

    inst = load_instrument(_spec_dir(tmp_path, dump_spec(BASE_SPEC)))
    assert [it.id for it in inst.items] == ["1", "2"]
    (tmp_path / "q.json").write_text(__import__("json").dumps([BASE_PB]))
    assert import_psychobench(tmp_path / "q.json", tmp_path / "out").tasks == ["pbi-toy"]


# -- instrument YAML and item CSV -----------------------------------------------------------------


@pytest.mark.parametrize("name, edit, field", SPEC_EDITS, ids=[c[0] for c in SPEC_EDITS])
def test_fuzz_spec_fields(tmp_path: Path, name: str, edit: Any, field: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = _spec_dir(tmp_path, dump_spec(edit(BASE_SPEC)))
    expect_clean_error(lambda: load_instrument(d), ["instrument.yaml", ".csv"], label=name)


@pytest.mark.parametrize("name, raw, expect", SPEC_RAW, ids=[c[0] for c in SPEC_RAW])
def test_fuzz_spec_text(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = _spec_dir(tmp_path, raw)
    out = expect_clean_error(lambda: load_instrument(d), ["instrument.yaml"], label=name)
    assert expect in out.message or "instrument.yaml" in expect, out.message


@pytest.mark.parametrize("name, raw, expect", ITEMS_RAW, ids=[c[0] for c in ITEMS_RAW])
def test_fuzz_item_csv(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    spec = dict(BASE_SPEC)
    if "response_scale" in name:
        pass
    d = _spec_dir(tmp_path, dump_spec(spec), raw)
    out = expect_clean_error(lambda: load_instrument(d), ["items.csv"], label=name)
    assert expect in out.message, out.message


@FAST
@given(
    cell=st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
        max_size=40,
    ).filter(
        lambda s: (
            s.strip().lower()
            not in {
                "",
                "0",
                "1",
                "true",
                "false",
                "yes",
                "no",
                "y",
                "n",
                "r",
                "reverse",
                "reversed",
            }
        )
    )
)
def test_fuzz_item_reverse_cells(tmp_path: Path, cell: str) -> None:
    """Any reverse value outside the accepted words is an error naming the field."""
    import csv
    import io

    from psymetrics_core.instruments.spec import load_instrument

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows([["id", "text", "scale", "reverse"], ["1", "A", "alpha", cell]])
    d = _spec_dir(tmp_path, dump_spec(BASE_SPEC), buf.getvalue().encode())
    expect_clean_error(lambda: load_instrument(d), ["reverse"], label=repr(cell))


def test_fuzz_spec_over_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = _spec_dir(tmp_path, dump_spec(BASE_SPEC) + b"# " + b"x" * 4000 + b"\n")
    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", "2000")
    out = expect_clean_error(lambda: load_instrument(d), ["instrument.yaml"], label="size")
    assert "limit" in out.message


def test_fuzz_instruments_path_bomb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``psym list`` with an alias bomb on PSYM_INSTRUMENTS_PATH reports it and lists the rest."""
    from click.testing import CliRunner

    from psymetrics_core.cli import cli

    _spec_dir(tmp_path, ALIAS_BOMB.encode())
    monkeypatch.setenv("PSYM_INSTRUMENTS_PATH", str(tmp_path))
    r = CliRunner().invoke(cli, ["list"])  # a fresh session of this invocation reads the path
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "bfi" in r.output and "alias" in r.output, r.output[-500:]


# -- responses CSV (psym score) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed() -> Any:
    """One session of the installed plugins for this module's read-only look-ups."""
    from psymetrics_core.pluginsys.session import Session

    return Session()


@pytest.fixture(scope="module")
def bfi(installed: Any) -> Any:
    return installed.get_instrument("bfi")


@pytest.mark.parametrize("name, raw, expect", RESPONSES_RAW, ids=[c[0] for c in RESPONSES_RAW])
def test_fuzz_responses_csv(tmp_path: Path, bfi: Any, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.administer.answer_files import read_responses

    p = tmp_path / "responses.csv"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_responses(p, bfi), ["responses.csv"], label=name)
    assert expect in out.message, out.message


@FAST
@given(
    value=st.one_of(
        st.integers().filter(lambda v: not 1 <= v <= 5).map(str),
        st.text(alphabet="abcxyz!?-+. ", min_size=1, max_size=12).filter(
            lambda s: s.strip() not in {"", "1", "2", "3", "4", "5"}
        ),
        st.floats(allow_nan=True, allow_infinity=True)
        .filter(lambda f: not (f == f and float(f).is_integer() and 1 <= f <= 5))
        .map(repr),
    ),
    rows=st.integers(min_value=0, max_value=5),
)
def test_fuzz_responses_values(tmp_path: Path, bfi: Any, value: str, rows: int) -> None:
    """A response that is not a value of the scale is always an error naming its line."""
    import csv
    import io

    from psymetrics_core.administer.answer_files import read_responses

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["respondent", "item", "response"])
    for i in range(rows):
        w.writerow(["A", str(i + 1), "3"])
    w.writerow(["A", "40", value])
    p = tmp_path / "r.csv"
    p.write_text(buf.getvalue())
    expect_clean_error(lambda: read_responses(p, bfi), [f"line {rows + 2}"], label=repr(value))


def test_fuzz_score_missing_form(tmp_path: Path, installed: Any) -> None:
    from psymetrics_core.administer.answers import score_responses

    p = tmp_path / "r.csv"
    p.write_text("respondent,item,response\nA,1,3\n")
    expect_clean_error(
        lambda: score_responses("bfi", p, installed, form="alternate"), ["alternate"]
    )


@pytest.mark.parametrize(
    "name, filename, raw, expect", GENERATIONS_RAW, ids=[c[0] for c in GENERATIONS_RAW]
)
def test_fuzz_generations(
    tmp_path: Path, name: str, filename: str, raw: bytes, expect: str, installed: Any
) -> None:
    """Generations of a free-text task (``psym score --task refletter``): one line naming it."""
    from psymetrics_core.administer.answer_files import read_generations

    task = installed.get_instrument("refletter")
    p = tmp_path / filename
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_generations(p, task), [filename], label=name)
    assert expect in out.message, out.message


# -- JSONL samples (psym analyze): see test_fuzz_rundirs.py (damaged files of a valid run) -------


# -- PsychoBench JSON -----------------------------------------------------------------------------


def _pb_import(tmp_path: Path, raw: bytes) -> None:
    from psymetrics_core.instruments.psychobench import import_psychobench

    src = tmp_path / "q.json"
    src.write_bytes(raw)
    import_psychobench(src, tmp_path / "out")


@pytest.mark.parametrize("name, obj, expect", PB_CASES, ids=[c[0] for c in PB_CASES])
def test_fuzz_psychobench(tmp_path: Path, name: str, obj: Any, expect: str) -> None:
    import json

    raw = json.dumps(obj).encode()
    out = expect_clean_error(lambda: _pb_import(tmp_path, raw), ["q.json"], label=name)
    assert expect in out.message, out.message
    assert not (tmp_path / "out").exists() or name in {"cat-unknown-q"}  # nothing half-written


@pytest.mark.parametrize("name, raw, expect", PB_RAW, ids=[c[0] for c in PB_RAW])
def test_fuzz_psychobench_text(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    out = expect_clean_error(lambda: _pb_import(tmp_path, raw), ["q.json"], label=name)
    assert expect in out.message, out.message


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@FAST
@given(
    field=st.sampled_from(["name", "questions", "prompt", "scale", "reverse", "categories"]),
    value=JSON_VALUES,
)
def test_fuzz_psychobench_field_values(tmp_path: Path, field: str, value: Any) -> None:
    """A required field given a value of the wrong kind is an error, never a traceback."""
    import json

    ok = {
        "name": lambda v: isinstance(v, str),
        "questions": lambda v: isinstance(v, dict),
        "prompt": lambda v: isinstance(v, str),
        "scale": lambda v: v == 6,
        "reverse": lambda v: v is None or (isinstance(v, list) and not v),
        "categories": lambda v: False,
    }
    if ok[field](value):
        return
    if field == "categories" and isinstance(value, list) and value:
        return  # a list of categories may be valid; covered by the named cases
    raw = json.dumps([{**BASE_PB, field: value}]).encode()
    expect_clean_error(lambda: _pb_import(tmp_path, raw), ["q.json"], label=f"{field}={value!r}")


# -- plugin data files: housing table, persona, dilemmas ------------------------------------------


@pytest.mark.parametrize("name, raw, expect", HOUSING_RAW, ids=[c[0] for c in HOUSING_RAW])
def test_fuzz_housing_table(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_plugin_housing.table import read_table

    p = tmp_path / "t.csv"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_table(p), ["t.csv"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, fname, raw, expect", PERSONA_RAW, ids=[c[0] for c in PERSONA_RAW])
def test_fuzz_persona(tmp_path: Path, name: str, fname: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.administer.conditions.builtin import _persona

    p = tmp_path / fname
    p.write_bytes(raw)
    out = expect_clean_error(lambda: _persona(str(p)), [fname], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, fname, raw, expect", DILEMMA_RAW, ids=[c[0] for c in DILEMMA_RAW])
def test_fuzz_dilemmas(tmp_path: Path, name: str, fname: str, raw: bytes, expect: str) -> None:
    from psymetrics_plugin_moral_advice.dilemmas import read_dilemma_file

    p = tmp_path / fname
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_dilemma_file(p), [fname], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", KEYWORD_RAW, ids=[c[0] for c in KEYWORD_RAW])
def test_fuzz_keyword_files(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    kw = pytest.importorskip("psymetrics_plugin_contamination.keywords")
    p = tmp_path / "k.csv"
    p.write_bytes(raw)
    out = expect_clean_error(
        lambda: kw.load_keyword_file(p, KEYWORD_TEXTS, "t"), ["k.csv"], label=name
    )
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", LABELS_RAW, ids=[c[0] for c in LABELS_RAW])
def test_fuzz_label_files(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    labels = pytest.importorskip("psymetrics_plugin_projective.labels")
    p = tmp_path / "labels.json"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: labels.read_labels(p), ["labels.json"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", MANIFEST_RAW, ids=[c[0] for c in MANIFEST_RAW])
def test_fuzz_image_manifests(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    tat = pytest.importorskip("psymetrics_plugin_projective.tat")
    folder = tmp_path / "imgs"
    folder.mkdir()
    (folder / "a.png").write_bytes(PNG)
    (folder / "notes.txt").write_text("hello")
    (tmp_path / "a.png").write_bytes(PNG)  # outside the folder: must not be reachable
    (folder / "manifest.csv").write_bytes(raw)
    out = expect_clean_error(lambda: tat.read_image_folder(folder), ["manifest.csv"], label=name)
    assert expect in out.message, out.message


# -- command-line values --------------------------------------------------------------------------


@pytest.mark.parametrize("name, values, expect", ITEMS_OPTION, ids=[c[0] for c in ITEMS_OPTION])
def test_fuzz_items_option(name: str, values: list[str], expect: str) -> None:
    from psymetrics_core.instruments.item_texts import parse_items_option

    out = expect_clean_error(lambda: parse_items_option(values), ["--items"], label=name)
    assert expect in out.message


@pytest.fixture(scope="module")
def sd3(installed: Any) -> Any:
    return installed.get_instrument("sd3")


@pytest.mark.parametrize("name, raw, expect", ITEM_TEXT_FILES, ids=[c[0] for c in ITEM_TEXT_FILES])
def test_fuzz_item_text_files(tmp_path: Path, sd3: Any, name: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.instruments.item_texts import require_item_texts

    p = tmp_path / "texts.csv"
    p.write_bytes(raw)
    out = expect_clean_error(
        lambda: require_item_texts(sd3, "original", {"sd3": p}), ["texts.csv"], label=name
    )
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, model, args, expect", MODEL_ARGS, ids=[c[0] for c in MODEL_ARGS])
def test_fuzz_model_args(installed: Any, name: str, model: str, args: str, expect: str) -> None:
    """Backends are built (never loaded) from bad --model-args: one line naming the argument."""
    out = expect_clean_error(lambda: installed.make_backend(model, args), [], label=name)
    assert expect in out.message, out.message


@FAST
@given(text=st.text(alphabet="abc=,:/ \t%", max_size=30))
def test_fuzz_model_args_text(text: str) -> None:
    """Arbitrary --model-args text is parsed or refused in one line, never a traceback."""
    from psymetrics_core.backends.base import parse_model_args

    try:
        parsed = parse_model_args(text)
    except PsymError as exc:
        assert "\n" not in str(exc)
        return
    assert all(k for k in parsed)


@pytest.mark.parametrize("name, values, expect", TASK_ARGS, ids=[c[0] for c in TASK_ARGS])
def test_fuzz_task_args(installed: Any, name: str, values: list[str], expect: str) -> None:
    from psymetrics_core.administer.options import parse_task_args
    from psymetrics_core.administer.runner import evaluate

    def run() -> None:
        opts = parse_task_args(values, ["bfi"], session=installed)
        evaluate(["bfi"], task_options=opts, limit=1, model="no-such-backend", session=installed)

    out = expect_clean_error(run, ["--task-arg", "bfi", "option"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, values, expect", CONDITIONS, ids=[c[0] for c in CONDITIONS])
def test_fuzz_conditions(installed: Any, name: str, values: list[str], expect: str) -> None:
    from psymetrics_core.administer.conditions import cells_for

    out = expect_clean_error(lambda: cells_for(values, installed), [], label=name)
    assert expect in out.message, out.message


@FAST
@given(spec=st.text(alphabet="+=abcdefghijklmnopqrstuvwxyz-", max_size=25))
def test_fuzz_condition_text(installed: Any, spec: str) -> None:
    """Arbitrary --condition text builds cells or fails in one line."""
    from psymetrics_core.administer.conditions import cells_for

    try:
        cells = cells_for([spec], installed)
    except PsymError as exc:
        assert "\n" not in str(exc)
        return
    assert cells


def test_fuzz_design_and_limits() -> None:
    from psymetrics_core import evaluate

    for kwargs, expect in [
        ({"design": "diagonal"}, "--design"),
        ({"limit": 0}, "--limit"),
        ({"repeats": 0}, "--repeats"),
        ({"mode": "vibes"}, "--mode"),
        ({"temperature": float("inf")}, "--temperature"),
        ({"judge_max_new_tokens": -1}, "--judge-max-new-tokens"),
    ]:
        out = expect_clean_error(lambda k=kwargs: evaluate(["bfi"], **k), [], label=str(kwargs))
        assert expect in out.message, out.message


# -- output and cache paths -----------------------------------------------------------------------


def test_fuzz_output_and_cache_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from psymetrics_core.backends.cache import ResponseCache
    from psymetrics_core.records.rundir import claim_run_dir

    afile = tmp_path / "f"
    afile.write_text("x")
    (tmp_path / "r" / "results.json").mkdir(parents=True)
    held = tmp_path / "held"

    def twice() -> None:
        with claim_run_dir(held), claim_run_dir(held):
            pass

    done = tmp_path / "done"
    done.mkdir()
    (done / "samples.jsonl").write_text("{}\n")
    for label, fn, name in [
        ("output=file", lambda: claim_run_dir(afile).__enter__(), "f"),
        ("output-under-file", lambda: claim_run_dir(afile / "a" / "b").__enter__(), "f"),
        ("results.json-dir", lambda: claim_run_dir(tmp_path / "r").__enter__(), "results.json"),
        ("locked", twice, "held"),
        ("existing-run", lambda: claim_run_dir(done).__enter__(), "done"),
        (
            "both-flags",
            lambda: claim_run_dir(done, overwrite=True, resume=True).__enter__(),
            "--overwrite",
        ),
        ("cache-dir-file", lambda: ResponseCache(afile / "responses.sqlite3"), "f"),
        ("cache-db-dir", lambda: ResponseCache(tmp_path / "r"), "r"),
    ]:
        expect_clean_error(fn, [name], label=label)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database" * 100)
    expect_clean_error(lambda: ResponseCache(junk).stats(), ["junk.sqlite3"], label="junk-db")


# -- a sample through the real CLI, in subprocesses with an address-space limit -------------------

MEMORY_LIMIT = 3 * 1024**3  # bytes of address space for one `psym` process


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _cli_cases(tmp: Path) -> list[tuple[str, list[str], str]]:
    bomb = _spec_dir(tmp / "bomb", ALIAS_BOMB.encode()) if (tmp / "bomb").mkdir() is None else tmp
    latin = tmp / "latin.csv"
    latin.write_bytes(b"respondent,item,response\nA,1,\xe9\n")
    huge = tmp / "huge.csv"
    huge.write_text('respondent,item,response\nA,1,"' + "9" * 200_000 + '"\n')
    pb = tmp / "pb.json"
    pb.write_text('[{"name": "X", "catagories": []}]')
    persona = tmp / "p.yaml"
    persona.write_text(ALIAS_BOMB)
    return [
        ("validate-bomb", ["validate", str(bomb)], "alias"),
        ("score-latin1", ["score", "--task", "bfi", "--responses", str(latin)], "UTF-8"),
        ("score-huge-field", ["score", "--task", "bfi", "--responses", str(huge)], "131,072"),
        (
            "import-catagories",
            ["import", "psychobench", str(pb), "--output", str(tmp / "o")],
            "catagories",
        ),
        (
            "eval-persona-bomb",
            [
                "eval",
                "--tasks",
                "bfi",
                "--condition",
                f"persona={persona}",
                "--output",
                str(tmp / "run1"),
            ],
            "alias",
        ),
        (
            "eval-form",
            ["eval", "--tasks", "bfi", "--form", "alternate", "--output", str(tmp / "run2")],
            "alternate",
        ),
        (
            "eval-temperature",
            ["eval", "--tasks", "bfi", "--temperature", "nan", "--output", str(tmp / "run3")],
            "--temperature",
        ),
        (
            "eval-device",
            ["eval", "--tasks", "bfi", "--model-args", "device=gpu", "--output", str(tmp / "run4")],
            "device",
        ),
    ]


def test_fuzz_cli_sample(tmp_path: Path) -> None:
    env = {**os.environ, "PSYM_CACHE_DIR": str(tmp_path / "cache"), "PSYM_DEBUG": "0"}
    for label, args, expect in _cli_cases(tmp_path):
        r = subprocess.run(
            [sys.executable, "-m", "psymetrics_core", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_limited,
        )
        err = r.stderr.strip()
        assert r.returncode not in (0, None), f"{label}: exit 0 on invalid input"
        assert "Traceback" not in err, f"{label}: {err[-2000:]}"
        lines = [x for x in err.splitlines() if x.startswith("psym")]
        assert len(lines) == 1 and expect in lines[0], f"{label}: {err[-1000:]}"
        assert not (tmp_path / "run1").exists() and not (tmp_path / "run4").exists()


# -- validity pairing files, results.json given to psym validity, plugin catalogue ----------------

OTHER_FILES = [
    ("pairs-bomb", "pairs.yaml", ALIAS_BOMB.encode(), "alias"),
    ("pairs-latin1", "pairs.yaml", b"pairs: [" + "\xe9".encode("latin-1") + b"]\n", "UTF-8"),
    ("pairs-list", "pairs.yaml", b"- a\n", "pairs"),
    ("pairs-bad-entry", "pairs.yaml", b"pairs: [3]\n", "pair 1"),
    ("results-array", "results.json", b"[1, 2]", "JSON object"),
    ("results-nan", "results.json", b'{"tasks": NaN}', "NaN"),
    ("results-latin1", "results.json", b'{"a": "' + "\xe9".encode("latin-1") + b'"}', "UTF-8"),
    ("catalogue-bomb", "plugins.yaml", ALIAS_BOMB.encode(), "alias"),
    ("catalogue-latin1", "plugins.yaml", b"plugins: [" + "\xe9".encode("latin-1") + b"]", "UTF-8"),
]


@pytest.mark.parametrize("name, fname, raw, expect", OTHER_FILES, ids=[c[0] for c in OTHER_FILES])
def test_fuzz_other_files(tmp_path: Path, name: str, fname: str, raw: bytes, expect: str) -> None:
    from psymetrics_core.analysis.ecological import load_pairs, read_runs
    from psymetrics_core.pluginsys.catalogue import catalogue

    p = tmp_path / fname
    p.write_bytes(raw)
    call = {
        "pairs.yaml": lambda: load_pairs(p),
        "results.json": lambda: read_runs([tmp_path]),
        "plugins.yaml": lambda: catalogue(p),
    }[fname]
    out = expect_clean_error(call, [fname], label=name)
    assert expect in out.message, out.message


MEMOS = [
    ("binary", bytes(range(256))),
    ("not-json", b"{oops"),
    ("a-list", b"[1, 2, 3]"),
    ("entry-not-object", b'{"PATH": 42}'),
    ("stamp-wrong-type", b'{"PATH": {"stamp": "x", "sha256": "planted"}}'),
    ("sha-not-string", b'{"PATH": {"stamp": STAMP, "sha256": 7}}'),
    ("empty", b""),
    ("sha-not-hex", b'{"PATH": {"stamp": STAMP, "sha256": "planted"}}'),
    ("deep-nesting", b"[" * 100_000 + b"]" * 100_000),
]


@pytest.mark.parametrize("name, raw", MEMOS, ids=[m[0] for m in MEMOS])
def test_fuzz_file_hash_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, raw: bytes
) -> None:
    """A damaged ``file-hashes.json`` (provenance's memo of large files' sha256) is never
    trusted and never an error: the file is hashed again and the memo rewritten."""
    import hashlib
    import json as _json
    import os

    from psymetrics_core.records import provenance

    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    big = tmp_path / "weights.bin"
    big.write_bytes(os.urandom(5 << 20))
    st = big.stat()
    stamp = _json.dumps([st.st_size, st.st_mtime_ns, st.st_ino])
    (tmp_path / "cache").mkdir()
    memo = tmp_path / "cache" / "file-hashes.json"
    memo.write_bytes(
        raw.replace(b"PATH", str(big.resolve()).encode()).replace(b"STAMP", stamp.encode())
    )
    monkeypatch.setattr(provenance, "_HASHES", {})
    assert provenance.sha256_file(big) == hashlib.sha256(big.read_bytes()).hexdigest()
    assert _json.loads(memo.read_text())[str(big.resolve())]["stamp"] == _json.loads(stamp)


TASK_INT_VALUES = ["--5", "\u00b2", "1e3", "-1", "", "  ", "9" * 5000, "0x10", "1.5"]


@pytest.mark.parametrize("raw", TASK_INT_VALUES, ids=[f"v{i}" for i in range(len(TASK_INT_VALUES))])
def test_fuzz_task_integer_options(raw: str) -> None:
    """An integer task option (e.g. a projective task's ``stimulus_seed``) given junk: one
    line naming the task and option, never a ValueError traceback."""
    from psymetrics_core.administer.kinds import FreeTextTask

    task = FreeTextTask.define(
        id="t",
        name="t",
        version="1",
        citation="c",
        license_status="l",
        item_source="s",
        scoring_rule="r",
        scales={},
        options={"n": "an integer"},
    )
    task.options = {"n": raw}
    out = expect_clean_error(lambda: task.option_int("n", 1), ["option n"], label=raw[:20])
    assert "task 't'" in out.message


@pytest.mark.parametrize("name, raw, expect", RESPONSES_RAW, ids=[c[0] for c in RESPONSES_RAW])
def test_fuzz_analyze_responses_csv(
    tmp_path: Path, bfi: Any, name: str, raw: bytes, expect: str
) -> None:
    """``psym analyze --responses`` reads through the same reader as ``psym score``: the same
    junk gives the same one-line error naming the file."""
    from psymetrics_core.analysis.responses import read_long

    p = tmp_path / "responses.csv"
    p.write_bytes(raw)
    out = expect_clean_error(lambda: read_long(p, bfi), ["responses.csv"], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw, expect", SAFETENSORS_RAW, ids=[c[0] for c in SAFETENSORS_RAW])
def test_fuzz_safetensors(tmp_path: Path, name: str, raw: bytes, expect: str) -> None:
    """A damaged ``model.safetensors`` (memory-mapped for ONNX Runtime scoring) is one line
    naming the file (and the tensor), never a traceback or a wrong-shaped array."""
    pytest.importorskip("numpy")
    pytest.importorskip("psymetrics_plugin_llama_engine")  # the optional engine distribution
    from psymetrics_plugin_llama_engine.onnx_llama import read_safetensors

    path = tmp_path / "model.safetensors"
    path.write_bytes(raw)
    out = expect_clean_error(lambda: read_safetensors(path), [str(path)], label=name)
    assert expect in out.message, out.message


@pytest.mark.parametrize("name, raw", GRAPH_FILES, ids=[c[0] for c in GRAPH_FILES])
def test_fuzz_onnx_graph_file(tmp_path: Path, name: str, raw: bytes) -> None:
    """A damaged cached ONNX layer graph is never trusted and never an error: the graph is
    built again, the file rewritten, and the session takes the layer's inputs."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("psymetrics_plugin_llama_engine")
    from psymetrics_plugin_llama_engine import onnx_llama
    from psymetrics_plugin_llama_engine.native_llama import LlamaShape

    shape = LlamaShape(
        hidden=8, layers=1, heads=2, kv_heads=1, head_dim=4, eps=1e-5, rope_theta=10000.0, tied=True
    )
    path = onnx_llama._graph_path(shape, True, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    session = onnx_llama._layer_session(shape, True, tmp_path, ort.SessionOptions())
    assert "keep" in {i.name for i in session.get_inputs()}
    assert path.read_bytes() == onnx_llama._layer_graph(shape, True)
