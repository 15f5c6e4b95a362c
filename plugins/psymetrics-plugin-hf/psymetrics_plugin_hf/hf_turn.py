"""The texts the ``hf`` backend scores for a prompt's options.

An option's ``scored_text``, followed, when the option asks for it (``Option.turn_end``), by
the end of the assistant turn as the model's chat template writes it (SmolLM2: ``<|im_end|>``
and a newline). A whole reply is then scored as Song et al. (2025) score it: every token after
the generation prompt up to the end of the formatted assistant message.
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.api import BackendError, Prompt

__all__ = ["option_texts", "turn_end_text"]

_MARK = "PSYMREPLYMARK"  # stands for the reply while the template is rendered


def _full_chat(backend: Any, messages: list[dict[str, str]]) -> str | None:
    """The chat with the assistant's message, no generation prompt (None: no template)."""
    if backend._native is not None:
        tok = backend._native[1]
        if not (backend.chat_template and tok.chat_template):
            return None
        return str(tok.apply_chat_template(messages, add_generation_prompt=False))
    backend._load()
    tok = backend._tok
    if not (backend.chat_template and getattr(tok, "chat_template", None)):
        return None
    return str(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=False))


def turn_end_text(backend: Any, prompt: Prompt) -> str:
    """What the chat template writes after an assistant reply to ``prompt``'s messages."""
    full = _full_chat(backend, [*prompt.messages, {"role": "assistant", "content": _MARK}])
    if full is None:
        raise BackendError(
            f"{backend.pretrained}: a reply's end-of-turn tokens come from the chat template, "
            "and this model has none (or --model-args chat_template=false)"
        )
    at = full.rfind(_MARK)
    if at < 0:
        raise BackendError(f"{backend.pretrained}: the chat template drops the assistant reply")
    return full[at + len(_MARK) :]


def option_texts(backend: Any, prompt: Prompt) -> list[str]:
    """Per option, the text scored after the prompt's context."""
    if not any(o.turn_end for o in prompt.options):
        return [o.scored_text for o in prompt.options]
    end = turn_end_text(backend, prompt)
    return [o.scored_text + end if o.turn_end else o.scored_text for o in prompt.options]
