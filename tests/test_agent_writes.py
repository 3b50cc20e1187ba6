"""The agent runs the calls of tools that may write one at a time per server: a server that reads, changes and writes
back one store (npm server-memory's knowledge graph file) loses the changes of overlapping calls while every call
reports success. Reads still overlap."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from langchain_core.messages import AIMessage

from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.sync import SyncMcpClient, run_sync
from knime_mcp.tools.policy import ToolPolicy
from scripted_model import calls, scripted, tool_texts

GATHERING_SERVER = Path(__file__).parent / "servers" / "gathering_server.py"


def test_two_calls_of_a_tool_that_writes_in_one_message_both_keep_their_changes(
    memory_stdio_command: list[str], tmp_path: Path
) -> None:
    # Given server-memory, whose create_entities (not read-only) reads, changes and rewrites one graph file per call
    spec = ServerSpec(target=shlex.join(memory_stdio_command), env={"MEMORY_FILE_PATH": str(tmp_path / "graph.jsonl")})
    tools = run_sync(list_server_tools, spec).tools
    create = [
        (f"c{n}", "create_entities", {"entities": [{"name": f"entity-{n}", "entityType": "test", "observations": []}]})
        for n in range(2)
    ]
    # When the model asks for two create_entities calls in one message, with room for both at once
    model = scripted(calls(*create), AIMessage("done"))
    config = AgentConfig(max_concurrency=4, policy=ToolPolicy(destructive="allow"), trust_all_servers=True)
    result = run_sync(run_agent, model, tools, "Go.", config=config)
    # Then both calls succeeded and the graph holds both entities
    assert [entry.status for entry in result.log] == ["ok", "ok"]
    with SyncMcpClient(spec) as client:
        graph = client.call_tool("read_graph", {}).structured
    assert sorted(entity["name"] for entity in graph["entities"]) == ["entity-0", "entity-1"]


def test_calls_of_a_read_only_tool_in_one_message_still_overlap() -> None:
    # Given a server whose read-only gather tool answers once two calls are in flight together
    spec = ServerSpec(target=shlex.join([sys.executable, str(GATHERING_SERVER)]), transport="stdio")
    tools = [tool for tool in run_sync(list_server_tools, spec).tools if tool.name == "gather_reading"]
    # When the model asks for two calls of it in one message
    model = scripted(
        calls(("c1", "gather_reading", {"count": 2}), ("c2", "gather_reading", {"count": 2})), AIMessage("ok")
    )
    config = AgentConfig(max_concurrency=4, trust_all_servers=True)
    result = run_sync(run_agent, model, tools, "Go.", config=config)
    # Then both were in flight together
    assert [entry.status for entry in result.log] == ["ok", "ok"]
    assert all("together: 2" in text for text in tool_texts(result)), tool_texts(result)


def test_calls_of_tools_that_write_on_two_servers_still_overlap(tmp_path: Path) -> None:
    # Given two servers whose gather_across tool (not read-only) answers once two calls of either are in flight
    specs = [ServerSpec(target=shlex.join([sys.executable, str(GATHERING_SERVER)]), name=name) for name in "ab"]
    tools = [tool for spec in specs for tool in run_sync(list_server_tools, spec).tools if tool.name == "gather_across"]
    # When the model asks for one call on each server in one message
    arguments = {"count": 2, "folder": str(tmp_path)}
    model = scripted(calls(("c1", "gather_across", arguments), ("c2", "gather_across_2", arguments)), AIMessage("ok"))
    config = AgentConfig(max_concurrency=4, policy=ToolPolicy(destructive="allow"), trust_all_servers=True)
    result = run_sync(run_agent, model, tools, "Go.", config=config)
    # Then both were in flight together
    assert [(entry.server, entry.status) for entry in result.log] == [("a", "ok"), ("b", "ok")]
    assert all("together: 2" in text for text in tool_texts(result)), tool_texts(result)
