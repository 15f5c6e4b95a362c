"""``psym new-plugin``: write a complete, installable, tested data-only plugin skeleton."""

from __future__ import annotations

import re
from pathlib import Path

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.versions import __version__
from psymetrics_core.base.writing import write_output

__all__ = ["new_plugin", "placeholders", "plugin_names"]

PLACEHOLDER = "REPLACE"

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")

PYPROJECT = """[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "psymetrics plugin: {title}, task '{task}'"
readme = "README.md"
requires-python = ">=3.10"
# psymetrics-core is the psymetrics distribution on the package index (not "psymetrics")
dependencies = ["psymetrics-core>={core}"]

[project.optional-dependencies]
test = ["pytest"]

# the entry point is what makes psymetrics find the plugin
[project.entry-points.psymetrics]
"{task}" = "{pkg}"

[tool.setuptools.packages.find]
include = ["{pkg}", "{pkg}.*"]

[tool.setuptools.package-data]
{pkg} = ["instruments/*/*.yaml", "instruments/*/*.csv"]
"""

INIT = '''"""psymetrics plugin: {title}, task ``{task}``."""

from psymetrics_core import data_files, hookimpl

__version__ = "0.1.0"


@hookimpl
def register_instruments(register):
    """Register every instrument shipped in this package (instruments/*/instrument.yaml)."""
    for spec in data_files(__name__):
        register(spec)
'''

INSTRUMENT = """# Instrument spec. Every field is described in psymetrics' documentation, page
# docs/plugins/instrument.md ("Instrument spec reference"); `psym schema instrument` prints
# its JSON Schema and `psym validate instrument.yaml` checks this file.
schema_version: 1
id: {task}
name: {title}
version: "1.0.0"   # version of this encoding, not of the published instrument
citation: >-
  REPLACE: full reference of the instrument (authors, year, title, journal, pages).
license:
  status: REPLACE (e.g. "public domain", "free for non-commercial research use")
  redistributable: null   # true: texts ship in items.csv; false/null: consider item_texts: user
item_texts: shipped        # or "user": CSV without a text column, users pass --items {task}=FILE
item_source: >-
  REPLACE: where the item texts and the key were transcribed from (table, page, URL).
forms:
  original: items.csv
response_scales:
  default:
    min: 1
    max: 5
    labels: [Strongly disagree, Disagree, Neither agree nor disagree, Agree, Strongly agree]
scales:
  alpha:
    method: mean           # mean or sum of the scale's items after reverse keying
    description: Example scale (items 1, 2R)
    norms:                 # optional; any number of human norm groups, the first is the default
      - {{group: Example sample, mean: 3.0, sd: 1.0, n: 100, year: 2024,
         source: "REPLACE: the publication the norms come from"}}
  beta:
    method: mean
    description: Example scale (items 3, 4R)
prompt:
  instruction: >-
    Please indicate how much you agree with the statement below.
parser: first_valid_int
"""

ITEMS = """id,text,scale,reverse,flag
1,I enjoy meeting new people.,alpha,0,
2,I prefer to spend my evenings alone.,alpha,1,
3,I plan my tasks ahead.,beta,0,
4,I often leave things to the last minute.,beta,1,
5,I read the instructions of this questionnaire.,,0,filler
"""

TEST = '''"""Tests of the {task} plugin: conformance and the published key."""

from psymetrics_core import get_instrument
from psymetrics_core.testing import check_instrument, score_vector


def test_plugin_is_installed():
    """The entry point is there: the task is registered by this distribution."""
    inst = get_instrument("{task}")
    assert inst.plugin is not None and inst.plugin.distribution == "{dist}"


def test_instrument_conforms():
    """Schema, rendering, label parsing, keyed extremes, and the key as published."""
    check_instrument(
        "{task}", n_items=5, reverse={{"2", "4"}}, scale_sizes={{"alpha": 2, "beta": 2}}
    )


def test_scores_match_hand_computed_key():
    """Two respondents scored by hand from the key (1-5 scale, reverse = 6 - x)."""
    # alpha = mean(5, 6 - 1) = 5.0; beta = mean(2, 6 - 4) = 2.0; item 5 is a filler
    assert score_vector("{task}", {{1: 5, 2: 1, 3: 2, 4: 4, 5: 3}}) == {{"alpha": 5.0, "beta": 2.0}}
    # alpha = mean(3, 6 - 4) = 2.5; beta = mean(1, 6 - 5) = 1.0
    assert score_vector("{task}", {{1: 3, 2: 4, 3: 1, 4: 5, 5: 1}}) == {{"alpha": 2.5, "beta": 1.0}}
'''

