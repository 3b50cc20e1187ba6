"""A *Timeout (s)* column a person adds to a provider's tools table, through the MCP Tool Caller and Agent Prompter
nodes as KNIME runs them (Given/When/Then), against the real demo server: a tool's own timeout wins over the node's,
the column leaves the table's seal whole, and a bad value fails the node naming the column and row."""

from __future__ import annotations

from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node


def _with_timeouts(tools: Any, seconds: dict[str, float]) -> Any:
    """The provider's tools table with a *Timeout (s)* column: ``seconds`` by tool name, the other cells missing."""
    frame = tools.to_pandas().reset_index(drop=True)
    frame["Timeout (s)"] = [seconds.get(name) for name in frame["Name"]]
    return node_host.source_table(frame)


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> Any:
    return provider_tools_table((demo_http_url, "", {}))


def _caller(**settings: object):  # type: ignore[no-untyped-def]
    import extension  # noqa: F401  (registers the category)
    from nodes.tool_caller import MCPToolCaller

    return node_host.set_parameters(MCPToolCaller(), **settings)


def test_the_tool_caller_waits_a_tools_own_timeout_and_cuts_it_short_alike(demo_tools: Any) -> None:
    # Given the node's timeout far shorter than the sleep tool's own, then far longer
    data = knext.Table.from_pandas(pd.DataFrame({"seconds": [1.0]}))
    patient = _caller(tool__name="sleep", calls__timeout=0.2, calls__on_error="COLUMN")
    hasty = _caller(tool__name="sleep", calls__timeout=120.0, calls__on_error="COLUMN")
    # When each calls it with the tools table's Timeout (s) column set
    (waited,) = node_host.execute_node(patient, ExecuteContext(), data, _with_timeouts(demo_tools, {"sleep": 60}))
    slow = knext.Table.from_pandas(pd.DataFrame({"seconds": [30.0]}))
    (cut,) = node_host.execute_node(hasty, ExecuteContext(), slow, _with_timeouts(demo_tools, {"sleep": 0.5}))
    # Then the column's timeout held both times, and the sealed server was called (the column left the seal whole)
    assert waited.to_pandas()["Result"].tolist() == ["Slept 1 s."]
    frame = cut.to_pandas()
    assert frame["Is error"].tolist() == [True] and "did not answer" in frame["Error"].iloc[0]


def test_the_tool_caller_fails_on_a_timeout_that_is_not_a_positive_number_naming_the_column(demo_tools: Any) -> None:
    data = knext.Table.from_pandas(pd.DataFrame({"seconds": [1.0]}))
    with pytest.raises(Exception, match=r"Column 'Timeout \(s\)', row \S+: -5.0 is not a timeout in seconds"):
        node_host.execute_node(
            _caller(tool__name="sleep"), ExecuteContext(), data, _with_timeouts(demo_tools, {"sleep": -5})
        )


def test_the_agent_prompter_waits_a_tools_own_timeout_beyond_its_call_timeout(demo_tools: Any) -> None:
    # Given an Agent Prompter whose tool call timeout is 0.2 s, and a tools table giving the sleep tool 60 s
    tools = _with_timeouts(demo_tools, {"sleep": 60})
    with FakeOpenAIEndpoint([tool_calls(("c1", "sleep", {"seconds": 1})), answer("Rested.")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        # When the model calls the tool
        _, log = run_agent_node(
            agent_node("Rest.", call_timeout=0.2), ExecuteContext({"llm": ("", API_KEY)}), model, tools
        )
    # Then the call ran to its end, and the model got its result
    assert list(log["Status"]) == ["ok"]
    reply = next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert "Slept 1 s." in reply["content"]


def test_the_agent_prompter_cuts_a_call_at_the_tools_own_timeout(demo_tools: Any) -> None:
    tools = _with_timeouts(demo_tools, {"sleep": 0.5})
    with FakeOpenAIEndpoint([tool_calls(("c1", "sleep", {"seconds": 30})), answer("Gave up.")]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        _, log = run_agent_node(
            agent_node("Rest.", call_timeout=120.0), ExecuteContext({"llm": ("", API_KEY)}), model, tools
        )
    assert list(log["Status"]) == ["timeout"] and "did not answer" in log["Error"].iloc[0]
