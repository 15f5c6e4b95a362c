"""``--model lm-eval:<name>``: any model in lm-eval's registry, through its LM interface.

``logprob`` mode sends one ``loglikelihood`` request per (prompt, option) with the option's
value as continuation (no leading space under a chat template, as lm-eval scores multiple
choice); ``generate`` mode sends ``generate_until`` requests. The chat template of the model is
applied when it has one (``chat_template=false`` joins the messages instead).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter
from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.redaction import redact
from psymetrics_core.base.types import Completion, Prompt

__all__ = ["LMEvalBackend"]


class LMEvalBackend(Backend):
    """A psymetrics backend wrapping an lm-eval ``LM`` built from its registry."""

    name = "lm-eval"
    supports_continuations = True  # lm-eval's loglikelihood sums a continuation's tokens

    def __init__(self, model_args: dict[str, str]) -> None:
        args = dict(model_args)
        self.lm_name = args.pop("variant", "") or args.pop("lm_eval_model", "")
        if not self.lm_name:
            raise BackendError("use --model lm-eval:<name>, e.g. lm-eval:hf or lm-eval:vllm")
        self.chat_template = args.pop("chat_template", "true").lower() not in ("0", "false", "no")
        self.model_args = args
        self._lm: Any = None

    def _load(self) -> Any:
        if self._lm is not None:
            return self._lm
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        try:
            import lm_eval.models  # noqa: F401  (fills the registry before any lookup)
            from lm_eval.api.registry import get_model  # on demand: the [lm-eval] extra
        except ImportError as exc:
            raise BackendError(
                f"--model lm-eval:{self.lm_name} needs lm-eval: "
                f"pip install 'psymetrics-core[lm-eval]' ({exc})"
            ) from exc
        try:
            cls = get_model(self.lm_name)
        except (KeyError, ValueError) as exc:
            raise BackendError(f"lm-eval has no model '{self.lm_name}': {exc}") from exc
        arg_string = ",".join(f"{k}={v}" for k, v in self.model_args.items())
        try:
            self._lm = cls.create_from_arg_string(arg_string, {})
        except (OSError, ValueError, TypeError) as exc:
            raise BackendError(f"lm-eval could not build '{self.lm_name}': {exc}") from exc
        return self._lm

    def context_text(self, prompt: Prompt) -> str:
        """The text the model is conditioned on (the LM's chat template when it has one)."""
        lm = self._load()
        if self.chat_template and hasattr(lm, "apply_chat_template"):
            try:
                return str(lm.apply_chat_template(list(prompt.messages), True))
            except (AttributeError, NotImplementedError, ValueError):
                pass  # no template for this model: plain text below
        return "\n\n".join(m["content"] for m in prompt.messages)

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """One lm-eval ``loglikelihood`` request per (prompt, option); sums as lm-eval does."""
        lm = self._load()  # first: a missing lm-eval is its one-line error
        from lm_eval.api.instance import Instance  # on demand: the [lm-eval] extra

        reqs: list[Any] = []
        spans: list[tuple[int, int]] = []
        for p in prompts:
            ctx = self.context_text(p)
            start = len(reqs)
            for o in p.options:
                reqs.append(
                    Instance("loglikelihood", doc={}, arguments=(ctx, o.scored_text), idx=len(reqs))
                )
            spans.append((start, len(reqs)))
        out = lm.loglikelihood(reqs, disable_tqdm=True)
        comps = [
            Completion(option_logprobs=tuple(float(ll) for ll, _ in out[a:b])) for a, b in spans
        ]
        if progress is not None:
            progress.advance(len(prompts))
        return comps

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """lm-eval ``generate_until`` with greedy or sampled decoding."""
        lm = self._load()  # first: a missing lm-eval is its one-line error
        from lm_eval.api.instance import Instance  # on demand: the [lm-eval] extra

        kwargs: dict[str, Any] = {"until": [], "max_gen_toks": settings.max_new_tokens}
        if settings.temperature > 0:
            kwargs.update(do_sample=True, temperature=settings.temperature)
            _seed(settings.seed)
        else:
            kwargs.update(do_sample=False, temperature=0.0)
        reqs = [
            Instance(
                "generate_until", doc={}, arguments=(self.context_text(p), dict(kwargs)), idx=i
            )
            for i, p in enumerate(prompts)
        ]
        texts = lm.generate_until(reqs, disable_tqdm=True)
        if progress is not None:
            progress.advance(len(prompts))
        return [Completion(text=str(t)) for t in texts]

    def identity(self) -> dict[str, Any]:
        """The lm-eval model name, its (redacted) arguments and lm-eval's version."""

        try:
            lm_eval_version = version("lm-eval")
        except PackageNotFoundError:
            lm_eval_version = None
        return {
            "backend": f"lm-eval:{self.lm_name}",
            "model": f"lm-eval:{self.lm_name}",
            "model_args": redact(self.model_args),
            "chat_template": self.chat_template,
            "lm_eval": lm_eval_version,
        }


def _seed(seed: int) -> None:
    try:
        import torch  # on demand: the [lm-eval] extra

        torch.manual_seed(seed)
    except ImportError:
        pass
