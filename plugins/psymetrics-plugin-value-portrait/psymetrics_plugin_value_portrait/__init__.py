"""psymetrics plugin: Value Portrait generation-probability profiles, task ``value-portrait``.

Han et al.'s (ACL 2025) 104 real user queries x 5 responses, each response tagged with its
Spearman ρ to 559 raters' PVQ-21 and BFI-10 scores, scored as Song et al. (2025) score them:
log P(response | chat-templated query) per pair, and per construct the mean over scenarios of
the mean over the responses tagged ρ >= 0.3 (task options ``threshold`` and ``length``).
"""

from __future__ import annotations

from collections.abc import Callable

from psymetrics_core import hookimpl

from .data import CONSTRUCTS, HIGHER_ORDER, SOURCE_COMMIT, SOURCES, TRAITS
from .task import DEFAULT_THRESHOLD, ValuePortraitTask, scenario_items

__version__ = "0.1.0"
TASK = "value-portrait"

CITATION = (
    "Han, J., Choi, D., Song, W., Lee, E.-J., & Jo, Y. (2025). Value Portrait: Assessing "
    "Language Models' Values through Psychometrically and Ecologically Valid Items. ACL 2025. "
    "Method: Song, W., et al. (2025). Human Psychometric "
    "Questionnaires Mischaracterize LLM Behavior. arXiv 2509.10078."
)


def _describe(name: str) -> str:
    kind = "trait (BFI-10)" if name in TRAITS else "value (PVQ-21)"
    if name in HIGHER_ORDER:
        kind = "higher-order value (PVQ-21)"
    return f"{name.replace('_', ' ')}: generation-probability score of the {kind} tagged responses"


def make_instrument() -> ValuePortraitTask:
    """The ``value-portrait`` task."""
    sources = ", ".join(SOURCES.values())
    return ValuePortraitTask.define(
        id=TASK,
        name="Value Portrait generation-probability profile",
        version="1.0.0",
        citation=CITATION,
        license_status=(
            "MIT (Copyright (c) 2025 The Authors of Value Portrait; the licence is shipped "
            "beside the data, psymetrics_plugin_value_portrait/data/LICENSE)"
        ),
        item_source=(
            f"holi-lab/ValuePortrait data/query-response-tagged/query-response-tagged.json "
            f"(commit {SOURCE_COMMIT[:7]}), shipped unchanged: 104 scenarios (portrait_id) x 5 "
            f"responses (ids 1-5), 26 queries from each of {sources}; each response carries 19 "
            "Spearman ρ tags (10 values and 4 higher-order values against the raters' PVQ-21, "
            "5 traits against their BFI-10)."
        ),
        scoring_rule=(
            "Per pair, log P(response | chat-templated query), summed over the response tokens "
            "and the end-of-turn tokens of the assistant turn (option length=mean divides by "
            "the token count: Song et al.'s appendix shows the choice can flip results). A "
            "response counts for a construct when its ρ tag >= threshold (default "
            f"{DEFAULT_THRESHOLD}); construct score = mean over scenarios of the mean over "
            "that scenario's tagged responses; a construct with no tagged response is null "
            "with the reason. Scores are log-probabilities: compare constructs within a model "
            "(ranks), not levels across models."
        ),
        scales={c: _describe(c) for c in CONSTRUCTS},
        items=scenario_items(),
        options={
            "threshold": f"ρ tag at or above which a response counts (default {DEFAULT_THRESHOLD})",
            "length": "sum (default: summed log-probability) or mean (per token)",
        },
        notes=(
            "Needs a backend that scores a whole assistant reply with its end-of-turn tokens "
            "(the default model, hf); results scored elsewhere come in with 'psym import "
            "logprobs'. The query texts are third-party (Reddit, Dear Abby, ShareGPT, LMSYS "
            "users) as published by the Value Portrait authors."
        ),
        mode="logprob",
    )


@hookimpl
def register_instruments(register: Callable[..., None]) -> None:
    """Register the ``value-portrait`` task (built when a command needs it)."""
    from psymetrics_core import LazyInstrument

    register(LazyInstrument(TASK, make_instrument))
