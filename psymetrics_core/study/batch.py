"""The OpenAI Batch API over a plan: ``psym batch submit|status|collect``.

``submit`` renders every prompt of the plan (no model calls), leaves out those already in the
response cache, writes them as a Batch API input file (one ``/v1/chat/completions`` request per
line, ``custom_id`` = the response-cache key), uploads it (``POST /files``, purpose ``batch``)
and creates the batch (``POST /batches``). ``status`` polls ``GET /batches/{id}``. ``collect``
downloads the output file (``GET /files/{id}/content``) and stores every response in the
response cache under its key, so a later ``psym run PLAN`` (or ``psym eval`` with the same
arguments) is answered from the cache with no calls. Only ``openai-chat`` plans are supported;
tasks whose prompts depend on earlier answers (a judge) cannot be sent in one batch.
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_type_hints

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from psymetrics_core.administer.kinds.judged import JudgedKind
from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter, as_backend
from psymetrics_core.backends.cache import ResponseCache, model_identity, request_key
from psymetrics_core.backends.openai_api import OpenAIBackend
from psymetrics_core.backends.openai_chat import _options_from_top
from psymetrics_core.backends.openai_transfer import api_call, holds_secret
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.models import Open
from psymetrics_core.base.reading import load_json
from psymetrics_core.base.regular import require_regular_file
from psymetrics_core.base.types import Completion, Prompt
from psymetrics_core.base.writing import output_dir, write_output
from psymetrics_core.study.plan import Plan, check_plan_inputs

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["BatchState", "submit", "status", "collect", "plan_requests"]

STATE_FILE = "batch.json"
_ENDPOINT = "/v1/chat/completions"


@dataclass
class BatchState:
    """What ``submit`` records in ``BATCH_DIR/batch.json`` for ``status`` and ``collect``."""

    plan: str
    base_url: str
    api_key_env: str | None
    batch_id: str
    input_file_id: str
    requests: int
    mode: str
    status: str = "submitted"
    collected: int = 0

    def save(self, directory: Path) -> None:
        """Write ``batch.json`` atomically."""
        text = json.dumps(asdict(self), indent=2) + "\n"
        write_output(directory / STATE_FILE, text, what="batch record")

    @classmethod
    def load(cls, directory: Path) -> BatchState:
        """Read ``batch.json`` through the bounded readers, every field typed; one clear line
        when it is missing, a special file or damaged."""
        path = Path(directory) / STATE_FILE
        if not os.path.lexists(path):
            raise PsymError(f"{path} not found (submit a batch with `psym batch submit`)")
        require_regular_file(path, what="batch record")
        try:
            d = load_json(path, what="batch record")
        except ValueError:  # an integer of more than 4,300 digits (PsymErrors pass through)
            raise PsymError(f"{path}: invalid JSON (a number too long)") from None
        if not isinstance(d, dict):
            raise PsymError(f"{path}: not a batch record (expected a JSON object)")
        hints = get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for name in d:
            if name not in fields:
                raise PsymError(f"{path}, field '{name}': not a field of a batch record")
        for name, f in fields.items():
            if name not in d:
                if f.default is dataclasses.MISSING:
                    raise PsymError(f"{path}, field '{name}': missing (required)")
                continue
            try:
                TypeAdapter(hints[name]).validate_python(d[name], strict=True)
            except ValidationError as exc:
                msg = exc.errors()[0]["msg"]
                raise PsymError(f"{path}, field '{name}': {msg}") from None
        return cls(**d)


class _Recorder(Backend):
    """A stand-in backend that records the prompts of a run and answers nothing real."""

    accepts_on_result = False
    chunk_size = 1_000_000

    def __init__(self, real: Any) -> None:
        self.real = real
        self.name = as_backend(real).name
        self.calls: list[tuple[Prompt, GenerationSettings]] = []

    def identity(self) -> dict[str, Any]:
        return dict(self.real.identity())

    def _record(self, prompts: Sequence[Prompt], settings: GenerationSettings) -> None:
        self.calls += [(p, settings) for p in prompts]

    def generate(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        self._record(prompts, settings)
        return [Completion(text="") for _ in prompts]

    def option_logprobs(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        progress: Reporter | None = None,
    ) -> list[Completion]:
        self._record(prompts, settings)
        return [Completion(option_logprobs=tuple(0.0 for _ in p.options)) for p in prompts]


def _backend(plan: Plan, session: Session) -> Any:
    if plan.settings.config.model != "openai-chat":
        raise PsymError(
            f"psym batch sends /v1/chat/completions requests: the plan's model must be "
            f"openai-chat, not {plan.settings.config.model}"
        )
    return session.make_backend(plan.settings.config.model, dict(plan.settings.model_args))


def body_for(be: Any, prompt: Prompt, settings: GenerationSettings) -> dict[str, Any]:
    """The request body the ``openai-chat`` backend sends for ``prompt`` (same fields)."""
    if settings.mode == "logprob":
        return {
            "model": be.model,
            "messages": list(prompt.messages),
            "max_tokens": 1,
            "temperature": 0.0,
            "seed": settings.seed,
            "logprobs": True,
            "top_logprobs": be.top_logprobs,
        }
    return {
        "model": be.model,
        "messages": list(prompt.messages),
        "max_tokens": settings.max_new_tokens,
        "temperature": settings.temperature,
        "seed": settings.seed,
    }


def plan_requests(
    plan: Plan, session: Session
) -> tuple[Any, list[tuple[str, Prompt, GenerationSettings]]]:
    """The backend and every (cache key, prompt, settings) of ``plan``, each key once (run
    with the plugins of ``session``)."""

    check_plan_inputs(plan)  # a population plan's population file and template as planned
    be = _backend(plan, session)
    for task in plan.settings.tasks:
        if isinstance(session.kind_of(session.get_instrument(task)), JudgedKind):
            raise PsymError(
                f"task {task} is judged (a judge model codes its answers): its judge prompts "
                "need the first answers, so it cannot go in one batch; run the plan with "
                "`psym run`"
            )
    rec = _Recorder(be)
    config = plan.settings.run_config(cache=False, output=None)
    results = evaluate(list(plan.settings.tasks), config, backend=rec, session=session)
    if results.get("judge", {}).get("n_calls"):
        raise PsymError(
            "this plan has judged tasks: their judge prompts need the first answers, so they "
            "cannot go in one batch; run the plan with `psym run`"
        )
    ident = model_identity(be)
    seen: set[str] = set()
    out = []
    for prompt, settings in rec.calls:
        key = request_key(ident, prompt, settings)
        if key not in seen:
            seen.add(key)
            out.append((key, prompt, settings))
    return be, out


_ID = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,200}$")]
_COUNT = Annotated[int, Field(ge=0, le=2**63 - 1)]


class _Reply(Open):
    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)


class FileReply(_Reply):
    """The server's reply to ``POST /files``: the uploaded file's id."""

    id: _ID


class RequestCounts(_Reply):
    """``request_counts`` of a batch."""

    total: _COUNT = 0
    completed: _COUNT = 0
    failed: _COUNT = 0


class BatchReply(_Reply):
    """The server's reply to ``POST /batches`` and ``GET /batches/{id}``."""

    id: _ID
    status: Literal[
        "validating",
        "failed",
        "in_progress",
        "finalizing",
        "completed",
        "expired",
        "cancelling",
        "cancelled",
    ]
    output_file_id: _ID | None = None
    request_counts: RequestCounts | None = None


