"""The backend contract (issue 10 item 4): declared capabilities, no probing, one call path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from psymetrics_core.backends.base import Backend, GenerationSettings, as_backend, call_backend
from psymetrics_core.backends.cache import CachedBackend, ResponseCache
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, ImagePart, Prompt

REPO = Path(__file__).resolve().parents[2]


class Echo(Backend):
    name = "echo"
    chunk_size = 3
    supports_concurrency = True

    def generate(self, prompts, settings, progress=None):
        return [Completion(text=p.text) for p in prompts]

    def identity(self):
        return {"backend": "echo", "model": "echo-1"}

    def usage(self):
        return {"requests": 1}


class Duck:
    """A backend object that does not subclass Backend (e.g. a test double)."""

    chunk_size = 99  # NOT read: only declared capabilities of Backend subclasses count

    def generate(self, prompts, settings, progress=None):
        return [Completion(text="quack") for _ in prompts]

    def option_logprobs(self, prompts, settings, progress=None):
        return [Completion(option_logprobs=(0.0,)) for _ in prompts]

    def identity(self):
        return {"backend": "duck"}


def test_defaults_of_the_contract():
    b = Backend()
    assert (b.chunk_size, b.concurrency, b.supports_concurrency) == (None, 1, False)
    assert (b.supports_logprobs, b.supports_images, b.accepts_on_result) == (True, False, False)
    assert b.usage() is None and b.cache_identity() == b.identity() == {"backend": "backend"}
    with pytest.raises(BackendError, match="cannot score options"):
        b.option_logprobs([], GenerationSettings())
    b.set_concurrency(4)
    assert b.concurrency == 1  # ignored where concurrency is not supported
    e = Echo()
    e.set_concurrency(4)
    assert e.concurrency == 4


def test_a_duck_typed_backend_is_adapted_with_default_capabilities():
    d = as_backend(Duck())
    assert d.chunk_size is None and d.identity() == {"backend": "duck"}
    assert (
        call_backend(
            d, [Prompt(({"role": "user", "content": "x"},), (), "x")], GenerationSettings()
        )[0].text
        == "quack"
    )
    assert as_backend(Echo()).chunk_size == 3


def test_cached_backend_mirrors_the_declared_capabilities(tmp_path):
    c = CachedBackend(Echo(), ResponseCache(tmp_path / "r.sqlite3"))
    assert (c.chunk_size, c.supports_concurrency, c.name) == (3, True, "echo")
    assert c.usage() == {"requests": 1} and c.cache_identity()["model"] == "echo-1"
    c.set_concurrency(5)
    assert c.concurrency == 5 and c.backend.concurrency == 5


def test_images_to_a_backend_without_image_support_stop_with_one_line():
    pr = Prompt(({"role": "user", "content": "x"},), (), "x", images=(ImagePart(b"\x89PNG"),))
    with pytest.raises(BackendError, match="backend 'echo' does not take images"):
        call_backend(Echo(), [pr], GenerationSettings())


def test_the_pipeline_reads_capabilities_instead_of_probing():
    probe = re.compile(r"\b(hasattr|getattr)\(")
    files = ["administer/runner.py", "backends/cache.py", "administer/judge.py"]
    files += ["administer/scheduler.py", "pluginsys/session.py"]
    kinds = REPO / "psymetrics_core/administer/kinds"
    files += [f"administer/kinds/{p.name}" for p in kinds.glob("*.py")]
    modes = REPO / "psymetrics_core/administer/administration"
    files += [f"administer/administration/{p.name}" for p in modes.glob("*.py")]
    assert "administer/administration/battery.py" in files
    for name in files:
        text = (REPO / "psymetrics_core" / name).read_text(encoding="utf-8")
        assert not probe.search(text), f"psymetrics_core/{name} probes with hasattr/getattr"
