"""TAT stimuli: the shipped verbal scenes (CC0), a user image folder, per-session sampling.

A user image folder (task option ``images=DIR``) holds PNG or JPEG files and a
``manifest.csv`` with the columns ``file`` and ``category`` (interpersonal, solitary or
environmental) and optionally ``id``. Every row is checked: the file exists inside the folder,
is a PNG or JPEG by its content within the image bounds (``psymetrics_core.base.images``: 20 MB,
10,000 pixels a side, read from the header), and no id repeats; errors name the manifest line.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from psymetrics_core.api import PsymError, check_image_file, image_mime, read_csv, read_text

__all__ = [
    "Scene",
    "CATEGORIES",
    "RATIO",
    "builtin_scenes",
    "read_image_folder",
    "sample_scenes",
    "image_mime",
]

CATEGORIES = ("interpersonal", "solitary", "environmental")
RATIO = (4, 3, 1)  # cards per session per category (Wang et al. 2026, §4.1)
_PREFIX = {"interpersonal": "inter", "solitary": "solit", "environmental": "envir"}


@dataclass(frozen=True)
class Scene:
    """One TAT stimulus: a verbal scene (``text``) or an image file (``image``)."""

    id: str
    category: str
    text: str | None = None
    image: Path | None = None


@lru_cache(maxsize=1)
def builtin_scenes() -> tuple[Scene, ...]:
    """The 28 verbal scenes shipped with the plugin (13 / 10 / 5, CC0)."""
    from importlib import resources

    raw = (resources.files(__package__) / "data" / "tat_scenes.yaml").read_text(encoding="utf-8")
    return tuple(
        Scene(r["id"], r["category"], text=r["scene"]) for r in yaml.safe_load(raw)["scenes"]
    )


def read_image_folder(folder: str | Path) -> list[Scene]:
    """Image stimuli listed in ``folder/manifest.csv`` (see the module docstring)."""
    root = Path(folder)
    manifest = root / "manifest.csv"
    if not root.is_dir():
        raise PsymError(f"{root}: no such image folder")
    if not manifest.is_file():
        raise PsymError(f"{manifest}: missing (columns: file, category[, id])")
    read_csv(manifest, what="image manifest")  # size, encoding and CSV syntax: one line each
    reader = csv.DictReader(io.StringIO(read_text(manifest, what="image manifest"), newline=""))
    cols = set(reader.fieldnames or [])
    if not {"file", "category"} <= cols:
        raise PsymError(
            f"{manifest}, line 1: expected the columns file, category[, id] "
            f"(got {', '.join(sorted(cols)) or 'none'})"
        )
    out: list[Scene] = []
    counts = dict.fromkeys(CATEGORIES, 0)
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        name = (row.get("file") or "").strip()
        cat = (row.get("category") or "").strip().lower()
        if cat not in CATEGORIES:
            raise PsymError(
                f"{manifest}, line {line}: category {cat or '(empty)'!r} is not one of "
                f"{', '.join(CATEGORIES)}"
            )
        path = (root / name).resolve()
        if not name or root.resolve() not in path.parents or not path.is_file():
            raise PsymError(f"{manifest}, line {line}: no image file {name!r} in {root}")
        check_image_file(path, f"{manifest}, line {line}: {name}")  # size, type, dimensions
        counts[cat] += 1
        sid = (row.get("id") or "").strip() or f"{_PREFIX[cat]}_{counts[cat]:02d}"
        if sid in seen:
            raise PsymError(f"{manifest}, line {line}: duplicate id {sid!r}")
        seen.add(sid)
        out.append(Scene(sid, cat, image=path))
    if not out:
        raise PsymError(f"{manifest}: lists no images")
    return out


def sample_scenes(scenes: Sequence[Scene], seed: int, ratio: Sequence[int] = RATIO) -> list[Scene]:
    """Cards for one session: ``ratio`` per category, drawn as in the authors' code.

    Each category's pool is sorted by id; ``random.Random(seed)`` then draws
    ``rng.sample(pool, k)`` for interpersonal, solitary and environmental in turn.
    """
    rng = random.Random(seed)
    out: list[Scene] = []
    for cat, k in zip(CATEGORIES, ratio, strict=True):
        pool = sorted((s for s in scenes if s.category == cat), key=lambda s: s.id)
        out += rng.sample(pool, min(k, len(pool)))
    return out
