"""``psym --help`` groups its commands, and every command's help ends with an example that parses
(issue 26, item 4)."""

from __future__ import annotations

import shlex

import click
import pytest
from click.testing import CliRunner

from psymetrics_core.cli import cli
from psymetrics_core.cli.help import EXAMPLES, GROUPS


def _leaves() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli, info_name="psym")
    out = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        assert cmd is not None, name
        out.append((name, cmd))
        if isinstance(cmd, click.Group):
            sub_ctx = click.Context(cmd, info_name=name, parent=ctx)
            for sub in cmd.list_commands(sub_ctx):
                out.append((f"{name} {sub}", cmd.get_command(sub_ctx, sub)))
    return out


def test_top_level_help_is_grouped_with_examples() -> None:
    out = CliRunner().invoke(cli, ["--help"]).output
    for heading, _, example in GROUPS:
        assert f"{heading} (e.g. {example})" in out
    assert "Commands:" not in out  # no flat list left
    assert "..." not in out.split("Options:", 1)[1]  # first sentences in full, not cut off


@pytest.mark.parametrize(("path", "cmd"), _leaves(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_command_help_ends_with_an_example(path: str, cmd: click.Command) -> None:
    if path == "lm-eval":  # its arguments, --help included, go to lm_eval unchanged
        assert "Example:" in cmd.get_help(click.Context(cmd, info_name=path))
        return
    out = CliRunner().invoke(cli, [*path.split(), "--help"]).output
    tail = out.rstrip().splitlines()
    idx = max(i for i, line in enumerate(tail) if line.strip() in ("Example:", "Examples:"))
    examples = [line.strip() for line in tail[idx + 1 :] if line.strip()]
    assert examples, path
    for line in examples:
        assert line.startswith("psym ") or "psym" in line, line


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_examples_parse(path: str, tmp_path, monkeypatch) -> None:
    """Each example line of the table parses against the command's real options (in a folder
    where the files and folders it names exist)."""
    monkeypatch.chdir(tmp_path)
    for token in shlex.split(EXAMPLES[path].replace("&&", " ")):
        if token.startswith("-") or "/" in token or "=" in token:
            continue
        if token.endswith((".jsonl", ".gz", ".json", ".csv", ".yaml", ".parquet", ".html")):
            (tmp_path / token).touch()
        else:
            (tmp_path / token).mkdir(exist_ok=True)
    for line in EXAMPLES[path].splitlines():
        for part in line.split("&&"):
            argv = shlex.split(part)
            if argv[0] != "psym":
                continue
            cmd: click.Command = cli
            ctx = click.Context(cli, info_name="psym")
            args = argv[1:]
            while isinstance(cmd, click.Group) and args and not args[0].startswith("-"):
                sub = cmd.get_command(ctx, args[0])
                assert sub is not None, f"{line}: no command {args[0]}"
                ctx = click.Context(sub, info_name=args[0], parent=ctx)
                cmd, args = sub, args[1:]
            cmd.make_context(cmd.name or "psym", list(args), parent=ctx.parent)
