"""Malformed inputs of the fuzz suite, generated from small valid files by named mutations.

Every case is definitely invalid (a test checks the unmutated base is accepted), so each must end
in one clear error line. This module holds the core's instrument and command-line inputs;
cases_plugins.py the bundled plugins' data files, cases_runfiles.py the files psym reads back
(run directories, model files); ``inputs_shared.all_case_count`` counts all three for the
suite's size check.
"""

from __future__ import annotations

import copy
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
            ("scales.alpha.adjectives", "adjectives", ["talkative", [3], [""], {"a": 1}]),
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


def dump_spec(spec: dict[str, Any]) -> bytes:
    """YAML of a spec (NaN/inf written as YAML's .nan/.inf)."""
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True).encode("utf-8")
