"""``psym docs``: serve the built documentation site locally, search included."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from psymetrics_core.base.docsite import SITE, site_server
from psymetrics_core.cli.console import stderr


@click.command("docs")
@click.option(
    "--site",
    "folder",
    type=click.Path(path_type=Path, file_okay=False),
    default=str(SITE),
    show_default=True,
    help="The built site (make docs writes it to build/site).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Local port to serve on (0: any free port).",
)
@click.option(
    "--open/--no-open",
    "open_browser",
    default=False,
    show_default=True,
    help="Open the site in the default browser.",
)
def docs_cmd(folder: Path, port: int, open_browser: bool) -> None:
    """Serve the documentation site on http://127.0.0.1:PORT until Ctrl-C.

    The site's search needs a server: opened from disk (build/site/index.html) the pages work
    but the search box does not. Nothing is fetched from the network.
    """
    server = site_server(folder, port)
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    stderr.print(f"serving {folder} on {url} (Ctrl-C to stop)", markup=False, highlight=False)
    if open_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
