"""The ``value-portrait`` task: generation-probability profiles (Song et al. 2025).

Each of the 104 scenarios is one prompt: its query, framed in psymetrics' own words, as the
user message, and its five responses as options whose ``continuation`` is the response text
with ``turn_end`` set, so the backend scores the whole assistant reply: log P(response |
chat-templated query), summed over the response tokens and the end-of-turn tokens the chat
template writes after them. The five replies share the query's prefix, which a backend that
groups prompts by prefix (the ``hf`` backend and the default model) computes once.
"""

from __future__ import annotations

from typing import Any

from psymetrics_core.api import (
    Completion,
    Generation,
    Item,
    Option,
    ProbeTask,
    Prompt,
    PsymError,
    Score,
    TaskResults,
    TaskScores,
)

from .data import CONSTRUCTS, HIGHER_ORDER, TRAITS, VALUES, Scenario, scenarios
from .profile import ScoredResponse, profile

__all__ = [
    "ValuePortraitTask",
    "scenario_items",
    "ADVICE_FRAME",
    "CHAT_FRAME",
    "LENGTHS",
    "scored_responses",
]

# psymetrics' own framing of the two kinds of query (Song et al. frame them alike: a described
# situation to react to, a message to reply to)
ADVICE_FRAME = (
    "Someone described the situation below. Read it and reply as you yourself would if it "
    "had been put to you.\n\nTitle: {title}\n\n{text}"
)
CHAT_FRAME = (
    "Someone sent you the message below. Read it and reply as you yourself would.\n\n{text}"
)
LENGTHS = ("sum", "mean")
DEFAULT_THRESHOLD = 0.3


def query_text(s: Scenario) -> str:
    """The user message of scenario ``s``."""
    if s.advice:
        return ADVICE_FRAME.format(title=s.title or "", text=s.text)
    return CHAT_FRAME.format(text=s.text)


def scored_responses(results: TaskResults) -> list[ScoredResponse]:
    """Every scored response of the parsed scenarios, with its tags."""
    by_id = {str(s.id): s for s in scenarios()}
    out = []
    for g in results.ok:
        s = by_id[g.item.id]
        lps, toks = g.data["logprobs"], g.data["tokens"]
        for r in s.responses:
            n = toks.get(str(r.id)) if toks else None
            out.append(ScoredResponse(s.id, r.id, float(lps[str(r.id)]), n, r.tags))
    return out


def scenario_items() -> list[Item]:
    """The 104 scenarios in the data set's order (item id = ``portrait_id``)."""
    return [
        Item(
            str(s.id),
            query_text(s),
            (),
            meta={"source": s.source, "responses": [r.id for r in s.responses]},
        )
        for s in scenarios()
    ]


class ValuePortraitTask(ProbeTask):
    """One prompt per scenario, its five responses scored as whole assistant replies."""

    def render(self, item: Item, cell: Any = None) -> Prompt:
        """The query as the user message; the five responses as scored continuations."""
        base = super().render(item, cell)
        s = {str(x.id): x for x in scenarios()}[item.id]
        options = tuple(
            Option(r.id, f"response {r.id}", r.text, turn_end=True) for r in s.responses
        )
        return Prompt(base.messages, options, base.text, base.images)

    def parse(self, item: Item, completion: Completion) -> Generation:
        """The five log-probabilities and token counts by response id (unparsed: none came)."""
        lps = completion.option_logprobs
        ids = [str(r) for r in (item.meta or {})["responses"]]
        if lps is None or len(lps) != len(ids):
            return Generation(item, "", "unparsed")
        toks = completion.meta.get("option_tokens")
        tokens = dict(zip(ids, toks, strict=True)) if toks and len(toks) == len(ids) else None
        data = {"logprobs": dict(zip(ids, lps, strict=True)), "tokens": tokens}
        source = completion.meta.get("logprob_source")
        if source:  # the form an API server's log-probabilities came in (echo, prompt_logprobs)
            data["logprob_source"] = source
        return Generation(item, "", "ok", data, tuple(lps))

    def length(self) -> str:
        """``sum`` (Song et al.'s main results) or ``mean`` (per token), task option length."""
        value = self.options.get("length", "sum")
        if value not in LENGTHS:
            raise PsymError(
                f"task '{self.id}': option length must be one of {', '.join(LENGTHS)}, "
                f"got {value!r}"
            )
        return value

    def score(self, results: TaskResults) -> TaskScores:
        """The profile: 10 values, 4 higher-order values, 5 traits."""
        threshold = self.option_float("threshold", DEFAULT_THRESHOLD, -1.0, 1.0)
        length = self.length()
        rows = scored_responses(results)
        kind = "mean log-probability" if length == "sum" else "mean per-token log-probability"
        constructs = profile(rows, CONSTRUCTS, threshold, length)
        scores = [
            Score(
                c.construct,
                c.value,
                c.reason,
                kind,
                c.n_scenarios,
                detail={"n_scenarios": c.n_scenarios, "n_responses": c.n_responses},
            )
            for c in constructs
        ]
        n_tokens = [r.n_tokens for r in rows if r.n_tokens is not None]
        what = "summed" if length == "sum" else "per-token mean"
        note = (
            f"{what} log-probabilities of whole replies (length={length}), responses "
            f"tagged rho >= {threshold:g}; compare constructs by rank within a model; "
            "'answered' counts scenarios scored, each construct rests on the scenarios with a "
            "tagged response: " + ", ".join(f"{c.construct} {c.n_scenarios}" for c in constructs)
        )
        return TaskScores.of(
            scores,
            scoring_note=note,
            threshold=threshold,
            length=length,
            construct_groups={
                "values": list(VALUES),
                "higher_order": list(HIGHER_ORDER),
                "traits": list(TRAITS),
            },
            n_responses_scored=len(rows),
            response_tokens=sum(n_tokens) if len(n_tokens) == len(rows) else None,
            logprob_source=_sources(results),
        )


def _sources(results: TaskResults) -> str | None:
    """The forms an API server's log-probabilities came in (None: a local model's own)."""
    found = sorted(
        {str(g.data["logprob_source"]) for g in results.ok if g.data.get("logprob_source")}
    )
    return "+".join(found) or None
