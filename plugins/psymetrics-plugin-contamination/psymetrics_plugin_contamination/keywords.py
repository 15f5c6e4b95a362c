"""Keyword annotations for the key-information probe: ours, shipped as data, or the user's.

Han et al. (2025) had one keyword per item chosen by a psychology expert and did not publish
them. psymetrics ships its OWN annotations, produced by one stated rule (``RULE``), in
``keywords/<task>.csv`` (columns ``id,keyword``; ``#`` lines are comments). Instruments without a
shipped file (user-supplied texts such as pvq40 or sd3) get the same rule applied at run time.
A user's own file is given with ``--keywords [TASK=]FILE`` and validated line by line.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from psymetrics_core.api import PsymError, SpecError, read_text, write_output

__all__ = [
    "RULE",
    "RULE_ID",
    "Keyword",
    "rule_keyword",
    "mask_first",
    "load_keyword_file",
    "shipped_keywords",
    "keywords_for",
    "parse_keywords_option",
    "write_keyword_file",
    "write_shipped_keywords",
]

RULE_ID = "psymetrics-longest-content-word-v1"
RULE = (
    "the longest word of the item (letters, inner hyphens and apostrophes) that has at least "
    "three letters and is not a function word, a generic person word or a light verb such as "
    "'tends' (STOPWORDS); ties go to "
    "the later word, as the end of an item usually carries its content"
)

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    ever every few for from further had has have having he her here hers herself him himself his
    how however i if in into is it its itself just least less like made make makes many may me
    might more most much must my myself neither never no nor not now of off often on once one
    only or other others otherwise our ours ourselves out over own per rather same several she
    should since so some someone something sometimes such than that the their theirs them
    themselves then there these they thing things this those though through thus to too toward
    under until up upon us very was we well were what when whenever where whether which while
    who whom whose why will with within without would yet you your yours yourself yourselves
    people person persons tend tends tended get gets got keep keeps kept seem seems try tries
    tried feel feels think thinks
    """.split()
)

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*[A-Za-z]|[A-Za-z]")


@dataclass(frozen=True)
class Keyword:
    """The keyword of one item and where it came from (``source``: file path or rule id)."""

    item: str
    keyword: str
    source: str


def rule_keyword(text: str) -> str:
    """The keyword ``RULE`` picks in ``text`` (a content word; the longest word as fallback)."""
    words = _WORD.findall(text)
    if not words:
        raise PsymError(f"no word to mask in item text {text!r}")
    content = [w for w in words if len(w) >= 3 and w.lower().strip("'") not in STOPWORDS]
    pool = content or words
    best = max(len(w) for w in pool)
    return [w for w in pool if len(w) == best][-1]


def _pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(keyword) + r"(?![A-Za-z0-9])", re.IGNORECASE)


def mask_first(text: str, keyword: str) -> tuple[str, str] | None:
    """``(text with the first whole-word occurrence of keyword replaced by [MASK], the masked
    string as written in text)``, or None when ``keyword`` does not occur (case-insensitive)."""
    m = _pattern(keyword).search(text)
    if m is None:
        return None
    return text[: m.start()] + "[MASK]" + text[m.end() :], m.group(0)


def _data_lines(path: Path) -> Iterable[tuple[int, str]]:
    text = read_text(path, what="keyword file")
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield lineno, line


def _cells(path: Path, lineno: int, line: str) -> list[str]:
    try:
        return next(csv.reader([line]), [])
    except csv.Error as exc:
        raise SpecError(path, f"unreadable CSV ({exc})", row=lineno) from None


