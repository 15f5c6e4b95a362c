"""Shared checks of the fuzz suite: every malformed input must end in one clear line.

``expect_clean_error(fn, names)`` runs ``fn`` (a loader call or an in-process CLI call) and
asserts: it raised a ``PsymError`` (or a CLI exit != 0 whose stderr is one ``psym:`` line), no
other exception type escaped (that would be a traceback), the message is one line and names at
least one of ``names`` (the file, line or field), it used at most ``TIME_BOUND`` seconds of this
process's CPU (work that blows up on a malformed input) and finished within ``WALL_BOUND`` seconds
of wall time (a hang; generous, since a loaded 2-core machine stretches wall time), and Python
allocated at most ``MEMORY_BOUND`` bytes on the way (tracemalloc peak).

``run_cli(argv)`` runs ``psym ARGV`` in process with one ``Session`` of the installed plugins
shared by every call of this test process (built on first use, as ``psym`` builds one per
invocation): loading every plugin again for each malformed input cost about a third of a
second under tracemalloc and checked nothing. A command that can change the installed plugins
(``install``, ``new-plugin``) gets a fresh session, and so does a call with ``fresh=True``.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Iterable
from typing import Any

from psymetrics_core.base.errors import PsymError

__all__ = [
    "expect_clean_error",
    "run_cli",
    "shared_session",
    "TIME_BOUND",
    "WALL_BOUND",
    "MEMORY_BOUND",
    "Outcome",
]

TIME_BOUND = 10.0  # CPU seconds of this process per input
WALL_BOUND = 25.0  # wall seconds per input: a hang (or a 30 s default wait), not a slow machine
MEMORY_BOUND = 256 * 1024 * 1024  # bytes allocated by Python while handling one input


class Outcome:
    """What one fuzz input produced."""

    def __init__(self, message: str, seconds: float, peak: int, cpu: float = 0.0) -> None:
        self.message = message
        self.seconds = seconds  # wall seconds
        self.cpu = cpu  # CPU seconds of this process
        self.peak = peak


def expect_clean_error(
    fn: Callable[[], Any], names: Iterable[str] = (), *, label: str = ""
) -> Outcome:
    """Run ``fn`` and assert it failed cleanly (see the module docstring)."""
    tracemalloc.start()
    t0, c0 = time.monotonic(), time.process_time()
    message = ""
    try:
        fn()
    except PsymError as exc:
        message = str(exc)
    except BaseException as exc:  # noqa: BLE001 -- anything else is the bug we look for
        tracemalloc.stop()
        raise AssertionError(
            f"{label}: {type(exc).__name__} escaped (a traceback for the user): {exc}"[:2000]
        ) from exc
    else:
        tracemalloc.stop()
        raise AssertionError(f"{label}: invalid input was accepted (would exit 0)")
    finally:
        seconds, cpu = time.monotonic() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert message, f"{label}: empty error message"
    assert "\n" not in message.strip(), f"{label}: message is not one line: {message!r}"
    assert "Traceback" not in message, f"{label}: {message}"
    wanted = [n for n in names if n]
    if wanted:
        assert any(n in message for n in wanted), f"{label}: {message!r} names none of {wanted}"
    assert cpu < TIME_BOUND, f"{label}: took {cpu:.1f} s of CPU"
    assert seconds < WALL_BOUND, f"{label}: took {seconds:.1f} s (a hang?)"
    assert peak < MEMORY_BOUND, f"{label}: allocated {peak / 1e6:.0f} MB"
    return Outcome(message, seconds, peak, cpu)


# commands that may change the installed plugins: never on the shared session
PLUGIN_COMMANDS = frozenset({"install", "new-plugin"})
_shared: list[Any] = []


def shared_session() -> Any:
    """The ``Session`` of the installed plugins this test process's ``run_cli`` calls share."""
    if not _shared:
        from psymetrics_core.pluginsys.session import Session

        _shared.append(Session())
    return _shared[0]


def run_cli(argv: list[str], *, fresh: bool = False) -> None:
    """``psym ARGV`` in process: a non-zero exit becomes the PsymError it printed (the shared
    session, or a fresh one for ``fresh`` and the plugin-changing commands)."""
    from click.testing import CliRunner

    from psymetrics_core.cli import cli

    own = fresh or bool(set(argv[:1]) & PLUGIN_COMMANDS)
    res = CliRunner().invoke(cli, argv, obj=None if own else shared_session())
    if res.exit_code == 0:
        return
    if isinstance(res.exception, PsymError):
        raise res.exception
    raise PsymError(" ".join(res.output.strip().splitlines()[-1:]) or repr(res.exception))
