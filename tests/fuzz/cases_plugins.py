"""Malformed data files of the bundled plugins (PsychoBench questionnaires, the housing table,
personas, moral-advice dilemmas, contamination keyword files, projective labels and image
manifests), generated from small valid files by named mutations (see cases.py)."""

from __future__ import annotations

import copy
import json
import struct
import zlib
from typing import Any

from cases import ALIAS_BOMB, DEEP_JSON, DEEP_YAML, HUGE_FIELD, JUNK, LATIN1

# -- PsychoBench questionnaires.json ------------------------------------------------------------

BASE_PB: dict[str, Any] = {
    "name": "TOY",
    "questions": {"1": "a", "2": "b", "3": "c"},
    "inner_setting": "You can only reply numbers from 1 to 5.",
    "prompt": "Rate each statement from 1 to 5.",
    "scale": 6,
    "compute_mode": "AVG",
    "reverse": [2],
    "categories": [
        {"cat_name": "All", "cat_questions": [1, 2, 3], "crowd": [{"mean": 3, "std": 1, "n": 5}]}
    ],
}


def _pb(**changes: Any) -> Any:
    out = copy.deepcopy(BASE_PB)
    for k, v in changes.items():
        if v is _DROP:
            out.pop(k, None)
        else:
            out[k] = v
    return out


_DROP = object()
PB_CASES: list[tuple[str, Any, str]] = [
    ("reverse-string", _pb(reverse="12"), "reverse"),
    ("reverse-dict", _pb(reverse={"1": 1}), "reverse"),
    ("reverse-unknown", _pb(reverse=[9]), "unknown item"),
    ("reverse-floats", _pb(reverse=[1.5]), "reverse"),
    ("catagories", {**_pb(categories=_DROP), "catagories": BASE_PB["categories"]}, "catagories"),
    ("no-categories", _pb(categories=_DROP), "nothing imported"),
    ("categories-string", _pb(categories="All"), "categories"),
    ("cat-no-name", _pb(categories=[{"cat_questions": [1]}]), "cat_name"),
    ("cat-questions-str", _pb(categories=[{"cat_name": "A", "cat_questions": "12"}]), "list"),
    ("cat-unknown-q", _pb(categories=[{"cat_name": "A", "cat_questions": [7]}]), "unknown"),
    (
        "crowd-not-obj",
        _pb(categories=[{"cat_name": "A", "cat_questions": [1], "crowd": [3]}]),
        "crowd",
    ),
    ("no-name", _pb(name=_DROP), "name"),
    ("name-number", _pb(name=3), "name"),
    ("no-questions", _pb(questions=_DROP), "questions"),
    ("questions-list", _pb(questions=["a", "b"]), "questions"),
    ("no-prompt", _pb(prompt=_DROP), "prompt"),
    ("prompt-number", _pb(prompt=5), "prompt"),
    ("no-range", _pb(prompt="Rate.", inner_setting="Reply."), "from MIN to MAX"),
    ("scale-wrong", _pb(scale=5), "scale"),
    ("scale-string", _pb(scale="6"), "scale"),
    ("compute-mode", _pb(compute_mode="MEDIAN"), "compute_mode"),
    ("empty-list", [], "expected a JSON list"),
    ("a-number", 3, "expected a JSON list"),
    ("a-string", "x", "expected a JSON list"),
    ("list-of-numbers", [1, 2], "entry 0"),
    ("null", None, "expected a JSON list"),
]
PB_RAW: list[tuple[str, bytes, str]] = [
    ("not-json", b"[{", "invalid JSON"),
    ("nan", b'[{"name": NaN}]', "NaN"),
    ("latin-1", b'[{"name": "' + LATIN1 + b'"}]', "UTF-8"),
    ("deep", DEEP_JSON.encode(), "q.json"),
    ("junk", JUNK, "q.json"),
    ("empty", b"", "invalid JSON"),
    ("trailing", json.dumps([BASE_PB]).encode() + b" x", "invalid JSON"),
]

# -- housing table ------------------------------------------------------------------------------

HT = b"city,neighborhood,opportunity_index\n"
HOUSING_RAW: list[tuple[str, bytes, str]] = [
    ("no-oi", b"city,neighborhood\nA,B\n", "missing column"),
    ("header-only", HT, "no neighbourhoods"),
    ("empty", b"", "missing column"),
    ("empty-city", HT + b",B,0.5\n", "empty city"),
    ("oi-text", HT + b"A,B,high\n", "not a number"),
    ("oi-nan", HT + b"A,B,nan\n", "not a number"),
    ("oi-inf", HT + b"A,B,inf\n", "not a number"),
    ("conflict", HT + b"A,B,0.1\nA,B,0.2\n", "twice"),
    ("huge-field", HT + f'A,"{HUGE_FIELD}",0.1\n'.encode(), "t.csv"),
    ("latin-1", HT + LATIN1 + b",B,0.1\n", "UTF-8"),
    ("junk", JUNK, "t.csv"),
    ("utf16", "city,neighborhood,opportunity_index\nA,B,1\n".encode("utf-16"), "UTF-8"),
    ("unterminated", HT + b'A,"B,0.1\n', "t.csv"),
]

# -- persona files ------------------------------------------------------------------------------

