"""Malformed inputs of the fuzz suite, generated from small valid files by named mutations.

Every case is definitely invalid (a test checks the unmutated base is accepted), so each must end
in one clear error line. ``ALL_CASES`` counts them for the suite's size check.
"""

from __future__ import annotations

import copy
import json
import struct
import zlib
from collections.abc import Callable
from typing import Any

import yaml

ALIAS_BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)
DEEP_YAML = "[" * 3000 + "]" * 3000
DEEP_JSON = "[" * 100_000 + "]" * 100_000
LATIN1 = "caf\xe9 cr\xe8me".encode("latin-1")
JUNK = bytes(range(256)) * 8
HUGE_FIELD = "x" * 200_000

# -- instrument spec (instrument.yaml) ----------------------------------------------------------

BASE_SPEC: dict[str, Any] = {
    "schema_version": 1,
    "id": "toy",
    "name": "Toy scale",
    "version": "1.0",
    "citation": "Someone, A. (2020). A toy scale.",
    "license": {"status": "public domain", "redistributable": True},
    "item_source": "Someone (2020), Table 1.",
    "forms": {"original": "items.csv"},
    "response_scales": {"default": {"min": 1, "max": 5, "labels": ["a", "b", "c", "d", "e"]}},
    "scales": {
        "alpha": {
            "method": "mean",
            "norms": [{"group": "G", "mean": 3.0, "sd": 1.0, "n": 10, "source": "S (2020)"}],
        }
    },
    "prompt": {"instruction": "Rate it."},
    "parser": "first_valid_int",
}
BASE_ITEMS = "id,text,scale,reverse\n1,I like a.,alpha,0\n2,I like b.,alpha,1\n"

