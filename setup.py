"""Packaging shim: setup.cfg holds the metadata; this adds the lm-eval task export.

The committed ``tasks/`` folder (written by ``psym export lm-eval``) ships as the package
``psymetrics_core.lm_eval_tasks``, which the ``lm_eval.tasks`` entry point in setup.cfg names.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["psymetrics_core", "psymetrics_core.*"])
    + ["psymetrics_core.lm_eval_tasks"],
    package_dir={"psymetrics_core.lm_eval_tasks": "tasks"},
    package_data={"psymetrics_core.lm_eval_tasks": ["*.yaml", "*/*.yaml", "*/*.py"]},
)
