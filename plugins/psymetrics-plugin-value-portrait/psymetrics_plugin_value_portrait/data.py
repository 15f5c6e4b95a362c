"""Value Portrait's tagged query-response pairs, read from the copy shipped with the plugin.

``data/query-response-tagged.json`` is holi-lab/ValuePortrait's
``data/query-response-tagged/query-response-tagged.json`` unchanged (commit 08e1fb7, MIT, the
authors' licence in ``data/LICENSE``): 104 scenarios (``portrait_id``), each with 5 responses
(ids 1-5), each response tagged with 19 Spearman ρ: 10 basic values and 4 higher-order values
(PVQ-21) and 5 traits (BFI-10), between 559 raters' ratings of the response and their own scores
(Han et al., ACL 2025).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = [
    "Response",
    "Scenario",
    "scenarios",
    "VALUES",
    "HIGHER_ORDER",
    "TRAITS",
    "CONSTRUCTS",
    "SOURCES",
    "source_of",
]

DATA_FILE = "query-response-tagged.json"
SOURCE_COMMIT = "08e1fb7903c619592bd8b3267f00191e36957f9e"

VALUES = (
    "self_direction",
    "stimulation",
    "hedonism",
    "achievement",
    "power",
    "security",
    "conformity",
    "tradition",
    "benevolence",
    "universalism",
)
HIGHER_ORDER = ("openness_to_change", "self_enhancement", "conservation", "self_transcendence")
TRAITS = ("extraversion", "agreeableness", "conscientiousness", "neuroticism", "openness")
CONSTRUCTS = VALUES + HIGHER_ORDER + TRAITS

# the first digit of a portrait_id names where its query comes from (checked against the data
# set's per-source files data/query-response/*.json)
SOURCES = {
    1: "Reddit r/AmItheAsshole (AITA)",
    2: "Dear Abby advice column",
    3: "ShareGPT",
    4: "LMSYS Chatbot Arena",
}


@dataclass(frozen=True)
class Response:
    """One candidate response of a scenario with its 19 ρ tags (construct -> ρ)."""

    id: int
    text: str
    tags: dict[str, float]


@dataclass(frozen=True)
class Scenario:
    """One query (``title`` is None for the chat sources) and its five responses."""

    id: int
    title: str | None
    text: str
    responses: tuple[Response, ...]

    @property
    def source(self) -> str:
        """Where the query comes from (see ``SOURCES``)."""
        return source_of(self.id)

    @property
    def advice(self) -> bool:
        """Whether the query is a described situation (Reddit AITA, Dear Abby)."""
        return self.id // 1000 in (1, 2)


def source_of(portrait_id: int) -> str:
    """The query source of ``portrait_id``."""
    return SOURCES.get(portrait_id // 1000, "unknown")


def _tags(out: dict[str, object]) -> dict[str, float]:
    tags: dict[str, float] = {}
    for key in ("correlations", "higher_pvq_correlations", "bfi_correlations"):
        pairs = out[key]
        assert isinstance(pairs, list)
        for name, rho in pairs:
            tags[str(name).lower()] = float(rho)
    return tags


@lru_cache(maxsize=1)
def scenarios() -> tuple[Scenario, ...]:
    """The 104 scenarios in the data set's order."""
    raw = (resources.files(__package__) / "data" / DATA_FILE).read_text(encoding="utf-8")
    out = []
    for entry in json.loads(raw):
        content = entry["content"]
        title = content.get("title")
        responses = tuple(
            Response(int(o["id"]), str(o["content"]), _tags(o)) for o in entry["outputs"]
        )
        out.append(
            Scenario(
                int(entry["portrait_id"]),
                None if title in (None, "None", "") else str(title),
                str(content["text"]),
                responses,
            )
        )
    return tuple(out)
