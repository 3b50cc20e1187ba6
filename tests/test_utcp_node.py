"""A UTCP manual through the nodes as KNIME runs them (Given/When/Then): the HTTP Tool Provider lists the tools of a
provider built with the UTCP project's own library (tests/servers/utcp_provider_server.py), the Agent Prompter's
model calls one, and the MCP Tool Caller calls it per row; a hostile manual's tools never get the credential
(tests/servers/utcp_manual_server.py)."""

from __future__ import annotations

import json
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.utcp_servers import caught
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext
from test_http_provider_node import _http_provider

pytestmark = pytest.mark.knime_node


def _provider_tools(url: str, auth_token: str) -> tuple[Any, ExecuteContext]:
    """The HTTP Tool Provider's table for the manual at ``url``, its API key in the header the manual names."""
    node = _http_provider(url, auth__kind="HEADER", auth__credential="utcp")
    ctx = ExecuteContext({"utcp": ("", auth_token)})
    (table,) = node_host.execute_node(node, ctx, None)
    return table, ctx


def test_the_provider_lists_a_utcp_manuals_tools_sealed_with_the_key_name_it_gives(
    utcp_provider_url: str, auth_token: str
) -> None:
    table, ctx = _provider_tools(f"{utcp_provider_url}/utcp", auth_token)
    frame = table.to_pandas()
    tools = {tool.name: tool for tool in tools_from_frame(frame)}
    assert set(tools) == {"weather", "shout"} and ctx.warnings == []
    assert set(frame["Kind"]) == {"HTTP"}
    assert {tool.server.auth.header for tool in tools.values()} == {"X-Api-Key"}
    assert all(is_sealed_here(tool.server) for tool in tools.values())
    assert auth_token not in frame.to_json()


def test_the_agent_prompters_model_calls_a_manuals_tool_and_gets_its_result(
    utcp_provider_url: str, auth_token: str
) -> None:
    # Given the provider's tools table for the manual
    tools, _ = _provider_tools(f"{utcp_provider_url}/utcp", auth_token)
    # When the model asks for the weather in Bern
    replies = [tool_calls(("c1", "weather", {"city": "Bern"})), answer("21 degrees.")]
    with FakeOpenAIEndpoint(replies) as endpoint:
        model = chat_model_port(endpoint.base_url)
        _, log = run_agent_node(
            agent_node("Weather in Bern?"), ExecuteContext({"llm": ("", API_KEY), "utcp": ("", auth_token)}), model,
            tools,
        )  # fmt: skip
    # Then the call went to the provider with the person's key, and the model got its answer
    assert list(log["Status"]) == ["ok"]
    reply = next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert '{"city":"Bern","units":"C","temperature":21}' in reply["content"]


def test_the_tool_caller_calls_a_manuals_tool_once_a_row(utcp_provider_url: str, auth_token: str) -> None:
    from nodes.tool_caller import MCPToolCaller

    tools, _ = _provider_tools(f"{utcp_provider_url}/utcp", auth_token)
    caller = node_host.set_parameters(MCPToolCaller(), tool__name="shout", calls__on_error="COLUMN")
    data = knext.Table.from_pandas(pd.DataFrame({"text": ["hi", "bye"]}))
    (table,) = node_host.execute_node(caller, ExecuteContext({"utcp": ("", auth_token)}), data, tools)
    frame = table.to_pandas()
    assert frame["Is error"].tolist() == [False, False]
    assert [json.loads(cell) for cell in frame["Structured result"]] == [{"shouted": "HI"}, {"shouted": "BYE"}]


def test_a_hostile_manual_leaves_out_its_tools_on_another_origin_named_in_the_warning(
    utcp_manual_url: str, auth_token: str
) -> None:
    table, ctx = _provider_tools(f"{utcp_manual_url}/hostile/utcp", auth_token)
    assert [tool.name for tool in tools_from_frame(table.to_pandas())] == ["own_tool"]
    (warning,) = ctx.warnings
    assert "Left out GET /catch" in warning and "set it to http://127.0.0.2:" in warning
    assert "'oauth_tool'" in warning and "'steal_in_url'" in warning and auth_token not in warning
    assert caught(utcp_manual_url) == []


def test_a_manual_address_from_a_flow_variable_is_read_only_at_a_public_address(utcp_provider_url: str) -> None:
    ctx = ExecuteContext()
    ctx.flow_variables["manual"] = f"{utcp_provider_url}/utcp"
    with pytest.raises(knext.InvalidParametersError, match="flow variable 'manual'"):
        node_host.execute_node(_http_provider(f"{utcp_provider_url}/utcp"), ctx, None)
