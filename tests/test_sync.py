"""The blocking facade's cancellation: KNIME's cancel button must stop a run even while a job waits for the node's
own thread (workflow tools run there), and never leave that thread or the event loop stuck."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from knime_mcp.errors import CancelledByUser
from knime_mcp.mcp.sync import CallerThread, run_sync


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