class _LineResponse(_Reply):
    status_code: int
    body: dict[str, Any] | None = None


class OutputLine(_Reply):
    """One line of a batch's output file."""

    custom_id: str
    response: _LineResponse | None = None


M = TypeVar("M", bound=_Reply)


def _reply(be: Any, model: type[M], blob: bytes, shown: str) -> M:
    """The server's reply to ``shown`` (e.g. ``POST /files``) validated as ``model``: one line
    naming the endpoint and the field otherwise; an id holding the API key is refused (the
    value is never shown)."""
    try:
        data = json.loads(blob)
    except (ValueError, RecursionError):
        raise PsymError(f"{shown}: the server's reply is not JSON") from None
    if not isinstance(data, dict):
        raise PsymError(f"{shown}: the server's reply is not a JSON object")
    try:
        rec = model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"])
        msg = "missing (required)" if err["type"] == "missing" else err["msg"]
        raise PsymError(f"{shown}: the server's reply, field '{field}': {msg}") from None
    for name in ("id", "output_file_id"):
        value = getattr(rec, name, None)
        if isinstance(value, str) and holds_secret(be, value):
            raise PsymError(f"{shown}: the server's reply, field '{name}' holds the API key")
    return rec


def _poll_backend(state: BatchState, timeout: float | None) -> Any:
    """A transport for ``state``'s server (no plan at hand: ``psym batch status``)."""
    args = {"base_url": state.base_url, "model": "batch"}
    if state.api_key_env:
        args["api_key_env"] = state.api_key_env
    if timeout is not None:
        args["timeout"] = str(timeout)
    return OpenAIBackend(args)


def _upload_form(blob: bytes) -> tuple[bytes, str]:
    """The multipart/form-data body of ``POST /files`` (purpose "batch", the requests file
    ``blob``) and its content type."""
    boundary = uuid.uuid4().hex
    form = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="requests.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n'
        ).encode()
        + blob
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return form, f"multipart/form-data; boundary={boundary}"


