"""The Agent Chat node's *Show MCP Apps*: on (the default), the view's data service tells the page so and answers an
app's requests through ``poll``; off, it tells the page so and refuses them. Through KNIME's launcher on the real API
(both versions), through the node's own ``get_data_service`` on the stand-in; the tools are this project's ledger
app server's, listed by the real MCP Tool Provider node, and the model is the scripted OpenAI-compatible endpoint."""

from __future__ import annotations

import shlex
import sys
from typing import Any

import pytest

from agent_runs import API_KEY, chat_model_port, provider_tools_table
from chat_views import until, view_service
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from nodes.agent_chat import AgentChat
from nodes.agent_chat.sessions import CHAT_SESSIONS

pytestmark = pytest.mark.knime_node
CREDENTIALS = {"llm": ("", API_KEY)}


@pytest.fixture(scope="module")
def app_tools(tmp_path_factory: pytest.TempPathFactory) -> Any:
    received = tmp_path_factory.mktemp("ledger") / "received.txt"
    command = [sys.executable, str(SERVERS_DIR / "app_ledger_server.py"), str(received)]
    return provider_tools_table((shlex.join(command), "", {}))


def test_with_show_mcp_apps_on_the_view_shows_a_tools_app_and_answers_what_it_asks(app_tools: Any) -> None:
    script = [tool_calls(("c1", "show_ledger", {"month": "May"})), answer("Shown.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        service = view_service(AgentChat(), chat_model_port(endpoint.base_url), app_tools, CREDENTIALS)
        try:
            assert service.request("init")["show_apps"] is True
            service.request("send", "Show May's ledger.")
            until(service, lambda event: event["type"] == "turn_end")
            start = until(service, lambda event: event["type"] == "tool_start")
            view_id = service.request("app_request", "c1", "view", None)
            view = until(service, lambda event: event.get("request_id") == view_id)["result"]
            totals = {"name": "ledger_totals", "arguments": {"month": "May"}}
            call_id = service.request("app_request", "c1", "tools/call", totals)
            called = until(service, lambda event: event.get("request_id") == call_id)["result"]
        finally:
            CHAT_SESSIONS.close_all()
    assert start["app"] == {"uri": "ui://ledger/app.html", "server": start["server"]}
    assert "Content-Security-Policy" in view["document"] and view["input"] == {"month": "May"}
    assert called["content"] == [{"type": "text", "text": "totals of May: 1500"}]


def test_with_show_mcp_apps_off_the_view_says_so_and_refuses_an_apps_requests(app_tools: Any) -> None:
    node = AgentChat()
    node.show_apps = False
    with FakeOpenAIEndpoint([]) as endpoint:
        service = view_service(node, chat_model_port(endpoint.base_url), app_tools, CREDENTIALS)
        try:
            assert service.request("init")["show_apps"] is False
            with pytest.raises(Exception, match="MCP Apps are not shown in this chat"):
                service.request("app_request", "c1", "view", None)
        finally:
            CHAT_SESSIONS.close_all()
