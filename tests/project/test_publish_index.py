"""Publishing for real: build every distribution, serve it from pypiserver on loopback, install.

The module builds wheel + sdist of psymetrics-core and of every plugin (``tools/build_dists.py``,
no build warnings), uploads them with twine to a real pypiserver on 127.0.0.1, creates a fresh
virtual environment and runs ``pip install --index-url <loopback>/simple/ --extra-index-url
<this machine's default index> psymetrics-plugin-asi`` into it, as CONTRIBUTING's "Publishing"
section tells a plugin author to do with a real index. Third-party dependencies (pluggy, click,
...) come from the default index; psymetrics' own distributions must come from the loopback
one, and the unrelated ``psymetrics`` distribution on the public index must not be installed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
from build_dists import build, projects  # noqa: E402

pytestmark = pytest.mark.integration  # wheels, a real package index, pip: make test-integration

PIP_TIMEOUT = 600


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment minus anything that would point a subprocess at this checkout."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PSYM_CATALOGUE", "PSYM_INSTRUMENTS_PATH")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("TWINE_")}
    return {**env, **extra}


def default_index() -> str:
    """The index pip uses on this machine: PIP_INDEX_URL, pip's configured index-url, or PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    res = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
        capture_output=True,
        text=True,
    )
    url = res.stdout.strip()
    return url if res.returncode == 0 and url else "https://pypi.org/simple"


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheel and sdist of the core and every plugin, built without warnings."""
    out = tmp_path_factory.mktemp("dist")
    for project in projects(REPO):
        warnings = build(project, out, isolation=False)
        assert not warnings, f"{project.name}: build warnings: {warnings}"
    return out


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real pypiserver on 127.0.0.1 (uploads allowed, no fallback to another index)."""
    packages = tmp_path_factory.mktemp("index")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (packages.parent / "pypiserver.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pypiserver",
            "run",
            "-i",
            "127.0.0.1",
            "-p",
            str(port),
            "-a",
            ".",
            "-P",
            ".",
            "--disable-fallback",
            str(packages),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=_clean_env(),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/simple/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"pypiserver did not start: see {log.name}") from None
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_every_plugin_is_pyproject_based_and_depends_on_psymetrics_core():
    """No plugin has a setup.py; each names its build system and requires psymetrics-core. The
    core's metadata stays in setup.cfg: its setup.py only states what setup.cfg cannot (the
    packages mapped from the repository top and the build step copying the catalogue).

    The bare name ``psymetrics`` on the public index is an unrelated project: a plugin that
    required it would install that instead of our core.
    """
    import ast
    import tomllib

    from packaging.requirements import Requirement

    assert not list(REPO.glob("plugins/*/setup.py"))
    calls = [
        n
        for n in ast.walk(ast.parse((REPO / "setup.py").read_text()))
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup"
    ]
    assert len(calls) == 1
    assert {k.arg for k in calls[0].keywords} <= {"packages", "package_dir", "cmdclass"}
    metas = {p.name: tomllib.loads((p / "pyproject.toml").read_text()) for p in projects(REPO)[1:]}
    # a library another plugin names (psymetrics-plugin-llama-engine, an extra of the hf
    # plugin) registers no hooks; every other distribution is a plugin with an entry point
    named = {
        Requirement(r).name
        for meta in metas.values()
        for reqs in meta["project"].get("optional-dependencies", {}).values()
        for r in reqs
    }
    assert "psymetrics-plugin-llama-engine" in named
    for name, meta in metas.items():
        assert meta["build-system"]["build-backend"] == "setuptools.build_meta", name
        deps = [Requirement(d) for d in meta["project"]["dependencies"]]
        names = {d.name for d in deps}
        assert "psymetrics-core" in names, f"{name}: depend on psymetrics-core"
        assert "psymetrics" not in names, f"{name}: 'psymetrics' is another project"
        assert "psymetrics" in meta["project"].get("entry-points", {}) or name in named, name


