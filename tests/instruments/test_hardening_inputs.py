"""Issue 14: hostile input files give one line naming the file (and line), never a traceback,
a hang or a silent success. Each case reproduces a failure listed in the issue."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import load_yaml, read_csv, read_text
from psymetrics_core.cli import cli
from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]
BFI = REPO / "plugins" / "psymetrics-plugin-bfi" / "psymetrics_plugin_bfi" / "instruments" / "bfi"

ALIAS_BOMB = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_yaml_alias_bomb_is_refused_fast(tmp_path: Path) -> None:
    p = tmp_path / "bomb.yaml"
    p.write_text(ALIAS_BOMB)
    t0 = time.monotonic()
    with pytest.raises(PsymError, match="alias bomb") as info:
        load_yaml(p)
    assert time.monotonic() - t0 < 2
    assert str(p) in _one_line(info.value)


def test_yaml_deep_nesting_and_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(PsymError, match="nested"):
        load_yaml(deep)
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" * 1000)
    monkeypatch.setenv("PSYM_MAX_INPUT_BYTES", "1000")
    with pytest.raises(PsymError, match="over the 1,000-byte limit"):
        load_yaml(big)


def test_non_utf8_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "latin1.csv"
    p.write_bytes("id,text\n1,caf\xe9\n".encode("latin-1"))
    with pytest.raises(PsymError, match=r"latin1.csv, line 2: not UTF-8 text \(byte 0xe9"):
        read_text(p)


def test_csv_field_over_limit_and_nul(tmp_path: Path) -> None:
    p = tmp_path / "huge.csv"
    p.write_text('id,text\n1,"' + "x" * 200_000 + '"\n')
    with pytest.raises(PsymError, match=r"huge.csv, line \d+: .*longer than 131,072"):
        read_csv(p)
    n = tmp_path / "nul.csv"
    n.write_bytes(b"id,text\n1,a\x00b\n")
    with pytest.raises(PsymError, match="NUL byte"):
        read_csv(n)


def test_csv_line_numbers_follow_the_file(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text('id,text\n\n1,"two\nlines"\n2,b\n')
    table = read_csv(p)
    assert [line for line, _ in table.rows] == [3, 5]


def _spec_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "bfi"
    shutil.copytree(BFI, dst)
    return dst


def _validate(path: Path) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["validate", str(path)])
    return r.exit_code, r.output + (str(r.exception) if r.exception else "")


def test_validate_alias_bomb_spec(tmp_path: Path) -> None:
    d = _spec_copy(tmp_path)
    (d / "instrument.yaml").write_text(ALIAS_BOMB)
    t0 = time.monotonic()
    with pytest.raises(PsymError, match="alias"):
        from psymetrics_core.instruments.spec import load_instrument

        load_instrument(d)
    assert time.monotonic() - t0 < 2


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("parser", "frist_valid_int", "unknown parser 'frist_valid_int'; did you mean"),
        ("prompt.template", ["a", "b"], "field 'prompt.template': expected a string"),
        ("prompt.template", 12, "field 'prompt.template': expected a string"),
        ("citation", "REPLACE: the reference", "REPLACE placeholder"),
        ("item_source", "REPLACE (where from)", "REPLACE placeholder"),
    ],
)
def test_validate_rejects_silent_successes(
    tmp_path: Path, key: str, value: object, message: str
) -> None:
    import yaml

    d = _spec_copy(tmp_path)
    spec = yaml.safe_load((d / "instrument.yaml").read_text())
    *path, last = key.split(".")
    node = spec
    for part in path:
        node = node[part]
    node[last] = value
    (d / "instrument.yaml").write_text(yaml.safe_dump(spec))
    code, out = _validate(d)
    assert code != 0 and message in out, out


def test_norm_sd_nan_rejected(tmp_path: Path) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = _spec_copy(tmp_path)
    y = (d / "instrument.yaml").read_text()
    assert "sd: " in y
    import re

    y = re.sub(r"sd: [0-9.]+", "sd: .nan", y, count=1)
    (d / "instrument.yaml").write_text(y)
    with pytest.raises(PsymError, match=r"\.sd.: expected a number \(finite\), got nan"):
        load_instrument(d)


def test_results_json_is_valid_even_with_nan(tmp_path: Path) -> None:
    from psymetrics_core.records.writer import write_results

    # validate=False: a bare dict, not a run record (records are validated by the schema tests)
    data = {"a": float("nan"), "b": [float("inf"), 1.0]}
    write_results(tmp_path / "results.json", data, validate=False)
    assert json.loads((tmp_path / "results.json").read_text()) == {"a": None, "b": [None, 1.0]}


PB = {
    "name": "TOY",
    "questions": {"1": "a", "2": "b", "12": "c"},
    "inner_setting": "You can only reply numbers from 1 to 5.",
    "prompt": "Rate from 1 to 5.",
    "scale": 6,
    "compute_mode": "AVG",
    "reverse": [12],
    "categories": [{"cat_name": "All", "cat_questions": [1, 2, 12]}],
}


def _import(tmp_path: Path, obj: object) -> None:
    from psymetrics_core.instruments.psychobench import import_psychobench

    src = tmp_path / "q.json"
    src.write_text(json.dumps(obj))
    import_psychobench(src, tmp_path / "out")


def test_psychobench_reverse_as_string_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PsymError, match="'reverse' should be a list"):
        _import(tmp_path, {**PB, "reverse": "12"})
    _import(tmp_path, PB)  # the list form converts


def test_psychobench_misspelt_categories_is_an_error(tmp_path: Path) -> None:
    bad = {k: v for k, v in PB.items() if k != "categories"}
    bad["catagories"] = PB["categories"]
    with pytest.raises(PsymError, match="unknown field 'catagories'.*'categories'"):
        _import(tmp_path, bad)
    nothing = {k: v for k, v in PB.items() if k != "categories"}
    with pytest.raises(PsymError, match="nothing imported"):
        _import(tmp_path, nothing)


def test_psychobench_non_numeric_norm_refused(tmp_path: Path) -> None:
    # issue 24: a crowd mean or SD that is not a number is refused (naming the crowd and field),
    # no longer dropped quietly
    crowd = [{"crowd_name": "A", "mean": 3, "std": 1}, {"crowd_name": "B", "mean": "n/a", "std": 1}]
    obj = {**PB, "categories": [{**PB["categories"][0], "crowd": crowd}]}
    with pytest.raises(PsymError, match=r"q.json, .*crowd 2, field 'mean': expected a number"):
        _import(tmp_path, obj)
    with pytest.raises(PsymError, match=r"q.json: invalid JSON \(Infinity is not a JSON number"):
        (tmp_path / "q.json").write_text('{"a": Infinity}')
        from psymetrics_core.instruments.psychobench import import_psychobench

        import_psychobench(tmp_path / "q.json", tmp_path / "out2")


def test_persona_alias_bomb_and_latin1(tmp_path: Path) -> None:
    from psymetrics_core.administer.conditions.builtin import _persona

    bomb = tmp_path / "p.yaml"
    bomb.write_text(ALIAS_BOMB)
    with pytest.raises(PsymError, match="alias"):
        _persona(str(bomb))
    lat = tmp_path / "p.txt"
    lat.write_bytes("Tu es un p\xe8re.".encode("latin-1"))
    with pytest.raises(PsymError, match="p.txt, line 1: not UTF-8"):
        _persona(str(lat))


def test_form_missing_is_one_line(fresh_plugins: Session) -> None:
    from psymetrics_core.instruments.item_texts import require_item_texts

    with pytest.raises(PsymError, match="--form alternate: task 'bfi' has no such form"):
        require_item_texts(fresh_plugins.get_instrument("bfi"), "alternate")


def test_items_for_a_task_not_in_the_run() -> None:
    from psymetrics_core.instruments.item_texts import check_item_files

    with pytest.raises(PsymError, match="'pqv' is not among --tasks.*did you mean 'pvq'"):
        check_item_files(["pvq", "bfi"], {"pqv": "x.csv"})


@pytest.mark.parametrize(
    "args, message",
    [
        (["--temperature", "-1"], "--temperature must be a number in 0-100"),
        (["--temperature", "nan"], "--temperature must be a number in 0-100"),
        (["--max-new-tokens", "0"], "--max-new-tokens must be an integer in 1-131,072"),
        (["--max-new-tokens", "-5"], "--max-new-tokens must be an integer in 1-131,072"),
        (["--condition", "reversed-options+"], "empty condition name"),
        (["--items", "bfii=x.csv"], "'bfii' is not among --tasks"),
        (["--task-arg", "bfii.data=x"], "'bfii' is not among --tasks"),
        (["--model-args", "device=gpu"], "device must be cpu, cuda"),
        (["--model-args", "device=banana"], "device must be cpu, cuda"),
        (["--model-args", "batch_size=0"], "batch_size must be at least 1"),
        (["--model-args", "threads=0"], "threads must be at least 1"),
        (["--model-args", "threads=2,threads=3"], "'threads' is given twice"),
        (["--form", "alternate"], "no such form"),
    ],
)
def test_eval_options_rejected_before_model_load(
    tmp_path: Path, args: list[str], message: str
) -> None:
    from psymetrics_core.cli import main

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as info:
        main(["eval", "--tasks", "bfi", "--limit", "1", "--output", str(out), *args])
    assert info.value.code != 0
    assert not out.exists()  # no empty run directory left behind
    # the message itself is checked in-process (no model is loaded: each fails in milliseconds)
    from psymetrics_core import evaluate

    opts: dict[str, object] = {}
    if args[0] == "--temperature":
        opts["temperature"] = float(args[1])
    elif args[0] == "--max-new-tokens":
        opts["max_new_tokens"] = int(args[1])
    elif args[0] == "--condition":
        opts["conditions"] = [args[1]]
    elif args[0] == "--items":
        opts["item_files"] = {"bfii": "x.csv"}
    elif args[0] == "--model-args":
        opts["model_args"] = args[1]
    elif args[0] == "--form":
        opts["form"] = args[1]
    if opts:
        with pytest.raises(PsymError, match=message):
            evaluate(["bfi"], limit=1, **opts)  # type: ignore[arg-type]
