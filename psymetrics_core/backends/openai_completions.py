"""The ``openai-completions`` backend: ``/completions`` with the messages joined into one text,
or rendered by the model's chat template on the client (``chat_template=PATH``,
:mod:`.chat_template`); ``logprob`` mode sends ``context + option`` with ``echo`` and sums the
option's prompt-token log-probabilities (how lm-eval's ``local-completions`` scores multiple
choice), so it scores multi-token continuations. With a chat template it also scores whole
assistant replies with their end-of-turn tokens (``Option.turn_end``), read from vLLM's
``prompt_logprobs`` or the echo, whichever the server returns (:mod:`.prompt_logprobs`).
Transport, retries and redaction: the HTTP base (:mod:`.http`)."""

from __future__ import annotations

from typing import Any

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.backends.chat_template import ChatTemplate, load_chat_template
from psymetrics_core.backends.http import Request, number
from psymetrics_core.backends.openai_api import OpenAIBackend, finish_reason
from psymetrics_core.backends.openai_args import COMPLETIONS_ARGS
from psymetrics_core.backends.prompt_logprobs import score_span
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["OpenAICompletionsBackend"]


class OpenAICompletionsBackend(OpenAIBackend):
    """``/completions``: messages joined into one text, or rendered by ``chat_template``;
    ``logprob`` mode needs prompt echo."""

    name = "openai-completions"
    model_args = COMPLETIONS_ARGS
    supports_continuations = True  # prompt echo scores every token of a continuation
    endpoint = "completions"
    chat_template: ChatTemplate | None = None
    ask_prompt_logprobs = False

    def configure(self, args: dict[str, str]) -> None:
        """``top_logprobs``; ``chat_template`` (a reply's end of turn can then be scored) and
        ``prompt_logprobs`` (also ask for vLLM's ``prompt_logprobs``)."""
        super().configure(args)
        path = args.pop("chat_template", None)
        if path is not None:
            self.chat_template = load_chat_template(path)
            self.supports_turn_end = True
        flag = args.pop("prompt_logprobs", "false").lower()
        if flag not in ("true", "false"):
            raise BackendError(f"--model-args prompt_logprobs must be true or false, got {flag!r}")
        self.ask_prompt_logprobs = flag == "true"

    def identity(self) -> dict[str, Any]:
        """The OpenAI identity, with the chat template (path, SHA-256, text) when one is set."""
        out = super().identity()
        if self.chat_template is not None:
            out["chat_template"] = self.chat_template.identity()
        if self.ask_prompt_logprobs:
            out["prompt_logprobs"] = True
        return out

    def cache_identity(self) -> dict[str, Any]:
        """The identity, the template known by its text and hash only (not where it lies)."""
        out = self.identity()
        if "chat_template" in out:
            out["chat_template"] = {k: v for k, v in out["chat_template"].items() if k != "path"}
        return out

    def turn_end_refusal(self) -> str:
        """Without the chat template a reply's end of turn is unknown: name the argument."""
        return (
            "backend 'openai-completions' cannot score a whole assistant reply with its "
            "end-of-turn tokens without the model's chat template: give it with --model-args "
            "chat_template=PATH (a Jinja file, the model's GGUF file or its "
            "tokenizer_config.json), against a server that echoes prompt log-probabilities "
            "(llama-cpp-python's server, vLLM)"
        )

    def context_text(self, prompt: Prompt) -> str:
        """The text prompt sent to the completions endpoint (text only: never images): the
        messages rendered by the chat template, else joined by blank lines."""
        if prompt.images:
            raise BackendError("openai-completions sends text only; use openai-chat for images")
        if self.chat_template is not None:
            return self.chat_template.context([dict(m) for m in prompt.messages])
        return "\n\n".join(m["content"] for m in prompt.messages)

    def option_texts(self, prompt: Prompt) -> list[str]:
        """Per option, the text scored after the context (a reply's end of turn appended)."""
        if self.chat_template is None or not any(o.turn_end for o in prompt.options):
            return [o.scored_text for o in prompt.options]
        end = self.chat_template.turn_end([dict(m) for m in prompt.messages])
        return [o.scored_text + end if o.turn_end else o.scored_text for o in prompt.options]

    def build_request(self, prompt: Prompt, settings: GenerationSettings) -> Request:
        """The joined text, length, temperature and seed."""
        body = {
            "model": self.model,
            "prompt": self.context_text(prompt),
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "seed": settings.seed,
        }
        return self.endpoint, body

    def parse_response(self, body: dict[str, Any], prompt: Prompt) -> Completion:
        """The first choice's ``text`` and ``finish_reason``."""
        choice = self.choice(body)
        text = choice.get("text") or ""
        if not isinstance(text, str):
            raise self.malformed("'text' should be a string", text)
        return Completion(text=text, meta={"finish_reason": finish_reason(choice)})

    def build_logprob_requests(self, prompt: Prompt, settings: GenerationSettings) -> list[Request]:
        """Per option, ``context + option`` with ``echo`` (sent concurrently)."""
        ctx = self.context_text(prompt)
        out = []
        for text in self.option_texts(prompt):
            body = _echo_body(self.model, ctx + text)
            if self.ask_prompt_logprobs:
                body["prompt_logprobs"] = 0  # vLLM: the prompt token's own logprob only
            out.append((self.endpoint, body))
        return out

    def parse_logprob_responses(self, bodies: list[dict[str, Any]], prompt: Prompt) -> Completion:
        """Per option, the sum of its prompt-token log-probabilities."""
        ctx = self.context_text(prompt)
        conts = self.option_texts(prompt)
        if self.chat_template is not None:
            return self._template_scores(bodies, ctx, conts)
        scores = [self._echo_score(b, ctx, c) for b, c in zip(bodies, conts, strict=True)]
        return Completion(option_logprobs=tuple(scores))

    def _template_scores(
        self, bodies: list[dict[str, Any]], ctx: str, conts: list[str]
    ) -> Completion:
        """Scores located by the token texts (``prompt_logprobs.score_span``), with the token
        counts (``option_tokens``, for a per-token mean) and the form read."""
        spans = []
        for body, cont in zip(bodies, conts, strict=True):
            try:
                spans.append(score_span(body, self.choice(body), ctx + cont, len(ctx)))
            except BackendError as exc:
                raise BackendError(f"{self.shown()}: {exc}") from None
        sources = sorted({s.source for s in spans})
        meta = {"option_tokens": [s.n_tokens for s in spans], "logprob_source": "+".join(sources)}
        return Completion(option_logprobs=tuple(s.logprob for s in spans), meta=meta)

    def _echo_score(self, body: dict[str, Any], ctx: str, cont: str) -> float:
        lp = self.choice(body).get("logprobs") or {}
        if not isinstance(lp, dict):
            raise self.malformed("'logprobs' should be an object", lp)
        offsets, values = lp.get("text_offset"), lp.get("token_logprobs")
        end = len(ctx) + len(cont)
        if not isinstance(offsets, list) or not isinstance(values, list):
            offsets = values = None
        elif not all(number(o) for o in offsets) or not all(v is None or number(v) for v in values):
            raise self.malformed("'text_offset'/'token_logprobs' should hold numbers", lp)
        if not offsets or not values:
            raise BackendError(
                f"{self.shown()} returned no prompt logprobs for echo=true: "
                "this server cannot score options; use --mode generate"
            )
        picked = [v for off, v in zip(offsets, values, strict=False) if len(ctx) <= off < end]
        if not picked or any(v is None for v in picked):
            raise BackendError(
                f"{self.shown()}: echoed logprobs do not cover the option "
                f"{cont!r}; the server does not echo prompt logprobs"
            )
        return float(sum(picked))


def _echo_body(model: str, text: str) -> dict[str, Any]:
    """A request scoring ``text``'s tokens (echoed with their log-probabilities)."""
    return {
        "model": model,
        "prompt": text,
        "max_tokens": 1,
        "temperature": 0.0,
        "echo": True,
        "logprobs": 1,
    }
