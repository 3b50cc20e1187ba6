"""The Agent Chat node as KNIME runs it (Given/When/Then): executed without its view on both hosts, and its view's
data service reached the way KNIME's UI does (``getDataService``, then ``handleJsonRpcRequest``) on KNIME's real
launcher, both API versions: a message, an approval, the call and the answer, a stop, and the outputs after apply.

The model is the scripted OpenAI-compatible endpoint on 127.0.0.1; the tools are the real ledger test server's,
listed by the real MCP Tool Provider node; its ledger shows from the server's side which calls were made.
"""

from __future__ import annotations

import time
from secrets import token_hex
from typing import Any

import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, chat_model_port, provider_tools_table
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.ledger import ledger
from fixtures.ledger import ledger_tools as listed_ledger_tools
from knime_mcp.tools.tool import MCPTool
from node_contexts import ExecuteContext
from nodes.agent_chat import AgentChat

pytestmark = pytest.mark.knime_node
CREDENTIALS = {"llm": ("", API_KEY)}


@pytest.fixture(scope="module")
def tools_table(ledger_server_url: str) -> Any:
    return provider_tools_table((ledger_server_url, "", {}))


@pytest.fixture(scope="module")
def ledger_tools(ledger_server_url: str) -> list[MCPTool]:
    return listed_ledger_tools(ledger_server_url)


def _chat(**settings: Any) -> AgentChat:
    node = AgentChat()
    node.destructive, node.ask_destructive = "ALLOW", True
    for name, value in settings.items():
        setattr(node, name, value)
    return node


def _frame(table: Any) -> pd.DataFrame:
    return table.to_pandas().reset_index(drop=True)


def test_executed_without_its_view_the_node_outputs_the_history_and_the_initial_message(tools_table: Any) -> None:
    history = node_host.source_table(pd.DataFrame({"Role": ["user", "assistant"], "Content": ["Hi", "Hello."]}))
    with FakeOpenAIEndpoint([]) as endpoint:
        model = chat_model_port(endpoint.base_url)
        node = _chat(initial_message="What shall we clean up?")
        conversation, log, (data,) = node_host.execute_node(
            node, ExecuteContext(CREDENTIALS), model, tools_table, history, [], output_groups={"Data outputs": 1}
        )
        assert endpoint.requests == []  # no model call without a person
    frame = _frame(conversation)
    assert list(zip(frame["Role"], frame["Content"], strict=True)) == [
        ("user", "Hi"), ("assistant", "Hello."), ("assistant", "What shall we clean up?"),
    ]  # fmt: skip
    assert _frame(log).empty and data.num_rows == 0


def _until(service: Any, seen: list[dict[str, Any]], kind: str, call_id: str | None = None) -> dict[str, Any]:
    """Polls as the page does until an event of ``kind`` (for ``call_id``) arrives; the events go into ``seen``."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        after = seen[-1]["seq"] if seen else 0
        seen += service.request("poll", after)["events"]
        found = [e for e in seen if e["type"] == kind and call_id in (None, e.get("call_id"))]
        if found:
            return found[-1]
        time.sleep(0.02)
    raise AssertionError(f"No {kind} event came: {seen}")


@pytest.mark.knime_launcher
def test_the_views_data_service_chats_asks_for_approval_stops_and_its_chat_becomes_the_outputs(
    tools_table: Any, ledger_tools: list[MCPTool]
) -> None:
    import _node_backend_launcher as launcher

    from real_knime.driver import data_service

    key = f"k-{token_hex(4)}"
    script = [
        tool_calls(("c1", "delete_entry", {"key": key, "entry": "e1"})), answer("Deleted e1."),
        tool_calls(("c2", "delete_entry", {"key": key, "entry": "e2"})),
    ]  # fmt: skip
    with FakeOpenAIEndpoint(script) as endpoint:
        model = chat_model_port(endpoint.base_url)
        node = _chat(initial_message="Hello, what shall I clean up?", show_tool_calls=False)
        ctx = ExecuteContext(CREDENTIALS)
        service = data_service(node, ctx, model, tools_table, None, [])
        # Given the view opened on a fresh chat
        opened = service.request("init")
        assert opened["show_tool_calls"] is False and opened["initial_message"] == "Hello, what shall I clean up?"
        seen: list[dict[str, Any]] = []
        # When the person sends a message, the turn waits for the approval of the destructive call
        service.request("send", "Delete e1.")
        approval = _until(service, seen, "approval", "c1")
        assert approval["tool"] == "delete_entry" and ledger(ledger_tools, key) == []
        # And when they approve it, the call is made once and the answer follows, the turn ends
        service.request("decide", "c1", "approve", None, None)
        _until(service, seen, "turn_end")
        assert _until(service, seen, "tool_end", "c1")["status"] == "ok"
        assert _until(service, seen, "assistant")["text"] == "Deleted e1."
        assert len(ledger(ledger_tools, key)) == 1
        # And a second call, stopped while it waits for approval, is never made
        service.request("send", "Delete e2.")
        _until(service, seen, "approval", "c2")
        service.request("stop")
        deadline = time.monotonic() + 30
        while service.request("poll", 0)["running"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(ledger(ledger_tools, key)) == 1
        # Then applying the view keeps the chat, and the node's outputs are it (KNIME 5.5 keeps no view data)
        kept = service.view_data()
        if not hasattr(launcher._JsonRpcDataService, "getViewData"):  # KNIME 5.5: no view data to keep
            assert kept is None
            return
        conversation, log, _ = node_host.execute_node(node, ctx, model, tools_table, None, [], view_data=kept)
    frame = _frame(conversation).query("Role != 'system'")
    assert list(frame["Content"])[:2] == ["Hello, what shall I clean up?", "Delete e1."]
    assert "Deleted e1." in list(frame["Content"])
    calls = _frame(log)
    assert list(zip(calls["Tool Call ID"], calls["Status"], strict=True)) == [("c1", "ok")]
    assert "c2" in set(frame.query("Role == 'tool'")["Tool Call ID"])  # the stopped call is answered, not made
