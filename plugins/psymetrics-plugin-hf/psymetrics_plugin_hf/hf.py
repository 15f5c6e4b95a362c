"""Local transformers backend (``--model hf``): any local model path, GGUF files included.

GGUF weights are dequantised once and kept as a safetensors copy in the cache directory, so a
second load takes a fraction of a second instead of ~20 s. Option scoring of Llama-architecture
models goes through the hand-built forward pass of ``psymetrics-plugin-llama-engine`` where that
distribution is installed (``native=auto|onnx|torch|false``), else through transformers.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from psymetrics_core.api import (
    Backend,
    BackendError,
    Completion,
    GenerationSettings,
    OnResult,
    Prompt,
    Reporter,
    backend_install,
    bound,
    cache_dir,
    remove_stale_conversions,
)
from psymetrics_plugin_hf.deps import require_modules, version_of
from psymetrics_plugin_hf.hf_fast import log_softmax, plain_meta
from psymetrics_plugin_hf.hf_turn import option_texts
from psymetrics_plugin_hf.hf_vision import (
    generate_with_images,
    is_image_text_model,
    load_image_text_model,
)
from psymetrics_plugin_hf.local_model import converted_copy, quiet_conversion

STATUS = logging.getLogger("psymetrics.status")  # user status lines, above psym's progress bars
__all__ = ["HFBackend", "ENGINE_DIST", "require_modules"]

ENGINE_DIST = "psymetrics-plugin-llama-engine"  # the optional native Llama forward pass
_ENGINE = "psymetrics_plugin_llama_engine"
# Recorded with the engine (``option_scoring_version``), so part of the response cache's key:
# bump when an engine's scores change. 2: log-softmax as logits minus logsumexp (torch's
# float32 log_softmax read every token about 8.6e-6 nats high on a CPU).
_SCORING_VERSION = 2

_DTYPES = ("float32", "bfloat16", "float16", "auto")


class HFBackend(Backend):
    """A causal language model run in-process with transformers (CPU by default)."""

    name = "hf"
    supports_continuations = True  # loglikelihoods() sums every token of a continuation
    supports_turn_end = True  # a reply's end of turn comes from the chat template (hf_turn)
    accepts_on_result = True  # responses reach the cache batch by batch
    chunk_size = 64  # prompts per call from the runner (batched inside)

    def __init__(self, model_args: dict[str, str]) -> None:
        args = dict(model_args)
        pretrained = args.pop("pretrained", None)
        if not pretrained:
            raise BackendError("--model hf needs --model-args pretrained=PATH[,gguf_file=FILE]")
        self.pretrained: str = pretrained
        self.gguf_file = args.pop("gguf_file", None)
        self.device = args.pop("device", "cpu")
        self.dtype = args.pop("dtype", "float32")
        if self.dtype not in _DTYPES:
            raise BackendError(f"--model-args dtype must be one of {', '.join(_DTYPES)}")
        try:
            self.batch_size = int(args.pop("batch_size", "8"))
        except ValueError as exc:
            raise BackendError("--model-args batch_size must be an integer") from exc
        self.chat_template = _flag(args.pop("chat_template", "true"))
        self.prefix_cache = _flag(args.pop("prefix_cache", "true"))
        self.native = _native_choice(args.pop("native", "true"))
        threads = args.pop("threads", None)
        try:
            self.threads = int(threads) if threads else _cpu_threads()
        except ValueError as exc:
            raise BackendError("--model-args threads must be an integer") from exc
        _check_hf_args(self.device, self.batch_size, self.threads)
        if args:
            raise BackendError(
                f"unknown --model-args for hf: {', '.join(sorted(args))} "
                "(known: pretrained, gguf_file, device, dtype, batch_size, "
                "chat_template, prefix_cache, native, threads)"
            )
        if not self.gguf_file and not Path(self.pretrained).exists():
            raise BackendError(
                f"model path not found: {self.pretrained} (the hf backend loads "
                "local models only; nothing is downloaded)"
            )
        self._model: Any = None
        self._tok: Any = None
        self._processor: Any = None  # image-text-to-text models (hf_vision)
        self._native: Any = None  # (NativeLlama, NativeTokenizer) for option scoring
        self._native_tried = False
        self._identity: dict[str, Any] | None = None
        self.supports_images = not self.gguf_file and is_image_text_model(self.pretrained)
        require_modules("torch", "transformers")

    # -- loading -----------------------------------------------------------------------------

    def _load(self) -> None:
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # importable by name, but broken: one line, no traceback
            raise BackendError(
                f"--model {self.name}: importing {exc.name or 'torch/transformers'} failed "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                f"reinstall: {backend_install(self.name)}"
            ) from None

        transformers.utils.logging.disable_progress_bar()

        if self.device == "cpu":
            torch.set_num_threads(self.threads)
        elif self.device.startswith("cuda") and not torch.cuda.is_available():
            raise BackendError(f"--model-args device={self.device}: no CUDA device is available")
        dtype = getattr(torch, self.dtype) if self.dtype != "auto" else "auto"
        try:
            if self.supports_images:
                self._model, self._processor = load_image_text_model(self.pretrained, dtype)
                self._tok = getattr(self._processor, "tokenizer", self._processor)
            elif self.gguf_file:
                self._model, self._tok = self._load_gguf(dtype)
            else:
                self._tok = AutoTokenizer.from_pretrained(self.pretrained)
                self._model = AutoModelForCausalLM.from_pretrained(self.pretrained, dtype=dtype)
        except (OSError, ValueError) as exc:
            raise BackendError(f"could not load model {self.pretrained}: {exc}") from exc
        self._model.to(self.device)
        self._model.eval()
        if self._tok.pad_token is None:
            self._tok.pad_token = self._tok.eos_token

    def _load_gguf(self, dtype: Any) -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        assert self.gguf_file is not None and self.pretrained is not None
        copy = converted_copy(self.pretrained, self.gguf_file)
        if (copy / "config.json").is_file():
            STATUS.info("loading %s", self.name)
            return (
                AutoModelForCausalLM.from_pretrained(copy, dtype=dtype),
                AutoTokenizer.from_pretrained(copy),
            )
        require_modules("gguf", model=self.name)  # only a first load reads GGUF
        STATUS.info(
            "preparing %s once: dequantising its GGUF file (about 25 s on a CPU; the copy is "
            "kept in %s and later runs load it in under a second)",
            self.name,
            copy.parent,
        )
        with quiet_conversion():  # the status line above stands for transformers' own bar
            tok = AutoTokenizer.from_pretrained(self.pretrained, gguf_file=self.gguf_file)
            model = AutoModelForCausalLM.from_pretrained(
                self.pretrained, gguf_file=self.gguf_file, dtype=dtype
            )
        self._save_copy(model, tok, copy)
        return model, tok

    @staticmethod
    def _save_copy(model: Any, tok: Any, copy: Path) -> None:
        """Save a plain (non-GGUF) copy; transformers refuses save_pretrained on GGUF models."""
        import shutil

        from transformers import AutoModelForCausalLM

        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        fresh = AutoModelForCausalLM.from_config(config, dtype=model.dtype)
        fresh.load_state_dict(model.state_dict())
        remove_stale_conversions()
        tmp = copy.with_name(copy.name + f".tmp{os.getpid()}")
        try:
            fresh.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            tmp.replace(copy)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another process won the race; fine

    # -- prompts -------------------------------------------------------------------------------

    def _native_engine(self) -> Any:
        """(model, tokenizer) of the native Llama forward pass, or None where it does not apply.

        Used for option scoring of float32 Llama-architecture safetensors models (the
        dequantised SmolLM2 copy included) where ``psymetrics-plugin-llama-engine`` is
        installed: on a CPU through ONNX Runtime (its ``onnx_llama``), elsewhere, or with
        ``native=torch``, in plain torch (``native_llama``); either loads in a fraction of the
        time transformers needs. ``native=false`` (or ``prefix_cache=false``) keeps transformers.
        """
        if self._native_tried:
            return self._native
        self._native_tried = True
        engine = self.scoring_engine()
        if engine == "transformers":
            return None
        from psymetrics_plugin_llama_engine.native_llama import (
            NativeTokenizer,
            load_native,
            native_support,
        )

        directory = self._model_directory()
        if not (directory / "config.json").is_file():
            self._load()  # the first load converts the GGUF file through transformers
            if native_support(directory) is not None:
                return None  # scoring_engine() could not look at the copy before it existed
        if engine == "onnxruntime":
            from psymetrics_plugin_llama_engine.onnx_llama import load_onnx

            graphs = cache_dir() / "onnx-graphs"
            self._native = (load_onnx(directory, self.threads, graphs), NativeTokenizer(directory))
            return self._native
        import torch

        if self.device == "cpu":
            torch.set_num_threads(self.threads)
        self._native = load_native(directory, self.device)
        return self._native

    def scoring_engine(self) -> str:
        """What scores options: ``onnxruntime`` or ``torch`` (the native Llama forward pass,
        where the model turns out to be one it runs) or ``transformers``. Decided from the
        settings and the installed packages, without importing or loading anything.
        Without ``psymetrics-plugin-llama-engine``, ``native=auto`` is transformers and an
        explicit ``native=onnx`` or ``native=torch`` is a one-line error saying what to install.
        """
        if self.native == "off" or not self.prefix_cache or self.supports_images:
            return "transformers"
        if self.dtype not in ("float32", "auto"):
            return "transformers"
        if find_spec(_ENGINE) is None:
            if self.native == "auto":
                return "transformers"
            raise BackendError(
                f"--model-args native={self.native} needs the Llama engine: pip install "
                f"{ENGINE_DIST} (or native=false for transformers scoring)"
            )
        from psymetrics_plugin_llama_engine.native_llama import native_support

        directory = self._model_directory()
        if (directory / "config.json").is_file() and native_support(directory) is not None:
            return "transformers"  # not a model the native pass runs (an unconverted GGUF
            # file is taken to be one: its copy is checked once it exists)
        if self.native == "torch" or self.device != "cpu":
            return "torch"
        from psymetrics_plugin_llama_engine.onnx_llama import onnx_available

        if onnx_available():
            return "onnxruntime"
        if self.native == "onnx":
            raise BackendError(
                "--model-args native=onnx needs onnxruntime and onnx: "
                "pip install 'onnxruntime>=1.23' 'onnx>=1.18'"
            )
        return "torch"

    def _model_directory(self) -> Path:
        """Where the safetensors model is: ``pretrained``, or the dequantised copy of a GGUF
        file (which exists only after the first load)."""
        if self.gguf_file:
            return converted_copy(self.pretrained, self.gguf_file)
        return Path(self.pretrained)

    def context_text(self, prompt: Prompt) -> str:
        """The exact text the model is conditioned on (chat template applied)."""
        if self._native is not None:
            tok = self._native[1]
            if self.chat_template and tok.chat_template:
                return str(tok.apply_chat_template(list(prompt.messages)))
            return "\n\n".join(m["content"] for m in prompt.messages)
        self._load()
        if self.chat_template and getattr(self._tok, "chat_template", None):
            return str(
                self._tok.apply_chat_template(
                    list(prompt.messages), tokenize=False, add_generation_prompt=True
                )
            )
        return "\n\n".join(m["content"] for m in prompt.messages)

    def _encode(self, text: str) -> list[int]:
        if self._native is not None:
            return list(self._native[1].encode(text))
        return list(self._tok(text, add_special_tokens=False)["input_ids"])

    # -- generation ----------------------------------------------------------------------------

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """Greedy (temperature 0) or seeded sampled completions, batched with left padding; greedy
        batches of prompts that share a long prefix (a persona) reuse its KV cache
        (:mod:`psymetrics_plugin_hf.hf_generate`; ``prefix_cache=false`` turns this off)."""
        self._load()
        if self.supports_images:
            return self._generate_images(prompts, settings, progress, on_result)
        if any(p.images for p in prompts):
            raise BackendError(f"{self.pretrained} is a text-only model: it cannot take images")
        from psymetrics_plugin_hf.hf_generate import generate_text

        return generate_text(self, prompts, settings, progress, on_result)

    def _generate_images(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None,
        on_result: OnResult | None,
    ) -> list[Completion]:
        """One prompt at a time through the image-text model's processor."""
        out: list[Completion] = []
        for prompt in prompts:
            text = generate_with_images(self._model, self._processor, prompt, settings, self.device)
            out.append(Completion(text=text))
            if on_result is not None:
                on_result(len(out) - 1, out[-1])
            if progress is not None:
                progress.advance(1)
        return out

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """Log-likelihood of each option's value (e.g. ``"3"``), or of its ``continuation``
        (every token summed), right after the prompt.

        Prompts are scored in batches; the token prefix a batch shares (system prompt and
        instruction) is run once and its KV cache reused (``prefix_cache=false`` turns this
        off and scores each prompt on its own with :meth:`loglikelihoods`).
        """
        if not any(p.images for p in prompts) and self._native_engine() is not None:
            from psymetrics_plugin_hf.hf_fast import score_prompts_native

            return score_prompts_native(self, prompts, progress, on_result)
        self._load()
        if not self.prefix_cache:
            out: list[Completion] = []
            for i, prompt in enumerate(prompts):
                context = self.context_text(prompt)
                conts = option_texts(self, prompt)
                lps = self.loglikelihoods(context, conts)
                comp = Completion(option_logprobs=tuple(lps), meta=plain_meta(self, prompt))
                out.append(comp)
                if on_result is not None:
                    on_result(i, comp)
                if progress is not None:
                    progress.advance(1)
            return out
        from psymetrics_plugin_hf.hf_fast import score_prompts

        return score_prompts(self, prompts, progress, on_result)

    def loglikelihoods(self, context: str, continuations: Sequence[str]) -> list[float]:
        """Sum of token log-probabilities of each continuation given ``context``.

        Tokenisation follows lm-eval: the whole string is encoded and split after the
        context's tokens, so both tools score the same tokens.
        """
        import torch

        self._load()
        ctx = self._encode(context)
        pieces = []
        for cont in continuations:
            whole = self._encode(context + cont)
            if whole[: len(ctx)] != ctx:
                pieces.append((ctx, self._encode(cont)))
            else:
                pieces.append((ctx, whole[len(ctx) :]))
        with torch.inference_mode():
            if all(len(c) == 1 for _, c in pieces):
                ids = torch.tensor([ctx], device=self.device)
                logits = self._model(input_ids=ids, logits_to_keep=1).logits[0, -1]
                logp = log_softmax(logits)
                return [float(logp[c[0]]) for _, c in pieces]
            scores = []
            for c_ids, cont_ids in pieces:
                ids = torch.tensor([c_ids + cont_ids], device=self.device)
                logits = self._model(input_ids=ids).logits[0]
                logp = log_softmax(logits)
                start = len(c_ids) - 1
                scores.append(float(sum(logp[start + i, t] for i, t in enumerate(cont_ids))))
            return scores

    def identity(self) -> dict[str, Any]:
        """Backend, model path, file and settings for run records (worked out once per
        backend: the cache key and the run record see the same). The option-scoring engine
        and its version are part of it (and of the response cache's key): the engines agree
        only within float error."""
        if self._identity is not None:
            return dict(self._identity)
        engine = self.scoring_engine()
        names = ["transformers", "torch"] + (["onnxruntime"] if engine == "onnxruntime" else [])
        found = {name: version_of(name, self.name) for name in names}
        self._identity = {
            "backend": self.name,
            "pretrained": str(self.pretrained),
            "gguf_file": self.gguf_file,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "chat_template": self.chat_template,
            "threads": self.threads,
            "transformers": found["transformers"],
            "torch": found["torch"],
            "option_scoring": engine,
            "option_scoring_version": _SCORING_VERSION,
            **({"onnxruntime": found["onnxruntime"]} if engine == "onnxruntime" else {}),
        }
        return dict(self._identity)


