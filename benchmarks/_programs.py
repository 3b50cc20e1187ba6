"""Figure 14: a program tool's call through the dispatcher against the raw ``asyncio`` subprocess of the same argv.

Both sides run ``/bin/echo TEXT`` (an instant program: what is left is starting it, reading it and the client's own
work). Ours is what every node and command does with a program row: :func:`~knime_mcp.programs.program_tools` made
the sealed row once, and each call goes through :class:`~knime_mcp.calls.dispatch.Dispatcher` on a
:class:`~knime_mcp.calls.pool.ClientPool` that checks unsealed rows, as the agent and Tool Caller nodes use it
(schema check, seal check, environment, its own process group, output and stderr read within bounds, the group
killed, the call record). The raw peer is ``asyncio.create_subprocess_exec`` of the same argv with the same pipes
(stdin closed, stdout and stderr read by ``communicate``) and its exit status checked. Sequential calls (14), a
burst of concurrent calls (14b, reported, not judged: fifty processes started at once on two cores are bound by
the CPU, and their rounds scatter from 0.9x to 2.8x run to run) and the sequential calls' CPU time in this process
(14c: the client's own work, which the machine's load moves far less than the wall time); every answer is checked.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import TypeVar

import anyio
from _rounds import Call, Rounds, calls_at_once, calls_in_a_row, interleave_async

from knime_mcp.calls.dispatch import Dispatcher
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config.program import ProgramSpec
from knime_mcp.programs import program_tools

__all__ = ["PROGRAM_BAR", "PROGRAM_CPU_BAR", "program_figures", "program_rounds"]

F = TypeVar("F")
"""``run.py``'s figure type, which this module does not import (``run.py`` imports this one)."""

ECHO = "/bin/echo"
SEQUENTIAL = 100
CONCURRENT = 50
PROGRAM_BAR = 2.5
"""A call's wall time through the dispatcher against the raw subprocess: 0.9x-1.4x (median rounds) at load 1.5-4,
1.4x-1.7x at load 7 and 2.1x at load 9, since the runner awaits the program through a pidfd instead of asyncio's
thread per process and the row's program is made once (1.4x-1.9x at load 2-6 before); with our own work doubled
(``--slowdown 2``) 1.3x-1.7x. The wall time grows with the machine's load and its rounds scatter too widely
(0.5x-2.2x in one run) to tell today from a doubling, so this bar only catches a call far slower, and 14c, the CPU
time, judges a doubling."""
PROGRAM_CPU_BAR = 1.4
"""The same calls' CPU time in this process, the client's own work, which the load moves far less: 1.16x-1.23x at
load 7 (1.03x-1.09x in a plain script at load 3), 2.03x with our own work doubled (``--slowdown 2``); 1.4x lies
between, nearer today's."""


def _echoed(text: str) -> str:
    """What ``echo`` answers ``text``."""
    return f"{text}\n"


async def _raw(text: str) -> str:
    process = await asyncio.create_subprocess_exec(
        ECHO, text, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    output, _ = await process.communicate()
    assert process.returncode == 0, process.returncode
    return output.decode()


def _ours(dispatcher: Dispatcher) -> Call:
    (tool,) = program_tools([ProgramSpec(name="echo", command=ECHO, args=("{text}",))])

    async def call(text: str) -> str:
        outcome = await dispatcher.call(tool, {"text": text})
        assert outcome.ok and outcome.result is not None, outcome.record.error
        return outcome.result.text

    return call


async def program_rounds(rounds: int) -> tuple[Rounds, Rounds, Rounds]:
    """Rounds of :data:`SEQUENTIAL` sequential calls (wall time, then this process's CPU time) and of
    :data:`CONCURRENT` at once: ours against the raw subprocess."""
    async with ClientPool(check_unsealed=True) as pool:
        ours = _ours(Dispatcher(pool))
        await calls_in_a_row(ours, 10, _echoed)
        await calls_in_a_row(_raw, 10, _echoed)
        sequential = await interleave_async(
            partial(calls_in_a_row, ours, SEQUENTIAL, _echoed),
            partial(calls_in_a_row, _raw, SEQUENTIAL, _echoed),
            rounds,
        )
        cpu = await interleave_async(
            partial(calls_in_a_row, ours, SEQUENTIAL, _echoed, time.process_time),
            partial(calls_in_a_row, _raw, SEQUENTIAL, _echoed, time.process_time),
            rounds,
        )
        concurrent = await interleave_async(
            partial(calls_at_once, ours, CONCURRENT, _echoed), partial(calls_at_once, _raw, CONCURRENT, _echoed), rounds
        )
        return sequential, cpu, concurrent


def program_figures(judged: Callable[..., F], rounds: int) -> Iterator[F]:
    """Figures 14 (sequential, ms a call), 14b (a burst, wall seconds) and 14c (the sequential calls' CPU time in
    this process), judged by ``judged`` (``run.py``'s)."""
    sequential, cpu, concurrent = anyio.run(program_rounds, rounds)
    ours, raw = sequential.medians(1000 / SEQUENTIAL)
    what = f"a program tool (`{ECHO}`), {SEQUENTIAL} sequential calls, the dispatcher vs a raw `asyncio` subprocess"
    yield judged("14", what, sequential, f"{ours:.2f} vs {raw:.2f} ms/call", PROGRAM_BAR)
    ours, raw = concurrent.medians(1000)
    what = f"the same, {CONCURRENT} concurrent calls"
    yield judged("14b", what, concurrent, f"{ours:.0f} vs {raw:.0f} ms", None)
    ours, raw = cpu.medians(1000 / SEQUENTIAL)
    what = "the same calls, this process's CPU time (the client's own work; the program's is not in it)"
    yield judged("14c", what, cpu, f"{ours:.2f} vs {raw:.2f} ms/call", PROGRAM_CPU_BAR)
