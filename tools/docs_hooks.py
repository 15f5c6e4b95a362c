"""MkDocs hooks of the psymetrics site (``mkdocs.yml`` ``hooks:``): the reference pages that are
generated, so that they cannot drift from the code.

- ``reference/cli.md``: every ``psym`` command's ``--help``, taken from the click commands
  (plugin commands included); the build fails when a command has no section.
- ``reference/catalogue.md``: every installed instrument (items, scales, response format,
  citation, licence, item source, scoring rule, human norms), from the plugins' own specs.
- ``reference/schemas.md``: the JSON Schemas that ``psym schema`` prints.

A fenced command on a hand-written page that names a ``psym`` subcommand which does not exist
fails the build too (``on_page_markdown``), and so does an output block on a paper page
(``papers/*.md``) that ``tools/paper_outputs.py`` does not generate from a real run, or a
malformed ``paper-run``/``paper-output`` marker.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import click
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

GENERATED = ("reference/cli.md", "reference/catalogue.md", "reference/schemas.md")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_PSYM = re.compile(r"(?:^|[;&|(]|\$)[ \t]*(?:\S*/)?psym[ \t]+([a-z][a-z-]*)", re.M)


def on_files(files: Files, config: Any) -> Files:
    """Add the generated pages to the site."""
    pages = {
        "reference/cli.md": cli_reference(),
        "reference/catalogue.md": catalogue(),
        "reference/schemas.md": schemas(),
    }
    for uri, text in pages.items():
        old = files.get_file_from_path(uri)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, uri, content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fail the build when a fenced command names a ``psym`` subcommand that does not exist."""
    known = set(_commands())
    for block in _FENCE.findall(markdown):
        for name in _PSYM.findall(block):
            if name not in known:
                raise PluginError(
                    f"{page.file.src_uri}: `psym {name}` is not a psym command "
                    f"(known: {', '.join(sorted(known))})"
                )
    if page.file.src_uri.startswith("papers/"):
        _check_paper_outputs(page.file.src_uri, markdown)
    return markdown


def _paper_outputs() -> ModuleType:
    """``tools/paper_outputs.py`` (beside this file; ``tools`` is not a package)."""
    name = "psym_paper_outputs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("paper_outputs.py")
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


def _check_paper_outputs(uri: str, markdown: str) -> None:
    """A paper page's output blocks come from ``tools/paper_outputs.py``, never by hand."""
    tool = _paper_outputs()
    try:
        runs = tool.parse(markdown)
    except ValueError as exc:
        raise PluginError(f"{uri}: {exc}") from None
    if any(out.start == out.end for run in runs for out in run.outputs):
        raise PluginError(
            f"{uri}: an output block is empty: run `python tools/paper_outputs.py --write`"
        )
    for first in tool.unmarked_outputs(markdown):
        raise PluginError(
            f"{uri}: an output block ({first[:40]!r}) is not generated: mark its command block "
            "<!-- paper-run --> and the output block <!-- paper-output -->, then run "
            "`python tools/paper_outputs.py --write`"
        )


def _root() -> tuple[click.Group, click.Context]:
    from psymetrics_core.cli import cli

    ctx = click.Context(cli, info_name="psym")
    return cli, ctx


def _commands() -> list[str]:
    cli, ctx = _root()
    return list(cli.list_commands(ctx))


def _help_sections(cmd: click.Command, path: list[str], parent: click.Context) -> list[str]:
    """Markdown sections of ``cmd`` and, for a group, of each of its subcommands."""
    ctx = click.Context(cmd, info_name=path[-1], parent=parent)
    title = " ".join(["psym", *path])
    level = "#" * min(2 + len(path) - 1, 4)
    out = [f"{level} `{title}`\n", "```text", cmd.get_help(ctx), "```\n"]
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out += _help_sections(sub, [*path, name], ctx)
    return out


def cli_reference() -> str:
    """The CLI reference page, one section per command, in the order of ``psym --help``."""
    cli, ctx = _root()
    out = [
        "# CLI reference\n",
        "Generated from the click commands at build time (`psym COMMAND --help` prints the same);",
        "commands that installed plugins add are included.\n",
        "```text",
        cli.get_help(ctx),
        "```\n",
    ]
    missing = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        if cmd is None:
            missing.append(name)
            continue
        out += _help_sections(cmd, [name], ctx)
    if missing:
        raise PluginError(f"reference/cli.md: commands without help: {', '.join(missing)}")
    return "\n".join(out)


def catalogue() -> str:
    """The instrument catalogue page, from the installed plugins."""
    from psymetrics_core import list_instruments
    from psymetrics_core.pluginsys.session import Session

    out = [
        "# Instrument catalogue\n",
        "Every instrument the installed plugins provide, generated from their specs at build time",
        "(`psym list` and `psym show TASK` print the same). Citations, licences and norms are",
        "the plugins' own records.\n",
    ]
    for task, inst in sorted(list_instruments(session=Session()).items()):
        out += _instrument_section(task, inst)
    return "\n".join(out)


def _instrument_section(task: str, inst: Any) -> list[str]:
    plugin = inst.plugin.name if inst.plugin is not None else "?"
    n_items = len(inst.forms.get("original", []))
    forms = ", ".join(sorted(inst.forms))
    out = [
        f"## {inst.name} (`{task}`)\n",
        f"- **Citation:** {inst.citation}",
        f"- **Licence:** {inst.license_status}",
        f"- **Item source:** {inst.item_source}",
        f"- **Scoring rule:** {inst.scoring_rule}",
        f"- **Kind:** {inst.kind}; **items:** {n_items}; **forms:** {forms}; "
        f"**plugin:** `{plugin}`",
    ]
    fmts = [f"{rs.name} {rs.min}–{rs.max}" for rs in inst.response_scales.values()]
    if fmts:
        out.append(f"- **Response format:** {', '.join(fmts)}")
    if inst.scales:
        out += ["", "| scale | method | items | human norms (group: mean, SD, n) |"]
        out.append("|---|---|---|---|")
        for name, sdef in inst.scales.items():
            try:
                k = len(inst.scale_items(name))
            except Exception:  # noqa: BLE001 -- a scale without items of its own
                k = 0
            norms = "; ".join(
                f"{g.group}: {g.mean:g}, {g.sd:g}, {g.n if g.n is not None else '?'}"
                for g in sdef.norms
            )
            out.append(f"| {name} | {sdef.method} | {k} | {norms or 'no human norms'} |")
    out.append("")
    return out


def schemas() -> str:
    """The run-record and instrument JSON Schemas (what ``psym schema RECORD`` prints)."""
    from psymetrics_core.instruments.schema import InstrumentSpec
    from psymetrics_core.records import json_schema

    out = ["# Record schemas\n", "What `psym schema RECORD` prints, generated at build time.\n"]
    for record in ("results", "samples", "judge"):
        out += [f"## `{record}`\n", "```json", json.dumps(json_schema(record), indent=2), "```\n"]
    out += ["## `instrument`\n", "```json"]
    out += [json.dumps(InstrumentSpec.model_json_schema(), indent=2), "```\n"]
    return "\n".join(out)
