"""The README's user install is the install page's (issue 31: the README lacked the CPU-only
torch line, so a user following it got PyPI's CUDA torch, about 6 GB instead of about 2 GB)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```bash\n(git clone <this repository>.*?)```", re.S)


def _user_install(path: Path) -> str:
    """The first block starting with the clone (the page's developer install comes after)."""
    found = BLOCK.findall(path.read_text(encoding="utf-8"))
    assert found, f"{path}: no install block"
    return found[0]


def test_the_readme_install_block_is_the_install_page_block() -> None:
    readme = _user_install(ROOT / "README.md")
    page = _user_install(ROOT / "docs" / "getting-started" / "install.md")
    assert readme == page
    assert "download.pytorch.org/whl/cpu" in page  # the line that keeps the environment ~2 GB
