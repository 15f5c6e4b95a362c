"""The libyaml fast path of ``safe_io.parse_yaml`` builds exactly what the bounded pure-Python
loader builds, for every YAML file the project ships; files it cannot vouch for (aliases) go
through the bounded loader, and deep nesting is refused by the scan with the same message."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from psymetrics_core.base.reading import InputError, _BoundedLoader, _plain_for_libyaml, parse_yaml

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(
    p
    for root in (REPO / "plugins", REPO / "psymetrics_core", REPO / "registry")
    for p in root.rglob("*.yaml")
    if ".venv" not in p.parts
)


def _bounded(text: str) -> object:
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_fast_path_equals_the_bounded_loader_on_every_shipped_file() -> None:
    assert len(SHIPPED) > 20
    for path in SHIPPED:
        text = path.read_text(encoding="utf-8")
        assert _plain_for_libyaml(text), path  # the fast path is the one exercised
        assert parse_yaml(text, path) == _bounded(text), path


def test_aliases_take_the_bounded_loader_and_its_caps() -> None:
    text = "a: &x [1, 2]\nb: *x\n"
    assert not _plain_for_libyaml(text)
    assert parse_yaml(text, "f.yaml") == {"a": [1, 2], "b": [1, 2]}
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(6)
    )
    with pytest.raises(InputError, match="alias bomb"):
        parse_yaml(bomb, "bomb.yaml")


def test_deep_nesting_is_refused_by_the_scan_with_the_line() -> None:
    text = "ok: 1\nbad: " + "[" * 100 + "]" * 100 + "\n"
    with pytest.raises(InputError, match=r"deep\.yaml, line 2: invalid YAML \(nested more than"):
        parse_yaml(text, "deep.yaml")
