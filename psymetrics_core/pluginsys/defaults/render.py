"""Default ``render_prompt``: the instrument's Jinja template, one item per user message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from psymetrics_core.base.types import Instrument, Item, Option, Prompt
from psymetrics_core.instruments.template import compiled_template
from psymetrics_core.pluginsys.hookspecs import hookimpl

if TYPE_CHECKING:
    pass

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
def render_prompt(instrument: Instrument, item: Item, condition: Any = None) -> Prompt:
    """Render ``item`` as chat messages (optional system prompt, then the user message).

    ``condition`` (a ``conditions.Cell``) may change the instrument's text, the option order,
    the rendered statement and the chat messages.
    """
    if condition is not None:
        instrument = condition.apply_instrument(instrument)
    options = instrument.response_scale_for(item).options
    if condition is not None:
        options = condition.apply_options(instrument, item, options, condition.seed)
    text = render_text(instrument, item, options)
    if condition is not None:
        text = condition.apply_text(instrument, item, text)
    messages: list[dict[str, str]] = []
    if instrument.system_prompt:
        messages.append({"role": "system", "content": instrument.system_prompt})
    messages.append({"role": "user", "content": text})
    if condition is not None:
        messages = condition.apply_messages(messages)
    return Prompt(messages=tuple(messages), options=tuple(options), text=text)
