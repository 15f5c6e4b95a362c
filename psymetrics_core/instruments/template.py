"""An instrument's prompt template (Jinja), compiled as prompts are rendered: once per process."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import jinja2

if TYPE_CHECKING:
    import jinja2

__all__ = ["compiled_template"]


@lru_cache(maxsize=64)
def compiled_template(source: str) -> jinja2.Template:
    """``source`` compiled as prompts are rendered (strict undefined variables), once per
    process; a syntax error raises ``jinja2.TemplateSyntaxError``."""

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
    )
    return env.from_string(source)
