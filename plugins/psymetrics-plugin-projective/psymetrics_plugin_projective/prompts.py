"""The verbatim prompt texts (``data/prompts/*.txt``) and placeholder filling.

Prompts hold literal JSON braces, so placeholders are filled by plain replacement of
``{name}``, never ``str.format``.
"""

from __future__ import annotations

from functools import cache

__all__ = ["prompt", "fill"]


@cache
def prompt(name: str) -> str:
    """The text of ``data/prompts/<name>.txt`` without its final newline."""
    from importlib import resources

    path = resources.files(__package__) / "data" / "prompts" / f"{name}.txt"
    return path.read_text(encoding="utf-8").rstrip("\n")


def fill(template: str, **values: str) -> str:
    """``template`` with each ``{key}`` replaced by its value (other braces untouched)."""
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    return out
