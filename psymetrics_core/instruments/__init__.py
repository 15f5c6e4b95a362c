"""What a test is: the instrument spec, its loading and validation, scoring keys and norms.

``spec`` loads an ``instrument.yaml`` (and its item files) into ``base.types.Instrument``;
``schema`` is its pydantic model; ``scoring`` scores scales from answers; ``norms`` compares
with human norm groups; ``indicators`` and ``item_texts`` handle derived indicators and licensed
item texts; ``psychobench`` imports PsychoBench questionnaire files. Nothing here calls a model.

May import: base.
"""
