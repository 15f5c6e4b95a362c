"""Shared paths for the projective plugin's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
_HERE = REPO.parent / "shared" / "data"
# ``<repo>/../shared/data``, else $PSYM_SHARED_DATA (default /work/shared/data), as tests/ does
SHARED = _HERE if _HERE.is_dir() else Path(os.environ.get("PSYM_SHARED_DATA", "/work/shared/data"))
GENPT = SHARED / "genpt"


@pytest.fixture
def genpt() -> Path:
    """The authors' released files (tests only; the product ships none of them)."""
    if not (GENPT / "pdb_labels.json").is_file():
        pytest.skip("../shared/data/genpt is not available")
    return GENPT
