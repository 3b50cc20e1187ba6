"""The Agent Chat views' session registry (``nodes.agent_chat.sessions``): a chat session no view uses any more is
closed, with the stdio servers it started, since KNIME calls nothing when a view closes.

Real chat sessions over the real demo server run over stdio; the model is scripted. The registry's clock is the
test's, so no test sleeps through the idle time.
"""

from __future__ import annotations

import shlex
import time

import anyio
from langchain_core.messages import AIMessage

from fixtures.processes import alive_pids, child_pids
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from nodes.agent_chat.sessions import ChatSessions, chat_key
from scripted_model import calls, scripted

_IDLE = 600.0


def _chat_with_a_started_server(demo_stdio_command: list[str]) -> tuple[ChatSession, set[int]]:
    """An open chat session that called the demo server's echo once, and the processes it started (the server)."""
    spec = ServerSpec(target=shlex.join(demo_stdio_command), name="demo")
    tools = anyio.run(lambda: list_server_tools(spec)).tools
    before = child_pids()
    session = ChatSession(
        scripted(calls(("c1", "echo", {"text": "hi"})), AIMessage("Done.")), tools, config=AgentConfig()
    )
    session.open()
    session.send("Echo hi.")
    deadline = time.monotonic() + 60
    while not any(event["type"] == "turn_end" for event in session.events()):
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.01)
    return session, child_pids() - before


def test_a_session_idle_past_the_idle_time_is_closed_with_its_server_and_a_used_one_is_kept(
    demo_stdio_command: list[str],
) -> None:
    now = [0.0]
    sessions = ChatSessions(idle_seconds=_IDLE, clock=lambda: now[0])
    idle, idle_server = _chat_with_a_started_server(demo_stdio_command)
    used, used_server = _chat_with_a_started_server(demo_stdio_command)
    try:
        # Given two views' sessions, one used by its page just now
        sessions.adopt(chat_key("idle"), idle)
        sessions.adopt(chat_key("used"), used)
        assert len(idle_server) == len(used_server) == 1
        # When the idle time passes for the first, the page having polled the second in between
        now[0] = _IDLE / 2
        sessions.touch(used)
        now[0] = _IDLE + 1
        sessions.reap()
        # Then the first is closed, its server gone, and the second still runs
        assert alive_pids(idle_server) == set() and alive_pids(used_server) == used_server
    finally:
        sessions.close_all()
    assert alive_pids(used_server) == set()


def test_the_same_nodes_key_is_the_same_and_another_nodes_differs() -> None:
    assert chat_key("AgentChat", {"a": 1}, [{"tool": "x"}]) == chat_key("AgentChat", {"a": 1}, [{"tool": "x"}])
    assert chat_key("AgentChat", {"a": 1}) != chat_key("AgentChat", {"a": 2})