def submit(plan: Plan, directory: Path, session: Session) -> BatchState:
    """Write, upload and create the batch of ``plan``'s uncached requests."""

    directory = Path(directory)
    if (directory / STATE_FILE).exists():
        raise PsymError(f"{directory} already holds a batch; use another directory")
    be, requests = plan_requests(plan, session)
    cache = ResponseCache()
    try:
        found = cache.get_many([k for k, _, _ in requests])
    finally:
        cache.close()
    todo = [(k, p, s) for k, p, s in requests if k not in found]
    if not todo:
        raise PsymError("every request of this plan is already in the response cache")
    modes = {s.mode for _, _, s in todo}
    directory = output_dir(directory, what="batch folder")
    lines = [
        json.dumps(
            {"custom_id": k, "method": "POST", "url": _ENDPOINT, "body": body_for(be, p, s)},
            ensure_ascii=False,
        )
        for k, p, s in todo
    ]
    blob = ("\n".join(lines) + "\n").encode("utf-8")
    write_output(directory / "requests.jsonl", blob, what="batch requests")
    url, key_env = be.base_url, be.api_key_env
    form, ctype = _upload_form(blob)
    up = _reply(be, FileReply, api_call(be, "POST", "files", form, ctype), "POST /files")
    create = {
        "input_file_id": up.id,
        "endpoint": _ENDPOINT,
        "completion_window": "24h",
        "metadata": {"psym_plan": plan.hash[:16]},
    }
    reply = api_call(be, "POST", "batches", json.dumps(create).encode())
    created = _reply(be, BatchReply, reply, "POST /batches")
    state = BatchState(
        plan=plan.hash,
        base_url=url,
        api_key_env=key_env,
        batch_id=created.id,
        input_file_id=up.id,
        requests=len(todo),
        mode=",".join(sorted(modes)),
        status=created.status,
    )
    state.save(directory)
    return state


def status(
    directory: Path, *, timeout: float | None = None, be: Any = None
) -> tuple[BatchState, BatchReply]:
    """The batch's state as the server reports it (also saved in ``batch.json``); ``be`` (the
    plan's backend) or a transport for the recorded server with ``timeout`` (default: the
    backend's 120 s) asks."""
    state = BatchState.load(directory)
    be = be if be is not None else _poll_backend(state, timeout)
    path = f"batches/{state.batch_id}"
    info = _reply(be, BatchReply, api_call(be, "GET", path), f"GET /{path}")
    state.status = info.status
    state.save(Path(directory))
    return state, info


def _completion(prompt: Prompt, settings: GenerationSettings, body: dict[str, Any]) -> Completion:

    choices = body.get("choices") or []
    if not choices:
        raise ValueError("no choices")
    choice = dict(choices[0])
    if settings.mode == "logprob":
        content = (choice.get("logprobs") or {}).get("content") or []
        if not content or content[0].get("top_logprobs") is None:
            raise ValueError("no top_logprobs")
        return _options_from_top(prompt, content[0]["top_logprobs"], str(content[0]["token"]))
    text = (choice.get("message") or {}).get("content") or ""
    return Completion(text=text, meta={"finish_reason": choice.get("finish_reason")})


def collect(plan: Plan, directory: Path, session: Session) -> tuple[int, int]:
    """Store a completed batch's responses in the cache; returns (stored, failed)."""

    if BatchState.load(directory).plan != plan.hash:
        raise PsymError(f"{directory} holds a batch of another plan")
    be, requests = plan_requests(plan, session)
    state, info = status(directory, be=be)
    if state.status != "completed":
        raise PsymError(f"batch {state.batch_id} is {state.status}, not completed yet")
    out_id = info.output_file_id
    if not out_id:
        raise PsymError(f"batch {state.batch_id} has no output file")
    path = f"files/{out_id}/content"
    text = api_call(be, "GET", path).decode("utf-8", errors="replace")
    text = be._redact(text)  # a key echoed by the server is not kept
    write_output(Path(directory) / "output.jsonl", text, what="batch output")
    wanted = {k: (p, s) for k, p, s in requests}
    stored = failed = 0
    cache = ResponseCache()
    label = str(plan.settings.model_args.get("model") or plan.settings.config.model)
    try:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            row = _reply(be, OutputLine, line.encode(), f"GET /{path}, line {n}")
            key, resp = row.custom_id, row.response
            if key not in wanted:
                raise PsymError(f"GET /{path}, line {n}: a custom_id that is not in the plan")
            prompt, settings = wanted[key]
            if resp is None or resp.status_code != 200:
                failed += 1  # left out of the cache: `psym run` asks for it online
                continue
            try:
                comp = _completion(prompt, settings, dict(resp.body or {}))
            except (ValueError, KeyError, TypeError):
                failed += 1
                continue
            cache.put(key, label, settings.mode, comp)
            stored += 1
    finally:
        cache.close()
    state.collected = stored
    state.save(Path(directory))
    return stored, failed