def _flag(text: str) -> bool:
    return text.lower() not in ("0", "false", "no")


def _native_choice(text: str) -> str:
    """``native=``: auto (true, the default), onnx, torch or off (false)."""
    value = text.lower()
    if value in ("1", "true", "yes", "auto"):
        return "auto"
    if value in ("0", "false", "no", "off"):
        return "off"
    if value in ("onnx", "torch"):
        return value
    raise BackendError(f"--model-args native must be true, false, onnx or torch, got {text!r}")


def _check_hf_args(device: str, batch_size: int, threads: int) -> None:
    """Reject impossible settings before anything is loaded."""
    if not re.fullmatch(r"cpu|mps|cuda(:\d+)?", device):
        raise BackendError(f"--model-args device must be cpu, cuda, cuda:N or mps, got {device!r}")
    if batch_size < 1:
        raise BackendError(f"--model-args batch_size must be at least 1, got {batch_size}")
    if threads < 1:
        raise BackendError(f"--model-args threads must be at least 1, got {threads}")
    for key, value in (("batch_size", batch_size), ("threads", threads)):
        b = bound(f"--model-args {key}")  # upper bounds: psymetrics_core/base/bounds.py
        if not b.holds(value):
            raise BackendError(b.message(value))


def _cpu_threads() -> int:
    """CPUs this process may run on (cgroup/affinity aware), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
