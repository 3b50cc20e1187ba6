"""What servers say about themselves (issue 33, part 3), through the agent and the chat session, against real servers:
this project's guidance server (tests/servers/guidance_server.py) and the real @modelcontextprotocol/server-everything.

- a server's instructions reach the model in the system message, fenced as that server's words, capped, only for
  servers whose tools are offered, and not at all with the setting off;
- content a server marks for the person only is shown in the chat and kept in the log, but never sent to the model;
  content for the model only is not shown to the person; the Tool Caller, with neither, keeps every part;
- a tool list's lifetime (``ttlMs``) is honoured in a chat: past it, the next turn lists the tools again and sees a
  tool the server added without telling anyone; a long lifetime, or none, means no listing again.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

from fixtures.python_servers import SERVERS_DIR, RunningServer, running_server
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.agent.server_guidance import MAX_INSTRUCTION_BYTES
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.client import McpClient
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool
from scripted_model import ScriptedChatModel, calls, offered, run_scripted, scripted, tool_texts

GUIDANCE_SCRIPT = SERVERS_DIR / "guidance_server.py"
INSTRUCTIONS = "Ask weather for a city's weather; it answers in degrees Celsius."
_PATIENCE = 60.0
"""Seconds a test waits for an event before it fails (a wait for readiness, not a timing)."""


def guidance_spec(*args: str) -> ServerSpec:
    return ServerSpec(target=shlex.join([sys.executable, str(GUIDANCE_SCRIPT), *args]), name="guidance")


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


def _system(model: ScriptedChatModel, request: int = 0) -> str:
    message = model.requests[request][0][0]
    assert isinstance(message, SystemMessage)
    return message.text


def _fenced_instructions(system: str, server: str) -> str | None:
    found = re.search(
        rf'<server-instructions server="{re.escape(server)}" fence="([0-9a-f]+)">\n(.*?)\n</server-instructions '
        rf'fence="\1">',
        system,
        re.S,
    )
    return found.group(2) if found else None


def test_a_servers_instructions_reach_the_model_fenced_as_its_words() -> None:
    # Given the tools of a server that says how to use it
    model = scripted(AIMessage("Noted."))
    # When the agent runs
    run_scripted(model, _tools(guidance_spec()))
    # Then the model's first request carries the instructions in the system message, fenced and named after the server
    system = _system(model)
    assert _fenced_instructions(system, "guidance") == INSTRUCTIONS
    # And the system message's notice says what those tags hold
    assert "<server-instructions> tags" in system


def test_the_instructions_are_left_out_with_the_setting_off() -> None:
    model = scripted(AIMessage("Noted."))
    run_scripted(model, _tools(guidance_spec()), config=AgentConfig(server_instructions=False))
    assert INSTRUCTIONS not in _system(model)
    assert "<server-instructions server=" not in _system(model)


def test_a_server_whose_tools_are_not_offered_gives_no_instructions() -> None:
    # Given a policy that blocks every tool of the server
    model = scripted(AIMessage("Noted."))
    run_scripted(model, _tools(guidance_spec()), config=AgentConfig(policy=ToolPolicy(deny=".*")))
    assert INSTRUCTIONS not in _system(model)


def test_instructions_of_megabytes_are_cut_with_a_note() -> None:
    # Given a server whose instructions are a megabyte long
    model = scripted(AIMessage("Noted."))
    run_scripted(model, _tools(guidance_spec("--instructions-bytes", "1000000")))
    text = _fenced_instructions(_system(model), "guidance")
    assert text is not None
    # Then the model gets at most the cap of them, and a note saying they were cut
    kept, note = text.rsplit("\n", 1)
    assert len(kept.encode()) <= MAX_INSTRUCTION_BYTES
    assert kept.strip("é") == ""
    assert note == f"[The server's instructions were cut here: the first {MAX_INSTRUCTION_BYTES:,} of 1,000,000 bytes.]"


def test_server_everythings_instructions_reach_the_model(everything_stdio_command: list[str]) -> None:
    spec = ServerSpec(target=shlex.join(everything_stdio_command), name="everything")
    model = scripted(AIMessage("Noted."))
    run_scripted(model, _tools(spec))
    text = _fenced_instructions(_system(model), "everything")
    assert text is not None and len(text) > 100


def test_content_for_the_person_only_never_reaches_the_model_and_stays_in_the_log() -> None:
    # Given a tool answering one part for the person, one for the model and one for both
    model = scripted(calls(("c1", "weather", {"city": "Bern"})), AIMessage("Sunny."))
    run = run_scripted(model, _tools(guidance_spec()))
    # Then the model reads the parts for it and for both, and a note that a part was for the user only
    [text] = tool_texts(run)
    assert "raw: 21.5C (for the model)" in text and "21 degrees (for both)" in text
    assert "for the person" not in text
    assert "1 part(s) of the result were meant for the user only" in text
    # And the tool-call log keeps the whole result, with whom each part was for
    [entry] = run.log
    parts = json.loads(entry.result or "")["content"]
    assert [(part["text"], part.get("audience")) for part in parts] == [
        ("Sunny in Bern (for the person)", ["user"]),
        ("raw: 21.5C (for the model)", ["assistant"]),
        ("21 degrees (for both)", None),
    ]


def test_server_everythings_user_only_message_is_not_sent_to_the_model(everything_stdio_command: list[str]) -> None:
    spec = ServerSpec(target=shlex.join(everything_stdio_command), name="everything")
    tools = [tool for tool in _tools(spec) if tool.name == "get-annotated-message"]
    model = scripted(
        calls(("c1", "get-annotated-message", {"messageType": "success"})),
        AIMessage("Done."),
    )
    run = run_scripted(model, tools)
    [text] = tool_texts(run)
    assert "Operation completed successfully" not in text
    assert "Operation completed successfully" in (run.log[0].result or "")


def test_the_tool_caller_keeps_every_part_whoever_it_is_for() -> None:
    # Given the Tool Caller, which has no model and no chat, over a row that asks the weather
    [weather] = [tool for tool in _tools(guidance_spec()) if tool.name == "weather"]
    written: list[pa.RecordBatch] = []
    call_table_sync(weather, [pa.record_batch({"city": ["Bern"]})], written.append, options=CallerOptions())
    # Then its result holds the parts for the person, for the model and for both, as the server sent them
    [result] = pa.Table.from_batches(written).column("Result").to_pylist()
    assert result == "Sunny in Bern (for the person)\nraw: 21.5C (for the model)\n21 degrees (for both)"


# -- the chat ----------------------------------------------------------------------------------------------------


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + _PATIENCE
    while not (found := check()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)
    return found


def _turn(session: ChatSession, text: str) -> list[dict[str, Any]]:
    """Send ``text`` and return the turn's events, once it ended."""
    after = session.events()[-1]["seq"] if session.events() else 0
    session.send(text)
    end = _until(lambda: next((e for e in session.events(after) if e["type"] == "turn_end"), None), "the turn's end")
    return [event for event in session.events(after) if event["seq"] <= end["seq"]]