PERSONA_RAW: list[tuple[str, str, bytes, str]] = [
    ("empty-txt", "p.txt", b"", "empty"),
    ("blank-txt", "p.txt", b"   \n\n", "empty"),
    ("latin1-txt", "p.txt", LATIN1, "UTF-8"),
    ("junk-txt", "p.txt", JUNK, "p.txt"),
    ("bomb-yaml", "p.yaml", ALIAS_BOMB.encode(), "alias"),
    ("deep-yaml", "p.yaml", DEEP_YAML.encode(), "nested"),
    ("list-yaml", "p.yaml", b"- a\n- b\n", "mapping"),
    ("number-yaml", "p.yaml", b"3\n", "mapping"),
    ("bad-yaml", "p.yaml", b"name: [x\n", "invalid YAML"),
    ("empty-yaml", "p.yaml", b"", "p.yaml"),
    ("bad-json", "p.json", b"{", "invalid JSON"),
    ("number-json", "p.json", b"3", "mapping"),
    ("nan-json", "p.json", b'{"name": NaN}', "NaN"),
    ("deep-json", "p.json", DEEP_JSON.encode(), "p.json"),
]

# -- moral-advice dilemma files -----------------------------------------------------------------

DH = b"foundation,dilemma,action,pro_foundation\n"
DILEMMA_RAW: list[tuple[str, str, bytes, str]] = [
    ("csv-no-cols", "d.csv", b"a,b\n1,2\n", "missing column"),
    ("csv-header-only", "d.csv", DH, "no dilemmas"),
    ("csv-bad-foundation", "d.csv", DH + b"greed,D,A,true\n", "foundation"),
    ("csv-empty-action", "d.csv", DH + b"care,D,,true\n", "action"),
    ("csv-bad-pro", "d.csv", DH + b"care,D,A,perhaps\n", "pro_foundation"),
    ("csv-latin1", "d.csv", DH + b"care," + LATIN1 + b",A,true\n", "UTF-8"),
    ("csv-huge", "d.csv", DH + f'care,"{HUGE_FIELD}",A,true\n'.encode(), "d.csv"),
    ("csv-junk", "d.csv", JUNK, "d.csv"),
    ("jsonl-bad", "d.jsonl", b'{"foundation": "care"}\n{\n', "invalid JSON"),
    ("jsonl-number", "d.jsonl", b"3\n", "row 1"),
    ("jsonl-empty", "d.jsonl", b"\n\n", "no dilemmas"),
    ("json-number", "d.json", b"3", "d.json"),
    ("json-list-of-str", "d.json", b'["a"]', "row 1"),
    ("json-bad", "d.json", b"[", "invalid JSON"),
    ("json-nan", "d.json", b'[{"foundation": NaN}]', "NaN"),
    ("json-deep", "d.json", DEEP_JSON.encode(), "d.json"),
]

# -- contamination keyword files, projective labels and image manifests --------------------------

KEYWORD_TEXTS = {"1": "I like apples.", "2": "Rain makes me sad."}
KH = b"id,keyword\n"
KEYWORD_RAW: list[tuple[str, bytes, str]] = [
    ("empty", b"", "no header"),
    ("comments-only", b"# a\n# b\n", "no header"),
    ("no-keyword-col", b"id,word\n1,apples\n", "missing column 'keyword'"),
    ("unknown-id", KH + b"9,apples\n", "unknown item id"),
    ("twice", KH + b"1,apples\n1,like\n", "twice"),
    ("empty-keyword", KH + b"1,\n", "empty keyword"),
    ("not-in-text", KH + b"1,pears\n2,Rain\n", "does not occur"),
    ("part-of-word", KH + b"1,apple\n2,Rain\n", "does not occur"),
    ("missing-item", KH + b"1,apples\n", "no keyword for item"),
    ("latin1", KH + b"1," + LATIN1 + b"\n", "UTF-8"),
    ("huge", KH + f'1,"{HUGE_FIELD}"\n'.encode(), "k.csv"),
    ("junk", JUNK, "k.csv"),
    ("quote-garbage", KH + b'1,"apples"x\n2,Rain\n', "k.csv"),
]

LABELS_RAW: list[tuple[str, bytes, str]] = [
    ("not-json", b"{", "JSON"),
    ("list", b"[1]", "expected an object"),
    ("empty-object", b"{}", "expected an object"),
    ("entry-number", b'{"a": 3}', "expected an object of labels"),
    ("bad-mbti", b'{"a": {"mbti": {"type": "XXXX"}}}', "mbti"),
    ("big-five-list", b'{"a": {"big_five": [1]}}', "big_five"),
    ("level-high", b'{"a": {"big_five": {"openness": {"level": 9}}}}', "big_five.openness"),
    ("level-float", b'{"a": {"depression": 1.5}}', "depression"),
    ("level-bool", b'{"a": {"suicide": true}}', "suicide"),
    ("latin1", b'{"' + LATIN1 + b'": {}}', "UTF-8"),
    ("nan", b'{"a": {"depression": NaN}}', "labels.json"),
    ("deep", DEEP_JSON.encode(), "labels.json"),
]


def png_bytes(width: int = 1, height: int = 1) -> bytes:
    """A PNG of a ``width`` x ``height`` header (one IDAT chunk; the pixels are not checked)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + b"\x00\x00\x00" * min(width, 16))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


PNG = png_bytes()  # the header is read (base/images.py): a signature alone is not an image
MH = b"file,category\n"
MANIFEST_RAW: list[tuple[str, bytes, str]] = [
    ("no-category", b"file\na.png\n", "expected the columns"),
    ("header-only", MH, "lists no images"),
    ("bad-category", MH + b"a.png,happy\n", "category"),
    ("missing-file", MH + b"nope.png,solitary\n", "no image file"),
    ("escape", MH + b"../a.png,solitary\n", "no image file"),
    ("not-image", MH + b"notes.txt,solitary\n", "not a PNG or JPEG"),
    ("dup-id", b"file,category,id\na.png,solitary,x\na.png,solitary,x\n", "duplicate id"),
    ("latin1", MH + LATIN1 + b",solitary\n", "UTF-8"),
    ("huge", MH + f'"{HUGE_FIELD}",solitary\n'.encode(), "131,072"),
    ("junk", JUNK, "manifest.csv"),
]
