"""Image-text-to-text models for the ``hf`` backend (``AutoModelForImageTextToText``).

A local model folder whose ``config.json`` has a ``vision_config`` is loaded with
``AutoProcessor`` and ``AutoModelForImageTextToText``; a prompt's images go with its last user
message as ``{"type": "image"}`` content parts of the processor's chat template. Prompts are
generated one at a time (images differ in size per prompt).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from psymetrics_core.api import (
    BackendError,
    GenerationSettings,
    Prompt,
    PsymError,
    check_image_bytes,
)

__all__ = ["is_image_text_model", "load_image_text_model", "generate_with_images"]


def is_image_text_model(pretrained: str | Path) -> bool:
    """Whether the local model folder holds an image-text-to-text model (``vision_config``)."""
    cfg = Path(pretrained) / "config.json"
    if not cfg.is_file():
        return False
    try:
        data = json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "vision_config" in data


def load_image_text_model(pretrained: str, dtype: Any) -> tuple[Any, Any]:
    """(model, processor) of a local image-text-to-text model; nothing is downloaded."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    try:
        processor = AutoProcessor.from_pretrained(pretrained)
        model = AutoModelForImageTextToText.from_pretrained(pretrained, dtype=dtype)
    except (OSError, ValueError) as exc:
        raise BackendError(f"could not load image-text model {pretrained}: {exc}") from exc
    return model, processor


def _messages(prompt: Prompt) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [
        {"role": m["role"], "content": [{"type": "text", "text": m["content"]}]}
        for m in prompt.messages
    ]
    if prompt.images:
        last = max(i for i, m in enumerate(msgs) if m["role"] == "user")
        msgs[last]["content"] = [{"type": "image"} for _ in prompt.images] + msgs[last]["content"]
    return msgs


def generate_with_images(
    model: Any, processor: Any, prompt: Prompt, settings: GenerationSettings, device: str
) -> str:
    """The model's reply to ``prompt`` (its images shown with the last user message)."""
    import torch
    from PIL import Image

    text = processor.apply_chat_template(
        _messages(prompt), add_generation_prompt=True, tokenize=False
    )
    for n, im in enumerate(prompt.images, start=1):  # size and header dimensions, not decoded
        try:
            check_image_bytes(im.data, f"image {n} of the prompt")
        except PsymError as exc:
            raise BackendError(str(exc)) from None
    images = [Image.open(io.BytesIO(im.data)).convert("RGB") for im in prompt.images]
    enc = processor(text=[text], images=images or None, return_tensors="pt")
    enc = {k: v.to(device) for k, v in enc.items()}
    kwargs: dict[str, Any] = {"max_new_tokens": settings.max_new_tokens}
    tok = getattr(processor, "tokenizer", processor)
    if getattr(tok, "pad_token_id", None) is not None:
        kwargs["pad_token_id"] = tok.pad_token_id
    if settings.temperature > 0:
        torch.manual_seed(settings.seed)
        kwargs.update(do_sample=True, temperature=settings.temperature)
    else:
        kwargs.update(do_sample=False)
    with torch.inference_mode():
        out = model.generate(**enc, **kwargs)
    new = out[0, enc["input_ids"].shape[1] :]
    return str(tok.decode(new, skip_special_tokens=True))
