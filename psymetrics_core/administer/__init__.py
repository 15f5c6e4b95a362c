"""One run: give the tasks to a model under each condition, parse, score and write the records.

``runner`` (``evaluate``: tasks x conditions x backend -> a run directory), ``scheduler`` (the
cells' prompts, batched through the backend and the response cache), ``kinds/`` (task kinds:
questionnaire, free text, judged, probe; the base classes plugins subclass), ``conditions/``
(administration conditions: prompt transforms and designs), ``judge`` (judge stages), ``options``
(``--task-arg``), ``preflight`` (checks before a model is called), ``answers`` (scoring answers
that already exist) and ``generations``.

May import: base, instruments, records, backends, contracts, pluginsys.
"""
