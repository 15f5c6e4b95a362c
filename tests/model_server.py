"""A real model server as a test fixture: started on a free loopback port, ready when a URL
answers 200 (bounded wait), stopped afterwards (terminate, then kill). Used by the
``transformers serve`` and llama.cpp server tests."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(
    cmd: Sequence[str],
    ready_url: str,
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    deadline_s: float = 180,
    stop_timeout_s: float = 30,
) -> Iterator[None]:
    """Run ``cmd`` (output to ``log``) until the block ends; fail the test with the log's tail
    when it exits or ``ready_url`` does not answer 200 within ``deadline_s``."""
    with log.open("w") as fh:
        proc = subprocess.Popen(
            list(cmd), stdout=fh, stderr=subprocess.STDOUT, env=None if env is None else dict(env)
        )
    try:
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                with urllib.request.urlopen(ready_url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"{cmd[2] if len(cmd) > 2 else cmd[0]} did not start: "
                    f"{log.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.5)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=stop_timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