README = """# {dist}

{title} for [psymetrics](https://pypi.org/project/psymetrics-core/) (the `psymetrics-core`
distribution on the package index), task `{task}`.

- **Citation:** REPLACE with the instrument's full reference.
- **Licence status:** REPLACE (may the item texts be redistributed? under which terms?).
- **Item source:** REPLACE (where the texts and the key were transcribed from).
- **Licence of this package's code:** REPLACE (e.g. MIT).

## Install and use

```
pip install {dist}        # or: pip install -e .  (from this folder)
psym list                 # shows {task}
psym show {task}
psym eval --tasks {task} --limit 5
```

## Test

```
pip install -e '.[test]'
pytest
```

## Publish

Fill in every `REPLACE` above and in `instrument.yaml` first: `psym validate` refuses them.

```
psym validate {pkg}/instruments/{task}     # the spec, its items and no REPLACE left
pip install build twine
python -m build                            # dist/*.whl and dist/*.tar.gz
unzip -l dist/*.whl | grep instruments/    # the YAML and CSV files are in the wheel
twine check dist/*
twine upload dist/*                        # or: --repository testpypi first
```

Users then run `pip install {dist}` (it pulls in `psymetrics-core`) and `psym list` shows
`{task}`. To have `psym plugins available` and `psym install {task}` know it, add it to the
catalogue `registry/plugins.yaml` of psymetrics in a pull request.
"""


def plugin_names(name: str) -> dict[str, str]:
    """Task id, distribution and package names for plugin ``name``."""
    if not _NAME.match(name):
        raise PsymError(
            f"plugin name {name!r}: use lower-case letters and digits, words joined by '-'"
        )
    return {
        "task": name,
        "dist": f"psymetrics-plugin-{name}",
        "pkg": f"psymetrics_plugin_{name.replace('-', '_')}",
        "title": f"{name} (REPLACE with the instrument's name)",
        "core": __version__,
    }


def new_plugin(name: str, directory: str | Path = ".") -> Path:
    """Write the plugin skeleton for ``name`` into ``directory``; return its folder."""
    names = plugin_names(name)
    root = Path(directory) / names["dist"]
    if root.exists():
        raise PsymError(f"{root}: already exists; choose another name or folder")
    pkg = root / names["pkg"]
    inst = pkg / "instruments" / name
    files = {
        root / "pyproject.toml": PYPROJECT,
        root / "README.md": README,
        pkg / "__init__.py": INIT,
        inst / "instrument.yaml": INSTRUMENT,
        inst / "items.csv": ITEMS,
        root / "tests" / f"test_{names['pkg'][len('psymetrics_plugin_') :]}.py": TEST,
    }
    for path, template in files.items():
        write_output(path, template.format(**names), what="plugin file", make_parents=True)
    return root


def _strings(value: object, where: str) -> list[tuple[str, str]]:
    """Every string inside ``value`` (nested mappings and lists) with its dotted location."""
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings(v, f"{where}[{i}]")]
    return []


def placeholders(spec: dict[str, object]) -> list[str]:
    """Fields of an instrument spec that still hold the kit's ``REPLACE`` marker.

    Checked: ``citation``, ``license`` (any field), ``item_source``, each norm group's
    ``source`` and ``human_loadings.source``, the fields a user needs to tell where the items
    and numbers come from and whether they may use them.
    """
    found: list[tuple[str, str]] = []
    for field in ("citation", "license", "item_source"):
        found += _strings(spec.get(field), field)
    loadings = spec.get("human_loadings")
    if isinstance(loadings, dict):
        found += _strings(loadings.get("source"), "human_loadings.source")
    scales = spec.get("scales")
    if isinstance(scales, dict):
        for name, scale in scales.items():
            norms = scale.get("norms") if isinstance(scale, dict) else None
            for i, norm in enumerate(norms if isinstance(norms, list) else []):
                if isinstance(norm, dict):
                    found += _strings(norm.get("source"), f"scales.{name}.norms[{i}].source")
    return [where for where, text in found if PLACEHOLDER in text]
