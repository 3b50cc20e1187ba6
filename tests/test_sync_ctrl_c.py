"""Ctrl-C under :func:`run_sync` with an :class:`Interrupt`: whichever line the waiting thread is on when the press
comes, a run inside :meth:`Interrupt.stoppable` stops there and returns what it has. A press used to surface as a
KeyboardInterrupt wherever the thread was, and one that came on the poll loop's way back to its next poll escaped the
``except`` and cancelled the whole run, which printed nothing of it (``knime-mcp agent`` in a test under load). The
press is pinned to each line in turn with a trace function, not left to timing."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import anyio
import pytest

import knime_mcp.mcp.sync
from knime_mcp.mcp.sync import Interrupt, run_sync

_LINES_TRIED = 20
"""How many lines of the waiting thread a press is pinned to, one per run: some rounds of the poll loop."""


@pytest.fixture(autouse=True)
def _foreground_sigint() -> Iterator[None]:
    """Python's own SIGINT handler, as a program in a terminal's foreground has it: a test command run as a script's
    background job inherits SIGINT ignored, and Python then installs no handler, so a press would reach nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _ctrl_c_at_line(number: int, ready: threading.Event) -> Iterator[list[str]]:
    """Press Ctrl-C (SIGINT to this thread) as the ``number``-th line of :mod:`knime_mcp.mcp.sync` runs in this
    thread once ``ready`` is set; yields where it was pressed (empty when the run ended first). Any tracer already
    here (coverage's) comes back afterwards."""
    pressed_at: list[str] = []
    lines_seen = 0

    def on_line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines_seen
        if event != "line" or pressed_at or not ready.is_set():
            return on_line
        lines_seen += 1
        if lines_seen == number:
            pressed_at.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
            signal.raise_signal(signal.SIGINT)
        return on_line

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        return on_line if frame.f_code.co_filename == knime_mcp.mcp.sync.__file__ else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield pressed_at
    finally:
        sys.settrace(previous)


@pytest.mark.parametrize("line", range(1, _LINES_TRIED + 1))
def test_ctrl_c_on_any_line_of_the_wait_stops_a_run_inside_stoppable_and_it_returns(line: int) -> None:
    # Given a run that waits inside the part Ctrl-C stops, and returns once stopped
    assert threading.current_thread() is threading.main_thread()  # where Python runs signal handlers
    interrupt = Interrupt()
    inside = threading.Event()

    async def work() -> str:
        with interrupt.stoppable():
            inside.set()
            await anyio.sleep_forever()
        return "what the run has"

    # When Ctrl-C comes at one line of the waiting thread's polling
    with _ctrl_c_at_line(line, inside) as pressed_at:
        try:
            result = run_sync(work, interrupt=interrupt)
        except KeyboardInterrupt:
            pytest.fail(f"Ctrl-C at {pressed_at} cancelled the whole run instead of stopping it")
    # Then the run stopped and returned what it had
    assert pressed_at, "the run ended before the press"
    assert (result, interrupt.asked) == ("what the run has", True)