def load_keyword_file(path: str | Path, texts: Mapping[str, str], task: str) -> dict[str, Keyword]:
    """Read ``id,keyword`` rows for the items in ``texts`` ({item id: stored text}).

    Every item needs exactly one keyword that occurs in its text as a whole word; any problem
    is one ``SpecError`` naming the file, line and field.
    """
    p = Path(path)
    if not p.is_file():
        raise SpecError(p, "keyword file not found")
    lines = list(_data_lines(p))
    if not lines:
        raise SpecError(p, "no header line (expected columns id,keyword)")
    header_no, header = lines[0]
    cols = [c.strip() for c in _cells(p, header_no, header)]
    for col in ("id", "keyword"):
        if col not in cols:
            raise SpecError(
                p, f"missing column '{col}' (expected columns id,keyword)", row=header_no
            )
    out: dict[str, Keyword] = {}
    for lineno, line in lines[1:]:
        row = dict(zip(cols, _cells(p, lineno, line), strict=False))
        item = (row.get("id") or "").strip()
        kw = (row.get("keyword") or "").strip()
        if item not in texts:
            raise SpecError(
                p, f"unknown item id {item!r} for task '{task}'", row=lineno, field="id"
            )
        if item in out:
            raise SpecError(p, f"item {item} appears twice", row=lineno, field="id")
        if not kw:
            raise SpecError(p, "empty keyword", row=lineno, field="keyword")
        if mask_first(texts[item], kw) is None:
            raise SpecError(
                p,
                f"keyword {kw!r} does not occur as a whole word in item {item} ({texts[item]!r})",
                row=lineno,
                field="keyword",
            )
        out[item] = Keyword(item, kw, str(p))
    missing = [i for i in texts if i not in out]
    if missing:
        raise SpecError(p, f"no keyword for item(s) {', '.join(missing)} of task '{task}'")
    return out


def shipped_keywords(task: str) -> Path | None:
    """The keyword file this plugin ships for ``task``, if any."""
    from importlib import resources

    ref = resources.files(__package__).joinpath("keywords", f"{task}.csv")
    return Path(str(ref)) if ref.is_file() else None


def keywords_for(
    task: str, texts: Mapping[str, str], user_file: str | Path | None = None
) -> tuple[dict[str, Keyword], str]:
    """Keywords for every item of ``task`` and a note on their source.

    The user's file wins; else the shipped annotation (if it still matches the texts); else the
    rule applied to the texts now (e.g. texts given with ``--items``).
    """
    if user_file is not None:
        return load_keyword_file(user_file, texts, task), f"user file {user_file}"
    shipped = shipped_keywords(task)
    note = ""
    if shipped is not None:
        try:
            kws = load_keyword_file(shipped, texts, task)
            return kws, f"psymetrics annotation ({RULE_ID}), not Han et al.'s expert keywords"
        except SpecError:  # e.g. the user replaced the texts with --items
            note = " (the shipped annotation does not fit these item texts)"
    kws = {i: Keyword(i, rule_keyword(t), RULE_ID) for i, t in texts.items()}
    return kws, f"derived now by {RULE_ID} (ours), not Han et al.'s expert keywords{note}"


def parse_keywords_option(values: Iterable[str], tasks: Iterable[str]) -> dict[str, Path]:
    """``--keywords [TASK=]FILE`` values as {task: path}; a bare FILE needs exactly one task."""
    task_list = list(tasks)
    out: dict[str, Path] = {}
    for v in values:
        task, sep, path = v.partition("=")
        if not sep:
            if len(task_list) != 1:
                raise PsymError(
                    f"--keywords {v}: name the task (TASK=FILE) when several tasks are given"
                )
            task, path = task_list[0], v
        task = task.strip()
        if task not in task_list:
            raise PsymError(f"--keywords {v}: task '{task}' is not among --tasks")
        out[task] = Path(path.strip())
    return out


def write_keyword_file(path: Path, task: str, texts: Mapping[str, str]) -> None:
    """Write the rule's keywords for ``texts`` as a shipped annotation file."""
    lines = [
        f"# Keyword annotation for '{task}' for the key-information probe of Han et al. (2025).",
        "# OURS, not the paper's (its expert keywords are unpublished); produced by the rule",
        f"# {RULE_ID}: {RULE}.",
        "id,keyword",
    ]
    for item, text in texts.items():
        kw = rule_keyword(text)
        lines.append(f"{item},{kw}")
    write_output(path, "\n".join(lines) + "\n", what="keyword file")


def write_shipped_keywords(folder: Path | None = None) -> list[str]:
    """(Re)write ``keywords/<task>.csv`` for every installed questionnaire that ships its item
    texts; returns the task ids. Run ``python -m psymetrics_plugin_contamination.keywords``."""
    from importlib import resources

    from psymetrics_core import list_instruments

    out = folder or Path(str(resources.files(__package__).joinpath("keywords")))
    done = []
    for inst in list_instruments().values():
        if inst.kind != "questionnaire" or not inst.texts_shipped:
            continue
        items = inst.forms.get("original", [])
        if not items or not all(it.text for it in items):
            continue
        write_keyword_file(out / f"{inst.id}.csv", inst.id, {it.id: it.text for it in items})
        done.append(inst.id)
    return done


if __name__ == "__main__":
    print("wrote keywords for:", ", ".join(write_shipped_keywords()))
