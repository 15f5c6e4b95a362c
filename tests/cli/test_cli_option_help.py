"""Every option of every ``psym`` command has help text (issue 31: ``--seed`` and ``--json``
had none, so ``psym eval --help`` listed them bare)."""

from __future__ import annotations

from collections.abc import Iterator

import click

from psymetrics_core.cli import cli


def _options(cmd: click.Command, path: str, ctx: click.Context) -> Iterator[tuple[str, str]]:
    """(command path, option) of every visible option of ``cmd`` and its subcommands."""
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _options(sub, f"{path} {name}", click.Context(sub, parent=ctx))
    for param in cmd.params:
        if isinstance(param, click.Option) and not param.hidden:
            yield path, "/".join(param.opts) if not (param.help or "").strip() else ""


def test_every_option_of_every_command_has_help() -> None:
    seen = list(_options(cli, "psym", click.Context(cli)))
    commands = {path for path, _ in seen}
    # the walk reaches the lazily imported commands and the groups' subcommands
    assert {"psym eval", "psym list", "psym plugins available", "psym population build"} <= commands
    assert len(seen) > 150
    bare = [f"{path} {opt}" for path, opt in seen if opt]
    assert bare == [], "options without help text: " + ", ".join(bare)
