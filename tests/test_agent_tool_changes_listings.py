"""How often an agent run lists a server's tools again: once after the first call of each tool, at every call of a
tool that changed the list without a notification, and never just because a turn called a tool; counted by
tests/servers/listing_count_server.py, a real server on the SDK's `MCPServer` (which declares `tools.listChanged`)
over stdio, with the scripted chat model."""

from __future__ import annotations

import json
import shlex
import sys

import anyio
from langchain_core.messages import AIMessage

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.call_log import TOOLS_CHANGED
from knime_mcp.agent.loop import AgentRun
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, offered, run_scripted, scripted, tool_texts

COUNTING = ServerSpec(
    target=shlex.join([sys.executable, str(SERVERS_DIR / "listing_count_server.py")]), name="counting"
)
"""Over stdio every session has a process of its own, so the count a run reads is its own session's."""


def _tools() -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(COUNTING)).tools


def _listings(run: AgentRun) -> int:
    """What the run's call of `listings` answered: how many times the server had listed its tools by then."""
    (entry,) = [entry for entry in run.log if entry.tool == "listings"]
    (part,) = json.loads(entry.result or "")["content"]
    return int(part["text"])


def test_a_run_calling_the_same_tool_five_times_lists_the_tools_once_after_its_first_call() -> None:
    # Given a model that calls `echo` in five turns, then asks the server how often it listed its tools
    turns = [calls((f"c{n}", "echo", {"text": f"turn {n}"})) for n in range(1, 6)]
    model = scripted(*turns, calls(("c6", "listings", {})), AIMessage("Done."))
    # When the agent runs
    run = run_scripted(model, _tools())
    # Then the server listed its tools as the session opened and once after the first call of `echo`: not once a turn
    assert _listings(run) == 2
    assert [(entry.tool, entry.status) for entry in run.log] == [("echo", "ok")] * 5 + [("listings", "ok")]
    assert all(f"turn {n}" in text for n, text in enumerate(tool_texts(run)[:5], 1))


def test_a_tool_that_changes_the_tools_without_telling_is_followed_by_a_listing_at_every_call() -> None:
    # Given a server whose `sprout` adds a tool at every call and sends no notification
    model = scripted(
        *(calls((f"c{n}", "sprout", {})) for n in range(1, 4)), calls(("c4", "listings", {})), AIMessage("Done.")
    )
    # When the agent calls `sprout` in three turns
    run = run_scripted(model, _tools())
    # Then every call is followed by a listing (the session's first one, then one per call), and each new tool is
    # offered from the next model call
    assert _listings(run) == 4
    for turn in range(1, 4):
        assert f"sprout_{turn}" in offered(model, turn) and f"sprout_{turn + 1}" not in offered(model, turn)
    changes = [json.loads(entry.result or "") for entry in run.log if entry.tool == TOOLS_CHANGED]
    assert changes == [{"added": [f"sprout_{turn}"], "removed": []} for turn in range(1, 4)]
