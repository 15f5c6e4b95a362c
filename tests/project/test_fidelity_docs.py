"""The worked example of docs/guides/fidelity.md prints what the page shows (issue 34).

The blocks of its "Worked example" section run in order in one directory: a ``csv`` block is
written as ``personas.csv``, the ``bash`` blocks run line by line (``$BASE_URL`` substituted) and
each ``text`` block's lines (``...`` aside) must be lines the commands printed. ``bfi_long.csv`` is
psych's bfi in long form, made from ../shared/data/psych-bfi/bfi.csv exactly as the page's two R
lines make it (checked against R's output when this test was written: the same 70,000 rows).

The model is a persona-following loopback server: each reply is a draw from the answers that
the people of psych's bfi of the persona's gender gave to that item (seeded by a hash of the
prompt), so a population of it samples the human distribution of its personas' groups.
"""

from __future__ import annotations

import csv
import hashlib
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_population_docs import FENCE, _run_bash

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "guides" / "fidelity.md"
BFI = REPO.parent / "shared" / "data" / "psych-bfi" / "bfi.csv"
ITEMS = (
    REPO
    / "plugins"
    / "psymetrics-plugin-ipip-bfi25"
    / "psymetrics_plugin_ipip_bfi25"
    / "instruments"
    / "ipip-bfi25"
    / "items.csv"
)

pytestmark = pytest.mark.skipif(not BFI.is_file(), reason="../shared/data/psych-bfi not here")


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert "\n## Worked example\n" in text, "the page lost its Worked example section"
    return text.split("\n## Worked example\n", 1)[1].split("\n## ", 1)[0]


def _long(out: Path) -> dict[tuple[str, str], Counter[str]]:
    """bfi_long.csv as R's reshape writes it (respondent, gender, item, response; item-major)
    and the answers per (gender, item)."""
    with BFI.open(newline="") as f:
        rows = list(csv.DictReader(f))
    items = [c for c in rows[0] if re.fullmatch(r"[ACENO][1-5]", c)]
    counts: dict[tuple[str, str], Counter[str]] = {}
    with out.open("w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(["respondent", "gender", "item", "response"])
        for item in items:
            for r in rows:
                w.writerow(
                    [r["respondent"], int(r["gender"]), item, int(r[item]) if r[item] else ""]
                )
                if r[item]:
                    counts.setdefault((r["gender"], item), Counter())[r[item]] += 1
    return counts


def _persona_following(counts: dict[tuple[str, str], Counter[str]]) -> Any:
    with ITEMS.open(newline="") as f:
        by_text = {f"I {r['text'][0].lower()}{r['text'][1:]}.": r["id"] for r in csv.DictReader(f)}

    def answer(messages: list[dict[str, Any]]) -> str:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        gender = "2" if "woman" in text else "1"
        phrase = re.search(r"^Phrase: (.*)$", text, re.M)
        item = by_text.get(phrase.group(1).strip() if phrase else "", "A1")
        c = counts[(gender, item)]
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)
        return random.Random(seed).choices(list(c), weights=list(c.values()))[0]

    return answer


def test_worked_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from benchmarks.latency_server import LatencyServer

    counts = _long(tmp_path / "bfi_long.csv")
    blocks = FENCE.findall(_section())
    assert [k for k, _ in blocks].count("bash") >= 1 and any(k == "text" for k, _ in blocks)
    bin_dir = str(Path(sys.executable).parent)
    printed: list[str] = []
    claimed: list[str] = []
    with LatencyServer(latency=0.0, answer=_persona_following(counts)) as srv:
        env = {
            **os.environ,
            "BASE_URL": srv.base_url,
            "PSYM_CACHE_DIR": str(tmp_path / "cache"),
            "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
            "COLUMNS": "100",
        }
        for kind, body in blocks:
            if kind == "csv":
                (tmp_path / "personas.csv").write_text(body)
            elif kind == "bash":
                printed.append(_run_bash(body, tmp_path, env))
            elif kind == "text":
                claimed += [x.rstrip() for x in body.splitlines() if x.strip() not in ("", "...")]
    lines = {x.rstrip() for x in "\n".join(printed).splitlines()}
    missing = [x for x in claimed if x not in lines]
    assert not missing, f"the page shows lines the commands did not print: {missing}"
