"""The ``psym`` command line: a thin click layer over the library API.

Subcommands are imported lazily, and installed plugins load only when a command needs them,
so ``psym --version`` and ``psym plugins`` work even when a plugin is broken. A command only
parses its options, calls a library function and prints.

May import: base, instruments, records, backends, pluginsys, administer, study, analysis, export,
report.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from psymetrics_core.base.errors import PsymError

__all__ = ["main", "console_main", "cli"]

CORE_COMMANDS = {
    "eval": "psymetrics_core.cli.eval_cmd:eval_cmd",
    "analyze": "psymetrics_core.cli.analyze_cmd:analyze_cmd",
    "score": "psymetrics_core.cli.score_cmd:score_cmd",
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
}


class LazyGroup(click.Group):
    """A click group whose core subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._plugin_commands()
        return sorted(set(CORE_COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in CORE_COMMANDS:
            modname, attr = CORE_COMMANDS[cmd_name].split(":")
            cmd = getattr(importlib.import_module(modname), attr)
            assert isinstance(cmd, click.Command)
            return cmd
        self._plugin_commands()
        return self.commands.get(cmd_name)

    def _plugin_commands(self) -> None:
        if getattr(self, "_plugins_added", False):
            return
        self._plugins_added = True
        from psymetrics_core.pluginsys.plugins import get_plugin_manager

        try:
            get_plugin_manager().hook.register_commands(cli=self)
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
    import gc

    # psymetrics' records use no pydantic plugins; finding them scans every installed
    # distribution's entry points (a tenth of a second in every command that validates a
    # spec or a record). A value set by the user stays.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        return main()
    finally:
        gc.freeze()


def main(argv: list[str] | None = None) -> Any:
    """The ``psym`` command line on ``argv``; renders PsymErrors as one line."""
    debug = os.environ.get("PSYM_DEBUG", "") not in ("", "0")
    try:
        return cli.main(args=argv, prog_name="psym", standalone_mode=False)
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
    except Exception as exc:  # a third-party plugin's hook or command raised: one line
        from psymetrics_core.pluginsys.failures import plugin_error

        failure = plugin_error(exc)
        if failure is None or debug:
            raise  # a bug of the core keeps its traceback
        click.echo(f"psym: error: {failure}", err=True)
        sys.exit(1)
