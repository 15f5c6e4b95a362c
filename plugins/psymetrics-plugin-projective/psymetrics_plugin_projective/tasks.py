"""The ``sct``, ``tat`` and ``rorschach`` tasks: stimuli, examinee prompts and scores.

Each task samples one session's stimuli with the seed ``stimulus_seed`` (default 42, as in the
authors' code, so every persona and condition sees the same stimuli: a paired design), renders
one single-turn prompt per stimulus (TAT, SCT) or a two-phase dialogue over cards I-X
(Rorschach, run by ``kind.ProjectiveKind``), and turns the interpreter's and diagnostician's
verdicts into scores: the indicators (SCORS-G, SRAS, SCT domains) and the diagnoses ``dx.*``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.api import (
    Generation,
    ImagePart,
    Item,
    JudgedTask,
    Prompt,
    PsymError,
    TaskResults,
    TaskScores,
    check_image_file,
)

from .diagnosis import BIG_FIVE, MBTI_AXES
from .interpret import Interpretation
from .prompts import fill, prompt
from .scoring import session_scores
from .sct import builtin_stems, is_chinese, read_stem_file, sample_stems
from .tat import builtin_scenes, read_image_folder, sample_scenes

__all__ = ["ProjectiveTask", "SctTask", "TatTask", "RorschachTask", "make_tasks", "CITATION"]

CITATION = (
    "Wang, M., Wu, S., Wang, B., Lin, L., Chen, Y., Yang, X., Wang, D., Feng, S., Zhang, Y., & "
    "Sun, Y. (2026). Beyond Self-Report for Reliable LLM Psychometrics via Generative "
    "Projective Testing. arXiv:2606.00860."
)
PROMPT_LICENCE = (
    "examinee, interpreter and diagnostician prompts quoted verbatim from the paper and its "
    "code release (no licence declared; quoted for research reproduction)"
)
COMMON_OPTIONS = {
    "stimulus_seed": "seed of the session's stimulus sample (default 42, the authors' default)",
    "show_persona": "show the persona text to the Big Five / MBTI diagnostician "
    "(true/false, default false: the released code does, which leaks the target)",
    "interpreter_tokens": "max new tokens of an interpreter reply (default 768)",
    "diagnostician_tokens": "max new tokens of a diagnostician reply (default 512)",
    "targets": "diagnoses to make, comma-separated from big_five, mbti, depression, suicide "
    "(default all; the paper diagnoses characters on big_five,mbti and help-seekers on the risks)",
}
DX_SCALES = {
    **{f"dx.{d}": f"Big Five {d} level 1-5 (diagnostician)" for d in BIG_FIVE},
    **{f"dx.{a}": f"MBTI axis {a}: 0 = {a[0]}, 1 = {a[1]} (diagnostician)" for a in MBTI_AXES},
    "dx.depression": "depression risk 0-3 (diagnostician)",
    "dx.suicide": "suicide ideation risk 0-3 (diagnostician)",
}


def _interleave(items: Sequence[Any], key: str) -> list[Any]:
    """Round-robin over groups (domains, categories), so ``--limit`` keeps them mixed."""
    groups: dict[str, list[Any]] = {}
    for it in items:
        groups.setdefault(getattr(it, key), []).append(it)
    out: list[Any] = []
    while any(groups.values()):
        for g in groups.values():
            if g:
                out.append(g.pop(0))
    return out


@dataclass
class ProjectiveTask(JudgedTask):
    """A projective test run by the ``projective`` kind (session-level judge stages)."""

    kind_name = "projective"
    test = ""
    needs_images = False
    sequential = False

    def check_options(self) -> None:
        """Validate every option before anything is sent (one-line errors)."""
        self.targets()
        self.show_persona()
        self.tokens("interpreter")
        self.tokens("diagnostician")

    def stimulus_seed(self) -> int:
        """The seed of the stimulus sample (task option ``stimulus_seed``)."""
        return self.option_int("stimulus_seed", 42, minimum=0)

    def show_persona(self) -> bool:
        """Whether the Big Five / MBTI diagnostician sees the persona text."""
        raw = self.options.get("show_persona", "false").strip().lower()
        if raw not in ("true", "false", "1", "0", "yes", "no"):
            raise PsymError(f"task '{self.id}': option show_persona must be true or false")
        return raw in ("true", "1", "yes")

    def targets(self) -> tuple[str, ...]:
        """The diagnoses to make (task option ``targets``, default all four)."""
        from .diagnosis import TARGETS

        raw = self.options.get("targets")
        if raw is None:
            return TARGETS
        picked = tuple(t.strip() for t in raw.split(",") if t.strip())
        bad = [t for t in picked if t not in TARGETS]
        if bad or not picked:
            raise PsymError(
                f"task '{self.id}': option targets takes {', '.join(TARGETS)} (got {raw!r})"
            )
        return tuple(t for t in TARGETS if t in picked)

    def tokens(self, stage: str) -> int:
        """Max new tokens of the ``interpreter`` or ``diagnostician`` judge replies."""
        return self.option_int(f"{stage}_tokens", 768 if stage == "interpreter" else 512)

    # -- stage 2, specialised per test ------------------------------------------------------

    def interpreter_requests(self, generations: Sequence[Generation]) -> list[tuple[str, str, str]]:
        """(request id, system, user) of the interpreter calls for one session."""
        raise NotImplementedError

    def interpret(self, generations: Sequence[Generation], codes: dict[str, Any]) -> Interpretation:
        """Indicators and interpretation block from the parsed codes per request id."""
        raise NotImplementedError

    def parse_code(self, text: str, generations: Sequence[Generation]) -> Any:
        """Parse one interpreter reply (a ``coding.Coded``)."""
        raise NotImplementedError

    # -- scores -----------------------------------------------------------------------------

    def score(self, results: TaskResults) -> TaskScores:
        """Indicators and diagnoses (computed by the kind and kept in ``results.verdicts``)."""
        return session_scores(self, results)


def _item_images(item: Item) -> tuple[ImagePart, ...]:
    meta = item.meta or {}
    if meta.get("image"):
        path = Path(str(meta["image"]))
        mime = check_image_file(path)  # the file may have changed since the manifest was read
        return (ImagePart(path.read_bytes(), mime),)
    return ()


@dataclass
class SctTask(ProjectiveTask):
    """Sentence completion: one stem per request, 4 stems per domain per session."""

    test = "sct"

    def stems(self) -> list[Any]:
        """The bank in use: ``stems=FILE`` (or ``--items sct=FILE``), else the shipped stems."""
        path = self.options.get("stems") or self.extra.get("item_file")
        return read_stem_file(path) if path else list(builtin_stems())

    def load_items(self) -> list[Item]:
        """The session's stems, round-robin over domains."""
        self.check_options()
        bank = self.stems()
        zh = is_chinese(bank)
        picked = _interleave(sample_stems(bank, self.stimulus_seed()), "domain")
        tmpl = prompt("sct_zh" if zh else "sct_en")
        return [
            Item(
                s.id,
                fill(tmpl, stem=s.text),
                (),
                meta={"domain": s.domain, "stem": s.text, "language": "zh" if zh else "en"},
            )
            for s in picked
        ]

    def interpreter_requests(self, generations: Sequence[Generation]) -> list[tuple[str, str, str]]:
        """All stems in one call."""
        from .interpret import sct_request

        rows = [(g.item.id, str((g.item.meta or {})["stem"]), g.text) for g in generations if g.ok]
        return [("sct", *sct_request(rows))] if rows else []

    def parse_code(self, text: str, generations: Sequence[Generation]) -> Any:
        """The 0-6 score per stem id."""
        from .coding import parse_sct

        return parse_sct(text, [g.item.id for g in generations if g.ok])

    def interpret(self, generations: Sequence[Generation], codes: dict[str, Any]) -> Interpretation:
        """Domain means over the administered stems."""
        from .interpret import interpret_sct

        stems = [(g.item.id, str((g.item.meta or {})["domain"])) for g in generations]
        return interpret_sct(stems, codes.get("sct"))


