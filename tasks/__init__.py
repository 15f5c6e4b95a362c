"""The committed lm-eval export, shipped as ``psymetrics_core.lm_eval_tasks`` (setup.py maps this folder there)."""
