"""transformers' GGUF conversion bar stays off the screen while psym converts a model (issue 31:
under psym's live progress display its redraws left 16 lines on the final screen). The bar is
transformers' own tqdm, called as the converter calls it."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from psymetrics_plugin_hf.local_model import quiet_conversion


@pytest.fixture
def gguf_utils() -> Any:
    """transformers' GGUF converter (torch), imported when the test runs, not at collection."""
    return pytest.importorskip("transformers.modeling_gguf_pytorch_utils")


def _convert(n: int) -> int:
    # what load_gguf_checkpoint does: for tensor in tqdm(reader.tensors, desc=...)
    module = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    desc = "Converting and de-quantizing GGUF tensors..."
    return sum(1 for _ in module.tqdm(range(n), desc=desc))


def test_the_conversion_bar_is_quiet_only_inside_the_block(
    capfd: pytest.CaptureFixture, gguf_utils: Any
) -> None:
    original = gguf_utils.tqdm
    with quiet_conversion():
        assert _convert(5) == 5  # the loop still runs over every tensor
    assert capfd.readouterr().err == ""
    assert gguf_utils.tqdm is original  # restored
    _convert(5)
    assert "Converting and de-quantizing" in capfd.readouterr().err  # what it printed before
