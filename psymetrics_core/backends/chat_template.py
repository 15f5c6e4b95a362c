"""A model's chat template applied on the client (``openai-completions``'s ``chat_template``
argument), so a completions server that echoes prompt log-probabilities can score a whole
assistant reply with its end-of-turn tokens (``Option.turn_end``, the value-portrait task).

``chat_template=PATH`` names one of:

- a GGUF file: its ``tokenizer.chat_template`` metadata, and its BOS/EOS token texts;
- a ``tokenizer_config.json`` (or the folder holding one): its ``chat_template`` and
  ``bos_token``/``eos_token``;
- any other file: the Jinja template itself (BOS/EOS empty).

The template is rendered with jinja2's immutable sandbox as transformers renders it
(``trim_blocks``, ``lstrip_blocks``, ``raise_exception``). A reply's texts are those the ``hf``
backend scores (``psymetrics_plugin_hf.hf_turn``): the context is the messages rendered with
the generation prompt, the end of turn is what the template writes after an assistant message.
The template's text and its SHA-256 go into the backend identity (run records, response cache).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from psymetrics_core.backends.gguf_meta import gguf_metadata
from psymetrics_core.base.errors import BackendError

__all__ = ["ChatTemplate", "load_chat_template"]

_MARK = "PSYMREPLYMARK"  # stands for the reply while the template is rendered
_MAX_BYTES = 1024 * 1024  # a template file (or tokenizer_config.json) larger than this is refused


@dataclass(frozen=True)
class ChatTemplate:
    """A Jinja chat template and the special-token texts it may use."""

    source: str  # the file it was read from
    text: str
    bos_token: str = ""
    eos_token: str = ""

    @property
    def sha256(self) -> str:
        """The template text's SHA-256 (hex)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def identity(self) -> dict[str, str]:
        """What goes into the backend identity: the file, the hash and the text itself."""
        return {"path": self.source, "sha256": self.sha256, "template": self.text}

    def render(self, messages: list[dict[str, str]], generation_prompt: bool) -> str:
        """The messages as the model's prompt text (``add_generation_prompt`` as asked)."""

        def raise_exception(message: str) -> None:
            raise TemplateError(message)

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = raise_exception
        try:
            return env.from_string(self.text).render(
                messages=messages,
                add_generation_prompt=generation_prompt,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except TemplateError as exc:
            raise BackendError(f"chat_template {self.source}: {_one_line(str(exc))}") from None
        except Exception as exc:  # a template's own runtime error (e.g. a bad index)
            raise BackendError(
                f"chat_template {self.source}: rendering failed ({type(exc).__name__}: "
                f"{_one_line(str(exc))})"
            ) from None

    def context(self, messages: list[dict[str, str]]) -> str:
        """The prompt a reply follows: the messages and the generation prompt."""
        return self.render(messages, True)

    def turn_end(self, messages: list[dict[str, str]]) -> str:
        """What the template writes after an assistant reply to ``messages``."""
        full = self.render([*messages, {"role": "assistant", "content": _MARK}], False)
        at = full.rfind(_MARK)
        if at < 0:
            raise BackendError(f"chat_template {self.source}: the template drops the reply")
        return full[at + len(_MARK) :]


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > _MAX_BYTES:
            raise BackendError(
                f"chat_template {path}: {size:,} bytes; a chat template or tokenizer_config.json "
                f"is at most {_MAX_BYTES:,}"
            )
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BackendError(f"chat_template {path}: not UTF-8 text") from None
    except OSError as exc:
        raise BackendError(f"chat_template {path}: cannot read ({exc.strerror or exc})") from None


def _token_text(value: Any) -> str:
    """A tokenizer_config.json special token: a string or an AddedToken object."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


def _from_tokenizer_config(path: Path) -> ChatTemplate:
    try:
        config = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise BackendError(f"chat_template {path}: not JSON (line {exc.lineno})") from None
    template = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(template, list):  # named templates: the "default" one
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    if not isinstance(template, str) or not template.strip():
        raise BackendError(f"chat_template {path}: no 'chat_template' string in it")
    assert isinstance(config, dict)
    bos, eos = _token_text(config.get("bos_token")), _token_text(config.get("eos_token"))
    return ChatTemplate(str(path), template, bos, eos)


def _from_gguf(path: Path) -> ChatTemplate:
    keys = {
        "tokenizer.chat_template",
        "tokenizer.ggml.tokens",
        "tokenizer.ggml.bos_token_id",
        "tokenizer.ggml.eos_token_id",
    }
    meta = gguf_metadata(path, keys)
    template = meta.get("tokenizer.chat_template")
    if not isinstance(template, str) or not template.strip():
        raise BackendError(f"chat_template {path}: the GGUF file has no tokenizer.chat_template")
    tokens = meta.get("tokenizer.ggml.tokens") or []

    def token(key: str) -> str:
        i = meta.get(key)
        if not isinstance(i, int) or not 0 <= i < len(tokens):
            return ""
        return tokens[i] if isinstance(tokens[i], str) else ""

    bos, eos = token("tokenizer.ggml.bos_token_id"), token("tokenizer.ggml.eos_token_id")
    return ChatTemplate(str(path), template, bos, eos)


def load_chat_template(value: str) -> ChatTemplate:
    """The template ``chat_template=PATH`` names (module docstring), read once."""
    path = Path(value).expanduser()
    if path.is_dir():
        path = path / "tokenizer_config.json"
    if not path.is_file():
        raise BackendError(
            f"chat_template {path}: no such file (give a Jinja template, a GGUF file or a "
            "tokenizer_config.json)"
        )
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise BackendError(f"chat_template {path}: cannot read ({exc.strerror or exc})") from None
    if head == b"GGUF":
        return _from_gguf(path)
    if path.name.lower().endswith(".gguf"):
        raise BackendError(f"chat_template {path}: not a GGUF file (it does not start with 'GGUF')")
    if path.name.endswith(".json"):
        return _from_tokenizer_config(path)
    text = _read_text(path)
    if not text.strip():
        raise BackendError(f"chat_template {path}: the file is empty")
    template = ChatTemplate(str(path), text)
    template.render([{"role": "user", "content": "x"}], True)  # a syntax error: now, in one line
    return template
