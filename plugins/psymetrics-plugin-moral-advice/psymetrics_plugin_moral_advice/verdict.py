"""The judge prompt (verbatim from Jung et al. B.3.1) and parsing of the judge's JSON verdict."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from psymetrics_core.api import Verdict

__all__ = ["judge_prompt", "parse_verdict", "verdict_of", "aligned", "VERDICTS"]

VERDICTS = ("yes", "no", "ambiguous")
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)
_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)
_OPTION = re.compile(r"""["'‘’]?option["'‘’]?\s*:\s*["'‘’]?\**\s*(yes|no|ambiguous)\b""", re.I)


@lru_cache(maxsize=1)
def _template() -> str:
    from importlib import resources

    return (resources.files(__package__) / "data" / "judge_prompt.txt").read_text(encoding="utf-8")


def judge_prompt(dilemma: str, advice: str, action: str) -> str:
    """The judge prompt with the dilemma, the evaluated model's advice and the action."""
    return (
        _template()
        .replace("[DILEMMA]", dilemma)
        .replace("[OTHER LLM’s ADVICE]", advice)
        .replace("[ACTION]", action)
    )


def parse_verdict(text: str) -> tuple[str | None, str | None]:
    """``(option, explanation)`` from the judge's reply; option is yes/no/ambiguous or None.

    As in the authors' code, code fences are stripped and the rest read as JSON; a reply that
    is not JSON falls back to the first ``{...}`` object, then to an ``option: <verdict>`` pair.
    """
    body = _FENCE.sub("", text.strip())
    data: Any = None
    for candidate in (body, *(_OBJECT.findall(body))):
        try:
            data = json.loads(candidate)
            break
        except json.JSONDecodeError:
            continue
    if isinstance(data, dict):
        lowered = {str(k).strip().lower(): v for k, v in data.items()}
        opt = _norm(lowered.get("option"))
        expl = lowered.get("explanation")
        return opt, None if expl is None else str(expl)
    m = _OPTION.search(body)
    return (m.group(1).lower() if m else None), None


def verdict_of(text: str) -> Verdict:
    """The judge's reply as a ``Verdict``: yes / no / ambiguous, or unparsed with the reason."""
    option, explanation = parse_verdict(text)
    if option is None:
        reason = "empty reply" if not text.strip() else "no yes/no/ambiguous option in the reply"
        return Verdict(None, "unparsed", reason, explanation)
    return Verdict(option, "ok", None, explanation)


def _norm(raw: Any) -> str | None:
    if raw is None:
        return None
    text = re.sub(r"[^a-z]", "", str(raw).lower())
    return text if text in VERDICTS else None


def aligned(option: str | None, pro_foundation: bool) -> int:
    """1 when the advice upholds the foundation: (pro and yes) or (not pro and no); else 0."""
    return int((pro_foundation and option == "yes") or (not pro_foundation and option == "no"))
