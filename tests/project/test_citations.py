"""User-facing citations of Jung, Lutz, Sen & Strohmaier are consistent: the published version
(Proceedings of EACL 2026, long papers, pp. 8143-8173; ACL Anthology 2026.eacl-long.380), never
the 2025 arXiv year (arXiv 2510.11254), in README, CONTRIBUTING, the plugins and ``psym show``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# "Jung" followed by its year, with no other year in between (so "Jung ... after Liu 2024" is
# not read as Jung 2024); spans line breaks, as in wrapped README and YAML text
CITED_YEAR = re.compile(r"Jung(?:(?!(?:19|20)\d\d).){0,60}?((?:19|20)\d\d)", re.S)
TEXT_SUFFIXES = {".md", ".py", ".yaml", ".yml", ".txt", ".cfg", ".toml", ".j2"}


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return [REPO / f for f in out if Path(f).suffix in TEXT_SUFFIXES and "egg-info" not in f]


def years_cited(text: str) -> list[str]:
    """The year given to each Jung et al. citation in ``text``."""
    return [m.group(1) for m in CITED_YEAR.finditer(text)]


def test_the_pattern_reads_wrapped_and_parenthesised_citations() -> None:
    text = (
        "Jung et al.\n  (2025) explain; Jung et al.'s (2026) design; Jung, Lutz, Sen &\n"
        "  Strohmaier (2025)"
    )
    assert years_cited(text) == ["2025", "2026", "2025"]
    assert years_cited("Jung et al. Table 14, after Liu et al. 2024") == ["2024"]


def test_every_jung_citation_in_the_repo_is_2026() -> None:
    files = _tracked_text_files()
    assert any(f.name == "README.md" for f in files)
    wrong = {
        str(f.relative_to(REPO)): ys
        for f in files
        if f.name != Path(__file__).name
        and (ys := [y for y in years_cited(f.read_text(encoding="utf-8")) if y == "2025"])
    }
    assert not wrong, f"Jung et al. cited as 2025 (published: EACL 2026): {wrong}"


def test_psym_show_cites_the_published_venue() -> None:
    for task in ("asi", "mfq", "sr2k"):
        r = subprocess.run(
            [sys.executable, "-m", "psymetrics_core", "show", task, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        citation = __import__("json").loads(r.stdout)["citation"]
        assert "Strohmaier, M. (2026)" in citation and "EACL 2026" in citation, citation


# PsychoBench: Huang, Wang, Li, Lam, Ren, Yuan, Jiao, Tu & Lyu, published at ICLR 2024 (the
# docs/papers page's year); the 2023 arXiv preprint's year is not cited
HUANG_YEAR = re.compile(r"Huang\s+et\s+al\.?,?\s*\(?((?:19|20)\d\d)|Lyu,\s+M\.\s+R\.\s+\((\d{4})\)")


def _huang_years(text: str) -> list[tuple[str, str]]:
    """(citation, year) of each PsychoBench citation in ``text``."""
    return [(m.group(0), m.group(1) or m.group(2)) for m in HUANG_YEAR.finditer(text)]


def test_every_psychobench_citation_is_2024() -> None:
    sample = "Huang et al.\n  (2023); (Huang et al., 2024); Tu, Z., & Lyu, M. R. (2023). Who"
    assert [y for _, y in _huang_years(sample)] == ["2023", "2024", "2023"]
    wrong = {}
    for f in _tracked_text_files():
        if f.name == Path(__file__).name:
            continue
        bad = [c for c, y in _huang_years(f.read_text(encoding="utf-8")) if y != "2024"]
        if bad:
            wrong[str(f.relative_to(REPO))] = bad
    assert not wrong, f"PsychoBench cited with another year than 2024 (ICLR 2024): {wrong}"
