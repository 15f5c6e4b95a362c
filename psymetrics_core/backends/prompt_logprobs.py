"""A span of the prompt scored from a completions reply's prompt-token log-probabilities.

Two forms are read, whichever the server returns (``auto``; the form used is recorded):

- ``prompt_logprobs``: vLLM's extension (``choices[0].prompt_logprobs``: one entry per prompt
  token, the first ``null``, the others ``{token_id: {logprob, rank, decoded_token}}``; vLLM's
  ``vllm/entrypoints/openai/protocol.py``, ``CompletionResponseChoice``). An entry names the
  prompt token itself only when it holds one token (``prompt_logprobs: 0``) or the reply
  carries ``prompt_token_ids``; otherwise this form is passed over for the echo;
- ``echo``: the OpenAI completions form with ``echo`` (``choices[0].logprobs.tokens`` and
  ``token_logprobs``, the prompt's tokens first and then the generated ones), which
  llama-cpp-python's server and vLLM return.

Which tokens belong to the span is found from the token texts, not from ``text_offset``:
llama-cpp-python counts no text for special tokens such as ``<|im_start|>`` in its offsets
(it detokenizes without them) and vLLM sums its token texts, so neither is an offset into the
text that was sent. The token texts are laid along the sent text instead. Where the server
shows a token without its text (llama-cpp-python: ``""`` for a special token; vLLM and
others: a replacement character for part of a multi-byte character) or leaves a token out
altogether (llama-cpp-python drops every BOS token, which for SmolLM2 is ``<|im_start|>``),
the text it stood for is passed over: the next token is looked for at most 64 characters
further on, over text without whitespace (a special token's or a character's). A token that
crosses the start of the span (the server merged the query's last characters with the
reply's first) is refused: its log-probability is not the reply's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psymetrics_core.backends.http_util import number
from psymetrics_core.base.errors import BackendError

__all__ = ["ScoredSpan", "score_span", "NO_PROMPT_LOGPROBS"]

NO_PROMPT_LOGPROBS = (
    "returned no prompt log-probabilities (neither 'prompt_logprobs' nor echoed "
    "'logprobs.token_logprobs'): this server cannot score a reply; llama.cpp's own "
    "llama-server gives log-probabilities of generated tokens only, while llama-cpp-python's "
    "server (with --logits_all true) and vLLM echo them"
)


@dataclass(frozen=True)
class ScoredSpan:
    """The summed log-probability of a span's tokens, how many there were, and the form read."""

    logprob: float
    n_tokens: int
    source: str  # "prompt_logprobs" or "echo"


_MAX_SKIP = 64  # the longest text of a token a server leaves out of its list (a special token)


class _Bad(Exception):
    """The reply's shape is not the expected one (the message says what was expected)."""


def _from_prompt_logprobs(choice: dict[str, Any]) -> tuple[list[str], list[float | None]] | None:
    """vLLM's ``prompt_logprobs`` as (token texts, log-probabilities); None when absent or when
    an entry does not say which of its tokens is the prompt's."""
    entries = choice.get("prompt_logprobs")
    if entries is None:
        return None
    if not isinstance(entries, list) or not entries:
        raise _Bad("'prompt_logprobs' should be a non-empty list")
    ids = choice.get("prompt_token_ids")
    ids = ids if isinstance(ids, list) and len(ids) == len(entries) else None
    pieces: list[str] = []
    values: list[float | None] = []
    for i, entry in enumerate(entries):
        if entry is None:
            pieces.append("")
            values.append(None)
            continue
        if not isinstance(entry, dict) or not entry:
            raise _Bad(f"'prompt_logprobs[{i}]' should be null or a non-empty object")
        if ids is not None:
            picked = entry.get(str(ids[i]))
        elif len(entry) == 1:
            picked = next(iter(entry.values()))
        else:
            return None  # top alternatives without the prompt token's id: use the echo
        if not isinstance(picked, dict) or not number(picked.get("logprob")):
            raise _Bad(f"'prompt_logprobs[{i}]' should hold the prompt token's logprob")
        text = picked.get("decoded_token")
        pieces.append(text if isinstance(text, str) else "")
        values.append(float(picked["logprob"]))
    return pieces, values


