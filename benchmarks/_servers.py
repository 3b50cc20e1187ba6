"""Benchmark servers: the bundled demo server over each transport, started and stopped by the benchmark itself.

HTTP transports start once per run on 127.0.0.1 with ``--port 0``; the first stdout line tells the URL (:func:`served`,
also for figure 11's slow servers). Stdio servers are started by whoever connects (the project's client or the raw
SDK), from :data:`DEMO_STDIO`.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

DEMO_STDIO = [sys.executable, "-m", "knime_mcp.demo_server"]
"""The demo server over stdio, its default."""
FAST_STDIO = [sys.executable, str(Path(__file__).with_name("fast_server.py"))]
"""An SDK-free stdio server with one instant `echo` tool: the client's own cost per row (7c) and the 250,000 calls of
the memory figure (7b)."""

_MARKER = " listening on "
_STOP_GRACE_SECONDS = 5


@contextlib.contextmanager
def demo_server(transport: str) -> Iterator[str]:
    """Run the demo server over ``streamable-http`` or ``sse`` and yield its URL; stop it afterwards."""
    with served([sys.executable, "-m", "knime_mcp.demo_server", "--transport", transport, "--port", "0"]) as url:
        yield url


@contextlib.contextmanager
def served(command: list[str]) -> Iterator[str]:
    """Run an HTTP server that prints `… listening on URL` first, and yield the URL; stop it afterwards."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if _MARKER not in line:
            raise RuntimeError(f"{' '.join(command)} did not print its URL (got {line!r})")
        yield line.split(_MARKER, 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.wait(timeout=_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