@dataclass
class TatCardsTask(ProjectiveTask):
    """TAT: one independent request per card, 4:3:1 interpersonal:solitary:environmental."""

    test = "tat"

    def scenes(self) -> list[Any]:
        """``images=DIR`` (with manifest.csv) or the shipped verbal scenes."""
        folder = self.options.get("images")
        return read_image_folder(folder) if folder else list(builtin_scenes())

    def load_items(self) -> list[Item]:
        """The session's cards, round-robin over categories."""
        self.check_options()
        picked = _interleave(sample_scenes(self.scenes(), self.stimulus_seed()), "category")
        out = []
        for s in picked:
            if s.image is not None:
                text = prompt("examinee_tat")
            else:
                text = fill(prompt("examinee_tat_scene"), scene=s.text or "")
            meta = {"category": s.category, "image": str(s.image) if s.image else None}
            out.append(Item(s.id, text, (), meta=meta))
        return out

    def render(self, item: Item, cell: Any = None) -> Prompt:
        """The card's prompt (with its image, when the stimuli are images)."""
        base = super().render(item, cell)
        images = _item_images(item)
        return Prompt(base.messages, base.options, base.text, images=images) if images else base

    def interpreter_requests(self, generations: Sequence[Generation]) -> list[tuple[str, str, str]]:
        """One SCORS-G call per story."""
        from .interpret import tat_request

        return [(g.item.id, *tat_request(g.item.id, g.text)) for g in generations if g.ok]

    def parse_code(self, text: str, generations: Sequence[Generation]) -> Any:
        """The eight SCORS-G codes."""
        from .coding import parse_scorsg

        return parse_scorsg(text)

    def interpret(self, generations: Sequence[Generation], codes: dict[str, Any]) -> Interpretation:
        """SCORS-G means over the coded stories."""
        from .interpret import interpret_tat

        return interpret_tat([(g.item.id, codes.get(g.item.id)) for g in generations])


