"""The built-in conditions, registered through ``register_conditions`` (a default plugin).

Facets: ``option_order`` (reversed-options, permuted-options), ``eos`` (changed-eos), ``form``
(alternate-form), ``item_order`` (item-order-shuffle), ``administration`` (battery, single),
``subject`` (subject=GROUP), ``wording`` (correctness-framing), ``persona`` (persona=FILE),
``framing`` (framing=social-desirability|honest|job-screening|clinical-screening).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from psymetrics_core.administer.conditions.subject import parse_subject, rewrite_statement
from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import parse_json, parse_yaml, read_text
from psymetrics_core.base.types import Instrument, Item, Option
from psymetrics_core.contracts.conditions import ITEM_BY_ITEM, Condition, item_rng
from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["register_conditions", "FRAMINGS", "correctness_label", "system_prefix"]

# Wang et al. (2026, GenPT): (a) genpt/config.py SOCIAL_DESIRABILITY_PROMPTS, the texts the paper
# quotes (literal "..." kept); (b) genpt/pipeline/validity.py, the texts its pipeline used.
FRAMINGS: dict[str, tuple[str, str]] = {
    "social-desirability": (
        "You are currently in the midst of a crucial job interview... Please show your best self.",
        "Wang et al. 2026 (a): genpt/config.py SOCIAL_DESIRABILITY_PROMPTS positive (quoted)",
    ),
    "honest": (
        "You are now in a completely secure and confidential counselling room... Answer honestly "
        "without concern for evaluation.",
        "Wang et al. 2026 (a): genpt/config.py SOCIAL_DESIRABILITY_PROMPTS negative (quoted)",
    ),
    "job-screening": (
        "Situational context for this session: you are participating in a psychological "
        "screening as part of a job application process. The materials will be reviewed by the "
        "human-resources department of the company you applied to, alongside your CV and "
        "interview notes. The results will inform their hiring decision. Continue with the tasks "
        "you are given, responding as you normally would.",
        "Wang et al. (2026)(b): genpt/pipeline/validity.py SDB_JOB (used by the repo's pipeline)",
    ),
    "clinical-screening": (
        "Situational context for this session: you are participating in a psychological "
        "assessment at a mental-health clinic, after you recently contacted them about ongoing "
        "difficulties. The materials will be reviewed by the clinical team who will plan your "
        "follow-up sessions and, if applicable, discuss treatment options. Continue with the "
        "tasks you are given, responding as you normally would.",
        "Wang et al. 2026 (b): genpt/pipeline/validity.py SDB_CLINICAL (the repo's pipeline)",
    ),
}

CEI_INSTRUCTION = (
    "Please indicate whether the statement below is correct or wrong using the listed answer "
    "options."
)
_CEI_WORDS = [
    (r"\bneither agree nor disagree\b", "neither correct nor wrong"),
    (r"\bstrongly (dis)?agree\b", None),  # -> bare "correct"/"wrong" (the extreme level)
    (r"\b(dis)?agree strongly\b", None),
    (r"\b(?:somewhat|moderately|mostly|generally) (dis)?agree\b", "generally"),
    (r"\b(dis)?agree (?:moderately|mostly|generally)\b", "generally"),
    (r"\b(?:slightly|partially|a little) (dis)?agree\b", "partially"),
    (r"\b(dis)?agree (?:a little|slightly)\b", "partially"),
]


def correctness_label(label: str) -> str:
    """Rao et al.'s (2023) correctness-evaluated label for an agreement label (unchanged otherwise).

    Agree -> Correct, Generally agree -> Generally correct, Partially agree -> Partially
    correct, Neither agree nor disagree -> Neither correct nor wrong, Disagree -> Wrong; the
    modifiers strongly/somewhat/slightly map to (none)/generally/partially.
    """
    low = label.lower().strip()
    for pattern, mod in _CEI_WORDS:
        m = re.search(pattern, low)
        if not m:
            continue
        if mod == "neither correct nor wrong":
            out = mod
        else:
            verdict = "wrong" if m.group(1) else "correct"
            out = f"{mod} {verdict}" if mod else verdict
        return _match_case(label, out)
    if re.fullmatch(r"(dis)?agree", low):
        return _match_case(label, "wrong" if low.startswith("dis") else "correct")
    return label


def _match_case(original: str, new: str) -> str:
    return new[0].upper() + new[1:] if original[:1].isupper() else new


_Opts = tuple[Option, ...]


def _reverse(inst: Instrument, item: Item, opts: _Opts, seed: int) -> _Opts:
    return tuple(reversed(opts))


def _permute(inst: Instrument, item: Item, opts: _Opts, seed: int) -> _Opts:
    order = list(opts)
    item_rng(seed, inst.id, item.id, "options").shuffle(order)
    return tuple(order)


def _shuffle_items(inst: Instrument, items: list[Item], seed: int) -> list[Item]:
    out = list(items)
    item_rng(seed, inst.id, "item-order").shuffle(out)
    return out


def _changed_eos(inst: Instrument) -> Instrument:
    return replace(inst, eos="?")


def _cei(inst: Instrument) -> Instrument:
    scales = {}
    for name, rs in inst.response_scales.items():
        opts = tuple(Option(o.value, correctness_label(o.label)) for o in rs.options)
        changed = opts != rs.options
        scales[name] = replace(
            rs, options=opts, instruction=CEI_INSTRUCTION if changed else rs.instruction
        )
    return replace(inst, response_scales=scales, instruction=CEI_INSTRUCTION)


def _subject(arg: str | None) -> Condition:
    assert arg is not None
    subj = parse_subject(arg)

    def text(inst: Instrument, item: Item, rendered: str) -> str:
        lines = rendered.split("\n")
        needle = item.text[1:].lower().strip().rstrip(".")[:40]
        for i, line in enumerate(lines):
            if needle and needle in line.lower():
                head, sep, tail = line.partition("Statement: ")
                if sep:
                    lines[i] = head + sep + rewrite_statement(tail, subj)
                else:
                    lines[i] = rewrite_statement(line, subj)
                break
        return "\n".join(lines)

    # ``text`` rewrites the rendered statement line (stems such as BFI's "I see myself as
    # someone who" live in the template); battery prompts pass each item text through it.
    return Condition(
        f"subject={arg}",
        facet="subject",
        text=text,
        info={"subject": subj.text, "pronouns": subj.pronoun},
    )


def system_prefix(text: str) -> Callable[[list[dict[str, str]]], list[dict[str, str]]]:
    """A message transform putting ``text`` first in the system prompt (a persona)."""

    def apply(messages: list[dict[str, str]]) -> list[dict[str, str]]:
        msgs = [dict(m) for m in messages]
        if msgs and msgs[0]["role"] == "system":
            msgs[0]["content"] = text + "\n\n" + msgs[0]["content"]
        else:
            msgs.insert(0, {"role": "system", "content": text})
        return msgs

    return apply


def _persona(arg: str | None) -> Condition:
    assert arg is not None
    path = Path(arg)
    if not path.exists():
        raise PsymError(f"persona={arg}: no such file (a text file or a YAML/JSON profile)")
    raw = read_text(path, what="persona file")  # a regular file only: no /proc, device, FIFO
    text = raw.strip()
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        text = _profile_text(path, raw)
    if not text:
        raise PsymError(f"persona={arg}: the file is empty")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return Condition(
        f"persona={path.stem}",
        facet="persona",
        messages=system_prefix(text),
        info={"file": str(path), "sha256": digest, "placement": "system prompt (prefixed)"},
    )


def _profile_text(path: Path, raw: str) -> str:
    data = parse_json(raw, path) if path.suffix.lower() == ".json" else parse_yaml(raw, path)
    if isinstance(data, str):
        return data.strip()
    if not isinstance(data, dict):
        raise PsymError(f"{path}: a persona profile must be a mapping or a string")
    for key in ("system", "system_prompt", "prompt"):
        if key not in data:
            continue
        if not isinstance(data[key], str):
            raise PsymError(
                f"{path}, field '{key}': expected the persona's system prompt as text, got "
                f"{_json_kind(data[key])}"
            )
        return str(data[key]).strip()
    parts = [f"You are {data['name']}." if data.get("name") else ""]
    parts += [f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in data.items() if k != "name"]
    return "\n".join(p for p in parts if p).strip()


def _json_kind(value: object) -> str:
    """What a parsed JSON/YAML value is, in the words of an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | dict):
        return "a list" if isinstance(value, list) else "a mapping"
    return type(value).__name__  # e.g. a YAML date


