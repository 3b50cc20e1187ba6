"""The Agent Prompter's *Offer the servers' resources* setting, run as KNIME runs the node (Given/When/Then), on both
hosts, with the demo server's tools listed by the real MCP Tool Provider node and a scripted model endpoint."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node


@pytest.fixture(scope="module")
def demo_tools(demo_stdio_command: list[str]) -> Any:
    return provider_tools_table((shlex.join(demo_stdio_command), "", {}))


def test_with_the_setting_on_the_model_lists_and_reads_resources_and_the_log_shows_the_calls(
    demo_tools: Any,
) -> None:
    # Given the demo server's tools and an agent that offers the servers' resources
    script = [
        tool_calls(("c1", "list_resources", {})),
        tool_calls(("c2", "read_resource", {"uri": "demo://chart/2%2C1"}), ("c3", "read_resource", {"uri": "x:/"})),
        answer("Two bars."),
    ]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script) as endpoint:
        # When the model lists the resources, reads a chart and an unknown URI
        conversation, log = run_agent_node(
            agent_node("Show me.", resources=True), ctx, chat_model_port(endpoint.base_url), demo_tools
        )
    # Then both tools were offered, every call is logged as a resource call, and the unknown URI is a tool error
    assert {"list_resources", "read_resource"} <= set(offered_tools(endpoint.requests[0]))
    assert list(log["Tool"]) == ["list_resources", "read_resource", "read_resource"]
    assert list(log["Kind"]) == ["resource"] * 3
    assert list(log["Status"]) == ["ok", "ok", "tool_error"]
    listing = next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert "demo://chart/{+values}" in listing["content"]
    # And the chart reached the conversation as an image, and the run went on to the answer
    assert conversation["Image"].notna().any()
    assert conversation["Content"].iloc[-1] == "Two bars."


def test_by_default_the_resource_tools_are_not_offered(demo_tools: Any) -> None:
    with FakeOpenAIEndpoint([answer("Nothing to read.")]) as endpoint:
        run_agent_node(
            agent_node("Show me."),
            ExecuteContext({"llm": ("", API_KEY)}),
            chat_model_port(endpoint.base_url),
            demo_tools,
        )
    offered = offered_tools(endpoint.requests[0])
    assert "echo" in offered and "list_resources" not in offered and "read_resource" not in offered
