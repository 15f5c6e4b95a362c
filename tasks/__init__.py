"""The committed lm-eval export, shipped as ``psymetrics_core.lm_eval_tasks`` (see setup.py)."""
