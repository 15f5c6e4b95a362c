"""``psym cache info|clear``: inspect or empty the response cache."""

from __future__ import annotations

from pathlib import Path

import click

from psymetrics_core.backends.cache import ResponseCache, cache_path
from psymetrics_core.backends.cache_transfer import export_cache, import_cache
from psymetrics_core.base.paths import remove_stale_conversions, stale_conversions
from psymetrics_core.cli.console import stdout, table


@click.group("cache")
def cache_cmd() -> None:
    """The response cache ($PSYM_CACHE_DIR or the user cache directory)."""


@cache_cmd.command("info")
def info_cmd() -> None:
    """Where the cache is, how big, and how many responses per model."""

    cache = ResponseCache()
    try:
        st = cache.stats()
    finally:
        cache.close()
    stdout.print(f"path: {st.path}")
    stdout.print(f"responses: {st.entries}   size: {st.size_bytes / 1e6:.2f} MB")
    for folder, size in stale_conversions():
        stdout.print(
            f"leftover model conversion (its process is gone): {folder} ({size / 1e6:.1f} MB); "
            "`psym cache clear` removes it",
            markup=False,
        )
    if st.models:
        t = table("responses by model", ["model", "responses"])
        for model, n in st.models.items():
            t.add_row(model, str(n))
        stdout.print(t)


@cache_cmd.command("clear")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def clear_cmd(yes: bool) -> None:
    """Delete every cached response and leftover model conversions (model copies are kept)."""

    if not yes:
        click.confirm(f"delete all cached responses in {cache_path()}?", abort=True)
    cache = ResponseCache()
    try:
        n = cache.clear()
    finally:
        cache.close()
    stdout.print(f"deleted {n} cached responses")
    gone = remove_stale_conversions()
    if gone:
        stdout.print(f"removed {gone} leftover model conversion folder(s)")


@cache_cmd.command("export")
@click.argument("path", type=click.Path())  # checked by base.writing (one line)
@click.option("--model", default=None, help="Only responses of this model label (`cache info`).")
def export_cmd(path: str, model: str | None) -> None:
    """Write stored responses to PATH (JSON lines; .gz compresses) for another machine."""

    cache = ResponseCache()
    try:
        n = export_cache(cache, path, model)
    finally:
        cache.close()
    click.echo(f"exported {n} responses to {path}")


@cache_cmd.command("import")
@click.argument("path", type=click.Path(dir_okay=False, exists=True, path_type=Path))
def import_cmd(path: Path) -> None:
    """Add the responses of a `psym cache export` file (entries already here are kept)."""

    cache = ResponseCache()
    try:
        read, added = import_cache(cache, path)
    finally:
        cache.close()
    click.echo(f"imported {added} new responses ({read} read) into {cache.path}")
