"""The Agent Chat node as KNIME runs it (Given/When/Then): executed without its view on both hosts, and its view's
data service reached the way KNIME's UI does (``getDataService``, then ``handleJsonRpcRequest``) on KNIME's real
launcher, both API versions: a message, an approval, the call and the answer, a stop, and the outputs after apply.

The model is the scripted OpenAI-compatible endpoint on 127.0.0.1; the tools are the real ledger test server's,
listed by the real MCP Tool Provider node; its ledger shows from the server's side which calls were made.
"""

from __future__ import annotations

import shlex
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
from fixtures.processes import alive_pids, child_pids
from knime_mcp.agent.toolset import WORKFLOW_EXECUTION_HINTS
from knime_mcp.tools.tool import MCPTool
from node_contexts import ExecuteContext
from nodes.agent_chat import AgentChat
from nodes.agent_chat.sessions import CHAT_SESSIONS
from workflow_tools import ExecutesWorkflowTools, workflow_tool, workflow_tools_table

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
        # Given the view opened on a fresh chat, which shows the initial message
        opened = service.request("init")
        assert opened["show_tool_calls"] is False and not opened["running"]
        assert [(e["type"], e["text"]) for e in opened["events"]] == [("assistant", "Hello, what shall I clean up?")]
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
        # And the view opened again shows the kept chat: its messages and its calls, ended
        reopened = data_service(node, ctx, model, tools_table, None, [], view_data=kept).request("init")
    shown = [(e["type"], e.get("text"), e.get("call_id")) for e in reopened["events"]]
    assert shown[:5] == [
        ("assistant", "Hello, what shall I clean up?", None), ("user", "Delete e1.", None),
        ("tool_start", None, "c1"), ("tool_end", "deleted 'e1'", "c1"), ("assistant", "Deleted e1.", None),
    ]  # fmt: skip
    assert ("user", "Delete e2.", None) in shown and not reopened["running"]
    frame = _frame(conversation).query("Role != 'system'")
    assert list(frame["Content"])[:2] == ["Hello, what shall I clean up?", "Delete e1."]
    assert "Deleted e1." in list(frame["Content"])
    calls = _frame(log)
    assert list(zip(calls["Tool Call ID"], calls["Status"], strict=True)) == [("c1", "ok")]
    assert "c2" in set(frame.query("Role == 'tool'")["Tool Call ID"])  # the stopped call is answered, not made


class _RunsWorkflowTools(ExecutesWorkflowTools, ExecuteContext):
    """The test's side of KNIME's workflow tool runs: each call recorded, answered as KNIME 5.6 does."""

    def __init__(self) -> None:
        super().__init__(CREDENTIALS)
        self._setup_tools()


@pytest.mark.knime_launcher
def test_the_views_data_service_runs_a_workflow_tool_through_the_view_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from real_knime.driver import data_service

    # Given a workflow tool, and a view whose context runs workflow tools as KNIME's view context does
    sampler = workflow_tool("Row Sampler", "Samples rows.", {"rows": {"type": "integer"}})
    tools = workflow_tools_table([sampler], monkeypatch)
    script = [tool_calls(("w1", "Row_Sampler", {"rows": 3})), answer("Sampled 3 rows.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        ctx = _RunsWorkflowTools()
        model = chat_model_port(endpoint.base_url)
        service = data_service(_chat(workflow_column="Workflow Tool"), ctx, model, tools, None, [])
        seen: list[dict[str, Any]] = []
        # When the person asks for it
        service.request("send", "Sample 3 rows.")
        _until(service, seen, "turn_end")
    # Then the tool ran once through KNIME's call, its message reached the chat and the model answered
    assert [(call[1], call[2], call[3]) for call in ctx.calls] == [({"rows": 3}, [], WORKFLOW_EXECUTION_HINTS)]
    end = _until(service, seen, "tool_end", "w1")
    assert end["status"] == "ok" and "Row Sampler processed" in end["text"]
    assert _until(service, seen, "assistant")["text"] == "Sampled 3 rows."


@pytest.mark.knime_launcher
def test_opening_the_view_again_closes_the_first_views_session_and_its_stdio_server(
    demo_stdio_command: list[str],
) -> None:
    from real_knime.driver import data_service

    tools = provider_tools_table((shlex.join(demo_stdio_command), "local", {}))
    script = [tool_calls(("e1", "local_echo", {"text": "hi"})), answer("Echoed."), answer("Hello again.")]
    before = child_pids()
    with FakeOpenAIEndpoint(script) as endpoint:
        model = chat_model_port(endpoint.base_url)
        node = _chat()
        # Given a view whose chat called a tool of a server run over stdio
        first = data_service(node, ExecuteContext(CREDENTIALS), model, tools, None, [])
        first.request("send", "Echo hi.")
        _until(first, [], "turn_end")
        started = child_pids() - before
        assert len(started) == 1
        # When KNIME opens the node's view again (it calls nothing on the first one when it closes)
        second = data_service(node, ExecuteContext(CREDENTIALS), model, tools, None, [])
        # Then the first view's session is closed, its server process gone, and the new view chats on
        assert alive_pids(started) == set()
        with pytest.raises(RuntimeError, match="view was opened again"):
            first.request("send", "Still there?")
        try:
            second.request("send", "Hello?")
            assert _until(second, [], "assistant")["text"] == "Hello again."
        finally:
            CHAT_SESSIONS.close_all()


@pytest.mark.knime_launcher
def test_the_views_data_service_sends_a_denial_to_the_model_and_a_form_to_the_server(
    ledger_server_url: str, ledger_tools: list[MCPTool]
) -> None:
    import sys

    from fixtures.python_servers import SERVERS_DIR
    from real_knime.driver import data_service

    key = f"k-{token_hex(4)}"
    asking = shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")])
    tools = provider_tools_table((ledger_server_url, "", {}), (asking, "asking", {}))
    script = [
        tool_calls(("d1", "delete_entry", {"key": key, "entry": "e1"})), answer("Left e1 alone."),
        tool_calls(("f1", "asking_ask_name", {})), answer("Greeted Ada."),
    ]  # fmt: skip
    with FakeOpenAIEndpoint(script) as endpoint:
        model = chat_model_port(endpoint.base_url)
        service = data_service(_chat(), ExecuteContext(CREDENTIALS), model, tools, None, [])
        seen: list[dict[str, Any]] = []
        # Given a destructive call the person denies, with a reason
        service.request("send", "Delete e1.")
        _until(service, seen, "approval", "d1")
        service.request("decide", "d1", "deny", None, "not on a Friday")
        _until(service, seen, "turn_end")
        # Then the call is not made, and the model hears the reason as the tool's error
        assert ledger(ledger_tools, key) == []
        tool_message = next(m for m in endpoint.requests[1]["messages"] if m["role"] == "tool")
        assert "not on a Friday" in str(tool_message["content"])
        # Given a tool whose server asks the person a form
        service.request("send", "Greet me.")
        form = _until(service, seen, "form")
        assert "asking_server.py" in form["server"] and form["schema"]["required"] == ["name"]
        # When an answer breaks the form's schema, it is refused and the form stays open; a valid one goes through
        service.request("answer_form", form["form_id"], "accept", {"name": 5})
        assert "name" in _until(service, seen, "error")["message"]
        service.request("answer_form", form["form_id"], "accept", {"name": "Ada"})
        end = _until(service, seen, "tool_end", "f1")
    assert (end["status"], end["text"]) == ("ok", "Hello, Ada!")
