"""The ``psym`` command line: a thin click layer over the library API.

Subcommands are imported lazily, and installed plugins load only when a command needs them,
so ``psym --version`` and ``psym plugins`` work even when a plugin is broken. A command only
parses its options, calls a library function and prints.

One invocation has one ``Session``: the root click context's ``obj``, built on first use by
:func:`session_of` (``main(argv, session=...)`` passes a ready one, e.g. in tests). Commands
take ``ctx`` and hand ``session_of(ctx)`` to the library functions they call.

May import: base, instruments, records, backends, contracts, pluginsys, administer, study,
analysis, export, report.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from psymetrics_core.base.errors import PsymError
from psymetrics_core.cli.help import add_example, format_grouped
from psymetrics_core.pluginsys.failures import plugin_error
from psymetrics_core.pluginsys.session import Session

if TYPE_CHECKING:
    from psymetrics_core.pluginsys.session import Session

__all__ = ["main", "console_main", "cli", "session_of"]

CORE_COMMANDS = {
    "eval": "psymetrics_core.cli.eval_cmd:eval_cmd",
    "analyze": "psymetrics_core.cli.analyze_cmd:analyze_cmd",
    "fidelity": "psymetrics_core.cli.fidelity_cmd:fidelity_cmd",
    "score": "psymetrics_core.cli.score_cmd:score_cmd",
    "judge": "psymetrics_core.cli.judge_cmd:judge_cmd",
    "list": "psymetrics_core.cli.list_cmd:list_cmd",
    "show": "psymetrics_core.cli.show_cmd:show_cmd",
    "plugins": "psymetrics_core.cli.plugins_cmd:plugins_cmd",
    "validate": "psymetrics_core.cli.validate_cmd:validate_cmd",
    "cache": "psymetrics_core.cli.cache_cmd:cache_cmd",
    "import": "psymetrics_core.cli.import_cmd:import_cmd",
    "new-plugin": "psymetrics_core.cli.new_plugin_cmd:new_plugin_cmd",
    "install": "psymetrics_core.cli.install_cmd:install_cmd",
    "validity": "psymetrics_core.cli.validity_cmd:validity_cmd",
    "export": "psymetrics_core.cli.export_cmd:export_cmd",
    "lm-eval": "psymetrics_core.cli.lmeval_cmd:lmeval_cmd",
    "schema": "psymetrics_core.cli.schema_cmd:schema_cmd",
    "tasks-path": "psymetrics_core.cli.tasks_path_cmd:tasks_path_cmd",
    "plan": "psymetrics_core.cli.plan_cmd:plan_cmd",
    "run": "psymetrics_core.cli.plan_cmd:run_cmd",
    "merge": "psymetrics_core.cli.plan_cmd:merge_cmd",
    "batch": "psymetrics_core.cli.batch_cmd:batch_cmd",
    "report": "psymetrics_core.cli.report_cmd:report_cmd",
    "population": "psymetrics_core.cli.population_cmd:population_cmd",
    "docs": "psymetrics_core.cli.docs_cmd:docs_cmd",
}


# a missing module -> the extra of psymetrics-core that installs it
_EXTRA_OF = {"dask": "dask", "distributed": "dask", "lm_eval": "lm-eval"}


def _needs_extra(name: str, exc: ImportError) -> click.Command:
    """A stand-in for a command whose imports need an extra that is not installed: its help
    and its use say, in one line, what to install."""
    missing = (exc.name or "a module").split(".")[0]
    extra = _EXTRA_OF.get(missing, "analysis")
    hint = f"psym {name} needs {missing} (pip install 'psymetrics-core[{extra}]')"

    def run(**_: object) -> None:
        raise PsymError(hint)

    return click.Command(
        name,
        callback=run,
        help=f"{hint}.",
        context_settings={"ignore_unknown_options": True},
        params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
    )


def _with_examples(cmd: click.Command, name: str) -> click.Command:
    """``cmd`` (and, for a group, each subcommand) with its example epilog."""
    add_example(cmd, name)
    if isinstance(cmd, click.Group):
        for sub_name, sub in cmd.commands.items():
            add_example(sub, f"{name} {sub_name}")
    return cmd


def session_of(ctx: click.Context) -> Session:
    """The session of this ``psym`` invocation (the root context's ``obj``): the installed
    plugins, loaded when a command first needs them."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = Session()
    session: Session = root.obj
    return session


def _debug() -> bool:
    return os.environ.get("PSYM_DEBUG", "") not in ("", "0")


class LazyGroup(click.Group):
    """A click group whose core subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._plugin_commands(ctx)
        return sorted(set(CORE_COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in CORE_COMMANDS:
            modname, attr = CORE_COMMANDS[cmd_name].split(":")
            try:
                cmd = getattr(importlib.import_module(modname), attr)
            except ImportError as exc:  # an extra that is not installed: one line, no traceback
                return _needs_extra(cmd_name, exc)
            assert isinstance(cmd, click.Command)
            return _with_examples(cmd, cmd_name)
        self._plugin_commands(ctx)
        found = self.commands.get(cmd_name)
        return None if found is None else _with_examples(found, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands under group headings, each group with an example."""
        names = self.list_commands(ctx)
        found = {n: c for n in names if (c := self.get_command(ctx, n)) is not None}
        format_grouped([n for n in names if n in found and not found[n].hidden], found, formatter)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an exception from a third-party plugin's code (a hook or its own
        command) becomes one ``PsymError`` line naming the plugin (``PSYM_DEBUG=1``: raised
        as it is)."""
        try:
            return super().invoke(ctx)
        except (PsymError, click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            if ctx.obj is None or _debug():
                raise  # no plugin was loaded, or the traceback is wanted

            failure = plugin_error(exc, ctx.obj)
            if failure is None:
                raise  # a bug of the core keeps its traceback
            raise failure from None

    def _plugin_commands(self, ctx: click.Context) -> None:
        if getattr(self, "_plugins_added", False):
            return
        self._plugins_added = True
        try:
            session_of(ctx).hook.register_commands(cli=self)
        except PsymError:
            raise
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # must not take the CLI down
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            click.echo(f"psym: a plugin's register_commands failed ({reason})", err=True)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="psymetrics-core", prog_name="psym")
def cli() -> None:
    """psymetrics: psychometric instruments for language models, scored like people."""


def console_main() -> Any:
    """The ``psym`` console script and ``python -m psymetrics_core``: :func:`main`, then the
    objects left are frozen out of the garbage collector, so that leaving the process does
    not trace every object of the run again (a third of a second after a cached re-run; every
    file, response and record is closed and written before this point)."""

    # psymetrics' records use no pydantic plugins; finding them scans every installed
    # distribution's entry points (a tenth of a second in every command that validates a
    # spec or a record). A value set by the user stays.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        return main()
    finally:
        gc.freeze()


def main(argv: list[str] | None = None, session: Session | None = None) -> Any:
    """The ``psym`` command line on ``argv``; renders PsymErrors as one line.

    ``session`` gives the command ready plugins (default: the installed ones, loaded when the
    command first needs them)."""
    debug = _debug()
    try:
        return cli.main(args=argv, prog_name="psym", standalone_mode=False, obj=session)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("psym: aborted", err=True)
        sys.exit(130)
    except PsymError as exc:
        if debug:
            raise
        click.echo(f"psym: error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("psym: interrupted", err=True)
        sys.exit(130)
