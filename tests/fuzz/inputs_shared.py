"""What the input fuzz suites share (test_fuzz_inputs.py, test_fuzz_plugin_inputs.py,
test_fuzz_cli_values.py, test_fuzz_other_files.py): hypothesis's settings, an instrument folder
from spec and item bytes, and the count of the deterministic cases."""

from __future__ import annotations

from pathlib import Path

from cases import (
    BASE_ITEMS,
    CONDITIONS,
    GENERATIONS_RAW,
    ITEM_TEXT_FILES,
    ITEMS_OPTION,
    ITEMS_RAW,
    MODEL_ARGS,
    RESPONSES_RAW,
    SPEC_EDITS,
    SPEC_RAW,
    TASK_ARGS,
)
from cases_plugins import (
    DILEMMA_RAW,
    HOUSING_RAW,
    KEYWORD_RAW,
    LABELS_RAW,
    MANIFEST_RAW,
    PB_CASES,
    PB_RAW,
    PERSONA_RAW,
)
from cases_runfiles import GRAPH_FILES, RUN_FILES_RAW, SAFETENSORS_RAW
from hypothesis import HealthCheck, settings

FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


def spec_dir(tmp_path: Path, spec: bytes, items: bytes = BASE_ITEMS.encode()) -> Path:
    d = tmp_path / "toy"
    d.mkdir(exist_ok=True)
    (d / "instrument.yaml").write_bytes(spec)
    (d / "items.csv").write_bytes(items)
    return d


def all_case_count() -> int:
    """Deterministic fuzz inputs defined here (hypothesis examples come on top)."""
    return sum(
        len(x)
        for x in (
            SPEC_EDITS,
            SPEC_RAW,
            ITEMS_RAW,
            RESPONSES_RAW,
            GENERATIONS_RAW,
            PB_CASES,
            PB_RAW,
            HOUSING_RAW,
            PERSONA_RAW,
            DILEMMA_RAW,
            ITEMS_OPTION,
            ITEM_TEXT_FILES,
            MODEL_ARGS,
            TASK_ARGS,
            CONDITIONS,
            KEYWORD_RAW,
            LABELS_RAW,
            MANIFEST_RAW,
            RUN_FILES_RAW,
            SAFETENSORS_RAW,
            GRAPH_FILES,
        )
    )
