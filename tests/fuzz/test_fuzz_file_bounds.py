"""Fuzz suite, bounds on files (issue 24, items 4, 5 and the earlier residuals): image files
are bounded by size and by their header's dimensions, persona, item and responses files are read
from regular files only, and malformed PsychoBench norms, question texts and prefixes name the
file and field. Numbers given on the command line are in test_fuzz_bounds.py.

Every case is a named parameter. Special files are made in ``tmp_path`` (a FIFO, a directory, a
sparse 3 GB file, symlinks); the only real special files touched are ``/proc/self/environ`` and
``/dev/zero``, and those are refused before they are read.
"""

from __future__ import annotations

import copy
import json
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cases import BASE_ITEMS, BASE_SPEC, dump_spec
from cases_plugins import BASE_PB, png_bytes
from harness import expect_clean_error, shared_session

# -- images (TAT image folders; images sent to a vision model) ---------------------------------


def _jpeg(width: int, height: int) -> bytes:
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + sof + b"\xff\xd9"


def _sparse_png(path: Path) -> None:
    with path.open("wb") as fh:  # a PNG signature, then a 3 GB hole: no 3 GB is written
        fh.write(png_bytes(8, 8))
        fh.truncate(3 * 1024**3)


IMAGES: list[tuple[str, Callable[[Path], None], str]] = [
    ("sparse-3gb-png", _sparse_png, "20,971,520-byte"),
    ("header-2e31-png", lambda p: p.write_bytes(png_bytes(2**31 - 1, 2**31 - 1)), "10,000-pixel"),
    ("header-wide-png", lambda p: p.write_bytes(png_bytes(10_001, 1)), "10,000-pixel"),
    ("header-tall-png", lambda p: p.write_bytes(png_bytes(1, 65_535)), "10,000-pixel"),
    ("header-big-jpeg", lambda p: p.write_bytes(_jpeg(65_500, 65_500)), "10,000-pixel"),
    ("header-zero-png", lambda p: p.write_bytes(png_bytes(0, 5)), "header"),
    ("signature-only-png", lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32), "header"),
    ("truncated-ihdr", lambda p: p.write_bytes(png_bytes(8, 8)[:20]), "header"),
    ("jpeg-no-frame", lambda p: p.write_bytes(b"\xff\xd8\xff" + b"\0" * 64), "header"),
    ("fifo", lambda p: os.mkfifo(p), "no image file"),
    ("directory", lambda p: p.mkdir(), "no image file"),
    ("symlink-proc", lambda p: p.symlink_to("/proc/self/environ"), "no image file"),
]


@pytest.mark.parametrize("name, make, expect", IMAGES, ids=[c[0] for c in IMAGES])
def test_fuzz_image_folder_bounds(
    tmp_path: Path, name: str, make: Callable[[Path], None], expect: str
) -> None:
    tat = pytest.importorskip("psymetrics_plugin_projective.tat")
    folder = tmp_path / "imgs"
    folder.mkdir()
    make(folder / "a.png")
    (folder / "manifest.csv").write_text("file,category\na.png,interpersonal\n")
    out = expect_clean_error(
        lambda: tat.read_image_folder(folder), ["manifest.csv, line 2"], label=name
    )
    assert expect in out.message, out.message


IMAGE_BYTES: list[tuple[str, bytes, str]] = [
    ("bytes-2e31", png_bytes(2**31 - 1, 2**31 - 1), "10,000-pixel"),
    ("bytes-big-jpeg", _jpeg(20_000, 10), "10,000-pixel"),
    ("bytes-not-image", b"GIF89a" + b"\0" * 20, "not a PNG or JPEG"),
    ("bytes-over-cap", png_bytes(8, 8) + b"\0" * (20 * 1024 * 1024), "20,971,520-byte"),
]


@pytest.mark.parametrize("name, data, expect", IMAGE_BYTES, ids=[c[0] for c in IMAGE_BYTES])
def test_fuzz_image_bytes_bounds(name: str, data: bytes, expect: str) -> None:
    """The check ``hf_vision`` runs before decoding a prompt's image."""
    from psymetrics_core.base.images import check_image_bytes

    out = expect_clean_error(lambda: check_image_bytes(data, "image 1"), ["image 1"], label=name)
    assert expect in out.message, out.message


def test_image_within_bounds_is_accepted(tmp_path: Path) -> None:
    from psymetrics_core.base.images import check_image_bytes, check_image_file

    (tmp_path / "a.png").write_bytes(png_bytes(10_000, 10_000))
    assert check_image_file(tmp_path / "a.png") == "image/png"
    assert check_image_bytes(_jpeg(640, 480), "x") == "image/jpeg"


# -- persona, item, responses and spec files: regular files only --------------------------------


