"""The benchmark suite's own arithmetic and its sensitivity mode, without timing anything: rounds are fed as numbers,
and the slowdown's clock is driven by hand."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import anyio
import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _rounds import Rounds  # noqa: E402
from _servers import FAST_STDIO  # noqa: E402
from _sessions import our_session, our_spec  # noqa: E402
from _slowdown import OURS_ASYNC, THEIRS, _Clock, _stepped, slowed  # noqa: E402

from knime_mcp.calls.dispatch import Dispatcher  # noqa: E402
from knime_mcp.mcp.client import McpClient  # noqa: E402
from knime_mcp.mcp.sync import SyncMcpClient  # noqa: E402

_spec = importlib.util.spec_from_file_location("benchmark_run", BENCHMARKS / "run.py")
assert _spec is not None and _spec.loader is not None
run = sys.modules["benchmark_run"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)
"""``benchmarks/run.py`` by a name of its own: ``tests/run.py`` is ``run`` too."""

CONTRADICTING = Rounds(ours=[14.0, 15.5, 16.0, 14.2, 13.9], base=[15.0, 13.0, 13.5, 15.4, 14.9])
"""Seconds whose sides' own medians (14.2 vs 14.9: ours faster) contradict the median per-round ratio (0.93, ...)
as figure 7 did: "68 vs 65 rows/s -> 1.11x"."""


def _printed_ratio(line: str) -> float:
    return float(re.search(r"-> ([0-9.]+)x", line).group(1))  # type: ignore[union-attr]


def test_a_figure_prints_the_two_times_of_the_round_it_is_judged_by() -> None:
    ours, base = CONTRADICTING.medians()
    figure = run._judged("1", "calls", CONTRADICTING, f"{ours:.2f} vs {base:.2f} s", 1.05)
    shown = [float(number) for number in re.findall(r"([0-9.]+) vs ([0-9.]+) s", figure.line())[0]]
    assert shown[0] / shown[1] == pytest.approx(_printed_ratio(figure.line()), abs=0.005)
    assert CONTRADICTING.ratio in CONTRADICTING.ratios


def test_rows_a_second_agree_with_the_ratio_judged() -> None:
    rounds = Rounds([seconds / 10 for seconds in CONTRADICTING.ours], [seconds / 10 for seconds in CONTRADICTING.base])
    figure = run._judged("7", "call-table", rounds, run.rows_per_second(rounds, 1000), 1.10)
    ours, raw = (float(number) for number in re.findall(r"([0-9.]+) vs ([0-9.]+) rows/s", figure.line())[0])
    assert raw / ours == pytest.approx(_printed_ratio(figure.line()), abs=0.01)
    assert figure.met is (raw / ours <= 1.10)


def test_an_even_count_of_rounds_is_judged_by_a_round_of_its_own() -> None:
    rounds = Rounds(ours=[1.0, 2.0, 3.0, 4.0], base=[1.0, 1.0, 1.0, 1.0])
    ours, base = rounds.medians()
    assert rounds.ratio == ours / base == 2.0


def test_a_bar_to_reach_is_judged_from_below() -> None:
    rounds = Rounds(ours=[20.0, 30.0, 12.0], base=[1.0, 1.0, 1.0])
    assert run._judged("2", "reuse", rounds, "", 15.0, at_most=False).met is True
    assert run._judged("2", "reuse", Rounds([12.0, 13.0, 14.0], [1.0, 1.0, 1.0]), "", 15.0, at_most=False).met is False


class _Suspend:
    """A point where a coroutine hands control back, as waiting for I/O does."""

    def __await__(self) -> Generator[None, None, None]:
        yield


@pytest.fixture
def clock_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    now = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    yield now


def test_the_slowdown_spends_again_what_each_step_of_ours_took_less_the_sdk_s_steps_in_it(
    clock_at: list[float],
) -> None:
    spent: list[float] = []
    clock = _Clock(1.0, spend=spent.append)

    async def sdk_call() -> None:
        clock_at[0] += 0.25
        await _Suspend()
        clock_at[0] += 0.125

    async def project_call() -> str:
        clock_at[0] += 1.0
        await _stepped(sdk_call(), clock.theirs)
        clock_at[0] += 0.5
        await _Suspend()
        clock_at[0] += 2.0
        await _stepped(_nested(clock_at), clock.ours)
        return "answer"

    steps = _stepped(project_call(), clock.ours).__await__()
    with pytest.raises(StopIteration) as finished:
        while True:
            next(steps)
    assert finished.value.value == "answer"
    assert spent == [1.0, 0.5, 2.0 + 4.0]


async def _nested(clock_at: list[float]) -> None:
    """Ours inside ours: counted once, by the outer step."""
    clock_at[0] += 4.0


def test_an_error_thrown_into_a_slowed_call_reaches_the_call(clock_at: list[float]) -> None:
    caught: list[BaseException] = []

    async def project_call() -> None:
        try:
            await _Suspend()
        except KeyError as error:
            caught.append(error)
            raise

    steps = _stepped(project_call(), _Clock(1.0, spend=lambda seconds: None).ours).__await__()
    next(steps)
    with pytest.raises(KeyError):
        steps.throw(KeyError("cancelled"))
    assert [str(error) for error in caught] == ["'cancelled'"]


def test_slowed_calls_answer_as_before_and_the_originals_come_back() -> None:
    async_call, sync_call = McpClient.call_tool, SyncMcpClient.call_tool

    async def echoed() -> str:
        async with our_session("stdio", None, FAST_STDIO) as call:
            return await call("echo", {"text": "grüezi"})

    with slowed(2.0):
        assert McpClient.call_tool is not async_call
        assert anyio.run(echoed) == "grüezi"
        with SyncMcpClient(our_spec("stdio", None, FAST_STDIO)) as client:
            assert client.call_tool("echo", {"text": "hoi"}).text == "hoi"
    assert (McpClient.call_tool, SyncMcpClient.call_tool) == (async_call, sync_call)


def test_the_slowdown_covers_the_dispatcher_and_a_process_start_and_puts_everything_back() -> None:
    wrapped = {(owner, name): owner.__dict__[name] for owner, name in (*OURS_ASYNC, *THEIRS)}
    assert (Dispatcher, "call") in wrapped and (subprocess.Popen, "_execute_child") in wrapped
    with slowed(2.0):
        assert all(owner.__dict__[name] is not function for (owner, name), function in wrapped.items())
        started = subprocess.run([sys.executable, "-c", "print('hoi')"], capture_output=True, text=True, check=True)
        assert started.stdout == "hoi\n"
    assert all(owner.__dict__[name] is function for (owner, name), function in wrapped.items())


def test_a_ratio_is_judged_as_it_is_printed() -> None:
    figure = run._judged("1", "calls", Rounds([4.56], [4.34]), "4.56 vs 4.34 ms/call", 1.05)
    assert "-> 1.05x (≤ 1.05x: met)" in figure.line()