def test_build_check_catches_the_warnings_it_guards_against(tmp_path):
    """The warning filter of tools/build_dists.py is not blind: an old-style project trips it."""
    proj = tmp_path / "oldstyle"
    (proj / "oldstyle" / "tasks" / "one").mkdir(parents=True)
    (proj / "oldstyle" / "__init__.py").write_text("")
    (proj / "oldstyle" / "tasks" / "one" / "utils.py").write_text("X = 1\n")  # data, not listed
    (proj / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "oldstyle"\nversion = "0.1"\nlicense = {text = "MIT"}\n'
        'classifiers = ["License :: OSI Approved :: MIT License"]\n'
        '[tool.setuptools]\npackages = ["oldstyle"]\n'
        '[tool.setuptools.package-data]\noldstyle = ["tasks/*/*.py"]\n'
    )
    warnings = "\n".join(build(proj, tmp_path / "dist", isolation=False))
    assert "License classifiers are deprecated" in warnings
    assert "would be ignored" in warnings


def test_every_distribution_builds_without_warnings_and_ships_its_data(dists):
    """A wheel and an sdist per project; the wheels hold every data file of the source tree."""
    built = _names(dists)
    for project in projects(REPO):
        stem = "psymetrics_core" if project == REPO else project.name.replace("-", "_")
        assert f"{stem}-0.1.0-py3-none-any.whl" in built, stem
        assert f"{stem}-0.1.0.tar.gz" in built, stem
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dists.iterdir()))],
        capture_output=True,
        text=True,
    )
    assert twine.returncode == 0, twine.stdout + twine.stderr
    assert twine.stdout.count("PASSED") == len(built)
    # the core wheel: every exported lm-eval task file and the plugin catalogue
    with zipfile.ZipFile(dists / "psymetrics_core-0.1.0-py3-none-any.whl") as whl:
        names = set(whl.namelist())
        assert (
            whl.read("psymetrics_core/pluginsys/plugins.yaml")
            == (REPO / "registry" / "plugins.yaml").read_bytes()
        )
    core = REPO / "psymetrics_core"
    for f in core.rglob("*"):  # modules and data files (the instruments' are in the plugins)
        if f.is_file() and "__pycache__" not in f.parts:
            assert f"psymetrics_core/{f.relative_to(core).as_posix()}" in names, f
    tasks = REPO / "tasks"
    for f in tasks.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            assert f"psymetrics_core/lm_eval_tasks/{f.relative_to(tasks).as_posix()}" in names, f
    # each plugin wheel: every file of its package folder (instrument YAML and CSV included)
    for project in projects(REPO)[1:]:
        pkg = project.name.replace("-", "_")
        with zipfile.ZipFile(dists / f"{pkg}-0.1.0-py3-none-any.whl") as whl:
            names = set(whl.namelist())
        for f in (project / pkg).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                assert f.relative_to(project).as_posix() in names, f