def _from_echo(choice: dict[str, Any]) -> tuple[list[str], list[Any]] | None:
    """The echoed tokens as (token texts, log-probabilities); None when absent."""
    lp = choice.get("logprobs")
    if lp is None:
        return None
    if not isinstance(lp, dict):
        raise _Bad("'logprobs' should be an object")
    pieces, values = lp.get("tokens"), lp.get("token_logprobs")
    if values is None or pieces is None:
        return None
    if not isinstance(values, list) or not isinstance(pieces, list) or len(pieces) != len(values):
        raise _Bad("'logprobs.tokens' and 'logprobs.token_logprobs' should be lists of one length")
    if not all(isinstance(p, str) for p in pieces):
        raise _Bad("'logprobs.tokens' should hold strings")
    if not all(v is None or number(v) for v in values):
        raise _Bad("'logprobs.token_logprobs' should hold numbers")
    return pieces, values


def _starts(text: str, pieces: list[str]) -> tuple[list[int], int] | None:
    """Each token's start in ``text`` (module docstring) and where the walk ended; None when
    the tokens do not spell it."""
    starts: list[int] = []
    cursor = 0
    for piece in pieces:
        if cursor >= len(text):
            starts.append(len(text))
            continue
        if not piece or "\ufffd" in piece:
            starts.append(cursor)
            continue
        at = cursor if text.startswith(piece, cursor) else -1
        if at < 0:  # a tokenizer that shows a leading space apart (SentencePiece's ▁)
            skip = cursor + len(text[cursor:]) - len(text[cursor:].lstrip())
            at = skip if skip > cursor and text.startswith(piece, skip) else -1
        if at < 0:  # text the server shows no token for (a special token, a split character)
            at = text.find(piece, cursor, cursor + _MAX_SKIP + len(piece))
            if at < 0 or _has_space(text[cursor:at]):
                return None
        starts.append(at)
        cursor = at + len(piece)
    return starts, cursor


def _layout(text: str, pieces: list[str], generated: int) -> tuple[list[int], int]:
    """The starts of the prompt's tokens and how many entries they are.

    Generated tokens follow the prompt's; once the walk has spelled the whole text they start
    at its end and are left out. The server's count of them (``usage.completion_tokens``) is
    used only when the text ends in a token the server shows without text (a template ending
    in a special token), where the walk cannot tell: llama-cpp-python leaves a generated BOS
    out of its list while counting it, so the count cannot be trusted everywhere.
    """
    whole = _starts(text, pieces)
    if whole is not None and whole[1] >= len(text):
        return whole[0], len(pieces)
    if 0 < generated < len(pieces):
        cut = _starts(text, pieces[:-generated])
        if cut is not None:
            return cut[0], len(pieces) - generated
    if whole is None:
        raise _Bad("the token texts should spell the prompt that was sent")
    return whole[0], len(pieces)


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)


def _select(
    text: str, pieces: list[str], values: list[Any], start: int, generated: int
) -> tuple[float, int]:
    starts, n = _layout(text, pieces, generated)
    end = len(text)
    inside = [i for i, s in enumerate(starts[:n]) if start <= s < end]
    if not inside:
        raise BackendError("no token of the reply among the prompt log-probabilities")
    before = inside[0] - 1
    if before >= 0 and pieces[before] and starts[before] + len(pieces[before]) > start:
        raise BackendError(
            f"the server's token {pieces[before]!r} spans the end of the query and the start "
            "of the reply, so the reply's log-probability cannot be separated"
        )
    picked = [values[i] for i in inside]
    if any(v is None for v in picked):
        raise BackendError("the server gave no log-probability for a token of the reply")
    return float(sum(picked)), len(picked)


def score_span(body: dict[str, Any], choice: dict[str, Any], text: str, start: int) -> ScoredSpan:
    """The tokens of ``text[start:]`` (the prompt sent) scored from the reply ``body``.

    Raises ``BackendError`` with the reason (the caller adds the endpoint)."""
    usage = body.get("usage")
    generated = usage.get("completion_tokens") if isinstance(usage, dict) else None
    generated = generated if isinstance(generated, int) and generated >= 0 else 0
    try:
        read = _from_prompt_logprobs(choice)
        source = "prompt_logprobs"
        if read is None:
            read, source = _from_echo(choice), "echo"
        else:
            generated = 0  # prompt_logprobs holds the prompt's tokens alone
        if read is None:
            raise BackendError(NO_PROMPT_LOGPROBS)
        total, n = _select(text, read[0], read[1], start, generated)
    except _Bad as exc:
        raise BackendError(f"malformed response: {exc}") from None
    return ScoredSpan(total, n, source)
