"""The two build steps setup.cfg cannot state: files whose home is the repository top ship inside
the package, without a link in the source tree.

- ``tasks/`` (the committed lm-eval export that ``make check-tasks`` compares) is the package
  ``psymetrics_core.lm_eval_tasks`` through ``package_dir``; its task folders are listed here
  because ``find_namespace:`` only looks under ``psymetrics_core/``. An editable install sees
  ``tasks/`` through the same mapping.
- ``registry/plugins.yaml`` (the plugin catalogue, edited by pull request) is copied into the
  built package as ``psymetrics_core/pluginsys/plugins.yaml``; an editable install has no copy
  and reads ``registry/plugins.yaml`` of its checkout (``pluginsys/catalogue.py``).
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
TASKS = "psymetrics_core.lm_eval_tasks"
CATALOGUE = Path("registry", "plugins.yaml")
PACKAGED_CATALOGUE = Path("psymetrics_core", "pluginsys", "plugins.yaml")


class BuildPy(build_py):
    """``build_py`` that also puts the catalogue into the built package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib, PACKAGED_CATALOGUE)
        self.mkpath(str(target.parent))
        self.copy_file(str(HERE / CATALOGUE), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [
            *super().get_outputs(include_bytecode),
            str(Path(self.build_lib, PACKAGED_CATALOGUE)),
        ]


core = find_namespace_packages(
    include=["psymetrics_core", "psymetrics_core.*"], exclude=["*.__pycache__"]
)
tasks = [f"{TASKS}.{p}" for p in find_namespace_packages(where="tasks", exclude=["*__pycache__*"])]

setup(
    packages=[*core, TASKS, *tasks],
    package_dir={TASKS: "tasks"},
    cmdclass={"build_py": BuildPy},
)
