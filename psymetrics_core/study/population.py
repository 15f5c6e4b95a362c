"""Build a population of simulated respondents (``psym population build``).

From a persona source — JSON lines, CSV, Parquet, a text file with one persona per line, or a
Hugging Face dataset saved on disk (``datasets``' ``save_to_disk``) — or from a generator of
label-bearing profiles (trait markers in the style of Serapio-García et al. 2023, or the 2^5
binary Big Five profiles of PersonaLLM, Jiang et al. 2024). Duplicate personas are removed, the
sample is drawn with a seed (the same seed gives a byte-identical file), and stratified quotas are
kept within one respondent of their target. Every respondent records its source file and row,
the file's sha256 and the licence the user declared: nothing non-free is bundled (Persona Hub,
CC-BY-NC-SA-4.0, is loaded from the user's own file).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import parse_json, read_csv, read_lines
from psymetrics_core.base.writing import check_target, write_output
from psymetrics_core.records.population import (
    MAX_LABELS,
    MAX_PERSONA,
    MAX_RESPONDENTS,
    Respondent,
    id_problem,
    population_line,
)

__all__ = [
    "BuildSpec",
    "build_population",
    "build",
    "Built",
    "write_population",
    "check_build_output",
    "GENERATORS",
    "TRAIT_MARKERS",
    "read_source",
]

MAX_SOURCE_BYTES = 2 * 1024**3  # a Parquet file or saved dataset read whole
TEXT_FIELDS = ("persona", "text", "description", "profile")


@dataclass(frozen=True)
class BuildSpec:
    """What ``psym population build`` was asked for."""

    source: Path | None = None
    generate: str | None = None
    n: int | None = None
    seed: int = 1234
    stratify: tuple[str, ...] = ()
    text_field: str | None = None
    id_field: str = "id"
    licence: str = ""
    levels: tuple[int, ...] | None = None  # --generate trait-markers only [default: 1, 9]
    split: str | None = None


@dataclass(frozen=True)
class Built:
    """What a build gave: the respondents, and how many duplicate personas it dropped."""

    people: list[Respondent]
    duplicates: int = 0


def build_population(spec: BuildSpec) -> list[Respondent]:
    """The respondents ``spec`` asks for, in a deterministic order."""
    return build(spec).people


def build(spec: BuildSpec) -> Built:
    """The respondents ``spec`` asks for, in a deterministic order, and the number of
    duplicate personas dropped from the source (before any sample is drawn)."""
    if (spec.source is None) == (spec.generate is None):
        raise PsymError("give either --source FILE or --generate KIND")
    if spec.n is not None and not 1 <= spec.n <= MAX_RESPONDENTS:
        raise PsymError(f"--n {spec.n}: expected 1-{MAX_RESPONDENTS:,}")
    if spec.levels is not None and spec.generate != "trait-markers":
        raise PsymError(
            "--levels: only with --generate trait-markers (binary profiles are "
            "high/low, a source's personas have no levels)"
        )
    if spec.generate is not None:
        pool = generate(spec.generate, (1, 9) if spec.levels is None else spec.levels)
    else:
        assert spec.source is not None
        pool = _from_source(spec)
    found = len(pool)
    pool = _dedupe(pool, str(spec.source or f"--generate {spec.generate}"))
    dropped = found - len(pool)
    if spec.n is None or spec.n == len(pool):
        return Built(pool, dropped)
    if spec.n > len(pool):
        raise PsymError(f"--n {spec.n}: the source has only {len(pool):,} distinct personas")
    rng = random.Random(spec.seed)
    if not spec.stratify:
        return Built([pool[i] for i in sorted(rng.sample(range(len(pool)), spec.n))], dropped)
    return Built(_stratified(pool, spec.stratify, spec.n, rng), dropped)


def write_population(
    path: str | Path, people: Sequence[Respondent], inputs: Sequence[str | Path] = ()
) -> Path:
    """Write ``people`` to the population file ``path`` (one JSON line each; complete or not
    at all) through the core's one writer: ``inputs`` (the persona source) are never replaced,
    and a population over ``MAX_RESPONDENTS`` is refused here, where the file is written, not
    only where ``psym eval`` reads it."""
    if len(people) > MAX_RESPONDENTS:
        raise PsymError(
            f"-o {path}: {len(people):,} respondents; a population file holds at most "
            f"{MAX_RESPONDENTS:,} (draw a sample with --n)"
        )
    text = "".join(population_line(r) + "\n" for r in people)
    return write_output(path, text, inputs=inputs, what="-o")


def check_build_output(path: str | Path, spec: BuildSpec) -> Path:
    """Refuse an output that would replace the persona source (or is not a writable file
    path) before the source is read."""
    return check_target(path, inputs=_source_files(spec.source), what="-o")


def _source_files(source: Path | None) -> list[Path]:
    if source is None:
        return []
    if source.is_dir():
        return [source, *(p for p in source.rglob("*") if p.is_file())]
    return [source]


def _dedupe(pool: list[Respondent], where: str) -> list[Respondent]:
    """Each persona once (first occurrence; compared without case and extra spaces); ids
    unique."""
    seen: set[str] = set()
    ids: dict[str, Any] = {}
    out = []
    for r in pool:
        key = " ".join(r.persona.split()).casefold()
        if key in seen:
            continue
        if r.id in ids:
            raise PsymError(
                f"{where}, row {r.source.get('row', '?')}: respondent id {r.id!r} is used by two "
                f"different personas (first at row {ids[r.id]}); ids must be unique"
            )
        seen.add(key)
        ids[r.id] = r.source.get("row", "?")
        out.append(r)
    return out


def _stratified(
    pool: list[Respondent], fields: Sequence[str], n: int, rng: random.Random
) -> list[Respondent]:
    """A proportional stratified sample: each stratum's quota is its share of ``n`` rounded by
    largest remainder (so within one of the exact target), drawn at random within it."""
    strata: dict[tuple[str, ...], list[int]] = {}
    for i, r in enumerate(pool):
        missing = [f for f in fields if f not in r.labels]
        if missing:
            raise PsymError(
                f"--stratify {','.join(fields)}: respondent {r.id!r} has no field {missing[0]!r}"
            )
        strata.setdefault(tuple(str(r.labels[f]) for f in fields), []).append(i)
    keys = sorted(strata)
    exact = {k: n * len(strata[k]) / len(pool) for k in keys}
    quota = {k: int(exact[k]) for k in keys}
    left = n - sum(quota.values())
    for k in sorted(keys, key=lambda k: (-(exact[k] - quota[k]), k))[:left]:
        quota[k] += 1
    chosen = [i for k in keys for i in rng.sample(strata[k], quota[k])]
    return [pool[i] for i in sorted(chosen)]


def _from_source(spec: BuildSpec) -> list[Respondent]:
    assert spec.source is not None
    path = spec.source
    rows = read_source(path, spec.split, max_rows=MAX_RESPONDENTS if spec.n is None else None)
    digest = _sha256(path)
    out = []
    for row_no, row in rows:
        out.append(_row_respondent(spec, path, digest, row_no, row))
    if not out:
        raise PsymError(f"{path}: no personas found")
    return out


def _row_respondent(
    spec: BuildSpec, path: Path, digest: str, row_no: int, row: dict[str, Any]
) -> Respondent:
    where = f"{path}, row {row_no}"
    field = spec.text_field or next((f for f in TEXT_FIELDS if f in row), None)
    if field is None or field not in row:
        raise PsymError(
            f"{where}: no persona text field (expected one of "
            f"{', '.join(spec.text_field and [spec.text_field] or TEXT_FIELDS)}; "
            "choose one with --text-field)"
        )
    text = row[field]
    if not isinstance(text, str) or not text.strip():
        raise PsymError(f"{where}: field {field!r}: expected a non-empty text")
    if len(text) > MAX_PERSONA:
        raise PsymError(f"{where}: field {field!r}: over {MAX_PERSONA:,} characters")
    raw_id = row.get(spec.id_field)
    rid = str(raw_id).strip() if raw_id not in (None, "") else f"{path.stem}-{row_no}"
    problem = id_problem(rid)
    if problem:
        raise PsymError(
            f"{where}: field {spec.id_field!r}: respondent id {rid[:60]!r}: {problem} "
            "(the id rule of population files)"
        )
    labels = {k: _label(v) for k, v in row.items() if k not in (field, spec.id_field)}
    if len(labels) > MAX_LABELS:  # the bound read_population applies, enforced here too
        raise PsymError(f"{where}: {len(labels)} label fields; at most {MAX_LABELS} per respondent")
    source = {"file": path.name, "sha256": digest, "row": row_no}
    return Respondent(rid, text.strip(), labels, source, spec.licence)


def _label(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def read_source(
    path: Path, split: str | None = None, max_rows: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(row number, fields) of every row of a persona source (1-based rows; a text file's
    lines become ``{"persona": line}``); a source of over ``max_rows`` rows is refused (as
    soon as the row after the bound is read, for a text or JSON-lines source)."""
    if max_rows is None:
        return list(_rows(path, split))
    if _line_rows(path) > max_rows:  # a text or JSON-lines source: counted before it is parsed
        raise _over_bound(path, max_rows)
    out = list(itertools.islice(_rows(path, split), max_rows + 1))
    if len(out) > max_rows:
        raise _over_bound(path, max_rows)
    return out


