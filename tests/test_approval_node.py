"""The Agent Prompter with *Ask before calling*, run as KNIME runs it (Given/When/Then), on both hosts: a call that
needs approval ends the run with that call awaiting approval; the conversation fed back with an *Approval* column
resumes exactly that call.

The model is the scripted OpenAI-compatible endpoint on 127.0.0.1 reached through langchain-openai; the tools are the
real ledger test server's, listed by the real MCP Tool Provider node; its ledger shows from the server's side how
often a call was made.
"""

from __future__ import annotations

import json
from secrets import token_hex
from typing import Any

import pandas as pd
import pytest

import knext_bootstrap  # noqa: F401 (installs the knext backends before the nodes are imported)
import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.ledger import ledger
from fixtures.ledger import ledger_tools as listed_ledger_tools
from knime_mcp.tools.tool import MCPTool
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

ASK = {"destructive": "ALLOW", "ask_destructive": True}
"""Destructive tools allowed by the tool policy, and asked about before each call."""


@pytest.fixture(scope="module")
def tools_table(ledger_server_url: str) -> Any:
    return provider_tools_table((ledger_server_url, "", {}))


@pytest.fixture(scope="module")
def ledger_tools(ledger_server_url: str) -> list[MCPTool]:
    return listed_ledger_tools(ledger_server_url)


def _fed_back(conversation: pd.DataFrame, approval: str | None = None, reason: str | None = None) -> Any:
    """The conversation output as the next run's input, with ``approval`` (and ``reason``) on its last row."""
    frame = conversation.reset_index(drop=True)
    if approval is not None:
        frame["Approval"] = [None] * (len(frame) - 1) + [approval]
        frame["Approval Reason"] = [None] * (len(frame) - 1) + [reason]
    return node_host.source_table(frame)


def _run(endpoint: FakeOpenAIEndpoint, tools_table: Any, history: Any = None, ctx: Any = None) -> Any:
    """The node asking before destructive calls, run on ``history``: its conversation and log."""
    ctx = ctx or ExecuteContext({"llm": ("", API_KEY)})
    model = chat_model_port(endpoint.base_url)
    return run_agent_node(agent_node("Clean up.", **ASK), ctx, model, tools_table, history)


def _paused(endpoint: FakeOpenAIEndpoint, tools_table: Any, ctx: Any = None) -> pd.DataFrame:
    conversation, log = _run(endpoint, tools_table, ctx=ctx)
    assert list(log["Status"]) == ["awaiting_approval"] and list(log["Approval"]) == ["awaiting"]
    return conversation


def test_a_call_needing_approval_pauses_the_run_and_an_approval_column_resumes_exactly_that_call(
    tools_table: Any, ledger_tools: list[MCPTool]
) -> None:
    key = f"k-{token_hex(4)}"
    script = [tool_calls(("c1", "delete_entry", {"key": key, "entry": "e1"})), answer("Deleted e1.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        # Given a run that stopped with the call awaiting approval
        ctx = ExecuteContext({"llm": ("", API_KEY)})
        paused = _paused(endpoint, tools_table, ctx)
        # Then no call was made, the conversation ends with the model's call, and the warning says what to do
        assert ledger(ledger_tools, key) == []
        assert paused["Role"].iloc[-1] == "assistant" and json.loads(paused["Tool Calls"].iloc[-1])[0]["id"] == "c1"
        assert any("awaiting approval" in w and "c1" in w and "Approval" in w for w in ctx.warnings)

        # When it runs again fed back without a decision, the call stays pending and the model is not asked
        again, log = _run(endpoint, tools_table, _fed_back(paused))
        assert list(log["Status"]) == ["awaiting_approval"] and len(endpoint.requests) == 1
        assert ledger(ledger_tools, key) == []

        # When it runs again with "approve" in the Approval column
        resumed, log = _run(endpoint, tools_table, _fed_back(again, "approve"))
    # Then exactly that call was made, once, and the run went on to the answer
    assert ledger(ledger_tools, key) == ["delete_entry e1"]
    assert list(log["Tool Call ID"]) == ["c1"] and list(log["Status"]) == ["ok"]
    assert list(log["Approval"]) == ["approve"] and log["Approval Time"].iloc[0]
    assert list(resumed["Role"])[-3:] == ["assistant", "tool", "assistant"]
    assert resumed["Content"].iloc[-1] == "Deleted e1." and list(resumed["Content"]).count("Clean up.") == 1


def test_a_denial_per_call_id_reaches_the_model_with_its_reason(tools_table: Any, ledger_tools: list[MCPTool]) -> None:
    key = f"k-{token_hex(4)}"
    script = [tool_calls(("c1", "delete_entry", {"key": key, "entry": "e1"})), answer("Understood.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        paused = _paused(endpoint, tools_table)
        _, log = _run(endpoint, tools_table, _fed_back(paused, json.dumps({"c1": "deny"}), "keep it until Monday"))
    assert ledger(ledger_tools, key) == []
    assert list(log["Status"]) == ["denied"] and list(log["Approval"]) == ["deny"]
    told = next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert "denied" in told["content"] and "keep it until Monday" in told["content"]


def test_a_decision_for_a_call_that_is_not_awaiting_approval_is_a_clear_error(
    tools_table: Any, ledger_tools: list[MCPTool]
) -> None:
    key = f"k-{token_hex(4)}"
    with FakeOpenAIEndpoint([tool_calls(("c1", "delete_entry", {"key": key, "entry": "e1"}))]) as endpoint:
        paused = _paused(endpoint, tools_table)
        with pytest.raises(Exception, match="call_unknown.*not awaiting approval"):
            _run(endpoint, tools_table, _fed_back(paused, json.dumps({"call_unknown": "approve"})))
        with pytest.raises(Exception, match="'maybe'.*approve or deny"):
            _run(endpoint, tools_table, _fed_back(paused, "maybe"))
    assert ledger(ledger_tools, key) == []
