"""Default ``render_prompt``: the instrument's Jinja template, one item per user message."""

from __future__ import annotations

from collections.abc import Sequence

from psymetrics_core.base.types import Instrument, Item, Option, Prompt
from psymetrics_core.contracts.conditions import Cell, Condition
from psymetrics_core.instruments.template import compiled_template
from psymetrics_core.pluginsys.hookspecs import hookimpl

__all__ = ["compiled_template", "render_prompt", "render_text"]


def render_text(instrument: Instrument, item: Item, options: Sequence[Option] | None = None) -> str:
    """The user-message text for ``item``: template filled with instruction, item and options.

    ``options`` is the presented order (default: the response scale's order).
    """
    rs = instrument.response_scale_for(item)
    return (
        compiled_template(instrument.prompt_template)
        .render(
            instruction=rs.instruction or instrument.instruction,
            item=item.text,
            item_id=item.id,
            options=list(rs.options if options is None else options),
            eos=instrument.eos,
            scale_min=rs.min,
            scale_max=rs.max,
        )
        .strip()
    )


@hookimpl(trylast=True)
def render_prompt(instrument: Instrument, item: Item, condition: Cell | None = None) -> Prompt:
    """Render ``item`` as chat messages (optional system prompt, then the user message).

    ``condition`` (the administration ``Cell``; None = the unchanged instrument) may change the
    instrument's text, the option order, the rendered statement and the chat messages.
    """
    cell = condition if condition is not None else IDENTITY
    instrument = cell.apply_instrument(instrument)
    shown = instrument.response_scale_for(item).options
    options = cell.apply_options(instrument, item, shown, cell.seed)
    text = cell.apply_text(instrument, item, render_text(instrument, item, options))
    messages: list[dict[str, str]] = []
    if instrument.system_prompt:
        messages.append({"role": "system", "content": instrument.system_prompt})
    messages.append({"role": "user", "content": text})
    messages = cell.apply_messages(messages)
    return Prompt(messages=tuple(messages), options=tuple(options), text=text)


IDENTITY = Cell((Condition("original"),))  # what an absent condition renders as