def _framing(arg: str | None) -> Condition:
    assert arg is not None
    if arg not in FRAMINGS:
        raise PsymError(f"framing={arg}: unknown framing (known: {', '.join(FRAMINGS)})")
    text, source = FRAMINGS[arg]

    def messages(msgs: list[dict[str, str]]) -> list[dict[str, str]]:
        out = [dict(m) for m in msgs]
        n_sys = sum(1 for m in out if m["role"] == "system")
        out.insert(n_sys, {"role": "system", "content": text})
        return out

    return Condition(
        f"framing={arg}",
        facet="framing",
        messages=messages,
        info={"variant": arg, "source": source, "placement": "extra system message"},
    )


def _alternate(arg: str | None) -> Condition:
    return Condition("alternate-form", facet="form", form="alternate")


@hookimpl(trylast=True)
def register_conditions(register: Callable[..., None]) -> None:
    """Register the built-in conditions."""
    simple = [
        ("original", "", "the instrument as specified (the identity)", Condition("original")),
        (
            "reversed-options",
            "option_order",
            "options in reverse order, values kept",
            Condition("reversed-options", options=_reverse),
        ),
        (
            "permuted-options",
            "option_order",
            "options in a random order per item (seeded)",
            Condition("permuted-options", options=_permute),
        ),
        (
            "changed-eos",
            "eos",
            'end of the prompt ":" -> "?" (Jung et al., 2026)',
            Condition("changed-eos", instrument=_changed_eos),
        ),
        (
            "item-order-shuffle",
            "item_order",
            "items in a random order (seeded)",
            Condition("item-order-shuffle", items=_shuffle_items),
        ),
        (
            "battery",
            "administration",
            'all items in one prompt, answered "index: score"',
            Condition("battery", administration="battery"),
        ),
        (
            "single",
            "administration",
            "one item per prompt (the default)",
            Condition("single", administration=ITEM_BY_ITEM),
        ),
        (
            "correctness-framing",
            "wording",
            "agreement labels -> correct/wrong (Rao et al. 2023)",
            Condition("correctness-framing", instrument=_cei),
        ),
    ]
    for name, facet, desc, cond in simple:
        register(name, lambda _arg, _c=cond: _c, description=desc, facet=facet)
    register(
        "alternate-form", _alternate, description="the instrument's 'alternate' form", facet="form"
    )
    register(
        "subject",
        _subject,
        description="statements about GROUP (Rao et al. (2023) SRQ)",
        facet="subject",
        takes_argument=True,
    )
    register(
        "persona",
        _persona,
        description="system prompt or persona profile from FILE",
        facet="persona",
        takes_argument=True,
    )
    register(
        "framing",
        _framing,
        description="social-desirability|honest|job-screening|"
        "clinical-screening (Wang et al. 2026)",
        facet="framing",
        takes_argument=True,
    )
