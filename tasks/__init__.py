"""The committed lm-eval export, shipped as ``psymetrics_core.lm_eval_tasks`` (psymetrics_core/lm_eval_tasks links here; setup.cfg)."""
