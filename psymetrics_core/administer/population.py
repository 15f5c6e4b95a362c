"""Administer tasks to a population (``psym eval --population FILE``).

Every respondent of the population file becomes one level of the ``respondent`` facet: its
persona, rendered by a persona template, is a fixed prefix of the system prompt (so a local
backend shares it across the respondent's items and an API's prefix cache applies), and every
sample records the respondent id, the persona's hash and the template. Respondents are crossed
with the run's other conditions and repeats like any facet.

Built-in templates quote the seeds' persona prompts with their source; ``--persona-template
FILE`` takes a Jinja2 template of your own (``{{ persona }}``, ``{{ id }}``,
``{{ labels.FIELD }}``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from psymetrics_core.administer.conditions.builtin import system_prefix
from psymetrics_core.administer.persona_template import compile_template, render, trusted
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import read_text
from psymetrics_core.contracts.conditions import Cell, Condition
from psymetrics_core.records.population import Respondent, read_population

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = [
    "TEMPLATES",
    "respondent_conditions",
    "cross_with_population",
    "template_text",
    "input_digests",
    "check_population_options",
    "template_ref",
    "population_files",
    "persona_conditions",
    "given_template",
]

# name -> (Jinja2 template, source)
TEMPLATES: dict[str, tuple[str, str]] = {
    "jung": (
        "You are {{ persona | trim | trim('.') }}. Answer and behave accordingly.",
        "Jung's persona prompt (jasoju/measuring-sexism-in-LLMs; Jung et al. 2026's earlier "
        "persona study of the ASI)",
    ),
    "serapio-garcia": (
        "For the following task, respond in a way that matches this description: {{ persona }}",
        "the persona preamble of Serapio-García et al. (2023), google-deepmind/personality_in_llms",
    ),
    "psychobench": (
        "You are {{ persona | trim | trim('.') }}.",
        "Huang et al. (2024) PsychoBench role-play; the paper does not give the wording: an "
        "inference (a role description prefixed to the system message)",
    ),
    "genpt": (
        "You are {{ labels.get('name') or id }}. Based on the following psychological profile, "
        "engage with the projective test stimuli in character, and let your behavior reflect "
        "that persona.\n\n{{ persona }}\n\nStay in character throughout the assessment.",
        "Wang et al. (2026) GenPT, App. B.7 'Profile Integration' (the profile fields given as "
        "the persona text)",
    ),
    "plain": ("{{ persona }}", "the persona text as it is"),
}


def template_ref(name_or_file: str) -> str:
    """How runs record a template: a built-in's name, or a file's absolute path (the same
    wherever ``psym eval`` or a plan's shard was started)."""
    if name_or_file in TEMPLATES or not Path(name_or_file).is_file():
        return name_or_file  # (not a file: template_text says so, naming it as given)
    return str(Path(name_or_file).resolve())


def population_files(population: Path | None, template: str) -> list[tuple[str, Path]]:
    """The files a population run read, for its provenance: the population file and a persona
    template given as a file (a built-in's text is part of psymetrics)."""
    if population is None:
        return []
    out = [("population", Path(population))]
    if template not in TEMPLATES and Path(template).is_file():
        out.append(("persona template", Path(template)))
    return out


def persona_conditions(condition_args: Iterable[str], session: Session) -> list[str]:
    """The conditions of the ``persona`` facet among ``condition_args`` (e.g. ``persona=FILE``):
    with ``--population`` each puts its persona beside every respondent's in the system prompt
    (a design that crosses the two, but mostly a mistake: ``psym eval`` warns)."""
    known = session.conditions()
    out = []
    for arg in condition_args:
        entry = known.get(arg.partition("=")[0])
        if entry is not None and entry.facet == "persona":
            out.append(arg)
    return out


def template_text(name_or_file: str) -> tuple[str, str]:
    """(template, source) of a built-in template name or a template file."""
    if name_or_file in TEMPLATES:
        return TEMPLATES[name_or_file]
    path = Path(name_or_file)
    if not path.is_file():
        raise PsymError(
            f"--persona-template {name_or_file!r}: not a built-in template "
            f"({', '.join(TEMPLATES)}) or a file"
        )
    return read_text(path, what="persona template", limit=64 * 1024), str(path)


def input_digests(path: str | Path, template: str = "jung") -> dict[str, str]:
    """sha256 of the population file and of the persona template's text (a built-in's or a
    file's): what a plan records so a run refuses a changed population or template."""
    read_population(path)  # a missing or malformed file is one line naming it
    try:
        blob = Path(path).read_bytes()
    except OSError as exc:
        raise PsymError(f"{path}: cannot read the population file ({exc.strerror})") from None
    source, _ = template_text(template)
    return {
        "population": hashlib.sha256(blob).hexdigest(),
        "persona_template": hashlib.sha256(source.encode("utf-8")).hexdigest(),
    }


def given_template(template: str | None, population: str | Path | None) -> str:
    """The ``--persona-template`` to use: refused when given without ``--population`` (even
    the default's name: never silently ignored), else the default ``jung``."""
    if template is not None and population is None:
        raise PsymError(f"--persona-template {template}: needs --population FILE")
    return template or "jung"


def check_population_options(
    population: str | Path | None, template: str = "jung", sample: int | None = None
) -> None:
    """--sample and --persona-template mean something only with --population: one line
    otherwise (never silently ignored)."""
    if population is not None:
        return
    if sample is not None:
        raise PsymError(f"--sample {sample}: needs --population FILE (a population to sample)")
    if template != "jung":
        raise PsymError(f"--persona-template {template}: needs --population FILE")


def respondent_conditions(
    path: str | Path, template: str = "jung", sample: int | None = None, seed: int = 1234
) -> list[Condition]:
    """One ``respondent`` condition per respondent of the population file (a seeded sample of
    ``sample`` of them, in file order, when given)."""
    people = read_population(path)
    if sample is not None:
        if not 1 <= sample <= len(people):
            raise PsymError(
                f"--sample {sample}: expected 1 to the population's {len(people):,} respondent(s)"
            )
        keep = sorted(random.Random(seed).sample(range(len(people)), sample))
        people = [people[i] for i in keep]
    template = template_ref(template)
    source, origin = template_text(template)
    compiled = trusted(source) if template in TEMPLATES else compile_template(source, template)
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    texts = [
        render(compiled, template, r.id, persona=r.persona, id=r.id, labels=r.labels).strip()
        for r in people
    ]
    if len(texts) > 1 and len(set(texts)) == 1:
        raise PsymError(
            f"--persona-template {template}: gives all {len(texts):,} respondents the same "
            "prompt (use {{ persona }} or a label that differs between them)"
        )
    return [_condition(r, t, template, origin, digest) for r, t in zip(people, texts, strict=True)]


def _condition(r: Respondent, text: str, template: str, origin: str, file_digest: str) -> Condition:
    persona_hash = hashlib.sha256(r.persona.encode("utf-8")).hexdigest()[:16]

    info = {
        "respondent": r.id,
        "persona_sha256": persona_hash,
        "labels": r.labels,
        "template": template,
        "template_source": origin,
        "population_sha256": file_digest[:16],
    }
    return Condition(
        f"respondent={r.id}", facet="respondent", messages=system_prefix(text), info=info
    )


def cross_with_population(cells: list[Cell], people: list[Condition]) -> list[Cell]:
    """Every cell once per respondent (the respondent's persona first in the system prompt)."""
    out = []
    for person in people:
        for cell in cells:
            rest = tuple(c for c in cell.conditions if c.name != "original")
            out.append(Cell((person, *rest)))
    return out
