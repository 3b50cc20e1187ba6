"""The blocking facade's cancellation: KNIME's cancel button must stop a run even while a job waits for the node's
own thread (workflow tools run there), and never leave that thread or the event loop stuck."""

from __future__ import annotations

import os
import signal
import threading
import time

import anyio
import pytest

from knime_mcp.config import ServerSpec
from knime_mcp.errors import CancelledByUser
from knime_mcp.mcp.sync import CallerThread, SyncMcpClient, run_sync


def _run_in_thread(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_cancel_while_a_job_waits_for_the_callers_thread_ends_the_run() -> None:
    # Given a run whose task hands a job to the caller's thread exactly while the cancel button is being read
    caller = CallerThread()
    job_ran = threading.Event()
    asked, queued = threading.Event(), threading.Event()

    async def work() -> str:
        await anyio.to_thread.run_sync(asked.wait)
        queued.set()  # caller.run queues the job at once, before its first await
        return await caller.run(job_ran.set)

    def cancelled() -> bool:
        asked.set()  # the job is queued after the last look at the queue, before the run is cancelled
        queued.wait(timeout=5)
        time.sleep(0.05)
        return True

    outcome: list[BaseException | str] = []

    def node_thread() -> None:
        try:
            outcome.append(run_sync(work, cancelled=cancelled, caller_thread=caller))
        except BaseException as exc:
            outcome.append(exc)

    # When the run is cancelled
    thread = _run_in_thread(node_thread)
    thread.join(timeout=10)
    # Then the run ends as cancelled (before the fix it hung forever), and the abandoned job never runs
    assert not thread.is_alive(), "run_sync hung after cancel with a job queued for the caller's thread"
    assert len(outcome) == 1 and isinstance(outcome[0], CancelledByUser)
    assert not job_ran.is_set()


def test_a_job_for_the_callers_thread_runs_there_and_its_error_reaches_the_task() -> None:
    caller = CallerThread()
    seen: list[int] = []

    def failing() -> None:
        seen.append(threading.get_ident())
        raise ValueError("tool failed")

    async def work() -> str:
        with pytest.raises(ValueError, match="tool failed"):
            await caller.run(failing)
        return "carried on"

    assert run_sync(work, caller_thread=caller) == "carried on"
    assert seen == [threading.get_ident()]


class _Interrupted(Exception):
    """What the test's signal handler raises in the waiting thread, as Ctrl-C raises KeyboardInterrupt."""


def test_an_interrupted_call_is_cancelled_and_frees_its_slot(demo_http_url: str) -> None:
    # Given a client with one call slot, whose caller is interrupted (as Ctrl-C does) while a long call is in flight
    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupted()

    with SyncMcpClient(ServerSpec(target=demo_http_url), max_concurrency=1) as client:
        previous = signal.signal(signal.SIGUSR1, interrupt)
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1))
        timer.start()
        try:
            with pytest.raises(_Interrupted):
                client.call_tool("sleep", {"seconds": 30})
        finally:
            timer.join()
            signal.signal(signal.SIGUSR1, previous)

        # When the caller goes on with another call
        answers: list[str] = []
        thread = _run_in_thread(lambda: answers.append(client.call_tool("echo", {"text": "next"}).text))
        thread.join(timeout=10)

        # Then the interrupted call was cancelled and the slot is free (before: it held it for its 30 s)
        assert not thread.is_alive(), "the interrupted call kept running and held the only slot"
        assert answers == ["next"]


def test_calls_from_several_threads_share_one_session(demo_http_url: str) -> None:
    # Given one client used from eight threads at once
    with SyncMcpClient(ServerSpec(target=demo_http_url)) as client:
        answers: dict[int, list[str]] = {}

        def calls(number: int) -> None:
            answers[number] = [client.call_tool("echo", {"text": f"{number}-{n}"}).text for n in range(20)]

        threads = [_run_in_thread(lambda number=number: calls(number)) for number in range(8)]
        for thread in threads:
            thread.join(timeout=60)

    # Then every call got its own answer
    assert answers == {number: [f"{number}-{n}" for n in range(20)] for number in range(8)}