def test_pip_installs_a_plugin_from_the_loopback_index(dists, index, tmp_path):
    """twine upload -> fresh venv -> pip install psymetrics-plugin-asi -> psym list / score."""
    files = sorted(map(str, dists.iterdir()))
    upload = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "upload",
            "--repository-url",
            f"{index}/",
            "-u",
            "psym-test",
            "-p",
            "unused",
            "--non-interactive",
            "--disable-progress-bar",
            *files,
        ],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=300,
    )
    assert upload.returncode == 0, upload.stdout + upload.stderr
    listing = urllib.request.urlopen(f"{index}/simple/", timeout=10).read().decode()
    assert "psymetrics-core" in listing and "psymetrics-plugin-asi" in listing

    # a fresh virtual environment; this environment's pip installs into it (``--python``: pip
    # runs under the venv's interpreter), which saves seeding the venv with its own, older pip
    # (5 s of CPU) and running that (13 s against 7 s); --no-compile: the .pyc files play no
    # part in what is installed from where (and the commands below compile what they import)
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, env=_clean_env()
    )
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py)]
    report = tmp_path / "report.json"
    install = subprocess.run(
        [
            *pip,
            "install",
            "--no-compile",
            "--report",
            str(report),
            "--index-url",
            f"{index}/simple/",
            "--extra-index-url",
            default_index(),
            "psymetrics-plugin-asi",
        ],
        capture_output=True,
        text=True,
        env=_clean_env(),
        cwd=tmp_path,
        timeout=PIP_TIMEOUT,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    items = {
        i["metadata"]["name"].lower(): i["download_info"]["url"]
        for i in json.loads(report.read_text())["install"]
    }
    assert items["psymetrics-core"].startswith(f"{index}/"), items["psymetrics-core"]
    assert items["psymetrics-plugin-asi"].startswith(f"{index}/")
    assert "psymetrics" not in items  # the unrelated project of that name on the public index
    assert "pluggy" in items and not items["pluggy"].startswith(f"{index}/")  # default index
    # pip finds pluggy in the venv (so the query looks there) but no "psymetrics"
    shown = subprocess.run(
        [*pip, "show", "pluggy", "psymetrics"], capture_output=True, text=True, env=_clean_env()
    )
    assert f"Location: {venv}" in shown.stdout, shown.stdout + shown.stderr
    assert "Name: psymetrics\n" not in shown.stdout, shown.stdout
    assert "Package(s) not found: psymetrics" in shown.stderr, shown.stderr

    # the commands run from a folder outside the checkout, on the installed packages only
    env = _clean_env(PSYM_CACHE_DIR=str(tmp_path / "cache"))
    where = subprocess.run(
        [str(py), "-c", "import psymetrics_core; print(psymetrics_core.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv)
    psym = str(venv / "bin" / "psym")
    listed = subprocess.run(
        [psym, "list", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    asi = [r for r in rows if r["task"] == "asi"]
    assert asi and asi[0]["distribution"] == "psymetrics-plugin-asi", rows

    # two respondents scored by hand from Glick & Fiske (1996)'s key (0-5, reverse = 5 - x):
    # hostile = items 2 4 5 7R 10 11 14 15 16 18R 21R, benevolent = 1 3R 6R 8 9 12 13R 17 19 20 22
    hostile = {2, 4, 5, 7, 10, 11, 14, 15, 16, 18, 21}
    rows_csv = ["respondent,item,response"]
    rows_csv += [f"all5,{i},5" for i in range(1, 23)]
    rows_csv += [f"split,{i},{0 if i in hostile else 4}" for i in range(1, 23)]
    answers = tmp_path / "asi.csv"
    answers.write_text("\n".join(rows_csv) + "\n")
    scored = subprocess.run(
        [psym, "score", "--task", "asi", "--responses", str(answers), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert scored.returncode == 0, scored.stderr
    got = json.loads(scored.stdout)["asi"]
    # all5: 8 keyed items at 5 and 3 reversed at 0 on each scale -> 40/11; total 80/22
    assert got["all5"] == pytest.approx(
        {"hostile": 40 / 11, "benevolent": 40 / 11, "total": 80 / 22}
    )
    # split: hostile 8*0 + 3*(5-0) = 15 -> 15/11; benevolent 8*4 + 3*(5-4) = 35 -> 35/11;
    # total (15 + 35) / 22
    assert got["split"] == pytest.approx(
        {"hostile": 15 / 11, "benevolent": 35 / 11, "total": 50 / 22}
    )

    # the catalogue and the lm-eval tasks ship inside the installed core
    available = subprocess.run(
        [psym, "plugins", "available", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert available.returncode == 0, available.stderr
    by_name = {r["name"]: r for r in json.loads(available.stdout)}
    assert by_name["asi"]["installed"] == "0.1.0" and by_name["bfi"]["installed"] is None
    tasks = subprocess.run(
        [psym, "tasks-path"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert tasks.returncode == 0, tasks.stderr
    folder = Path(tasks.stdout.strip())
    assert folder.is_relative_to(venv.resolve()) and (folder / "psym_asi" / "utils.py").is_file()
