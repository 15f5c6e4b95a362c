"""The backend interface and the settings every backend receives."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from psymetrics_core.base.errors import BackendError
from psymetrics_core.base.types import Completion, Prompt

__all__ = [
    "Backend",
    "GenerationSettings",
    "parse_model_args",
    "Reporter",
    "call_backend",
    "check_requests",
    "as_backend",
    "OnResult",
]

OnResult = Callable[[int, Completion], None]


@dataclass(frozen=True)
class GenerationSettings:
    """How completions are produced; recorded in every run."""

    mode: str = "generate"  # "generate" or "logprob"
    max_new_tokens: int = 24
    temperature: float = 0.0  # 0 = greedy
    seed: int = 1234

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view for run records."""
        return asdict(self)


class Reporter(Protocol):
    """Progress callback: ``advance(n)`` after ``n`` more prompts are done."""

    def advance(self, n: int = 1) -> None: ...


class Backend:
    """The model-backend contract: subclass it and override ``generate`` (and, for backends that
    can score options, ``option_logprobs``) and ``identity``.

    Every optional capability the runner and the response cache use is declared here with its
    default, so the pipeline reads attributes instead of probing for them:

    - ``chunk_size``: prompts per call from the runner (None: the runner's default, 8); samples
      are written after each call, so concurrent backends take large chunks;
    - ``supports_concurrency`` / ``concurrency``: requests kept in flight (API backends);
      ``set_concurrency(n)`` changes it where supported;
    - ``supports_logprobs``: whether ``option_logprobs`` works (``--mode logprob``);
    - ``supports_images``: whether prompts may carry images;
    - ``supports_continuations``: whether ``option_logprobs`` scores an option's multi-token
      ``continuation`` (``Option.continuation``, probe tasks); a backend that reads only the
      first answer token must leave it False, and ``check_requests`` refuses such prompts;
    - ``supports_turn_end``: whether it appends the end of the assistant turn its chat template
      writes to a continuation whose option asks for it (``Option.turn_end``: the probability
      of a whole reply); a backend that does not apply a chat template leaves it False;
    - ``accepts_on_result``: ``generate``/``option_logprobs`` take ``on_result(i, completion)``
      and call it per prompt as soon as it is done (the cache stores each at once);
    - ``usage()``: token counts for ``results.json`` (None when the backend has none);
    - ``cache_identity()``: what determines a response (default ``identity()``);
    - ``answer_mixed(requests, on_result)``: requests whose settings differ (a whole study
      grid: every seed of every repeat) answered as one stream.

    Objects that do not subclass ``Backend`` are adapted by ``as_backend``: their ``generate``,
    ``option_logprobs`` and ``identity`` are used and every capability keeps its default.
    """

    name = "backend"
    chunk_size: int | None = None
    supports_concurrency = False
    concurrency = 1
    supports_logprobs = True
    supports_images = False
    supports_continuations = False
    supports_turn_end = False
    accepts_on_result = False

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """One text completion per prompt."""
        raise NotImplementedError

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """Per prompt, the log-likelihood of each option (``Completion.option_logprobs``)."""
        raise BackendError(f"backend '{self.name}' cannot score options (use --mode generate)")

    def identity(self) -> dict[str, Any]:
        """Backend name, model and arguments for run records (never secrets)."""
        return {"backend": self.name}

    def cache_identity(self) -> dict[str, Any]:
        """What determines this backend's responses (the response cache's key)."""
        return self.identity()

    def continuation_refusal(self) -> str:
        """The one line refusing a prompt with a continuation (``supports_continuations`` False)."""
        return (
            f"backend '{self.name}' cannot score a continuation's log-likelihood "
            "(supports_continuations is False); use a local model (smollm2, hf), "
            "openai-completions with prompt echo, or lm-eval"
        )

    def turn_end_refusal(self) -> str:
        """The one line refusing a reply to be scored with its end of turn."""
        return (
            f"backend '{self.name}' cannot score a whole assistant reply with its end-of-turn "
            "tokens (supports_turn_end is False: it applies no chat template); use a local "
            "model (smollm2, hf), openai-completions with --model-args chat_template=PATH "
            "against a server that echoes prompt log-probabilities (llama-cpp-python's server, "
            "vLLM), or score elsewhere and bring the numbers in with 'psym import logprobs'"
        )

    def usage(self) -> dict[str, int] | None:
        """Tokens used so far (None: the backend does not count them)."""
        return None

    def answer_mixed(
        self,
        requests: Sequence[tuple[Prompt, GenerationSettings]],
        on_result: OnResult,
    ) -> None:
        """Answer ``requests`` of differing settings, calling ``on_result(i, completion)`` for
        each as soon as it is done (an exception from ``on_result`` stops further requests).

        The caller checks the requests first (``check_requests``), as ``call_backend`` does.
        Default: one ``generate``/``option_logprobs`` call per distinct settings, in the order
        they first appear. Backends keeping requests in flight override it to keep
        ``concurrency`` requests in flight across all of them.
        """
        groups: dict[GenerationSettings, list[int]] = {}
        for i, (_, settings) in enumerate(requests):
            groups.setdefault(settings, []).append(i)
        for settings, index in groups.items():
            prompts = [requests[i][0] for i in index]
            call = self.option_logprobs if settings.mode == "logprob" else self.generate
            if self.accepts_on_result:

                def each(j: int, comp: Completion, index: list[int] = index) -> None:
                    on_result(index[j], comp)

                call(prompts, settings, None, on_result=each)  # type: ignore[call-arg]
            else:
                for i, comp in zip(index, call(prompts, settings, None), strict=True):
                    on_result(i, comp)

    def set_concurrency(self, n: int) -> None:
        """Bound the requests kept in flight (ignored where ``supports_concurrency`` is False)."""
        if n < 1:
            raise BackendError("--concurrency must be at least 1")
        if self.supports_concurrency:
            self.concurrency = n


