"""Project rule: no function in the core is longer than 80 lines (issue 23, item 3).

Every ``def`` and ``async def`` under ``psymetrics_core/`` (nested ones included) is measured
from its ``def`` line to its last line; decorators do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "psymetrics_core"
LIMIT = 80

# long functions tolerated for now (none): the test fails on an entry that is no longer too
# long, so that the set only shrinks
KNOWN: set[str] = set()


def function_lengths(root: Path = CORE) -> dict[str, tuple[int, int]]:
    """{"path:qualified.name": (def line, lines)} for every function in the ``.py`` files
    under ``root`` (methods as ``Class.name``, nested functions as ``outer.name``)."""
    out: dict[str, tuple[int, int]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        _walk(tree, path.relative_to(root).as_posix() + ":", out)
    return out


def _walk(node: ast.AST, prefix: str, out: dict[str, tuple[int, int]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > out.get(name, (0, 0))[1]:  # a redefinition: the longer one
                    out[name] = (child.lineno, length)
            _walk(child, name + ".", out)
        else:
            _walk(child, prefix, out)


def test_no_function_is_longer_than_the_limit() -> None:
    lengths = function_lengths()
    assert len(lengths) > 500, "no functions found: is CORE right?"
    long = {k: v for k, v in lengths.items() if v[1] > LIMIT and k not in KNOWN}
    report = "\n".join(
        f"  psymetrics_core/{k.split(':')[0]}:{line} {k.split(':')[1]} ({n} lines)"
        for k, (line, n) in sorted(long.items(), key=lambda kv: -kv[1][1])
    )
    assert not long, f"functions over {LIMIT} lines (split them along a real seam):\n{report}"


def test_known_long_functions_are_still_long() -> None:
    lengths = function_lengths()
    stale = sorted(k for k in KNOWN if lengths.get(k, (0, 0))[1] <= LIMIT)
    assert not stale, f"no longer over {LIMIT} lines (or gone): remove from KNOWN: {stale}"


def test_the_measure_counts_from_def_to_last_line(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))  # def line + 80 = 81 lines
    (tmp_path / "m.py").write_text(
        f"@decorator\ndef long():\n{body}\n\n\nclass C:\n    async def short(self):\n"
        "        def inner():\n            return 1\n"
    )
    assert function_lengths(tmp_path) == {
        "m.py:long": (2, LIMIT + 1),
        "m.py:C.short": (LIMIT + 6, 3),
        "m.py:C.short.inner": (LIMIT + 7, 2),
    }
