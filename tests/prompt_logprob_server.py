"""A loopback stand-in for completions servers that return prompt log-probabilities, in the
shapes three real servers use (no model: a toy tokenizer and a fixed log-probability rule, so
a test recomputes every expected number from the rule):

- ``llama-cpp-python``: its ``llama_cpp/llama.py`` ``_create_completion`` with ``echo`` and
  ``logprobs`` (version 0.3.36, installed here): every BOS token (SmolLM2's BOS is
  ``<|im_start|>``) left out of the lists, other special tokens shown as ``""``, offsets
  counted without special-token text, the first token's logprob ``null``, the generated token
  after the prompt's (``usage.completion_tokens`` of them), unless it is a BOS (SmolLM2 writes
  ``<|im_start|>`` after a finished turn): counted, but not in the lists;
- ``vllm``: vLLM's ``/v1/completions`` reply as its ``vllm/entrypoints/openai/protocol.py``
  (``CompletionResponse``, ``CompletionResponseChoice``, ``UsageInfo``) and
  ``serving_completion.py`` write it with ``echo`` (``logprobs.tokens`` with the special-token
  text, ``text_offset`` summed over the token texts) and ``choices[0].prompt_logprobs``: one
  entry per prompt token, the first ``null``, the others ``{"TOKEN_ID": {"logprob", "rank",
  "decoded_token"}}`` holding the prompt token and, for ``prompt_logprobs`` k > 0 (vLLM sets
  k = ``logprobs`` under ``echo``), the top-k alternatives; with ``prompt_logprobs: 0`` the
  prompt token alone. No real vLLM was run (it needs a GPU and a download).
- ``llama-server``: llama.cpp's own server, whose completions carry log-probabilities of
  generated tokens only (``logprobs.content``), whatever ``echo`` says.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["tokenize", "logprob", "serve", "SPECIAL", "GENERATED", "CHATML"]

SPECIAL = {"<|im_start|>": 1, "<|im_end|>": 2}
GENERATED = " Sure"
_TOKEN = re.compile(r"<\|im_start\|>|<\|im_end\|>| ?\w+| ?[^\w\s]|\s+")
# SmolLM2-135M-Instruct's chat template (its GGUF's tokenizer.chat_template): ChatML
CHATML = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def tokenize(text: str) -> list[str]:
    """The toy tokenizer: special tokens, words with their leading space, punctuation, spaces."""
    return _TOKEN.findall(text)


def token_id(piece: str) -> int:
    """A stable id per token text (specials: 1 and 2)."""
    return SPECIAL.get(piece, 100 + sum(ord(c) * (i + 1) for i, c in enumerate(piece)) % 40_000)


def logprob(piece: str) -> float:
    """The fixed rule: every token's log-probability, whatever its context."""
    return -0.25 - (sum(map(ord, piece)) % 37) / 8


def _llama_cpp(prompt: str) -> dict[str, Any]:
    # after a finished turn the model writes the next <|im_start|>: SmolLM2's BOS, which
    # llama-cpp-python leaves out of the lists while counting it in usage.completion_tokens
    generated = "<|im_start|>" if prompt.endswith("<|im_end|>\n") else GENERATED
    pieces = [p for p in [*tokenize(prompt), generated] if p != "<|im_start|>"]
    shown = ["" if p in SPECIAL else p for p in pieces]
    offsets, at = [], 0
    for s in shown:
        offsets.append(at)
        at += len(s)
    values: list[float | None] = [logprob(p) for p in pieces]
    values[0] = None
    top: list[Any] = [None] + [{s: v} for s, v in zip(shown[1:], values[1:], strict=True)]
    lp = {"tokens": shown, "text_offset": offsets, "token_logprobs": values, "top_logprobs": top}
    n = len(tokenize(prompt))
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"text": prompt + GENERATED, "index": 0, "logprobs": lp, "finish_reason": "length"}
        ],
        "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1},
    }


def _vllm_entry(piece: str, k: int) -> dict[str, Any]:
    entry = {str(token_id(piece)): {"logprob": logprob(piece), "rank": 3, "decoded_token": piece}}
    if k > 0:  # the top alternative beside the prompt token
        entry[str(token_id(" the"))] = {"logprob": -0.01, "rank": 1, "decoded_token": " the"}
    return entry


def _vllm(prompt: str, request: dict[str, Any]) -> dict[str, Any]:
    pieces = tokenize(prompt)
    asked = request.get("prompt_logprobs")
    k = int(asked) if asked is not None else int(request.get("logprobs") or 0)
    prompt_lps: list[Any] = [None] + [_vllm_entry(p, k) for p in pieces[1:]]
    shown = [*pieces, GENERATED]
    values: list[float | None] = [None] + [logprob(p) for p in shown[1:]]
    offsets, at = [], 0
    for s in shown:
        offsets.append(at)
        at += len(s)
    top: list[Any] = [None] + [{s: v} for s, v in zip(shown[1:], values[1:], strict=True)]
    lp = {"text_offset": offsets, "token_logprobs": values, "tokens": shown, "top_logprobs": top}
    choice = {
        "index": 0,
        "text": prompt + GENERATED,
        "logprobs": lp,
        "finish_reason": "length",
        "stop_reason": None,
        "token_ids": None,
        "prompt_logprobs": prompt_lps,
        "prompt_token_ids": None,
    }
    n = len(pieces)
    return {
        "id": "cmpl-9f3c",
        "object": "text_completion",
        "created": 1,
        "model": "m",
        "choices": [choice],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": {
            "prompt_tokens": n,
            "total_tokens": n + 1,
            "completion_tokens": 1,
            "prompt_tokens_details": None,
        },
        "kv_transfer_params": None,
    }


def _llama_server(prompt: str) -> dict[str, Any]:
    gen = {"id": 9, "token": GENERATED, "bytes": list(GENERATED.encode()), "logprob": -0.5}
    gen["top_logprobs"] = [dict(gen)]
    return {
        "choices": [
            {
                "text": GENERATED,
                "index": 0,
                "logprobs": {"content": [gen]},
                "finish_reason": "length",
            }
        ],
        "created": 1,
        "model": "m",
        "system_fingerprint": "b6000",
        "object": "text_completion",
        "usage": {"completion_tokens": 1, "prompt_tokens": 9, "total_tokens": 10},
        "id": "chatcmpl-1",
    }


def _reply(kind: str, request: dict[str, Any]) -> dict[str, Any]:
    prompt = str(request.get("prompt", ""))
    if kind == "llama-cpp-python":
        return _llama_cpp(prompt)
    if kind == "vllm":
        return _vllm(prompt, request)
    return _llama_server(prompt)


@contextmanager
def serve(kind: str, raw: bytes | None = None) -> Iterator[dict[str, Any]]:
    """A server of ``kind``'s replies (or ``raw`` bytes for every request) on a free port;
    yields its state: ``url``, ``requests`` (the JSON bodies received)."""
    state: dict[str, Any] = {"requests": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 -- http.server's name
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append(request)
            body = raw if raw is not None else json.dumps(_reply(kind, request)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
