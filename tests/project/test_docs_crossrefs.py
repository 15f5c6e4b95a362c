"""No dangling cross-references in the docs (issue 31): every "see ... below" or "see ... above"
(and every quoted "Section" below/above) in a docs page names a section of that page, by its
quoted heading or by a link to its anchor, on the side it says. Ten pointed to sections that
were on other pages or nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "superpowers" not in p.parts)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)  # screens and code say "below" of themselves
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
SEE = re.compile(r"\bsee\b(?P<what>[^.;:()|]{0,160}?)\b(?P<side>below|above)\b", re.I)
QUOTED = re.compile(r'"([^"]+)"')
QUOTED_SIDE = re.compile(r'"(?P<what>[^"]{2,100})"\s+(?P<side>below|above)\b')
LINK = re.compile(r"\]\(([^)]*)\)")


def _plain(heading: str) -> str:
    return " ".join(re.sub(r"[`*]", "", heading).split()).lower()


def _slug(heading: str) -> str:
    """Python-Markdown's toc slug: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\s-]", "", _plain(heading))
    return re.sub(r"[-\s]+", "-", text).strip("-")


def _problems(text: str) -> list[str]:
    text = FENCE.sub("", text)
    heads = [(m.start(), _plain(m.group(1)), _slug(m.group(1))) for m in HEADING.finditer(text)]
    out = []
    refs = list(SEE.finditer(text))
    refs += [
        q
        for q in QUOTED_SIDE.finditer(text)
        if not any(q.start() < r.end() for r in refs if r.start() <= q.start())
    ]
    for m in refs:
        what, side, at = m.group("what"), m.group("side").lower(), m.start()
        # a link's target follows its text: "see [below](#anchor)"
        link = LINK.search(text, m.start(), m.end() + 200)
        names = [_plain(q) for q in QUOTED.findall(what)] or (
            [_plain(what)] if m.re is QUOTED_SIDE else []
        )
        if names:
            found = [h for h in heads if h[1] == names[0]]
        elif link and link.start() <= m.end() + 2:
            target = link.group(1)
            if not target.startswith("#"):
                out.append(f"{m.group(0)!r} links to another page ({target})")
                continue
            found = [h for h in heads if h[2] == target[1:]]
        else:
            out.append(f"{m.group(0)!r} names no section of the page")
            continue
        if not found:
            out.append(f"{m.group(0)!r}: no such heading on the page")
        elif not any((h[0] > at) == (side == "below") for h in found):
            out.append(f"{m.group(0)!r}: the section is not {side}")
    return out


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_see_below_and_above_point_to_a_section_of_the_page(page: Path) -> None:
    assert _problems(page.read_text(encoding="utf-8")) == []


def test_the_check_finds_what_it_is_for() -> None:
    page = '# T\n\nsee "Usage" below\n\nsee below\n\nsee [below](#t)\n\n## Usage\n'
    assert len(_problems(page)) == 2  # "see below" names nothing; #t is above
    assert _problems('# T\n\n## A\n\nsee "A" above, see [here](#b) below.\n\n## B\n') == []
    assert _problems("# T\n\nsee [below](other.md#x)\n") != []
