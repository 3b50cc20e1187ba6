"""The *Expected time (s)* and *Cost* columns a person adds to a provider's tools table, through the Agent Prompter as
KNIME runs it (Given/When/Then), against the real demo server and a scripted OpenAI endpoint that records the tool
specs it was sent: *Tell the model each tool's hints* on tells them, off does not, and a bad cell fails the node
naming the column and the row. The Agent Chat's agent, made through its view's data service (KNIME's launcher on the
real API, the node's own ``get_data_service`` on the stand-in), is told them as well."""

from __future__ import annotations

from typing import Any

import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, provider_tools_table, run_agent_node
from chat_views import until, view_service
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer
from node_contexts import ExecuteContext
from nodes.agent_chat import AgentChat
from nodes.agent_chat.sessions import CHAT_SESSIONS

pytestmark = pytest.mark.knime_node

SENTENCE = "(Hints from the person running this agent: a call takes about 4 s; it costs 0.02 USD per call.)"


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> Any:
    return provider_tools_table((demo_http_url, "", {}))


def _with_hints(tools: Any, cost: object = "0.02 USD per call") -> Any:
    """The provider's tools table with the hint columns a person added (e.g. with a Column Expressions node): echo's
    row filled, the others' missing."""
    frame = tools.to_pandas().reset_index(drop=True)
    frame["Expected time (s)"] = [4.0 if name == "echo" else None for name in frame["Name"]]
    frame["Cost"] = [cost if name == "echo" else None for name in frame["Name"]]
    return node_host.source_table(frame)


def _told(tools: Any, **settings: Any) -> dict[str, str]:
    """What the model was told of each tool by an Agent Prompter with ``settings``."""
    with FakeOpenAIEndpoint([answer("Done.")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        run_agent_node(agent_node("Go.", **settings), ExecuteContext({"llm": ("", API_KEY)}), model, tools)
        return {spec["function"]["name"]: spec["function"]["description"] for spec in endpoint.requests[0]["tools"]}


@pytest.mark.parametrize("on", [True, False], ids=["on", "off"])
def test_the_agent_prompter_tells_the_model_the_tables_hints_only_when_set_to(demo_tools: Any, on: bool) -> None:
    # Given a tools table with echo's expected time and cost
    # When the Agent Prompter runs with "Tell the model each tool's hints" on, or off (its default)
    told = _told(_with_hints(demo_tools), **({"tool_hints": True} if on else {}))
    # Then echo's description ends with the hints when on, and no description has them when off
    assert (SENTENCE in told["echo"]) is on
    assert all(SENTENCE not in text for name, text in told.items() if name != "echo")


def test_a_cost_that_is_not_a_number_or_text_fails_the_node_naming_the_column_and_row(demo_tools: Any) -> None:
    with pytest.raises(Exception, match=r"Column 'Cost', row \S+: .* is not a cost"):
        _told(_with_hints(demo_tools, cost=True), tool_hints=True)


@pytest.mark.parametrize("on", [True, False], ids=["on", "off"])
def test_the_agent_chats_agent_tells_the_model_the_tables_hints_only_when_set_to(demo_tools: Any, on: bool) -> None:
    # Given the Agent Chat over a tools table with echo's expected time and cost
    node = AgentChat()
    node.tool_hints = on
    with FakeOpenAIEndpoint([answer("Hello.")]) as endpoint:
        service = view_service(
            node, chat_model_port(endpoint.base_url), _with_hints(demo_tools), {"llm": ("", API_KEY)}
        )
        try:
            # When a person sends a message in its view
            service.request("send", "Hi")
            until(service, lambda event: event["type"] == "turn_end")
        finally:
            CHAT_SESSIONS.close_all()
        told = {spec["function"]["name"]: spec["function"]["description"] for spec in endpoint.requests[0]["tools"]}
    # Then the model was told echo's hints when the setting is on, and no tool's when off
    assert (SENTENCE in told["echo"]) is on
    assert all(SENTENCE not in text for name, text in told.items() if name != "echo")
