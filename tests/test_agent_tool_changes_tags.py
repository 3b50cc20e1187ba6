"""A tool a server adds during a run carries the tags a person gave the server's tools (its key, a configuration's
``"tags"``), so that a run offering only the tools tagged so offers it too; against tests/servers/shifting_server.py
over stdio, listed from a pasted configuration as the MCP Tool Provider lists it, with the scripted chat model."""

from __future__ import annotations

import json
import sys

import anyio
from langchain_core.messages import AIMessage

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.call_log import TOOLS_CHANGED
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_servers_tools
from knime_mcp.config.pasted import parse_pasted, pasted_tags
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, offered, run_scripted, scripted, tool_texts

CONFIGURATION = json.dumps(
    {
        "mcpServers": {
            "shifting": {"command": sys.executable, "args": [str(SERVERS_DIR / "shifting_server.py")], "tags": ["team"]}
        }
    }
)


def _tools() -> list[MCPTool]:
    """The server's tools as the provider lists its configuration (named ``shifting_…``, tagged "shifting" and
    "team"), ``shifting_grow`` also tagged "grow-only" by a person."""
    listing = anyio.run(lambda: list_servers_tools(parse_pasted(CONFIGURATION), server_tags=pasted_tags(CONFIGURATION)))
    return [
        tool.with_changes(tags=(*tool.tags, "grow-only")) if tool.tool_name == "grow" else tool
        for tool in listing.tools
    ]


def _policy(tag: str) -> AgentConfig:
    return AgentConfig(policy=ToolPolicy(destructive="allow", tags=(tag,)))


def test_a_tool_the_server_adds_carries_the_tags_its_other_tools_were_given_and_is_offered_when_only_they_are() -> None:
    # Given the tools of a configured server tagged "team", and a run that offers only the tools tagged "team"
    model = scripted(calls(("c1", "shifting_grow", {})), calls(("c2", "shifting_new_tool", {})), AIMessage("Done."))
    # When the model calls `grow`, which adds `new_tool`, and then calls the new tool
    run = run_scripted(model, _tools(), config=_policy("team"))
    # Then the new tool is offered, named as its server's other tools, and runs: it carries "team" like them
    assert "shifting_new_tool" not in offered(model, 0) and "shifting_new_tool" in offered(model, 1)
    assert "new tool ran" in tool_texts(run)[-1]
    changes = [json.loads(entry.result or "") for entry in run.log if entry.tool == TOOLS_CHANGED]
    assert changes == [{"added": ["shifting_new_tool"], "removed": []}]


def test_a_tool_the_server_adds_does_not_carry_a_tag_only_some_of_its_other_tools_were_given() -> None:
    # Given a run offering only the tools tagged "grow-only", which a person gave `grow` alone
    model = scripted(calls(("c1", "shifting_grow", {})), AIMessage("Done."))
    # When `grow` adds `new_tool`
    run_scripted(model, _tools(), config=_policy("grow-only"))
    # Then the new tool is not offered: the tag is one tool's, not its server's
    assert offered(model, 0) == offered(model, 1) == ["shifting_grow"]
