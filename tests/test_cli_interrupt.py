"""Ctrl-C in ``knime-mcp call`` and ``knime-mcp agent``, run as a person runs them: the command is a child in the
foreground of its own terminal (a process group), the interrupt comes once the call is under way on the server, and
the server's own record says what became of it. The task server (the TypeScript SDK's, tests/peers/task_server.mjs)
writes down each task it starts and how it ends, as it happens."""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from cli_runs import press_ctrl_c, start_cli
from fakes.scripted_providers import ScriptedEndpoint, answer, tool_calls
from fixtures.npm_servers import PEERS_DIR, NodePeers
from knime_mcp.agent.chat_events import STOPPED
from knime_mcp.cli.agent import INTERRUPTED

_PATIENCE = 120.0
"""Seconds to wait for what a test expects before it fails (a wait for readiness, not a timing)."""


def _task_server(peers: NodePeers, marks: Path) -> list[str]:
    """The task server, whose report would take two stages of a minute, noting its tasks in ``marks``."""
    return [peers.node, str(PEERS_DIR / "task_server.mjs"), "--stage-ms", "60000", "--marks", str(marks)]


def _wait_for(marks: Path, word: str, child: subprocess.Popen[str]) -> None:
    """Wait until the server noted ``word``; fail with what the command said if it ended first."""
    deadline = time.monotonic() + _PATIENCE
    while word not in (marks.read_text() if marks.exists() else "").split():
        if child.poll() is not None:
            pytest.fail(f"the command ended before the server noted {word!r}: {child.communicate()}")
        assert time.monotonic() < deadline, f"the server never noted {word!r}"
        time.sleep(0.02)


def _interrupted(child: subprocess.Popen[str], marks: Path) -> tuple[int, str, str]:
    """Press Ctrl-C once the server noted the task started; the command's exit code, stdout and stderr."""
    try:
        _wait_for(marks, "started", child)
        press_ctrl_c(child)
        out, err = child.communicate(timeout=_PATIENCE)
    finally:
        child.kill()
    return child.returncode, out, err


def test_ctrl_c_in_call_cancels_the_task_on_the_server(npm_peers: NodePeers, tmp_path: Path) -> None:
    # Given a call of a tool that runs as a task on the server
    marks = tmp_path / "marks.txt"
    child = start_cli(
        "call", "--tasks", "--", *_task_server(npm_peers, marks), "--", "slow_report", "--args", '{"topic": "x"}'
    )
    # When the person presses Ctrl-C while it runs
    code, out, err = _interrupted(child, marks)
    # Then the command says it was interrupted, and the server cancelled the task (tasks/cancel reached it before the
    # command ended), which never completed
    assert (code, out) == (130, ""), err
    assert err.endswith("Error: interrupted.\n")
    assert marks.read_text().split() == ["started", "cancelled"]


def test_ctrl_c_in_agent_cancels_the_call_on_the_server_and_prints_the_run_so_far_marked_interrupted(
    npm_peers: NodePeers, demo_stdio_command: list[str], tmp_path: Path
) -> None:
    # Given an agent whose model first adds two numbers (a call that ends), then asks for a report that runs as a task
    marks = tmp_path / "marks.txt"
    replies = [
        tool_calls(("c1", "add", {"a": 2, "b": 3})),
        tool_calls(("c2", "slow_report", {"topic": "rows"})),
        answer("Never reached."),
    ]
    servers = [shlex.join(demo_stdio_command), shlex.join(_task_server(npm_peers, marks))]
    with ScriptedEndpoint("ollama", replies) as endpoint:
        child = start_cli(
            "agent", *servers, "--tasks", "--provider", "ollama", "--base-url", endpoint.base_url, "--model", "m",
            "--prompt", "Add, then report.",
        )  # fmt: skip
        # When the person presses Ctrl-C while the report runs
        code, out, err = _interrupted(child, marks)
    # Then the task was cancelled on the server, the model was not asked again, and the command printed the run so
    # far: the finished call's turn, the cut-off call answered as cancelled, the tool-call log with both, and that
    # the run was interrupted
    assert marks.read_text().split() == ["started", "cancelled"]
    assert len(endpoint.received) == 2
    assert code == 130 and err.endswith("Error: interrupted.\n"), err
    lines = out.splitlines()
    assert "[user] Add, then report." in lines and "5" in lines  # the result of add, fenced on lines of its own
    cut_off = [line for line in lines if line.startswith("[tool slow_report [")]
    assert [line.split("]] ", 1)[1] for line in cut_off] == [STOPPED], out
    rows = [re.split(r"\s{2,}", line) for line in lines if line.startswith(("1 ", "2 "))]  # columns 2+ spaces apart
    table = {row[2]: row[5] for row in rows}
    assert table == {"add": "ok", "slow_report": "cancelled"}, out
    assert lines[-1] == INTERRUPTED


def test_ctrl_c_at_the_approval_prompt_ends_the_agent_without_waiting_for_an_answer(ledger_server_url: str) -> None:
    # Given an agent that asks the person on the terminal before a destructive call, and a person who never answers
    replies = [tool_calls(("c1", "delete_entry", {"key": "k-interrupt", "entry": "e1"})), answer("Never reached.")]
    with ScriptedEndpoint("ollama", replies) as endpoint:
        child = start_cli(
            "agent", ledger_server_url, "--provider", "ollama", "--base-url", endpoint.base_url, "--model", "m",
            "--prompt", "Tidy up.", "--destructive", "allow", "--ask-destructive", "--approve", "ask",
            stdin=subprocess.PIPE,
        )  # fmt: skip
        terminal, child.stdin = child.stdin, None  # stays open: communicate() would close it, an answer of "nothing"
        assert terminal is not None
        try:
            _wait_for_output(child, "Approve the call of delete_entry")
            # When they press Ctrl-C at the question
            press_ctrl_c(child)
            # Then the command ends as interrupted at once: the line nobody typed is not waited for
            out, err = child.communicate(timeout=_PATIENCE)
        finally:
            child.kill()
            terminal.close()
    assert (child.returncode, out.splitlines()[-1:]) == (130, [INTERRUPTED]), err
    # And the call was neither made nor denied: the model was not asked again
    assert len(endpoint.received) == 1


def _wait_for_output(child: subprocess.Popen[str], words: str) -> None:
    """Read the command's stderr until it says ``words``; fail with what it said if it ended first."""
    said = ""
    assert child.stderr is not None
    while words not in said:
        char = child.stderr.read(1)
        if not char:
            pytest.fail(f"the command ended before it said {words!r}: {said}")
        said += char