TatTask = TatCardsTask


@dataclass
class RorschachTask(ProjectiveTask):
    """Rorschach: cards I-X in one conversation, free association then inquiry per card."""

    test = "rorschach"
    needs_images = True
    sequential = True

    def load_items(self) -> list[Item]:
        """Cards I-X of the session's procedural inkblots."""
        self.check_options()
        from .inkblot import ROMAN  # numpy: imported only when the cards are needed

        seed = self.stimulus_seed()
        out = []
        for n in range(1, 11):
            roman = ROMAN[n - 1]
            out.append(
                Item(
                    f"card_{roman}",
                    prompt("rorschach_free_association"),
                    (),
                    meta={"card": n, "roman": roman, "seed": seed},
                )
            )
        return out

    def card_image(self, item: Item) -> ImagePart:
        """The card's PNG, regenerated from the stimulus seed."""
        from .inkblot import make_card

        meta = item.meta or {}
        card = make_card(int(meta["card"]), int(meta["seed"]))
        return ImagePart(card.png, "image/png")

    def interpreter_requests(self, generations: Sequence[Generation]) -> list[tuple[str, str, str]]:
        """One SRAS call over all cards."""
        from .interpret import sras_request

        cards = [
            (int((g.item.meta or {})["card"]), g.text, str(g.data.get("inquiry", "")))
            for g in generations
            if g.ok
        ]
        return [("sras", *sras_request(cards))] if cards else []

    def parse_code(self, text: str, generations: Sequence[Generation]) -> Any:
        """The 22 SRAS counts."""
        from .coding import parse_sras

        return parse_sras(text)

    def interpret(self, generations: Sequence[Generation], codes: dict[str, Any]) -> Interpretation:
        """SRAS domain scores."""
        from .interpret import interpret_rorschach

        return interpret_rorschach(codes.get("sras"))


def _scales(indicators: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {**dict(indicators), **DX_SCALES}


def make_tasks() -> list[ProjectiveTask]:
    """The three tasks, ready for ``register``."""
    from .coding import SCORSG_DIMS, SCORSG_NAMES, SRAS_DOMAINS
    from .sct import DOMAIN_NAMES

    common: dict[str, Any] = {"version": "1.0.0", "citation": CITATION}
    sct = SctTask.define(
        id="sct",
        name="Sentence completion (projective), judged: Rotter-style 0-6 per stem",
        license_status="stems written for psymetrics, CC0-1.0; " + PROMPT_LICENCE,
        item_source="40 English stems written for this project (8 per domain); the authors' "
        "97 Chinese stems only as a user file (stems=FILE or --items sct=FILE)",
        scoring_rule="each stem 0-6 by the interpreter (all stems in one call); domain = mean "
        "of its stems (Eq. 9); diagnostician -> dx.* levels",
        scales=_scales((d, f"SCT {n}: mean conflict 0-6") for d, n in DOMAIN_NAMES.items()),
        options={**COMMON_OPTIONS, "stems": "stem bank: the authors' JSON or a CSV id,domain,stem"},
        max_new_tokens=64,
        **common,
    )
    tat = TatCardsTask.define(
        id="tat",
        name="Thematic apperception (projective), judged: SCORS-G per story",
        license_status="verbal scenes written for psymetrics, CC0-1.0; " + PROMPT_LICENCE,
        item_source="28 verbal scenes written for this project (13 interpersonal, 10 solitary, "
        "5 environmental), 8 per session (4:3:1); or images=DIR with manifest.csv",
        scoring_rule="8 SCORS-G dimensions 1-7 per story (one call per story); mean over "
        "stories (Eq. 6); diagnostician -> dx.* levels",
        scales=_scales((d, f"SCORS-G {SCORSG_NAMES[d]} (1-7)") for d in SCORSG_DIMS),
        options={**COMMON_OPTIONS, "images": "folder of PNG/JPEG cards with manifest.csv"},
        max_new_tokens=256,
        **common,
    )
    sct.extra["item_file_option"] = "stems"  # --items sct=FILE
    ror = RorschachTask.define(
        id="rorschach",
        name="Rorschach-style inkblots (projective, image models), judged: SRAS",
        license_status="inkblots generated procedurally at run time (no shipped images); "
        + PROMPT_LICENCE,
        item_source="ten seeded procedural inkblots per session (cards I-X; colour on II, III, "
        "VIII-X), regenerated from stimulus_seed",
        scoring_rule="22 SRAS counts over the protocol (one call); CPS, ARS, IRS, SCS = EA - es "
        "by the paper's formulas, unstandardised; diagnostician -> dx.* levels",
        scales=_scales(SRAS_DOMAINS.items()),
        options=dict(COMMON_OPTIONS),
        max_new_tokens=256,
        **common,
    )
    return [sct, tat, ror]
