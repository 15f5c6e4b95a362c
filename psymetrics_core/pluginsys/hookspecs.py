"""The whole plugin API: pluggy hook specifications of the ``psymetrics`` project.

Registration hooks are *collect* hooks: every plugin's implementation is called with a
``register`` callback. Pipeline hooks are *firstresult*: the first non-``None`` result wins,
and the core's defaults are registered with ``trylast=True`` so any third-party plugin runs
before them. Returning ``None`` from a pipeline hook means "not mine, ask the next plugin".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from psymetrics_core.base.types import Answer, Completion, Instrument, Item, Prompt, ScaleScore
    from psymetrics_core.contracts.conditions import Cell
    from psymetrics_core.contracts.kinds import Parser

__all__ = ["hookspec", "hookimpl", "PROJECT"]

PROJECT = "psymetrics"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- registration: collect hooks, called once per process -------------------------------


@hookspec
def register_instruments(register: Callable[..., None]) -> None:
    """Register instruments (tasks).

    :param register: call ``register(path)`` with the path of an ``instrument.yaml`` (or a
        directory holding one), ``register(instrument)`` with a ready ``Instrument``, or
        ``register(LazyInstrument(task_id, build))`` for a task built in code only when a
        command needs it. ``psymetrics_core.data_files(__name__)`` lists every spec shipped in
        a package.
    """


@hookspec
def register_backends(register: Callable[..., None]) -> None:
    """Register model backends.

    :param register: call ``register(name, factory, description="")``; ``factory(model_args)``
        receives the parsed ``--model-args`` dict and returns a backend: a subclass of
        ``psymetrics_core.backends.base.Backend`` overriding ``generate(prompts, settings,
        progress)``, ``option_logprobs`` where supported and ``identity()``, and declaring its
        capabilities (``chunk_size``, ``supports_concurrency``, ``supports_images`` ...) as
        attributes.
    """


@hookspec
def register_parsers(register: Callable[..., None]) -> None:
    """Register named response parsers that instrument specs can select with ``parser:``.

    :param register: call ``register(name, function)`` where
        ``function(text, options) -> (value | None, status)`` and ``status`` is one of
        ``"ok"``, ``"unparsed"`` or ``"refused"``.
    """


@hookspec
def register_conditions(register: Callable[..., None]) -> None:
    """Register administration conditions (``psym eval --condition NAME[=ARG]``).

    :param register: call ``register(name, factory, description="", facet="",
        takes_argument=False)``. ``factory(arg)`` receives the text after ``=`` (or ``None``)
        and returns a ``psymetrics_core.Condition``: a named set of optional transforms (form,
        item list, instrument text, option order, rendered text, chat messages, and the name
        of the administration mode, e.g. ``administration="battery"``). ``facet`` names what it
        varies (e.g. ``"option_order"``, ``"persona"``); conditions of different facets are
        crossed in a grid, conditions of one facet are alternative levels.
    """


@hookspec
def register_task_kinds(register: Callable[..., None]) -> None:
    """Register task kinds: how a kind of task is run, one administration cell at a time.

    :param register: call ``register(name, kind)`` with a ``psymetrics_core.TaskKind``.
        The core registers ``questionnaire``, ``free_text``, ``judged`` and ``probe``; a task
        whose ``instrument.kind`` names a kind is run by it (the runner dispatches once).
    """


@hookspec
def register_administrations(register: Callable[..., None]) -> None:
    """Register administration modes: how a questionnaire cell's items are put to the model.

    :param register: call ``register(name, mode, description="")`` with an instance of a
        ``psymetrics_core.Administration`` subclass (``requests(run, items)``,
        ``administer(run, items)``). The core registers ``item-by-item`` (the default),
        ``battery`` and ``verbalized``; a condition selects a mode by name (``Condition(name,
        administration=NAME)``, facet ``"administration"``).
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``psym`` command-line interface.

    :param cli: the top-level click group; call ``cli.add_command(...)``.
    """


@hookspec
def register_analyses(register: Callable[..., None]) -> None:
    """Register the analyses of ``psym analyze`` (the core registers its own the same way:
    ``psymetrics_core.analysis.builtin``).

    :param register: call ``register(name, analyse, description="")`` with a function, or a
        ``"module:function"`` reference imported only when ``psym analyze`` runs it.
        ``analyse(request)`` gets a ``psymetrics_core.api.AnalysisRequest`` (``run_dirs``,
        ``session``, ``labels``: the ``--labels`` file or ``None``, ``reference``: the
        ``--reference`` condition the user gave or ``None``, and the core's options) and
        returns a ``psymetrics_core.api.AnalysisSection`` when the runs hold its tasks, else
        ``None``. Raise ``PsymError`` for bad input (one line naming file and field). A name
        the core or another plugin registered already is reported on one line naming both and
        the core's (else the first) is kept.
    """


# --- pipeline: firstresult; core defaults run last; return None = "not mine" ----------------


@hookspec(firstresult=True)
def load_items(instrument: Instrument, form: str) -> list[Item] | None:
    """Return the items of ``instrument`` to administer in ``form`` (e.g. ``"original"``).

    firstresult: the core default returns ``instrument.forms[form]``.
    """


@hookspec(firstresult=True)
def render_prompt(
    instrument: Instrument, item: Item, condition: Cell | None = None
) -> Prompt | None:
    """Render one item as a chat prompt with its answer options in presented order.

    ``condition`` is the administration cell (``psymetrics_core.Cell``, bound to a seed via
    ``condition.seed``) or ``None``; implementations may ignore it, but then the
    conditions' option order, wording and system-prompt changes are not applied.

    firstresult: the core default renders the instrument's Jinja template and applies the
    condition.
    """


@hookspec(firstresult=True)
def parse_response(
    instrument: Instrument,
    item: Item,
    prompt: Prompt,
    completion: Completion,
    parsers: Mapping[str, Parser],
) -> Answer | None:
    """Turn a model completion into an ``Answer``.

    ``parsers`` are the session's registered response parsers by name (``instrument.parser``
    names the one the spec asks for); implementations that need none may leave it out.

    An unparseable completion is ``Answer(value=None, status="unparsed")`` (or ``"refused"``),
    never ``None``: ``None`` means "not mine" and falls through to the next plugin.

    firstresult: the core default uses option log-probabilities when present (argmax), else
    the instrument's named parser on the completion text.
    """


@hookspec(firstresult=True)
def score(
    instrument: Instrument,
    responses: Mapping[str, int | None],
    form: str,
    answers: Mapping[str, Answer],
) -> dict[str, ScaleScore] | None:
    """Score one respondent: ``responses`` maps item id to raw answer value (None = missing).

    ``answers`` holds the full ``Answer`` per item id (status, probabilities, free-form data)
    for scorers that need more than the value.

    firstresult: the core default reverse-keys (``min + max - x``) and takes the mean or sum of
    the answered items of each scale.
    """


@hookspec(firstresult=True)
def aggregate(
    instrument: Instrument,
    scores: Mapping[str, ScaleScore],
    answers: Sequence[tuple[Item, Answer]],
    norm_group: str | None,
) -> dict[str, object] | None:
    """Build the task's entry in ``results.json`` from its scale scores and answers.

    ``norm_group`` names the human norm group to compare with (``psym eval --norm-group``;
    ``None`` when the instrument has no norms); ``instruments.norms.norm_comparison``
    computes the z-scores.

    firstresult: the core default reports each scale's score and counts, its z-score against
    ``norm_group`` where the scale has norms, and the number of items answered, unparsed and
    refused (with the parse rate).
    """
