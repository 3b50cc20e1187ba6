"""Interleaved rounds: every figure times ours and its baseline in alternating rounds and judges the ratios.

Rounds measured back to back share whatever else the machine is doing, so the per-round ratio stays meaningful on a
busy machine while the absolute times do not. The side that goes first alternates too. A figure reports every
round's ratio and their minimum, and is judged by the median round: the round whose ratio is the median (the lower
of the two middle ones for an even count), whose own two times are the ones printed, so the numbers shown always give
the ratio judged.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio

MIN_ROUNDS = 5


@dataclass(frozen=True)
class Rounds:
    """Seconds per round of ours and of the baseline, in the order measured."""

    ours: list[float]
    base: list[float]

    @property
    def ratios(self) -> list[float]:
        return [mine / theirs for mine, theirs in zip(self.ours, self.base, strict=True)]

    @property
    def middle(self) -> int:
        """The index of the median round: the one whose ratio is the median (the lower middle for an even count)."""
        ratios = self.ratios
        return sorted(range(len(ratios)), key=ratios.__getitem__)[(len(ratios) - 1) // 2]

    @property
    def ratio(self) -> float:
        """The median round's ratio: what a bar is judged by."""
        return self.ratios[self.middle]

    def spread(self) -> str:
        """The per-round ratios, their minimum and the median round's."""
        ratios = self.ratios
        listed = " ".join(f"{ratio:.2f}" for ratio in ratios)
        return f"rounds {listed}; min {min(ratios):.2f}x, median round {self.ratio:.2f}x"

    def medians(self, scale: float = 1.0) -> tuple[float, float]:
        """The median round's own times (ours, baseline), times ``scale``: their quotient is :attr:`ratio`. Each
        side's own median could come from different rounds and contradict the ratio judged."""
        middle = self.middle
        return self.ours[middle] * scale, self.base[middle] * scale


@contextmanager
def same_gc_state() -> Iterator[None]:
    """Timing inside starts from the same garbage-collector state whatever ran before: a full collection, then the
    surviving objects frozen, so each side pays only for collecting what it allocates. Without it, a full collection
    walks every object of this process (both clients, all their libraries), and whichever side happens to cross
    the threshold pays for it."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def timed(work: Callable[[], object]) -> float:
    """Seconds for ``work()``, from :func:`same_gc_state`."""
    with same_gc_state():
        started = time.perf_counter()
        work()
        return time.perf_counter() - started


def interleave(ours: Callable[[], float], base: Callable[[], float], rounds: int) -> Rounds:
    """``rounds`` rounds of each side (each call returns its own seconds), alternating which goes first."""
    mine: list[float] = []
    theirs: list[float] = []
    for number in range(max(rounds, MIN_ROUNDS)):
        if number % 2:
            theirs.append(base())
            mine.append(ours())
        else:
            mine.append(ours())
            theirs.append(base())
    return Rounds(mine, theirs)


async def interleave_async(
    ours: Callable[[], Awaitable[float]], base: Callable[[], Awaitable[float]], rounds: int
) -> Rounds:
    """:func:`interleave` for sides that run on the event loop."""
    mine: list[float] = []
    theirs: list[float] = []
    for number in range(max(rounds, MIN_ROUNDS)):
        if number % 2:
            theirs.append(await base())
            mine.append(await ours())
        else:
            mine.append(await ours())
            theirs.append(await base())
    return Rounds(mine, theirs)


Call = Callable[[str], Awaitable[Any]]
"""One tool call of a figure's side, given its text argument; its answer."""


async def calls_in_a_row(
    call: Call, count: int, expected: Callable[[str], Any], clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds by ``clock`` (wall time, or this process's CPU time) of ``count`` calls one after the other, each
    answer checked against ``expected`` of its argument."""
    with same_gc_state():
        started = clock()
        for number in range(count):
            text = f"call {number}"
            answer = await call(text)
            assert answer == expected(text), answer
        return clock() - started


async def calls_at_once(call: Call, count: int, expected: Callable[[str], Any]) -> float:
    """Seconds of ``count`` calls started together, the answers checked against ``expected`` afterwards."""
    answers: dict[int, Any] = {}

    async def one(number: int) -> None:
        answers[number] = await call(f"call {number}")

    with same_gc_state():
        started = time.perf_counter()
        async with anyio.create_task_group() as tasks:
            for number in range(count):
                tasks.start_soon(one, number)
        seconds = time.perf_counter() - started
    wanted = {number: expected(f"call {number}") for number in range(count)}
    assert answers == wanted, list(answers.items())[:3]
    return seconds
