"""The bounded YAML loader behind ``safe_io.parse_yaml`` and ``safe_io.load_yaml``.

The safe loader only, with at most ``MAX_YAML_ALIASES`` alias references, nesting
``MAX_DEPTH`` deep and ``MAX_EXPANDED`` values with aliases expanded: a "billion laughs" alias
bomb is refused, not expanded. Its own module so that readers of CSV, JSON and text files do
not import PyYAML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from psymetrics_core.base.input_errors import MAX_DEPTH, MAX_EXPANDED, MAX_YAML_ALIASES, InputError, Refused, where

__all__ = ["parse_bounded"]


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader with caps on alias references, expanded size and nesting depth.

    The expanded size counts every node as often as aliases repeat it (what a consumer walking
    the data would visit), so a small "billion laughs" file is refused before it is built.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0
        self._sizes: dict[int, int] = {}
        self._total = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise Refused(
                    f"more than {MAX_YAML_ALIASES} alias references (*name)",
                    self.peek_event().start_mark.line + 1,
                )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise Refused(
                f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark.line + 1
            )
        try:
            node: yaml.Node = super().compose_node(parent, index)  # type: ignore[assignment]
        finally:
            self._depth -= 1
        size = self._sizes.get(id(node))
        if size is None:
            size = 1 + sum(self._sizes.get(id(c), 1) for c in _children(node))
            self._sizes[id(node)] = size
        else:  # an alias: the whole anchored subtree again
            self._total += size
        if size > MAX_EXPANDED or self._total > MAX_EXPANDED:
            raise Refused(
                f"aliases expand it to more than {MAX_EXPANDED:,} values; refusing a possible "
                "alias bomb",
                node.start_mark.line + 1,
            )
        return node


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _plain_for_libyaml(text: str) -> bool:
    """Whether ``text`` parses without aliases and within ``MAX_DEPTH`` (libyaml's event scan),
    so libyaml's safe loader builds exactly what the bounded loader would, an order of
    magnitude faster. Anything else (aliases, deep nesting, a syntax error) goes through the
    bounded pure-Python loader, which enforces the caps and words the error; nesting deeper
    than ``MAX_DEPTH`` is refused here at once."""
    if not getattr(yaml, "__with_libyaml__", False):
        return False
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.AliasEvent):
                return False
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    line = mark.line + 1 if mark is not None else 1
                    raise Refused(f"nested more than {MAX_DEPTH} levels deep", line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False
    return True


def parse_bounded(text: str, path: str | Path) -> Any:
    """Parse YAML ``text`` (from ``path``) with the bounded safe loader."""
    try:
        plain = _plain_for_libyaml(text)
    except Refused as exc:
        raise InputError(f"{where(path, exc.line)}: invalid YAML ({exc})") from None
    if plain:
        try:
            return yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506 (the safe loader)
        except (yaml.YAMLError, ValueError, OverflowError, TypeError, RecursionError):
            pass  # the bounded loader below words the error
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)
        return loader.get_single_data()
    except Refused as exc:
        raise InputError(f"{where(path, exc.line)}: invalid YAML ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{where(path, line)}: invalid YAML ({problem})") from None
    except RecursionError:
        raise InputError(f"{path}: invalid YAML (nested too deeply)") from None
    except (ValueError, OverflowError, TypeError) as exc:  # e.g. a timestamp out of range
        raise InputError(f"{path}: invalid YAML value ({exc})".splitlines()[0]) from None
    finally:
        if loader is not None:
            loader.dispose()