REQUIRED = (
    "id",
    "name",
    "version",
    "citation",
    "license",
    "item_source",
    "forms",
    "response_scales",
    "scales",
    "prompt",
)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(spec: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(spec)
        *parents, last = path.split(".")
        node: Any = out
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return out

    return edit


def _drop(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda spec: {k: v for k, v in spec.items() if k != key}


NORM = "scales.alpha.norms.0"
SPEC_EDITS: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    *[(f"drop-{k}", _drop(k), k) for k in REQUIRED],
    *[
        (f"{path}={value!r}"[:60], _set(path, value), field)
        for path, field, values in [
            ("id", "id", [None, [], "a b", "", "x/y", "a.b"]),
            ("name", "name", [None, [], {}]),
            ("citation", "citation", [None, [], 5]),
            ("item_source", "item_source", [None, {}]),
            ("version", "version", [None, [], {}]),
            ("license", "license", ["free", [], {"status": None}, {"status": 3}]),
            ("license.redistributable", "redistributable", ["yes", 2]),
            (
                "forms",
                "forms",
                [[], {}, {"alt": "items.csv"}, {"original": "missing.csv"}, "items.csv"],
            ),
            ("response_scales", "response_scales", [{}, [], {"default": 3}]),
            ("response_scales.default.min", "min", [5, "1", 1.5, None]),
            ("response_scales.default.max", "max", [1, "5", None]),
            ("response_scales.default.labels", "labels", [["a"], "abcde", None]),
            ("response_scales.default.agree", "agree", ["sideways", 1, None, ["low"]]),
            ("scales", "scales", [{}, [], {"alpha": 3}, {"beta": {}}]),
            ("scales.alpha.method", "method", ["median", 3]),
            ("scales.alpha.items", "items", [5, ["beta"], ["alpha"], {"a": 1}]),
            ("scales.alpha.norms", "norms", ["x", [3], {"group": "G"}]),
            (f"{NORM}.sd", "sd", [0, -1, float("nan"), float("inf"), "x", None, True]),
            (f"{NORM}.mean", "mean", [float("nan"), "x", None, [1]]),
            (f"{NORM}.n", "norms", [0, -1, 2.5, "many"]),
            (f"{NORM}.group", "group", [None, ""]),
            (f"{NORM}.source", "source", [None]),
            ("prompt", "prompt", ["x", [], {}]),
            ("prompt.instruction", "instruction", [3, None, []]),
            ("prompt.template", "template", ["{% if %}", ["a"], 12, {"a": 1}, "{{ item "]),
            ("parser", "parser", [12, [], ""]),
            ("schema_version", "schema_version", [2, "1", None]),
            ("reverse", "reverse", ["other", 1]),
            ("item_texts", "item_texts", ["maybe", 1]),
        ]
        for value in values
    ],
]

SPEC_RAW: list[tuple[str, bytes, str]] = [
    ("alias-bomb", ALIAS_BOMB.encode(), "alias"),
    ("deep-nesting", DEEP_YAML.encode(), "nested"),
    ("latin-1", b"id: " + LATIN1 + b"\n", "UTF-8"),
    ("binary-junk", JUNK, "instrument.yaml"),
    ("a-list", b"- just\n- a list\n", "mapping"),
    ("a-number", b"42\n", "mapping"),
    ("empty", b"", "mapping"),
    ("unclosed", b"id: [unclosed\nname: x\n", "invalid YAML"),
    ("tab-indent", b"id: x\n\tname: y\n", "invalid YAML"),
    ("nul-bytes", b"id: x\x00\n", "instrument.yaml"),
    ("python-tag", b"id: !!python/object/apply:os.system ['true']\n", "invalid YAML"),
    ("undefined-alias", b"id: *nothing\n", "invalid YAML"),
    ("two-documents", b"id: a\n---\nid: b\n", "invalid YAML"),
    ("bad-timestamp", b"version: 2020-99-99\n", "instrument.yaml"),
    ("huge-int", b"id: x\nversion: " + b"9" * 5000 + b"\n", "instrument.yaml"),
    ("bom-only", b"\xef\xbb\xbf", "mapping"),
    ("comment-only", b"# nothing here\n", "mapping"),
    ("a-set", b"!!set {a: null, b: null}\n", "mapping"),
    ("binary-tag", b"id: !!binary aGVsbG8=\n", "instrument.yaml"),
    ("utf16", "id: x\n".encode("utf-16"), "UTF-8"),
]

# -- item CSV -----------------------------------------------------------------------------------

ITEMS_RAW: list[tuple[str, bytes, str]] = [
    ("no-id", b"text,scale,reverse\nA,alpha,0\n", "missing column 'id'"),
    ("no-text", b"id,scale,reverse\n1,alpha,0\n", "missing column 'text'"),
    ("no-scale", b"id,text,reverse\n1,A,0\n", "missing column 'scale'"),
    ("no-reverse", b"id,text,scale\n1,A,alpha\n", "missing column 'reverse'"),
    ("header-only", b"id,text,scale,reverse\n", "no items"),
    ("empty", b"", "items.csv"),
    ("empty-id", b"id,text,scale,reverse\n,A,alpha,0\n", "id"),
    ("dup-id", b"id,text,scale,reverse\n1,A,alpha,0\n1,B,alpha,0\n", "duplicate"),
    ("empty-text", b"id,text,scale,reverse\n1,,alpha,0\n", "text"),
    ("reverse-maybe", b"id,text,scale,reverse\n1,A,alpha,maybe\n", "reverse"),
    ("reverse-2", b"id,text,scale,reverse\n1,A,alpha,2\n", "reverse"),
    ("bad-flag", b"id,text,scale,reverse,flag\n1,A,alpha,0,bogus\n", "flag"),
    ("unknown-scale", b"id,text,scale,reverse\n1,A,gamma,0\n", "scale"),
    ("no-scale-no-flag", b"id,text,scale,reverse\n1,A,,0\n", "scale"),
    ("bad-response-scale", b"id,text,scale,reverse,response_scale\n1,A,alpha,0,x\n", "response"),
    ("bad-rescale", b"id,text,scale,reverse,rescale\n1,A,alpha,0,zz\n", "rescale"),
    ("huge-field", f'id,text,scale,reverse\n1,"{HUGE_FIELD}",alpha,0\n'.encode(), "131,072"),
    ("nul", b"id,text,scale,reverse\n1,A\x00,alpha,0\n", "NUL"),
    ("latin-1", b"id,text,scale,reverse\n1," + LATIN1 + b",alpha,0\n", "UTF-8"),
    ("unterminated-quote", b'id,text,scale,reverse\n1,"A,alpha,0\n', "items.csv"),
    ("junk", JUNK, "items.csv"),
    ("semicolons", b"id;text;scale;reverse\n1;A;alpha;0\n", "missing column"),
    ("utf16", "id,text,scale,reverse\n1,A,alpha,0\n".encode("utf-16"), "UTF-8"),
    ("blank-lines", b"\n\n\n", "missing column"),
    ("quote-garbage", b'id,text,scale,reverse\n1,"A"B,alpha,0\n', "items.csv"),
]

# -- responses CSV (psym score) -----------------------------------------------------------------

H = b"respondent,item,response\n"
RESPONSES_RAW: list[tuple[str, bytes, str]] = [
    ("no-response-col", b"respondent,item,answer\nA,1,3\n", "missing column"),
    ("header-only", H, "no response rows"),
    ("empty", b"", "missing column"),
    ("empty-respondent", H + b",1,3\n", "empty respondent"),
    ("unknown-item", H + b"A,99,3\n", "unknown item"),
    ("out-of-range", H + b"A,1,6\n", "not a value"),
    ("zero", H + b"A,1,0\n", "not a value"),
    ("fraction", H + b"A,1,2.5\n", "not a value"),
    ("text", H + b"A,1,agree\n", "not a value"),
    ("nan", H + b"A,1,nan\n", "not a value"),
    ("inf", H + b"A,1,inf\n", "not a value"),
    ("huge-exp", H + b"A,1,1e400\n", "not a value"),
    ("negative", H + b"A,1,-3\n", "not a value"),
    ("twice", H + b"A,1,3\nA,1,4\n", "twice"),
    ("huge-field", H + f'A,1,"{HUGE_FIELD}"\n'.encode(), "131,072"),
    ("nul", H + b"A,1,3\x00\n", "NUL"),
    ("latin-1", H + LATIN1 + b",1,3\n", "UTF-8"),
    ("junk", JUNK, "responses.csv"),
    ("utf16", "respondent,item,response\nA,1,3\n".encode("utf-16"), "UTF-8"),
    ("unterminated", H + b'A,1,"3\n', "responses.csv"),
    ("whitespace-only", b"   \n  \n", "missing column"),
    ("empty-item", H + b"A,,3\n", "unknown item"),
    ("quote-garbage", H + b'A,1,"3"x\n', "responses.csv"),
]

# -- generations (psym score of a free-text task: CSV or JSONL) ---------------------------------

G = b"respondent,item,text\n"
GJ = b'{"item": "f-20-student", "text": "ok"}\n'
GENERATIONS_RAW: list[tuple[str, str, bytes, str]] = [
    ("csv-no-text", "g.csv", b"item,letter\nf-20-student,hi\n", "missing column"),
    ("csv-empty", "g.csv", b"", "missing column"),
    ("csv-header-only", "g.csv", G, "no rows"),
    ("csv-unknown-item", "g.csv", G + b"a,nope,hi\n", "not an item"),
    ("csv-twice", "g.csv", G + b"a,f-20-student,x\na,f-20-student,y\n", "twice"),
    ("csv-nul", "g.csv", G + b"a,f-20-student,x\x00\n", "NUL"),
    ("csv-latin-1", "g.csv", G + b"a,f-20-student," + LATIN1 + b"\n", "UTF-8"),
    ("csv-huge-field", "g.csv", G + f'a,f-20-student,"{HUGE_FIELD}"\n'.encode(), "131,072"),
    ("csv-unterminated", "g.csv", G + b'a,f-20-student,"x\n', "g.csv"),
    ("csv-junk", "g.csv", JUNK, "g.csv"),
    ("jsonl-bad", "g.jsonl", GJ + b'{"item": 3\n', "line 2: not valid JSON"),
    ("jsonl-array", "g.jsonl", b"[1, 2]\n", "line 1: expected a JSON object"),
    ("jsonl-no-text", "g.jsonl", b'{"item": "f-20-student"}\n', "expected the fields"),
    ("jsonl-text-number", "g.jsonl", b'{"item": "f-20-student", "text": 3}\n', "string"),
    ("jsonl-deep", "g.jsonl", GJ + b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 2"),
    ("jsonl-latin-1", "g.jsonl", GJ + b'{"item": "' + LATIN1 + b'"}\n', "line 2"),
    ("jsonl-junk", "g.jsonl", JUNK, "line 1"),
    ("jsonl-other-task", "g.jsonl", b'{"task": "x", "item": "a", "text": "t"}\n', "no rows"),
]

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

# -- command-line values ------------------------------------------------------------------------

ITEMS_OPTION: list[tuple[str, list[str], str]] = [
    ("no-equals", ["bfi"], "TASK=PATH"),
    ("no-task", ["=x.csv"], "TASK=PATH"),
    ("no-path", ["bfi="], "TASK=PATH"),
    ("twice", ["bfi=a.csv", "bfi=b.csv"], "twice"),
]
ITEM_TEXT_FILES: list[tuple[str, bytes, str]] = [
    ("missing-cols", b"a,b\n1,x\n", "missing column"),
    ("unknown-id", b"id,text\n999,x\n", "unknown item id"),
    ("empty-text", b"id,text\n1,\n", "empty item text"),
    ("dup", b"id,text\n1,a\n1,b\n", "twice"),
    ("incomplete", b"id,text\n1,a\n", "no text for item"),
    ("latin1", b"id,text\n1," + LATIN1 + b"\n", "UTF-8"),
    ("huge", f'id,text\n1,"{HUGE_FIELD}"\n'.encode(), "131,072"),
    ("junk", JUNK, "texts.csv"),
]

MODEL_ARGS: list[tuple[str, str, str, str]] = [
    ("no-equals", "smollm2", "device", "key=value"),
    ("empty-key", "smollm2", "=cpu", "key=value"),
    ("twice", "smollm2", "threads=1,threads=2", "twice"),
    ("device-gpu", "smollm2", "device=gpu", "device"),
    ("device-banana", "smollm2", "device=banana", "device"),
    ("batch-0", "smollm2", "batch_size=0", "batch_size"),
    ("batch-x", "smollm2", "batch_size=x", "batch_size"),
    ("threads-0", "smollm2", "threads=0", "threads"),
    ("threads-neg", "smollm2", "threads=-4", "threads"),
    ("dtype", "smollm2", "dtype=float8", "dtype"),
    ("unknown", "smollm2", "flux=1", "unknown --model-args"),
    ("native-unknown", "smollm2", "native=fast", "native must be"),
    ("native-empty", "smollm2", "native=", "native must be"),
    ("native-number", "smollm2", "native=2", "native must be"),
    ("hf-no-path", "hf", "", "pretrained"),
    ("hf-missing", "hf", "pretrained=/nonexistent/model", "not found"),
    ("openai-no-url", "openai-chat", "model=m", "base_url"),
    ("openai-ftp", "openai-chat", "base_url=ftp://h/v1,model=m", "http"),
    ("openai-no-scheme", "openai-chat", "base_url=localhost:1/v1,model=m", "http"),
    ("openai-bad-port", "openai-chat", "base_url=http://h:99999/v1,model=m", "valid URL"),
    ("openai-timeout-neg", "openai-chat", "base_url=http://h/v1,model=m,timeout=-1", "timeout"),
    ("openai-timeout-nan", "openai-chat", "base_url=http://h/v1,model=m,timeout=nan", "timeout"),
    ("openai-conc-0", "openai-chat", "base_url=http://h/v1,model=m,concurrency=0", "concurrency"),
    ("openai-conc-x", "openai-chat", "base_url=http://h/v1,model=m,concurrency=x", "concurrency"),
    ("openai-key", "openai-chat", "base_url=http://h/v1,model=m,api_key=sk-1", "api_key_env"),
    (
        "openai-cap",
        "openai-completions",
        "base_url=http://h/v1,model=m,max_response_bytes=1",
        "max_response_bytes",
    ),
    ("openai-unknown", "openai-completions", "base_url=http://h/v1,model=m,x=1", "unknown"),
    ("unknown-backend", "gpt-17", "", "unknown model backend"),
]

TASK_ARGS: list[tuple[str, list[str], str]] = [
    ("no-dot", ["bfi=1"], "TASK.KEY=VALUE"),
    ("no-equals", ["bfi.x"], "TASK.KEY=VALUE"),
    ("no-task", [".x=1"], "TASK.KEY=VALUE"),
    ("no-key", ["bfi.=1"], "TASK.KEY=VALUE"),
    ("misspelt-task", ["bif.x=1"], "not among --tasks"),
    ("unknown-option", ["bfi.smoothing=1"], "does not take option"),
]

CONDITIONS: list[tuple[str, list[str], str]] = [
    ("empty", [""], "empty condition"),
    ("plus", ["+"], "empty condition"),
    ("trailing-plus", ["reversed-options+"], "empty condition"),
    ("leading-plus", ["+reversed-options"], "empty condition"),
    ("double-plus", ["reversed-options++original"], "empty condition"),
    ("unknown", ["reversd-options"], "unknown condition"),
    ("needs-arg", ["persona"], "needs an argument"),
    ("no-arg", ["reversed-options=3"], "takes no argument"),
    ("persona-missing", ["persona=/nonexistent/p.txt"], "no such file"),
    ("persona-dir", ["persona=/"], "persona"),
    ("framing-unknown", ["framing=bogus"], "unknown framing"),
    ("same-facet", ["reversed-options+permuted-options"], "same facet"),
    ("just-equals", ["="], "unknown condition"),
    ("persona-empty-arg", ["persona="], "needs an argument"),
    ("subject-empty-arg", ["subject="], "needs an argument"),
    ("framing-empty-arg", ["framing="], "needs an argument"),
    ("spaces", ["   "], "empty condition"),
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


# -- run directories read by `psym report` and `psym export` (results.json, samples.jsonl) -------
# Each case edits the bytes of one file of a valid run (a bfi run of two items); ``expect``
# must appear in the one-line error (the field or line, besides the file's name).


def _json_edit(fn: Callable[[Any], None]) -> Callable[[bytes], bytes]:
    def edit(raw: bytes) -> bytes:
        data = json.loads(raw)
        fn(data)
        return json.dumps(data).encode()

    return edit


def _line_edit(fn: Callable[[Any], None]) -> Callable[[bytes], bytes]:
    """Edit the first line of a JSONL file."""

    def edit(raw: bytes) -> bytes:
        first, rest = raw.split(b"\n", 1)
        data = json.loads(first)
        fn(data)
        return json.dumps(data).encode() + b"\n" + rest

    return edit


def _set_path(path: str, value: Any) -> Callable[[Any], None]:
    def fn(data: Any) -> None:
        *parents, last = path.split(".")
        for p in parents:
            data = data[p]
        data[last] = value

    return fn


def _del_path(path: str) -> Callable[[Any], None]:
    def fn(data: Any) -> None:
        *parents, last = path.split(".")
        for p in parents:
            data = data[p]
        del data[last]

    return fn


DEEP = b"[" * 100_000 + b"]" * 100_000
RUN_FILES_RAW: list[tuple[str, str, Callable[[bytes], bytes], str]] = [
    ("results-truncated", "results.json", lambda r: r[: len(r) // 2], "invalid JSON"),
    ("results-empty", "results.json", lambda r: b"", "invalid JSON"),
    (
        "results-latin1",
        "results.json",
        lambda r: r.replace(b'"bfi"', b'"bfi' + LATIN1 + b'"', 1),
        "UTF-8",
    ),
    ("results-binary", "results.json", lambda r: JUNK, "UTF-8"),
    ("results-deep", "results.json", lambda r: DEEP, "nested too deeply"),
    (
        "results-deep-field",
        "results.json",
        lambda r: r.replace(b'"model_args": {', b'"model_args": {"x": ' + DEEP + b", ", 1),
        "nested too deeply",
    ),
    ("results-array", "results.json", lambda r: b"[1, 2]", "JSON object"),
    (
        "results-nan",
        "results.json",
        lambda r: r.replace(b'"seed": ', b'"seed": NaN, "x": ', 1),
        "NaN",
    ),
    ("results-tasks-list", "results.json", _json_edit(_set_path("tasks", [])), "'tasks'"),
    (
        "results-runs-string",
        "results.json",
        _json_edit(_set_path("tasks.bfi.runs", "x")),
        "tasks.bfi.runs",
    ),
    (
        "results-run-not-object",
        "results.json",
        _json_edit(_set_path("tasks.bfi.runs", [3])),
        "tasks.bfi.runs.0",
    ),
    (
        "results-scales-list",
        "results.json",
        _json_edit(_set_path("tasks.bfi.scales", [1])),
        "tasks.bfi.scales",
    ),
    (
        "results-score-text",
        "results.json",
        _json_edit(_set_path("tasks.bfi.scales.extraversion.score", "high")),
        "tasks.bfi.scales.extraversion.score",
    ),
    (
        "results-n-items-text",
        "results.json",
        _json_edit(_set_path("tasks.bfi.scales.extraversion.n_items", "many")),
        "tasks.bfi.scales.extraversion.n_items",
    ),
    ("results-seed-text", "results.json", _json_edit(_set_path("seed", "abc")), "'seed'"),
    ("results-model-number", "results.json", _json_edit(_set_path("model", 5)), "'model'"),
    ("results-settings-list", "results.json", _json_edit(_set_path("settings", [])), "'settings'"),
    ("results-label-object", "results.json", _json_edit(_set_path("label", {"a": 1})), "'label'"),
    ("results-missing-model", "results.json", _json_edit(_del_path("model")), "'model'"),
    (
        "results-missing-runs",
        "results.json",
        _json_edit(_del_path("tasks.bfi.runs")),
        "tasks.bfi.runs",
    ),
    (
        "results-missing-instrument",
        "results.json",
        _json_edit(_del_path("tasks.bfi.instrument")),
        "tasks.bfi.instrument",
    ),
    ("samples-truncated", "samples.jsonl", lambda r: r[: len(r) // 3], "line 1"),
    (
        "samples-latin1",
        "samples.jsonl",
        lambda r: r + b'{"item": "' + LATIN1 + b'"}\n',
        "not UTF-8",
    ),
    ("samples-binary", "samples.jsonl", lambda r: JUNK, "line 1"),
    ("samples-deep-line", "samples.jsonl", lambda r: r + DEEP + b"\n", "line 3"),
    ("samples-array-line", "samples.jsonl", lambda r: r + b"[1, 2]\n", "line 3"),
    (
        "samples-repeat-text",
        "samples.jsonl",
        _line_edit(_set_path("repeat", "x")),
        "line 1: field 'repeat'",
    ),
    (
        "samples-answer-object",
        "samples.jsonl",
        _line_edit(_set_path("answer", {"a": 1})),
        "line 1: field 'answer'",
    ),
    (
        "samples-status-unknown",
        "samples.jsonl",
        _line_edit(_set_path("parse_status", "maybe")),
        "line 1: field 'parse_status'",
    ),
    (
        "samples-meta-list",
        "samples.jsonl",
        _line_edit(_set_path("item_meta", [])),
        "line 1: field 'item_meta'",
    ),
    (
        "samples-probs-text",
        "samples.jsonl",
        _line_edit(_set_path("option_probs", "x")),
        "line 1: field 'option_probs'",
    ),
    (
        "samples-missing-item",
        "samples.jsonl",
        _line_edit(_del_path("item")),
        "line 1: field 'item'",
    ),
    (
        "samples-missing-meta",
        "samples.jsonl",
        _line_edit(_del_path("item_meta")),
        "line 1: field 'item_meta'",
    ),
    ("judge-not-json", "judge.jsonl", lambda r: b"{\n", "line 1"),
    ("judge-missing-fields", "judge.jsonl", lambda r: b'{"task": "bfi"}\n', "line 1: field"),
    ("panel-truncated", "contamination.json", lambda r: b'{"model": ', "invalid JSON"),
    ("panel-latin1", "contamination.json", lambda r: b'{"m": "' + LATIN1 + b'"}', "UTF-8"),
]


def _safetensors(header: Any, data: bytes = b"\x00" * 16) -> bytes:
    """A safetensors file: 8-byte little-endian header length, JSON header, tensor bytes."""
    blob = json.dumps(header).encode()
    return len(blob).to_bytes(8, "little") + blob + data


def _tensor(entry: Any) -> bytes:
    return _safetensors({"t": entry})


# (name, file bytes, expected message part): the model file ONNX Runtime scoring memory-maps
SAFETENSORS_RAW: list[tuple[str, bytes, str]] = [
    ("empty", b"", "not a readable safetensors file"),
    ("junk", JUNK, "header length"),
    ("length-too-big", b"\xff" * 8 + b"{}", "header length"),
    ("length-zero", (0).to_bytes(8, "little") + b"{}", "header length"),
    (
        "header-not-json",
        (3).to_bytes(8, "little") + b"{x}" + b"\x00" * 8,
        "not a readable safetensors file",
    ),
    ("header-list", (2).to_bytes(8, "little") + b"[]", "header is not an object"),
    ("header-truncated", (20).to_bytes(8, "little") + b"[" * 20, "not a readable safetensors"),
    (
        "header-deep",
        len(DEEP_JSON).to_bytes(8, "little") + DEEP_JSON.encode(),
        "not a readable safetensors file",
    ),
    ("header-latin1", (7).to_bytes(8, "little") + b'{"\xe9":1}', "not a readable safetensors"),
    (
        "bf16",
        _tensor({"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}),
        "is BF16; ONNX Runtime",
    ),
    (
        "past-the-end",
        _tensor({"dtype": "F32", "shape": [2], "data_offsets": [0, 64]}),
        "lies outside the file",
    ),
    (
        "size-mismatch",
        _tensor({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}),
        "lies outside the file",
    ),
    (
        "offsets-reversed",
        _tensor({"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}),
        "lies outside the file",
    ),
    (
        "shape-float",
        _tensor({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}),
        "malformed header entry",
    ),
    (
        "shape-negative",
        _tensor({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}),
        "malformed header entry",
    ),
    (
        "shape-string",
        _tensor({"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}),
        "malformed header entry",
    ),
    (
        "shape-huge",
        _tensor({"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}),
        "lies outside the file",
    ),
    (
        "shape-wraps",
        _tensor({"dtype": "F32", "shape": [2**32, 2**32], "data_offsets": [0, 0]}),
        "lies outside the file",
    ),
    (
        "offsets-short",
        _tensor({"dtype": "F32", "shape": [2], "data_offsets": [0]}),
        "malformed header entry",
    ),
    (
        "offsets-bool",
        _tensor({"dtype": "F32", "shape": [2], "data_offsets": [False, True]}),
        "malformed header entry",
    ),
    ("no-dtype", _tensor({"shape": [2], "data_offsets": [0, 8]}), "malformed header entry"),
    ("entry-list", _tensor(["F32"]), "malformed header entry"),
    ("entry-null", _tensor(None), "malformed header entry"),
]

# (name, bytes) written over a cached ONNX layer graph: never trusted, never an error
GRAPH_FILES: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("junk", JUNK),
    ("text", b"not a graph\n"),
    ("deep", DEEP_JSON.encode()),
]


def all_case_count() -> int:
    """Deterministic fuzz inputs defined here (hypothesis examples come on top)."""
    return sum(
        len(x)
        for x in (
            SPEC_EDITS,
            SPEC_RAW,
            ITEMS_RAW,
            RESPONSES_RAW,
            GENERATIONS_RAW,
            PB_CASES,
            PB_RAW,
            HOUSING_RAW,
            PERSONA_RAW,
            DILEMMA_RAW,
            ITEMS_OPTION,
            ITEM_TEXT_FILES,
            MODEL_ARGS,
            TASK_ARGS,
            CONDITIONS,
            KEYWORD_RAW,
            LABELS_RAW,
            MANIFEST_RAW,
            RUN_FILES_RAW,
            SAFETENSORS_RAW,
            GRAPH_FILES,
        )
    )


def dump_spec(spec: dict[str, Any]) -> bytes:
    """YAML of a spec (NaN/inf written as YAML's .nan/.inf)."""
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True).encode("utf-8")