def test_the_chat_shows_the_person_their_content_and_not_the_models() -> None:
    model = scripted(calls(("c1", "weather", {"city": "Bern"})), AIMessage("Sunny."))
    with ChatSession(model, _tools(guidance_spec()), config=AgentConfig()) as session:
        events = _turn(session, "Weather in Bern?")
    [ended] = [event for event in events if event["type"] == "tool_end"]
    assert ended["text"] == (
        "Sunny in Bern (for the person)\n21 degrees (for both)\n"
        "[1 part(s) for the assistant only are not shown here; the tool-call log keeps them.]"
    )
    [reply] = [m for m in model.requests[1][0] if isinstance(m, ToolMessage)]
    assert "for the person" not in reply.text


def test_the_chat_lists_each_servers_instructions_on_request() -> None:
    with ChatSession(scripted(), _tools(guidance_spec()), config=AgentConfig()) as session:
        assert session.instructions() == [{"server": "guidance", "text": INSTRUCTIONS, "cut": False}]


def _guidance_http(tmp_path: Path, *args: str) -> contextlib.AbstractContextManager[RunningServer]:
    """The guidance server over Streamable HTTP, started with ``args``."""
    return running_server([sys.executable, str(GUIDANCE_SCRIPT), "--port", "0", *args], tmp_path / "server.log")


def _add_forecast_behind_the_chats_back(url: str) -> None:
    """Call ``add_forecast`` over a connection of the test's own: the chat's session hears nothing of it."""

    async def call() -> None:
        async with McpClient(ServerSpec(target=url, name="side")) as client:
            await client.call_tool("add_forecast")

    anyio.run(call)


def _second_turn_offers(tmp_path: Path, *args: str) -> list[str]:
    """The tools the model is offered in a chat's second turn, after the server (started with ``args``) added one
    between the turns."""
    model = scripted(AIMessage("Hello."), AIMessage("Still here."))
    with _guidance_http(tmp_path, *args) as server:
        tools = _tools(ServerSpec(target=server.url, name="guidance"))
        with ChatSession(model, tools, config=AgentConfig()) as session:
            _turn(session, "Hi")
            _add_forecast_behind_the_chats_back(server.url)
            _turn(session, "And now?")
    return offered(model, 1)


def test_a_tool_list_past_its_lifetime_is_listed_again_before_the_next_turn(tmp_path: Path) -> None:
    assert "forecast" in _second_turn_offers(tmp_path, "--ttl-ms", "1")


def test_a_tool_list_within_its_lifetime_is_not_listed_again(tmp_path: Path) -> None:
    assert "forecast" not in _second_turn_offers(tmp_path, "--ttl-ms", "3600000")


def test_a_tool_list_without_a_lifetime_is_not_listed_again(tmp_path: Path) -> None:
    assert "forecast" not in _second_turn_offers(tmp_path)