class _Adapted(Backend):
    """A duck-typed backend object (``generate``, ``option_logprobs``, ``identity``) seen
    through the ``Backend`` contract with every capability at its default."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """The wrapped object's completions."""
        return list(self.obj.generate(prompts, settings, progress))

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        """The wrapped object's option log-likelihoods."""
        return list(self.obj.option_logprobs(prompts, settings, progress))

    def identity(self) -> dict[str, Any]:
        """The wrapped object's identity."""
        return dict(self.obj.identity())


def as_backend(obj: Any) -> Backend:
    """``obj`` itself when it is a ``Backend``, else ``obj`` adapted to the contract."""
    return obj if isinstance(obj, Backend) else _Adapted(obj)


def parse_model_args(text: str | None) -> dict[str, str]:
    """Parse lm-eval style ``k=v,k=v`` model arguments into a dict."""
    out: dict[str, str] = {}
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise BackendError(f"--model-args: expected key=value, got {part!r}")
        key, value = (x.strip() for x in part.split("=", 1))
        if not key:
            raise BackendError(f"--model-args: expected key=value, got {part!r}")
        if key in out:
            raise BackendError(f"--model-args: '{key}' is given twice")
        out[key] = value
    return out


def check_requests(be: Any, requests: Iterable[tuple[Prompt, GenerationSettings]]) -> None:
    """Refuse, in one line and before anything is sent, requests ``be`` cannot answer truly.

    Prompts carrying images are refused by a backend that does not declare
    ``supports_images``: images are never silently dropped. In ``logprob`` mode, prompts whose
    options carry a ``continuation`` are refused by a backend that does not declare
    ``supports_continuations`` (it would score something else), and options asking for the
    end of the assistant turn (``Option.turn_end``) by one without ``supports_turn_end``.
    ``call_backend`` and the
    request stream (``scheduler.start_stream``, before ``answer_mixed``) both call this.
    """
    backend = as_backend(be)
    images = continuations = turn_end = False
    for prompt, settings in requests:
        images = images or bool(prompt.images)
        scored = settings.mode == "logprob"
        continuations = continuations or (scored and prompt.has_continuations)
        turn_end = turn_end or (scored and any(o.turn_end for o in prompt.options))
    if images and not backend.supports_images:
        raise BackendError(
            f"backend '{backend.name}' does not take images (supports_images is False); "
            "use an image-text model (hf with an image-text-to-text model, or openai-chat)"
        )
    if turn_end and not backend.supports_turn_end:
        raise BackendError(backend.turn_end_refusal())
    if continuations and not backend.supports_continuations:
        raise BackendError(backend.continuation_refusal())


def call_backend(
    be: Any,
    prompts: Sequence[Prompt],
    settings: GenerationSettings,
    reporter: Reporter | None = None,
) -> list[Completion]:
    """Every model call of a run goes through here: evaluated model, judge and battery alike.

    The prompts are checked first (``check_requests``: images and option continuations the
    backend does not declare support for are refused in one line, before any call).
    """
    check_requests(be, [(p, settings) for p in prompts])
    call = be.option_logprobs if settings.mode == "logprob" else be.generate
    return list(call(prompts, settings, reporter))
