"""The tool search settings of the Agent Prompter and the Agent Chat, as KNIME runs the nodes (Given/When/Then):
*Tool search above (tools)*, *... (bytes of tool specs)* and *Always offer tools (regex)* reach the core, so a tools
table over the budget is searched by the model and a tool it found is called on the real server.

The tools are `tests/servers/many_tools_server.py`'s (over stdio, 20 generated tools and three of its own), listed
by the real MCP Tool Provider node; the model is the scripted OpenAI-compatible endpoint on 127.0.0.1.
"""

from __future__ import annotations

import shlex
import sys
import time
from typing import Any

import pytest

from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.config import ToolBudget
from knime_mcp.agent.tool_offer import SEARCH_TOOL
from node_contexts import ExecuteContext
from nodes.agent_chat import AgentChat

pytestmark = pytest.mark.knime_node
CREDENTIALS = {"llm": ("", API_KEY)}
MANY = shlex.join([sys.executable, str(SERVERS_DIR / "many_tools_server.py"), "--count", "20"])
SEARCH_SETTINGS = {"tool_budget": 5, "tool_budget_bytes": 50_000, "pinned_tools": "^crm_list_(invoices|orders)$"}
PINNED = ["crm_list_invoices", "crm_list_orders"]
CELSIUS = "change degrees celsius into fahrenheit"


@pytest.fixture(scope="module")
def many_tools_table() -> Any:
    return provider_tools_table((MANY, "", {}))


def test_the_agent_prompter_searches_a_tools_table_over_its_tool_budget(many_tools_table: Any) -> None:
    # Given a tools table over the node's tool budget, and a model that searches and calls what it found
    script = [
        tool_calls(("c1", SEARCH_TOOL, {"query": CELSIUS})),
        tool_calls(("c2", "convert_temperature", {"value": 100, "unit": "C"})),
        answer("212 °F."),
    ]
    with FakeOpenAIEndpoint(script) as endpoint:
        node = agent_node("What is 100 °C in °F?", **SEARCH_SETTINGS)
        _, log = run_agent_node(node, ExecuteContext(CREDENTIALS), chat_model_port(endpoint.base_url), many_tools_table)
    # Then the model is offered the pinned tools (in table order) and the search tool, then the tool it found
    offered = [offered_tools(request) for request in endpoint.requests]
    assert offered[0] == [*PINNED, SEARCH_TOOL] and offered[1] == [*PINNED, SEARCH_TOOL, "convert_temperature"]
    # And the log shows the search with its query and the call on the server
    assert list(zip(log["Tool"], log["Kind"], log["Status"], strict=True)) == [
        (SEARCH_TOOL, "tool search", "ok"), ("convert_temperature", "MCP", "ok"),
    ]  # fmt: skip
    assert CELSIUS in log["Arguments"][0] and "convert_temperature" in log["Result"][0]
    assert "212.0 °F" in log["Result"][1]


def test_the_agent_prompter_offers_a_table_within_its_budget_whole(many_tools_table: Any) -> None:
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        node = agent_node("Hi.")
        run_agent_node(node, ExecuteContext(CREDENTIALS), chat_model_port(endpoint.base_url), many_tools_table)
    (offered,) = [offered_tools(request) for request in endpoint.requests]
    assert SEARCH_TOOL not in offered and len(offered) == 22  # all but the destructive purge_archive


def test_the_agent_chats_tool_search_settings_become_the_cores_tool_budget() -> None:
    node = AgentChat()
    for name, value in SEARCH_SETTINGS.items():
        setattr(node, name, value)
    assert node._config().tool_budget == ToolBudget(tools=5, spec_bytes=50_000, pinned=SEARCH_SETTINGS["pinned_tools"])
    assert AgentChat()._config().tool_budget == ToolBudget()


@pytest.mark.knime_launcher
def test_the_agent_chats_view_searches_a_tools_table_over_its_tool_budget(many_tools_table: Any) -> None:
    from real_knime.driver import data_service

    script = [
        tool_calls(("c1", SEARCH_TOOL, {"query": CELSIUS})),
        tool_calls(("c2", "convert_temperature", {"value": 0, "unit": "C"})),
        answer("32 °F."),
    ]
    with FakeOpenAIEndpoint(script) as endpoint:
        node = AgentChat()
        for name, value in SEARCH_SETTINGS.items():
            setattr(node, name, value)
        service = data_service(
            node, ExecuteContext(CREDENTIALS), chat_model_port(endpoint.base_url), many_tools_table, None, []
        )
        service.request("init")
        # When the person asks, the model searches, then calls the tool it found
        service.request("send", "What is 0 °C in °F?")
        events = _turn(service)
    # Then the view shows the search as a call with its query and the tools found, and the call's result
    starts = [event for event in events if event["type"] == "tool_start"]
    ends = [event for event in events if event["type"] == "tool_end"]
    assert [(event["tool"], event["kind"]) for event in starts] == [
        (SEARCH_TOOL, "search"),
        ("convert_temperature", "mcp"),
    ]
    assert starts[0]["arguments"] == {"query": CELSIUS} and "convert_temperature" in ends[0]["text"]
    assert "32.0 °F" in ends[1]["text"]
    offered = [offered_tools(request) for request in endpoint.requests]
    assert offered[0] == [*PINNED, SEARCH_TOOL] and offered[1][-1] == "convert_temperature"


def _turn(service: Any) -> list[dict[str, Any]]:
    """The view's events, polled as the page does, once the turn ended."""
    deadline = time.monotonic() + 60
    events: list[dict[str, Any]] = []
    while not any(event["type"] == "turn_end" for event in events):
        assert time.monotonic() < deadline, f"the turn did not end: {events}"
        events += service.request("poll", events[-1]["seq"] if events else 0)["events"]
        time.sleep(0.02)
    return events
