"""Persona templates under a budget: a user's Jinja2 template renders in a sandbox that cannot
run for long, grow without bound or reach other files.

``compile_template(source, name)`` parses a template (``--persona-template``) and refuses, in one
line naming the template:

- ``{% include %}``, ``{% import %}``, ``{% from %}`` and ``{% extends %}`` (no other template is
  reachable from a persona template);
- a template that never uses ``persona``, ``id`` or ``labels`` (every respondent would get the
  same prompt), with a hint when it spells the variable in Python's ``{persona}`` syntax.

``render(compiled, name, respondent_id, **values)`` renders it under ``RENDER_SECONDS`` of time
and ``MAX_OUTPUT`` characters: ``range`` is bounded by ``MAX_OUTPUT`` steps, ``*`` and ``**`` are
checked before they run (a repeated text or list of over ``MAX_OUTPUT`` items, a power of over
``MAX_POWER_BITS`` bits), a number argument over ``MAX_OUTPUT`` to a filter or method (``center``,
``indent``, ``ljust``, a format width) is refused, macro calls nest at most ``MAX_NESTING``
deep, every line of the template checks the clock and its texts' lengths, and the sandbox is
the immutable one (no ``append`` or ``update``).
Anything the sandbox refuses, and any error the template raises, is one ``PsymError`` line naming
the template and the respondent.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import sys
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import jinja2
import jinja2.meta
import jinja2.nodes
import jinja2.sandbox

from psymetrics_core.base.errors import PsymError

__all__ = [
    "compile_template",
    "render",
    "trusted",
    "MAX_OUTPUT",
    "RENDER_SECONDS",
    "MAX_POWER_BITS",
]

MAX_OUTPUT = 100_000  # characters of one rendered prompt (and items of a range or list)
RENDER_SECONDS = 2.0  # wall time of one respondent's render
MAX_POWER_BITS = 100_000  # bits of the result of ``**``
MAX_NESTING = 50  # template frames (macro calls) nested in one another
_USES = ("persona", "id", "labels")
_PYTHON_SYNTAX = re.compile(r"(?<!\{)\{\s*(persona|id|labels)\b[^{}]*\}(?!\})")
_BIG_NUMBER = re.compile(r"\d{6,}")  # a width or precision of 100,000 or more in a format


class _OverBudget(Exception):
    """The template went over its budget (the message says which)."""


def _too_big(what: str) -> _OverBudget:
    return _OverBudget(f"{what} would exceed the budget of {MAX_OUTPUT:,} characters or items")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple | dict | range) else 0


def _range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_OUTPUT:
        raise _too_big(f"range{args}")
    return r


def _check_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and abs(value) > MAX_OUTPUT:
            raise _too_big(f"{name}({value})")
    if name == "join":
        sep = next((a for a in args if isinstance(a, str)), "")
        seq = next((a for a in args if _size(a) and not isinstance(a, str)), ())
        if (
            len(sep) * len(seq) + sum(_size(v) for v in seq if not isinstance(seq, range))
            > MAX_OUTPUT
        ):
            raise _too_big("join")
    if name in ("format", "replace") and args:
        target = args[0]
        if name == "format" and isinstance(target, str) and _BIG_NUMBER.search(target):
            raise _too_big(f"the format {target[:40]!r}")
        if name == "replace" and len(args) >= 3 and all(isinstance(a, str) for a in args[:3]):
            text, old, new = args[:3]
            grown = len(text) + (len(text) + 1 if not old else text.count(old)) * len(new)
            if grown > MAX_OUTPUT:
                raise _too_big("replace")


_PASSED = (jinja2.runtime.Context, jinja2.Environment, jinja2.nodes.EvalContext)


def _bounded_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)  # keeps jinja's pass_context/pass_environment marks
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        passed = [a for a in args if isinstance(a, _PASSED)]
        given = [a for a in args if not isinstance(a, _PASSED)]
        if name == "join" and given:
            given[0] = _bounded_list(given[0])
        _check_args(name, tuple(given), kwargs)
        out = fn(*passed, *given, **kwargs)
        if _size(out) > MAX_OUTPUT:
            raise _too_big(f"the filter {name}")
        return out

    return wrapper


def _bounded_list(value: Any) -> Any:
    """An iterable made a list of at most ``MAX_OUTPUT`` items (a text or mapping as given)."""
    if isinstance(value, str | dict) or not hasattr(value, "__iter__"):
        return value
    items = list(itertools.islice(value, MAX_OUTPUT + 1))
    if len(items) > MAX_OUTPUT:
        raise _too_big("join")
    return items


class _BudgetSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """The immutable sandbox with bounded ``range``, ``*``, ``**``, ``%`` and filters."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def __init__(self) -> None:
        super().__init__(undefined=jinja2.StrictUndefined, autoescape=False)
        self.globals["range"] = _range
        self.globals.pop("namespace", None)  # no state carried across loop iterations
        self.filters = {k: _bounded_filter(k, f) for k, f in self.filters.items()}

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "**":
            _check_power(left, right)
            return operator.pow(left, right)
        if operator_ == "*":
            _check_repeat(left, right)
            return operator.mul(left, right)
        if isinstance(left, str) and _BIG_NUMBER.search(left):
            raise _too_big(f"the format {left[:40]!r}")
        return operator.mod(left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and _BIG_NUMBER.search(owner):
            return functools.partial(_refuse, _too_big(f"the format {owner[:40]!r}"))
        return super().wrap_str_format(value)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        name = getattr(__obj, "__name__", "")
        owner = getattr(__obj, "__self__", None)
        _check_args(name, (owner, *args) if isinstance(owner, str) else args, kwargs)
        out = super().call(__context, __obj, *args, **kwargs)
        if _size(out) > MAX_OUTPUT:
            raise _too_big(f"{name or 'a call'}()")
        return out


def _refuse(exc: Exception, *args: Any, **kwargs: Any) -> Any:
    raise exc


def _check_power(left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
        if right * abs(left).bit_length() > MAX_POWER_BITS:
            raise _OverBudget(
                f"{left} ** {right} would exceed the budget of {MAX_POWER_BITS:,} bits"
            )
    elif isinstance(right, int | float) and abs(right) > MAX_OUTPUT:
        raise _OverBudget(f"** {right}: exponent over {MAX_OUTPUT:,}")


def _check_repeat(left: Any, right: Any) -> None:
    for seq, times in ((left, right), (right, left)):
        if _size(seq) and isinstance(times, int) and _size(seq) * times > MAX_OUTPUT:
            raise _too_big(f"a text or list repeated {times:,} times")
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_POWER_BITS:
            raise _OverBudget(f"a product over the budget of {MAX_POWER_BITS:,} bits")


_ENV = _BudgetSandbox()
_TRUSTED = jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
_REFUSED_NODES = (
    jinja2.nodes.Include,
    jinja2.nodes.Import,
    jinja2.nodes.FromImport,
    jinja2.nodes.Extends,
)


def trusted(source: str) -> jinja2.Template:
    """A built-in template (psymetrics' own text): the plain sandbox, no budget needed."""
    return _TRUSTED.from_string(source)


def compile_template(source: str, name: str) -> jinja2.Template:
    """The user template ``source`` compiled in the budgeted sandbox (see the module
    docstring); one line naming ``name`` when it is refused."""
    where = f"--persona-template {name}"
    try:
        tree = _ENV.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        raise PsymError(f"{where}: line {exc.lineno}: {exc.message}") from None
    for node in tree.find_all(_REFUSED_NODES):
        tag = type(node).__name__.lower().replace("fromimport", "from ... import")
        unavailable = "is not available in a persona template (it may use only its own text)"
        raise PsymError(f"{where}: line {node.lineno}: {{% {tag} %}} {unavailable}")
    if not set(_USES) & jinja2.meta.find_undeclared_variables(tree):
        raise PsymError(f"{where}: {_same_prompt(source)}")
    return _ENV.from_string(source)


def _same_prompt(source: str) -> str:
    out = "never uses {{ persona }}, {{ id }} or {{ labels }}, so every respondent would get "
    out += "the same prompt"
    hint = _PYTHON_SYNTAX.search(source)
    if hint:
        out += f"; {hint.group(0)!r} is Python's syntax, Jinja2's is '{{{{ {hint.group(1)} }}}}'"
    return out


def render(compiled: jinja2.Template, name: str, respondent: str, **values: Any) -> str:
    """``compiled`` rendered with ``values`` under the budget; one line naming the template and
    the respondent on any failure."""
    where = f"--persona-template {name}: respondent {respondent!r}"
    try:
        return _budgeted(compiled, values)
    except _OverBudget as exc:
        raise PsymError(f"{where}: {exc}") from None
    except jinja2.UndefinedError as exc:
        raise PsymError(f"{where}: {exc}") from None
    except jinja2.sandbox.SecurityError as exc:
        raise PsymError(f"{where}: refused by the sandbox: {exc}"[:400]) from None
    except (RecursionError, MemoryError) as exc:
        why = "the template recurses or grows without bound"
        raise PsymError(f"{where}: {type(exc).__name__} ({why})") from None
    except Exception as exc:  # noqa: BLE001 -- a template's own error (TypeError, ...) is one line
        raise PsymError(f"{where}: {type(exc).__name__}: {exc}"[:400]) from None


def _budgeted(compiled: jinja2.Template, values: dict[str, Any]) -> str:
    budget = _Budget(time.monotonic() + RENDER_SECONDS)
    before = sys.gettrace()
    sys.settrace(budget.enter)
    try:
        parts, size = [], 0
        for chunk in compiled.generate(**values):
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise _too_big("the rendered prompt")
            parts.append(chunk)
        return "".join(parts)
    finally:
        sys.settrace(before)


class _Budget:
    """The trace functions of one render: every new frame of the template (``enter``) is
    checked for its nesting depth, every line (``line``) for the clock and its values'
    lengths; the first breach raises once (the frames it unwinds are not traced again)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.spent = False

    def enter(self, frame: FrameType, event: str, arg: Any) -> Any:
        if self.spent or frame.f_code.co_filename != "<template>":
            return None
        depth = 0
        f: FrameType | None = frame
        while f is not None and depth <= MAX_NESTING:
            depth += f.f_code.co_filename == "<template>"
            f = f.f_back
        if depth > MAX_NESTING:
            self._breach(f"macros nested over {MAX_NESTING} deep (the template recurses)")
        return self.line

    def line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if self.spent:
            return None
        if time.monotonic() > self.deadline:
            self._breach(f"rendering took over {RENDER_SECONDS:g} s (the time budget)")
        if any(_size(v) > MAX_OUTPUT for v in _values(frame)):
            self.spent = True
            raise _too_big("a value")
        return self.line

    def _breach(self, why: str) -> None:
        self.spent = True
        raise _OverBudget(why)


def _values(frame: FrameType) -> Iterator[Any]:
    yield from frame.f_locals.values()
