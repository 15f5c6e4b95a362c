"""Default ``render_prompt``: the instrument's Jinja template, one item per user message."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from ..hookspecs import hookimpl
from ..types import Instrument, Item, Prompt

__all__ = ["render_prompt", "render_text"]


@lru_cache(maxsize=64)
def _template(source: str) -> jinja2.Template:
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
    )
    return env.from_string(source)


def render_text(instrument: Instrument, item: Item) -> str:
    """The user-message text for ``item``: template filled with instruction, item and options."""
    rs = instrument.response_scale_for(item)
    return (
        _template(instrument.prompt_template)
        .render(
            instruction=rs.instruction or instrument.instruction,
            item=item.text,
            item_id=item.id,
            options=list(rs.options),
            eos=instrument.eos,
            scale_min=rs.min,
            scale_max=rs.max,
        )
        .strip()
    )


@hookimpl(trylast=True)
def render_prompt(instrument: Instrument, item: Item) -> Prompt:
    """Render ``item`` as chat messages (optional system prompt, then the user message)."""
    text = render_text(instrument, item)
    messages: list[dict[str, str]] = []
    if instrument.system_prompt:
        messages.append({"role": "system", "content": instrument.system_prompt})
    messages.append({"role": "user", "content": text})
    options = instrument.response_scale_for(item).options
    return Prompt(messages=tuple(messages), options=options, text=text)
