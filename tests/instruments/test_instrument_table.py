"""The instrument table: every registered spec file is parsed and validated once, at
registration (a failing one is one line and left out); a ``LazyInstrument`` is built only when
its task is first asked for."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from psymetrics_core import hookimpl
from psymetrics_core.base.errors import SpecError, UnknownTaskError
from psymetrics_core.instruments import spec
from psymetrics_core.pluginsys.loader import make_plugin_manager
from psymetrics_core.pluginsys.session import Session

REPO = Path(__file__).resolve().parents[2]
BFI = REPO / "plugins" / "psymetrics-plugin-bfi" / "psymetrics_plugin_bfi" / "instruments" / "bfi"


def _spec_dir(root: Path, task: str) -> Path:
    """A copy of the BFI spec under task id ``task``."""
    folder = root / task
    shutil.copytree(BFI, folder)
    path = folder / "instrument.yaml"
    path.write_text(path.read_text().replace("id: bfi", f"id: {task}", 1))
    return folder


class _TwoSpecs:
    def __init__(self, *folders: Path) -> None:
        self.folders = folders

    @hookimpl
    def register_instruments(self, register: Any) -> None:
        for folder in self.folders:
            register(folder / "instrument.yaml")


def _session(*folders: Path, name: str = "two-specs") -> Session:
    pm, records = make_plugin_manager(autoload=False)
    pm.register(_TwoSpecs(*folders), name=name)
    return Session(pm, records)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The task folders ``load_instrument`` parses, in order (a spy on the real function)."""
    monkeypatch.setenv("PSYM_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[str] = []
    real = spec.load_instrument

    def spy(path: Any) -> Any:
        calls.append(Path(path).parent.name)
        return real(path)

    monkeypatch.setattr(spec, "load_instrument", spy)
    return calls


def test_every_spec_is_parsed_once_at_registration(parsed: list[str], tmp_path: Path) -> None:
    a, b = _spec_dir(tmp_path, "alpha"), _spec_dir(tmp_path, "beta")
    session = _session(a, b)
    assert session.get_instrument("beta").id == "beta"
    assert parsed == ["alpha", "beta"]
    inst = session.get_instrument("alpha")
    assert inst.plugin is not None and inst.plugin.name == "two-specs"
    assert sorted(session.instruments()) == ["alpha", "beta"]
    assert parsed == ["alpha", "beta"]  # parsed once
    parsed.clear()
    _session(a, b).get_instrument("alpha")
    assert parsed == ["alpha", "beta"]  # nothing is kept between sessions


def test_an_edited_spec_is_found_under_its_new_id(parsed: list[str], tmp_path: Path) -> None:
    a, b = _spec_dir(tmp_path, "alpha"), _spec_dir(tmp_path, "beta")
    _session(a, b).instruments()
    path = a / "instrument.yaml"
    path.write_text(path.read_text().replace("id: alpha", "id: gamma", 1))
    session = _session(a, b)
    with pytest.raises(UnknownTaskError, match=r"unknown task 'alpha' \(installed: beta, gamma\)"):
        session.get_instrument("alpha")
    assert session.get_instrument("gamma").id == "gamma"


def test_a_spec_that_no_longer_validates_is_one_line(parsed: list[str], tmp_path: Path) -> None:
    a, b = _spec_dir(tmp_path, "alpha"), _spec_dir(tmp_path, "beta")
    _session(a, b).instruments()
    (a / "items.csv").write_text("not,an,items,file\n")  # instrument.yaml untouched
    session = _session(a, b)
    with pytest.raises(UnknownTaskError, match=r"unknown task 'alpha'.*\(installed: beta\)"):
        session.get_instrument("alpha")
    assert "alpha" not in session.instruments()  # left out, and reported once
    (failure,) = session.registration_failures()
    assert failure.startswith("plugin 'two-specs': ") and "items.csv" in failure
    assert "\n" not in failure


def test_a_spec_clashes_with_another_plugins_task(parsed: list[str], tmp_path: Path) -> None:
    a = _spec_dir(tmp_path, "alpha")
    pm, records = make_plugin_manager(autoload=False)
    pm.register(_TwoSpecs(a), name="first")
    pm.register(_TwoSpecs(a), name="second")
    session = Session(pm, records)
    assert session.get_instrument("alpha").id == "alpha"
    (message,) = session.registration_failures()
    assert "task id 'alpha' is registered by both plugin" in message


class _Builders:
    """A plugin registering tasks built in code, lazily."""

    def __init__(self, folder: Path, built: list[str]) -> None:
        self.folder, self.built = folder, built

    def _make(self, task: str, as_id: str | None = None, fail: bool = False) -> Any:
        self.built.append(task)
        if fail:
            raise ValueError("lexicon missing\nsecond line")
        inst = spec.load_instrument(self.folder / "instrument.yaml")
        from dataclasses import replace

        return replace(inst, id=as_id or task)

    @hookimpl
    def register_instruments(self, register: Any) -> None:
        from functools import partial

        from psymetrics_core import LazyInstrument

        register(LazyInstrument("lazy-ok", partial(self._make, "lazy-ok")))
        register(LazyInstrument("lazy-fails", partial(self._make, "lazy-fails", fail=True)))
        register(LazyInstrument("lazy-wrong", partial(self._make, "lazy-wrong", as_id="other")))
        register(LazyInstrument("", partial(self._make, "nameless")))
        register(LazyInstrument("not-callable", "make_it"))


def test_lazy_instruments_are_built_once_when_needed(parsed: list[str], tmp_path: Path) -> None:
    built: list[str] = []
    pm, records = make_plugin_manager(autoload=False)
    pm.register(_Builders(_spec_dir(tmp_path, "alpha"), built), name="builders")
    session = Session(pm, records)
    assert set(session.task_ids()) == {"lazy-ok", "lazy-fails", "lazy-wrong"}
    assert built == []  # registering built nothing
    assert session.get_instrument("lazy-ok").id == "lazy-ok"
    assert session.get_instrument("lazy-ok").plugin.name == "builders"  # type: ignore[union-attr]
    assert built == ["lazy-ok"]  # once
    with pytest.raises(SpecError) as info:
        session.get_instrument("lazy-fails")
    assert str(info.value) == (
        "<plugin builders>: building task 'lazy-fails' failed (ValueError: lexicon missing)"
    )
    with pytest.raises(SpecError, match="task 'lazy-wrong' was registered, but its instrument"):
        session.get_instrument("lazy-wrong")
    assert sorted(session.instruments()) == ["lazy-ok"]
    failures = session.registration_failures()
    assert len(failures) == 4 and all(f.startswith("plugin 'builders': ") for f in failures)
    assert sum("needs a task id and a callable" in f for f in failures) == 2
