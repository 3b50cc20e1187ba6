"""Figure 13: how late a tool run as an MCP task ends, against a plain call of the same work.

:mod:`task_server` (SDK-free, stdio) does a fixed amount of work either way, and asks for ``tasks/get`` every
``pollInterval``. Each round calls its tool through one :class:`~knime_mcp.mcp.client.McpClient` session, once as a
task (create, poll, fetch the result) and once plainly; the round's lateness is the task's time less the plain
call's. A client polling at the server's interval sees the end within one interval (plus a round trip); one whose
waits grow sees it later the longer the task runs. Every answer is checked.
"""

from __future__ import annotations

import shlex
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import anyio
from _rounds import Rounds, interleave_async

from knime_mcp.config import ServerSpec
from knime_mcp.mcp.client import McpClient

TASK_SERVER = Path(__file__).with_name("task_server.py")
POLL_MS = 1000
"""The ``pollInterval`` the server asks for, and the bar: a task ends at most this much later than a plain call."""

F = TypeVar("F")
"""run.py's ``Figure`` (passed in: run.py imports this module)."""


async def _seconds(client: McpClient, as_task: bool, topic: str) -> float:
    started = time.perf_counter()
    result = await client.call_tool("report", {"topic": topic}, task_support="optional", tasks=as_task)
    seconds = time.perf_counter() - started
    assert result.text == f"Report on {topic}", result.text
    return seconds


async def task_rounds(work_seconds: float, poll_ms: int, rounds: int) -> Rounds:
    """Rounds of the task (``ours``) against the plain call (``base``) of ``work_seconds`` of work."""
    command = [sys.executable, str(TASK_SERVER), "--work-seconds", str(work_seconds), "--poll-ms", str(poll_ms)]
    async with McpClient(ServerSpec(target=shlex.join(command))) as client:
        return await interleave_async(
            lambda: _seconds(client, True, "a task"), lambda: _seconds(client, False, "a plain call"), rounds
        )


def _lateness(rounds: Rounds) -> list[float]:
    """Each round's task time less its plain call's, in seconds."""
    return [task - plain for task, plain in zip(rounds.ours, rounds.base, strict=True)]


def task_figures(figure: Callable[..., F], rounds: int) -> Iterator[F]:
    """Figure 13 (a task of 2 s) and 13b (3 s, where waits growing 1.5x from the interval would poll at 1, 2.5 and
    4.75 s: 1.75 s late), each judged by its median lateness against the server's ``pollInterval`` of 1 s."""
    for number, work_seconds in (("13", 2.0), ("13b", 3.0)):
        measured = anyio.run(task_rounds, work_seconds, POLL_MS, rounds)
        late_ms = [seconds * 1000 for seconds in _lateness(measured)]
        median_ms = statistics.median(late_ms)
        task_s, plain_s = measured.medians()
        what = (
            f"a tool run as an MCP task vs a plain call of the same {work_seconds:.0f} s of work, "
            f"server `pollInterval` {POLL_MS} ms, stdio"
        )
        listed = " ".join(f"{ms:+.0f}" for ms in late_ms)
        yield figure(
            number,
            what,
            f"{task_s:.3f} vs {plain_s:.3f} s",
            median_ms,
            f"{min(late_ms):+.0f} / {median_ms:+.0f} ms",
            f"lateness per round (ms) {listed}; min {min(late_ms):+.0f}, median {median_ms:+.0f}",
            f"≤ {POLL_MS} ms late",
            median_ms <= POLL_MS,
            " ms",
        )