def _over_bound(path: Path, max_rows: int) -> PsymError:
    return PsymError(
        f"{path}: over {max_rows:,} rows without --n; a population file holds at most "
        f"{MAX_RESPONDENTS:,} respondents (the bound psym eval reads): draw a sample with --n"
    )


def _line_rows(path: Path) -> int:
    """Non-blank lines of a text or JSON-lines source (0 for other sources or unreadable
    files: their reader says why)."""
    if path.suffix.lower() not in (".jsonl", ".ndjson", ".txt") or not path.is_file():
        return 0
    try:
        with path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


def _rows(path: Path, split: str | None) -> Iterable[tuple[int, dict[str, Any]]]:
    if path.is_dir():
        return _saved_dataset(path, split)
    if split is not None:
        raise PsymError(
            f"--split {split}: {path} is a file; --split chooses a split of a dataset folder "
            "written by datasets' save_to_disk"
        )
    if not path.is_file():
        raise PsymError(
            f"{path}: no such persona source (a .jsonl, .csv, .parquet or .txt file, "
            "or a dataset folder written by datasets' save_to_disk)"
        )
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        lines = read_lines(path, what="persona source")
        return ((n, _object(parse_json(t, path, line=n), path, n)) for n, t in lines if t.strip())
    if suffix == ".csv":
        return [(n, dict(row)) for n, row in read_csv(path, what="persona source").rows]
    if suffix == ".parquet":
        return _parquet(path)
    if suffix == ".txt":
        lines = read_lines(path, what="persona source")
        return ((n, {"persona": t.strip()}) for n, t in lines if t.strip())
    raise PsymError(
        f"{path}: unknown persona source type {suffix or '(none)'!r} "
        "(expected .jsonl, .csv, .parquet, .txt or a saved dataset folder)"
    )