def _special(kind: str, tmp_path: Path) -> Path:
    """A special file made in ``tmp_path`` (or one of the two real files read-refused)."""
    if kind == "proc-environ":
        return Path("/proc/self/environ")
    if kind == "dev-zero":
        return Path("/dev/zero")
    p = tmp_path / f"special-{kind}.csv"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "directory":
        p.mkdir()
    elif kind == "link-proc":
        p.symlink_to("/proc/self/environ")
    elif kind == "link-dev-zero":
        p.symlink_to("/dev/zero")
    return p


SPECIAL = ["proc-environ", "dev-zero", "fifo", "directory", "link-proc", "link-dev-zero"]
SPECIAL_EXPECT = {
    "proc-environ": "/proc",
    "dev-zero": "not a regular file",
    "fifo": "not a regular file",
    "directory": "is a directory",
    "link-proc": "/proc",
    "link-dev-zero": "not a regular file",
}


@pytest.mark.parametrize("kind", SPECIAL, ids=[f"persona-{k}" for k in SPECIAL])
def test_fuzz_persona_special_files(tmp_path: Path, kind: str) -> None:
    """``--condition persona=FILE``: /proc/self/environ is never read (nor sent to a model)."""
    from psymetrics_core.administer.conditions.builtin import _persona

    p = _special(kind, tmp_path)
    out = expect_clean_error(lambda: _persona(str(p)), [str(p)], label=kind)
    assert SPECIAL_EXPECT[kind] in out.message and "persona" in out.message, out.message


@pytest.mark.parametrize("kind", SPECIAL, ids=[f"items-{k}" for k in SPECIAL])
def test_fuzz_items_option_special_files(tmp_path: Path, kind: str) -> None:
    """``--items TASK=FILE``: the message names the file and the option."""
    from psymetrics_core.instruments.item_texts import apply_item_texts

    inst = shared_session().get_instrument("bfi")
    p = _special(kind, tmp_path)
    out = expect_clean_error(lambda: apply_item_texts(inst, p), [str(p)], label=kind)
    assert SPECIAL_EXPECT[kind] in out.message and "--items bfi" in out.message, out.message


@pytest.mark.parametrize("kind", SPECIAL, ids=[f"responses-{k}" for k in SPECIAL])
def test_fuzz_responses_special_files(tmp_path: Path, kind: str) -> None:
    from psymetrics_core.administer.answer_files import read_ratings

    inst = shared_session().get_instrument("bfi")
    p = _special(kind, tmp_path)
    out = expect_clean_error(lambda: read_ratings(p, inst), [str(p)], label=kind)
    assert SPECIAL_EXPECT[kind] in out.message and "responses" in out.message, out.message


def _spec_with_forms(tmp_path: Path, forms: Any) -> Path:
    d = tmp_path / "toy"
    d.mkdir(exist_ok=True)
    spec = copy.deepcopy(BASE_SPEC)
    spec["forms"] = forms
    (d / "instrument.yaml").write_bytes(dump_spec(spec))
    (d / "items.csv").write_text(BASE_ITEMS)
    return d


SPEC_FORMS: list[tuple[str, Any, str]] = [
    ("forms-int", {"original": 5}, "form 'original'"),
    ("forms-null", {"original": None}, "form 'original'"),
    ("forms-bool", {"original": True}, "form 'original'"),
    ("forms-list", {"original": ["items.csv"]}, "form 'original'"),
    ("forms-empty-path", {"original": ""}, "form 'original'"),
    ("forms-alt-int", {"original": "items.csv", "alt": 3}, "form 'alt'"),
]


@pytest.mark.parametrize("name, forms, expect", SPEC_FORMS, ids=[c[0] for c in SPEC_FORMS])
def test_fuzz_spec_forms_values(tmp_path: Path, name: str, forms: Any, expect: str) -> None:
    from psymetrics_core.instruments.spec import load_instrument

    d = _spec_with_forms(tmp_path, forms)
    out = expect_clean_error(lambda: load_instrument(d), ["instrument.yaml"], label=name)
    assert "field 'forms'" in out.message and expect in out.message, out.message


@pytest.mark.parametrize("kind", SPECIAL, ids=[f"spec-items-{k}" for k in SPECIAL])
def test_fuzz_spec_items_special_files(tmp_path: Path, kind: str) -> None:
    """An instrument's item CSV that is a directory, device, FIFO or /proc entry: the message
    names instrument.yaml and the field ``forms.original``."""
    from psymetrics_core.instruments.spec import load_instrument

    p = _special(kind, tmp_path)
    d = _spec_with_forms(tmp_path, {"original": str(p)})
    out = expect_clean_error(lambda: load_instrument(d), ["instrument.yaml"], label=kind)
    assert "field 'forms.original'" in out.message, out.message
    assert SPECIAL_EXPECT[kind] in out.message, out.message


