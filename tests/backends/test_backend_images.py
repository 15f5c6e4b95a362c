"""Images in prompts: ``image_url`` data-URL parts for openai-chat; text-only backends refuse."""

from __future__ import annotations

import asyncio
import base64

import pytest

from psymetrics_core.backends.base import GenerationSettings
from psymetrics_core.backends.openai_chat import chat_messages
from psymetrics_core.backends.openai_completions import OpenAICompletionsBackend
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import ImagePart, Prompt

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_images_become_data_url_parts_of_the_last_user_message() -> None:
    msgs = (
        {"role": "system", "content": "You are Frieren."},
        {"role": "user", "content": "first card"},
        {"role": "assistant", "content": "a bat"},
        {"role": "user", "content": "Please look at this inkblot image carefully."},
    )
    prompt = Prompt(msgs, (), "", images=(ImagePart(PNG, "image/png"),))
    out = chat_messages(prompt)
    assert out[:3] == [dict(m) for m in msgs[:3]]  # earlier turns stay text
    parts = out[3]["content"]
    assert parts[0] == {"type": "text", "text": "Please look at this inkblot image carefully."}
    url = parts[1]["image_url"]["url"]
    assert parts[1]["type"] == "image_url" and url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    assert chat_messages(Prompt(msgs, (), "")) == [dict(m) for m in msgs]  # no images: unchanged


def test_image_hash_is_part_of_the_record_and_cache_key() -> None:
    a = Prompt(({"role": "user", "content": "x"},), (), "x", images=(ImagePart(PNG),))
    b = Prompt(({"role": "user", "content": "x"},), (), "x", images=(ImagePart(PNG + b"1"),))
    assert a.to_json()["images"][0]["bytes"] == len(PNG)
    assert a.to_json() != b.to_json()  # same text, different image: different cache keys
    assert "images" not in Prompt(({"role": "user", "content": "x"},), (), "x").to_json()


def test_completions_backend_refuses_images() -> None:
    be = OpenAICompletionsBackend({"base_url": "http://127.0.0.1:9", "model": "m"})
    prompt = Prompt(({"role": "user", "content": "x"},), (), "x", images=(ImagePart(PNG),))
    with pytest.raises(BackendError, match="sends text only"):
        asyncio.run(be._generate_one(None, prompt, GenerationSettings()))