def _object(raw: Any, path: Path, n: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise PsymError(f"{path}, line {n}: expected a JSON object per persona")
    return raw


def _parquet(path: Path) -> list[tuple[int, dict[str, Any]]]:
    import polars as pl  # on demand: Parquet sources only (polars: the [analysis] extra)

    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise PsymError(f"{path}: over {MAX_SOURCE_BYTES:,} bytes")
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 -- polars raises many kinds for a damaged file
        raise PsymError(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None
    return [(i + 1, row) for i, row in enumerate(frame.iter_rows(named=True))]


def _saved_dataset(path: Path, split: str | None) -> list[tuple[int, dict[str, Any]]]:
    try:
        import datasets  # on demand: saved Hugging Face datasets only (not a dependency)
    except ImportError:
        raise PsymError(
            f"{path}: reading a saved dataset needs `datasets` (pip install datasets)"
        ) from None
    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise PsymError(f"{path}: not a dataset saved with save_to_disk ({exc})"[:300]) from None
    if isinstance(ds, datasets.DatasetDict):
        names = sorted(ds)
        if split is None and len(names) == 1:
            split = names[0]
        if split not in ds:
            raise PsymError(f"{path}: choose a split with --split ({', '.join(names)})")
        ds = ds[split]
    return [(i + 1, dict(row)) for i, row in enumerate(ds)]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


# -- generated profiles ----------------------------------------------------------------------

# Big Five domain -> (low pole, high pole) adjective markers, after Goldberg's (1992) bipolar
# markers as Serapio-García et al. (2023) use them for shaping; a project-written list.
TRAIT_MARKERS: dict[str, tuple[tuple[str, str], ...]] = {
    "extraversion": (
        ("introverted", "extraverted"),
        ("quiet", "talkative"),
        ("timid", "bold"),
        ("unenergetic", "energetic"),
    ),
    "agreeableness": (
        ("cold", "warm"),
        ("unkind", "kind"),
        ("uncooperative", "cooperative"),
        ("distrustful", "trustful"),
    ),
    "conscientiousness": (
        ("disorganized", "organized"),
        ("irresponsible", "responsible"),
        ("careless", "thorough"),
        ("lazy", "hardworking"),
    ),
    "neuroticism": (
        ("calm", "anxious"),
        ("relaxed", "tense"),
        ("emotionally stable", "moody"),
        ("secure", "insecure"),
    ),
    "openness": (
        ("unimaginative", "imaginative"),
        ("uncreative", "creative"),
        ("incurious", "curious"),
        ("unreflective", "reflective"),
    ),
}
# level 1..9 -> qualifier and pole (Serapio-García et al.'s nine-level shaping)
_QUALIFIERS = {
    1: ("extremely", 0),
    2: ("very", 0),
    3: ("", 0),
    4: ("a bit", 0),
    5: ("neither", None),
    6: ("a bit", 1),
    7: ("", 1),
    8: ("very", 1),
    9: ("extremely", 1),
}
_BINARY = {
    "extraversion": ("introverted", "extroverted"),
    "agreeableness": ("antagonistic", "agreeable"),
    "conscientiousness": ("unconscientious", "conscientious"),
    "neuroticism": ("emotionally stable", "neurotic"),
    "openness": ("closed to experience", "open to experience"),
}
GENERATORS = ("trait-markers", "binary")


def generate(kind: str, levels: Sequence[int] = (1, 9)) -> list[Respondent]:
    """Label-bearing profiles: ``trait-markers`` (every combination of ``levels`` 1-9 over the
    five domains) or ``binary`` (the 32 high/low combinations)."""
    if kind == "binary":
        combos = list(itertools.product((0, 1), repeat=5))
        return [_binary(c) for c in combos]
    if kind != "trait-markers":
        raise PsymError(f"--generate {kind!r}: expected one of {', '.join(GENERATORS)}")
    bad = [lv for lv in levels if lv not in _QUALIFIERS]
    if bad or not levels:
        raise PsymError(f"--levels: expected levels 1-9, got {bad or 'none'}")
    return [_markers(c) for c in itertools.product(sorted(set(levels)), repeat=5)]


def _markers(levels: tuple[int, ...]) -> Respondent:
    parts = []
    for domain, level in zip(TRAIT_MARKERS, levels, strict=True):
        qualifier, pole = _QUALIFIERS[level]
        for low, high in TRAIT_MARKERS[domain]:
            if pole is None:
                parts.append(f"neither {low} nor {high}")
            else:
                parts.append(" ".join(w for w in (qualifier, (low, high)[pole]) if w))
    text = "someone who is " + ", ".join(parts[:-1]) + f" and {parts[-1]}"
    labels = dict(zip(TRAIT_MARKERS, levels, strict=True))
    rid = "tm-" + "".join(str(v) for v in levels)
    source = {"generator": "trait-markers", "scale": "1-9"}
    return Respondent(rid, text, labels, source, "generated by psymetrics (no third-party text)")


def _binary(bits: tuple[int, ...]) -> Respondent:
    words = [_BINARY[d][b] for d, b in zip(_BINARY, bits, strict=True)]
    text = f"a character who is {', '.join(words[:-1])}, and {words[-1]}"
    labels = dict(zip(_BINARY, bits, strict=True))
    rid = "bin-" + "".join(str(b) for b in bits)
    source = {"generator": "binary", "scale": "0/1 (low/high)"}
    return Respondent(rid, text, labels, source, "generated by psymetrics (no third-party text)")