# -- run directory: samples.jsonl that is not a regular file -------------------------------------


@pytest.fixture(scope="module")
def a_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real bfi run answered by the scripted test model of the fuzz suite."""
    from test_fuzz_rundirs import _Scripted

    from psymetrics_core import evaluate

    out = tmp_path_factory.mktemp("bounds") / "run"
    evaluate(["bfi"], backend=_Scripted([2, 4]), limit=2, output=out)
    return out


@pytest.mark.parametrize("kind", ["directory", "fifo"], ids=["samples-directory", "samples-fifo"])
def test_fuzz_samples_not_a_file(a_run: Path, tmp_path: Path, kind: str) -> None:
    import shutil

    from psymetrics_core.records.read import load_run_data

    run = tmp_path / "run"
    shutil.copytree(a_run, run)
    (run / "samples.jsonl").unlink()
    if kind == "directory":
        (run / "samples.jsonl").mkdir()
    else:
        os.mkfifo(run / "samples.jsonl")
    out = expect_clean_error(lambda: load_run_data(run), ["samples.jsonl"], label=kind)
    assert SPECIAL_EXPECT[kind] in out.message, out.message


# -- PsychoBench importer: crowd norms, question texts, --prefix ---------------------------------


def _pb(category: dict[str, Any] | None = None, **changes: Any) -> list[dict[str, Any]]:
    obj = copy.deepcopy(BASE_PB)
    if category is not None:
        obj["categories"] = [{**obj["categories"][0], **category}]
    obj.update(changes)
    return [obj]


PB_BOUNDS: list[tuple[str, Any, str, str]] = [
    ("crowd-dict", _pb({"crowd": {"mean": 3, "std": 1, "n": 5}}), "pbi-", "field 'crowd'"),
    ("crowd-string", _pb({"crowd": "Crowd"}), "pbi-", "field 'crowd'"),
    ("crowd-number", _pb({"crowd": 3}), "pbi-", "field 'crowd'"),
    ("crowd-mean-string", _pb({"crowd": [{"mean": "3", "std": 1}]}), "pbi-", "field 'mean'"),
    ("crowd-no-mean", _pb({"crowd": [{"std": 1, "n": 5}]}), "pbi-", "field 'mean'"),
    ("crowd-mean-null", _pb({"crowd": [{"mean": None, "std": 1}]}), "pbi-", "field 'mean'"),
    ("crowd-mean-bool", _pb({"crowd": [{"mean": True, "std": 1}]}), "pbi-", "field 'mean'"),
    ("crowd-mean-list", _pb({"crowd": [{"mean": [3], "std": 1}]}), "pbi-", "field 'mean'"),
    ("crowd-no-std", _pb({"crowd": [{"mean": 3}]}), "pbi-", "field 'std'"),
    ("crowd-std-string", _pb({"crowd": [{"mean": 3, "std": "1"}]}), "pbi-", "field 'std'"),
    (
        "crowd-second-bad",
        _pb({"crowd": [{"mean": 3, "std": 1}, {"mean": "x", "std": 1}]}),
        "pbi-",
        "crowd 2",
    ),
    ("question-null", _pb(questions={"1": None, "2": "b", "3": "c"}), "pbi-", "question '1'"),
    ("question-empty", _pb(questions={"1": "a", "2": "", "3": "c"}), "pbi-", "question '2'"),
    ("question-blank", _pb(questions={"1": "a", "2": "b", "3": "  "}), "pbi-", "question '3'"),
    ("question-number", _pb(questions={"1": 5, "2": "b", "3": "c"}), "pbi-", "question '1'"),
    ("question-list", _pb(questions={"1": ["a"], "2": "b", "3": "c"}), "pbi-", "question '1'"),
    ("prefix-space-slash", _pb(), "a b/", "--prefix"),
    ("prefix-dotdot", _pb(), "../x-", "--prefix"),
    ("prefix-dot", _pb(), "x.y", "--prefix"),
    ("prefix-300", _pb(), "p" * 300, "--prefix"),
]


@pytest.mark.parametrize("name, obj, prefix, expect", PB_BOUNDS, ids=[c[0] for c in PB_BOUNDS])
def test_fuzz_psychobench_residuals(
    tmp_path: Path, name: str, obj: Any, prefix: str, expect: str
) -> None:
    """Refused before anything is written, naming q.json (or --prefix) and the field."""
    from psymetrics_core.instruments.psychobench import import_psychobench

    src = tmp_path / "q.json"
    src.write_text(json.dumps(obj))
    names = ["--prefix"] if expect == "--prefix" else ["q.json"]
    out = expect_clean_error(
        lambda: import_psychobench(src, tmp_path / "out", prefix=prefix), names, label=name
    )
    assert expect in out.message, out.message
    assert not (tmp_path / "out").exists()
