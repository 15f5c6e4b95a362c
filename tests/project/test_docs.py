"""The documentation site cannot drift from the code (issue 26).

- the strict build fails on a broken link, a broken anchor and a fenced ``psym`` command that
  does not exist (the CLI reference, the catalogue and the schemas are generated at build time);
- every fenced command block marked ``<!-- runnable -->`` on the site is run here, as written,
  against the default model or a loopback OpenAI-compatible server (``$BASE_URL``), by the
  console script (the blocks of populations.md's "Worked examples" run in
  test_population_docs, which also checks what they print);
- README.md stays under 12 KB and no install hint names the bare ``psymetrics`` distribution
  (another project on the package index);
- the built site opens in headless Chromium and its search finds the instrument catalogue.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")
RUNNABLE = re.compile(
    r"<!-- runnable -->\s*\n[ \t]*```(?:bash|console)?\n(.*?)^[ \t]*```", re.S | re.M
)

pytestmark = pytest.mark.skipif(not MKDOCS.exists(), reason="mkdocs is not installed (make setup)")


@dataclass
class Build:
    """An ``mkdocs build --strict``: whether it succeeded, and what it logged at WARNING and up."""

    ok: bool
    log: list[str]

    def warned(self, text: str) -> bool:
        """Whether a WARNING or ERROR line (each fails a strict build) names ``text``."""
        return any(text in line for line in self.log)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


def _build(root: Path, site: Path) -> Build:
    """``mkdocs build --strict -f ROOT/mkdocs.yml -d SITE``, in this process: what the command
    runs (load the config, the plugins' start-up, build, shut-down), without starting Python,
    mkdocs, the theme and psym's plugins again for every build. A strict build fails on any
    WARNING; the log holds the WARNING and ERROR lines (a hook's PluginError is an ERROR)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    logger, collect = logging.getLogger("mkdocs"), _Collect()
    logger.addHandler(collect)
    try:
        cfg = load_config(config_file=str(root / "mkdocs.yml"), strict=True, site_dir=str(site))
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            build(cfg)
            ok = True
        except Abort:
            ok = False
        finally:
            cfg.plugins.on_shutdown()
    finally:
        logger.removeHandler(collect)
    return Build(ok, collect.lines)


# the mkdocstrings plugin's entry in mkdocs.yml (the API reference page from the docstrings)
_MKDOCSTRINGS = re.compile(r"^  - mkdocstrings:\n(?:      .*\n)+", re.M)


def _copy_site_sources(tmp: Path) -> Path:
    """The site's sources in ``tmp/repo``, built without mkdocstrings: the drift builds check
    links, anchors and the psym hooks, and the API reference's ``:::`` blocks, read by griffe
    from the whole core in every build (about 1.5 s of CPU each), are built by ``site``."""
    root = tmp / "repo"
    shutil.copytree(REPO / "docs", root / "docs")
    (root / "tools").mkdir(parents=True)
    for tool in ("docs_hooks.py", "paper_outputs.py"):
        shutil.copy(REPO / "tools" / tool, root / "tools" / tool)
    config, n = _MKDOCSTRINGS.subn("", (REPO / "mkdocs.yml").read_text())
    assert n == 1, "mkdocs.yml: no mkdocstrings plugin entry to leave out"
    (root / "mkdocs.yml").write_text(config)
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = _build(REPO, out)
    assert built.ok, built.log
    return out


def test_site_has_generated_references(site: Path) -> None:
    cli = (site / "reference" / "cli.html").read_text()
    for command in ("eval", "report", "analyze", "export", "plan", "batch", "contamination"):
        assert f"psym {command}</code>" in cli, command
    catalogue = (site / "reference" / "catalogue.html").read_text()
    assert "Ambivalent Sexism Inventory" in catalogue
    assert "Glick" in catalogue  # the ASI's citation, from the plugin's spec
    assert "parse_status" in (site / "reference" / "schemas.html").read_text()


# a broken link and a broken anchor are warnings, which mkdocs collects and reports at the end of
# the build: both go into one drifted copy, built once, and each must be one of its warnings
LINK_DRIFT = [
    ("\nSee [nowhere](no-such-page.md).\n", "no-such-page.md"),
    ("\nSee [x](conditions.md#no-such-anchor).\n", "no-such-anchor"),
]


@pytest.fixture(scope="module")
def link_drift(tmp_path_factory: pytest.TempPathFactory) -> Build:
    tmp = tmp_path_factory.mktemp("link-drift")
    root = _copy_site_sources(tmp)
    with (root / "docs" / "guides" / "report.md").open("a") as fh:
        fh.write("".join(inject for inject, _ in LINK_DRIFT))
    return _build(root, tmp / "site")


@pytest.mark.parametrize(("inject", "expect"), LINK_DRIFT, ids=["page", "anchor"])
def test_strict_build_fails_on_link_drift(link_drift: Build, inject: str, expect: str) -> None:
    assert not link_drift.ok
    assert link_drift.warned(expect), link_drift.log
    assert len(link_drift.log) == len(LINK_DRIFT), link_drift.log  # it failed on these alone


# each of these stops the build at its page (a hook's PluginError): one build per case
@pytest.mark.parametrize(
    ("page", "inject", "expect"),
    [
        ("index.md", "\n```bash\npsym frobnicate --tasks bfi\n```\n", "psym frobnicate"),
        # a paper page's output written by hand, not generated by tools/paper_outputs.py
        ("papers/rao-2023.md", "\n```text\nextraverted 50.00\n```\n", "is not generated"),
        ("papers/index.md", "\n<!-- paper-output: cmd=1 -->\n```text\n```\n", "no paper-run"),
    ],
)
def test_strict_build_fails_on_drift(tmp_path: Path, page: str, inject: str, expect: str) -> None:
    root = _copy_site_sources(tmp_path)
    with (root / "docs" / page).open("a") as fh:
        fh.write(inject)
    built = _build(root, tmp_path / "site")
    assert not built.ok
    assert built.warned(expect), built.log


def test_readme_fits_on_a_screen() -> None:
    size = len((REPO / "README.md").read_bytes())
    assert size <= 12 * 1024, f"README.md is {size} bytes (at most 12 KB; move detail to docs/)"


_BARE = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?psymetrics(?![-\w])")


def _text_files() -> Iterator[Path]:
    """The repository's text files, not descending into the skipped folders (a virtualenv holds
    tens of thousands of files)."""
    skip = {".git", ".venv", "build", "dist", "node_modules", "__pycache__", ".mypy_cache"}
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(files):
            path = Path(folder, name)
            if path.suffix in {".md", ".py", ".cfg", ".toml", ".yaml", ".yml", ".txt"}:
                if path.is_file():
                    yield path


def test_no_install_hint_names_the_bare_distribution() -> None:
    """``psymetrics`` on PyPI is an unrelated project: hints must say ``psymetrics-core[...]``."""
    assert _BARE.search("pip install 'psymetrics[dask]'")  # the check itself can fail
    assert not _BARE.search("pip install 'psymetrics-core[dask]'")
    bad = [
        f"{p.relative_to(REPO)}:{n}"
        for p in _text_files()
        if p.name not in ("test_docs.py", "test_fuzz_hints.py")  # their own bad examples
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if _BARE.search(line)
    ]
    assert not bad, bad


def _runnable_blocks() -> list[tuple[str, str]]:
    blocks = []
    for page in sorted((REPO / "docs").rglob("*.md")):
        for block in RUNNABLE.findall(page.read_text()):
            blocks.append((str(page.relative_to(REPO / "docs")), textwrap.dedent(block)))
    return blocks


def _worked_examples() -> str:
    """The "Worked examples" section of guides/populations.md, as test_population_docs cuts it."""
    text = (REPO / "docs" / "guides" / "populations.md").read_text()
    return text.split("\n## Worked examples\n", 1)[1].split("\n## ", 1)[0]


def _run_here(page: str, block: str) -> bool:
    """False for the runnable blocks of populations.md's "Worked examples": test_population_docs
    runs every line of that section as written, in order, asserts each exits 0 (what
    test_runnable_command checks) and that they print what the page shows, so they are run once,
    there (while semopy, which that test needs, is installed)."""
    if importlib.util.find_spec("semopy") is None:
        return True
    return not (page == "guides/populations.md" and block in _worked_examples())


# a block that runs bfi,mfq on the default model shares a worker (and so the session's response
# cache) with test_end_to_end_model's runs of the same command (tests/scheduling.py)
_SMOLLM2_BFI_MFQ = re.compile(r"^psym eval --tasks bfi,mfq(?!.*--model)", re.M)


def _runnable_params() -> list[Any]:
    return [
        pytest.param(page, block, marks=pytest.mark.xdist_group("smollm2-bfi-mfq"))
        if _SMOLLM2_BFI_MFQ.search(block)
        else (page, block)
        for page, block in _runnable_blocks()
        if _run_here(page, block)
    ]


def test_some_blocks_are_runnable() -> None:
    assert len(_runnable_blocks()) >= 3
    # the worked examples' blocks that test_population_docs runs instead (at least the two
    # population runs against $BASE_URL), and the first population block, run here
    elsewhere = [b for p, b in _runnable_blocks() if not _run_here(p, b)]
    assert importlib.util.find_spec("semopy") is None or len(elsewhere) >= 2
    assert all("$BASE_URL" in b for b in elsewhere)
    assert any("--generate binary" in b for p, b in _runnable_blocks() if _run_here(p, b))


@pytest.mark.model
@pytest.mark.integration  # every page's commands against the real tools: make test-integration
@pytest.mark.parametrize(("page", "block"), _runnable_params(), ids=lambda v: v[:40])
def test_runnable_command(tmp_path: Path, page: str, block: str, openai_server: str) -> None:
    """Each line of a runnable block runs as written (``psym`` is this environment's)."""
    env = {
        **os.environ,
        "BASE_URL": openai_server,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    for line in block.splitlines():
        line = line.split("  #")[0].strip()
        if not line or line.startswith("#"):
            continue
        argv = [
            re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), a)
            for a in shlex.split(line)
        ]
        extra = {}
        while argv and re.fullmatch(r"[A-Z_]+=.*", argv[0]):  # VAR=value psym ...
            name, _, value = argv.pop(0).partition("=")
            extra[name] = value
        proc = subprocess.run(
            argv, cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=900
        )
        assert proc.returncode == 0, f"{page}: {line}\n{proc.stderr[-2000:]}"


@pytest.fixture(scope="session")
def openai_server() -> Iterator[str]:
    """A loopback OpenAI-compatible server (benchmarks/latency_server.py, no latency); one per
    worker, so the runnable blocks spread over the workers (tests/scheduling.py)."""
    sys.path.insert(0, str(REPO))
    from benchmarks.latency_server import LatencyServer

    with LatencyServer(latency=0.0) as srv:
        yield srv.base_url


@pytest.mark.integration  # a real browser
def test_site_search_in_chromium(site: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("no chromium binary on PATH (make browser installs Debian's chromium)")
    from psymetrics_core.base.docsite import site_server

    httpd = site_server(site, port=0)  # what `psym docs` serves
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(url)
            assert "psymetrics" in page.title()
            page.locator("input.md-search__input").click()  # the header's search field
            page.locator("input.md-search__input").fill("ambivalent sexism")
            hit = page.locator(".md-search-result__item a").first
            hit.wait_for(timeout=20000)
            hrefs = page.locator(".md-search-result__item a").evaluate_all(
                "els => els.map(e => e.href)"
            )
            assert any("reference/catalogue" in h for h in hrefs), hrefs
            browser.close()
        assert not errors, errors
    finally:
        httpd.shutdown()
