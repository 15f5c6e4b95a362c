"""The README's user install is the install page's (issue 31: the README lacked the CPU-only
torch line, so a user following it got PyPI's CUDA torch, about 6 GB instead of about 2 GB)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```bash\n(git clone <this repository>.*?)```", re.S)


def _user_install(path: Path) -> str:
    found = BLOCK.findall(path.read_text(encoding="utf-8"))
    assert len(found) == 1, f"{path}: expected one user-install block, found {len(found)}"
    return found[0]


def test_the_readme_install_block_is_the_install_page_block() -> None:
    readme = _user_install(ROOT / "README.md")
    page = _user_install(ROOT / "docs" / "getting-started" / "install.md")
    assert readme == page
    assert "download.pytorch.org/whl/cpu" in page  # the line that keeps the environment ~2 GB
