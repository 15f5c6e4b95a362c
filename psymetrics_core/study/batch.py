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

import json
import os
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psymetrics_core.administer.runner import evaluate
from psymetrics_core.backends.base import Backend, GenerationSettings, Reporter, as_backend
from psymetrics_core.backends.cache import ResponseCache, model_identity, request_key
from psymetrics_core.backends.openai_chat import _options_from_top
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.types import Completion, Prompt
from psymetrics_core.base.writing import output_dir, write_output
from psymetrics_core.study.plan import Plan

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
        """Read ``batch.json``; one clear line when it is missing or damaged."""
        path = Path(directory) / STATE_FILE
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return cls(**d)
        except FileNotFoundError:
            raise PsymError(f"{path} not found (submit a batch with `psym batch submit`)") from None
        except (OSError, json.JSONDecodeError, TypeError) as exc:
            raise PsymError(f"{path}: not a batch record ({exc})") from None


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
    if plan.settings.model != "openai-chat":
        raise PsymError(
            f"psym batch sends /v1/chat/completions requests: the plan's model must be "
            f"openai-chat, not {plan.settings.model}"
        )
    return session.make_backend(plan.settings.model, dict(plan.settings.model_args))


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

    be = _backend(plan, session)
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


def _api(
    base_url: str, api_key_env: str | None, method: str, path: str, data: bytes | None = None,
    content_type: str = "application/json",
) -> bytes:  # fmt: skip
    headers = {"Content-Type": content_type} if data is not None else {}
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise PsymError(f"environment variable {api_key_env} (api_key_env) is unset")
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(base_url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return bytes(resp.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace")
        raise PsymError(f"{method} {base_url}{path}: HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise PsymError(f"{method} {base_url}{path}: {exc}") from None


def _json(blob: bytes, what: str) -> dict[str, Any]:
    try:
        d = json.loads(blob)
    except json.JSONDecodeError:
        raise PsymError(f"{what}: the server's reply is not JSON") from None
    if not isinstance(d, dict):
        raise PsymError(f"{what}: expected a JSON object")
    return d


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
        )  # fmt: skip
        for k, p, s in todo
    ]
    blob = ("\n".join(lines) + "\n").encode("utf-8")
    write_output(directory / "requests.jsonl", blob, what="batch requests")
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
    url, key_env = be.base_url, be.api_key_env
    up = _json(
        _api(url, key_env, "POST", "/files", form, f"multipart/form-data; boundary={boundary}"),
        "upload",
    )
    created = _json(
        _api(url, key_env, "POST", "/batches", json.dumps({
            "input_file_id": up["id"], "endpoint": _ENDPOINT, "completion_window": "24h",
            "metadata": {"psym_plan": plan.hash[:16]},
        }).encode()),
        "create batch",
    )  # fmt: skip
    state = BatchState(
        plan=plan.hash, base_url=url, api_key_env=key_env, batch_id=str(created["id"]),
        input_file_id=str(up["id"]), requests=len(todo), mode=",".join(sorted(modes)),
        status=str(created.get("status", "submitted")),
    )  # fmt: skip
    state.save(directory)
    return state


def status(directory: Path) -> tuple[BatchState, dict[str, Any]]:
    """The batch's state as the server reports it (also saved in ``batch.json``)."""
    state = BatchState.load(directory)
    info = _json(
        _api(state.base_url, state.api_key_env, "GET", f"/batches/{state.batch_id}"), "status"
    )
    state.status = str(info.get("status", "unknown"))
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

    state, info = status(directory)
    if state.plan != plan.hash:
        raise PsymError(f"{directory} holds a batch of another plan ({state.plan[:12]})")
    if state.status != "completed":
        raise PsymError(f"batch {state.batch_id} is {state.status}, not completed yet")
    out_id = info.get("output_file_id")
    if not out_id:
        raise PsymError(f"batch {state.batch_id} has no output file")
    blob = _api(state.base_url, state.api_key_env, "GET", f"/files/{out_id}/content")
    write_output(Path(directory) / "output.jsonl", blob, what="batch output")
    _, requests = plan_requests(plan, session)
    wanted = {k: (p, s) for k, p, s in requests}
    stored = failed = 0
    cache = ResponseCache()
    label = str(plan.settings.model_args.get("model") or plan.settings.model)
    try:
        for n, line in enumerate(blob.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                key = str(row["custom_id"])
                resp = row.get("response") or {}
            except (json.JSONDecodeError, KeyError, TypeError):
                raise PsymError(f"batch output line {n}: expected custom_id and response") from None
            if key not in wanted:
                raise PsymError(f"batch output line {n}: custom_id {key[:12]} is not in the plan")
            prompt, settings = wanted[key]
            if resp.get("status_code") != 200:
                failed += 1  # left out of the cache: `psym run` asks for it online
                continue
            try:
                comp = _completion(prompt, settings, dict(resp.get("body") or {}))
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
