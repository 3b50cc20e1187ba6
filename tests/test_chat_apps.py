"""MCP Apps in the chat session: a call of a tool with an app names it, the app's view is its document (its policy
first) with the call's input and result, and what the app asks (its server's tools and resources, a message) goes
only to its own server and through the approval a model's call gets; against real servers over stdio (this
project's ledger and chart servers, the published `@modelcontextprotocol/server-basic-vanillajs`), with the scripted
chat model. No browser: the page's side is tests/test_chat_view_apps.py."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from fixtures.npm_servers import app_server_command
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.app_calls import APP_CALLS_KEPT, AppCalls, text_result
from knime_mcp.agent.approval import ApprovalPolicy
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.results import ImagePart, ResourceLinkPart, ResourcePart, TextPart, ToolResult
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import calls, scripted

APP_URI = "ui://ledger/app.html"
LEDGER_APP = "Show Ledger app (ledger)"
SECRET = "ledger-s3cret-value"
"""A value in the ledger server's environment: nothing an app gets may hold it."""

_PATIENCE = 60.0
"""Seconds a test waits for an event before it fails (a wait for readiness, not a timing)."""

ASK_BEFORE_DESTRUCTIVE = AgentConfig(approval=ApprovalPolicy(destructive=True), policy=ToolPolicy(destructive="allow"))
"""Destructive tools allowed, each call asked about first."""
DELETE_RENT = {"name": "delete_entry", "arguments": {"entry": "rent"}}
"""What the app asks: a call of the ledger's destructive tool."""


@pytest.fixture
def received(tmp_path: Path) -> Path:
    """Where the ledger server writes each call it receives."""
    return tmp_path / "received.txt"


@pytest.fixture
def tools(received: Path, monkeypatch: pytest.MonkeyPatch) -> list[MCPTool]:
    """The ledger server's tools (one with an app, one app-only, one destructive) and the chart server's."""
    monkeypatch.setenv("LEDGER_TEST_TOKEN", SECRET)
    ledger = [sys.executable, str(SERVERS_DIR / "app_ledger_server.py"), str(received)]
    charts = [sys.executable, str(SERVERS_DIR / "app_server.py")]
    specs = [
        ServerSpec(target=shlex.join(ledger), name="ledger", env={"LEDGER_TOKEN": "${LEDGER_TEST_TOKEN}"}),
        ServerSpec(target=shlex.join(charts), name="charts"),
    ]
    return [tool for spec in specs for tool in anyio.run(lambda spec=spec: list_server_tools(spec)).tools]


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + _PATIENCE
    while not (found := check()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)
    return found


def _event(session: ChatSession, kind: str, after: int = 0, **fields: Any) -> dict[str, Any]:
    """The first event of ``kind`` after ``after`` having ``fields``, once it came."""

    def found() -> dict[str, Any] | None:
        events = session.events(after)
        return next((e for e in events if e["type"] == kind and fields.items() <= e.items()), None)

    return _until(found, f"a {kind!r} event with {fields}")


def _reply(session: ChatSession, request_id: str) -> dict[str, Any]:
    return _event(session, "app_reply", request_id=request_id)


def _ask(session: ChatSession, method: str, params: dict[str, Any] | None = None, call_id: str = "c1") -> dict:
    """The app of call ``call_id`` asks; its ``app_reply``."""
    return _reply(session, session.app_request(call_id, method, params))


def _shown(session: ChatSession) -> list[dict[str, Any]]:
    """Send a message whose turn calls show_ledger (call c1), and return the turn's events, once it ended."""
    session.send("Show May's ledger.")
    end = _event(session, "turn_end")
    return [event for event in session.events() if event["seq"] <= end["seq"]]


def _model(*more: AIMessage) -> Any:
    return scripted(calls(("c1", "show_ledger", {"month": "May"})), AIMessage("Shown."), *more)


def _received(received: Path) -> list[str]:
    return received.read_text().splitlines() if received.exists() else []


def test_a_call_of_a_tool_with_an_app_names_it_and_its_view_is_the_document_with_the_input_and_result(
    tools: list[MCPTool],
) -> None:
    model = scripted(
        calls(("c1", "show_ledger", {"month": "May"}), ("c2", "plain", {"text": "hi"})), AIMessage("Shown.")
    )
    with ChatSession(model, tools, config=AgentConfig()) as session:
        events = _shown(session)
        view = _ask(session, "view")["result"]
    # The call of the tool with an app names it; the other call has none
    starts = {event["call_id"]: event for event in events if event["type"] == "tool_start"}
    assert starts["c1"]["app"] == {"uri": APP_URI, "server": "ledger"} and "app" not in starts["c2"]
    # The view is the app's document, its own policy the first thing parsed, with the call's input and result
    document = view["document"]
    assert document.startswith('<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src')
    assert "connect-src https://api.ledger.example;" in document and "<p id='ledger'>ledger</p>" in document
    assert (view["uri"], view["server"], view["prefers_border"]) == (APP_URI, "ledger", False)
    assert view["input"] == {"month": "May"}
    result = view["result"]
    assert result["structuredContent"] == {"month": "May", "total": 1500} and result["isError"] is False
    assert [part["type"] for part in result["content"]] == ["text"]
    assert json.loads(result["content"][0]["text"]) == {"month": "May", "total": 1500}


def test_a_tool_call_from_the_app_reaches_its_server_and_its_result_comes_back_as_an_app_reply(
    tools: list[MCPTool], received: Path
) -> None:
    with ChatSession(_model(), tools, config=AgentConfig()) as session:
        _shown(session)
        reply = _ask(session, "tools/call", {"name": "ledger_totals", "arguments": {"month": "May"}})
        run = session.run()
        start = _event(session, "tool_start", tool="ledger_totals")
        end = _event(session, "tool_end", call_id=start["call_id"])
    # The app-only tool was called on the server, and its result came back to the app
    assert reply["result"] == {"content": [{"type": "text", "text": "totals of May: 1500"}], "isError": False}
    assert _received(received)[-1] == 'ledger_totals {"month": "May"}'
    # The chat shows the call as the app's, and the log keeps it (turn 0: outside the model's turns)
    assert start["by_app"] == LEDGER_APP and "app" not in start and start["server"] == "ledger"
    assert (end["status"], end["text"]) == ("ok", "totals of May: 1500")
    (entry,) = [entry for entry in run.log if entry.tool == "ledger_totals"]
    assert (entry.turn, entry.tool_call_id, entry.status, entry.server) == (0, start["call_id"], "ok", "ledger")


def test_a_destructive_call_from_the_app_waits_for_approval_and_runs_once_approved(
    tools: list[MCPTool], received: Path
) -> None:
    with ChatSession(_model(), tools, config=ASK_BEFORE_DESTRUCTIVE) as session:
        _shown(session)
        request_id = session.app_request("c1", "tools/call", DELETE_RENT)
        approval = _event(session, "approval")
        # It waits on an approval card naming the app; the server has not seen it
        assert (approval["tool"], approval["by_app"], approval["arguments"]) == (
            "delete_entry", LEDGER_APP, {"entry": "rent"},
        )  # fmt: skip
        assert not any(line.startswith("delete_entry") for line in _received(received))
        assert not [e for e in session.events() if e["type"] == "app_reply"]
        session.decide(approval["call_id"], "approve")
        reply = _reply(session, request_id)
        run = session.run()
    # Approved, it ran once, and the app got its result
    assert reply["result"] == {"content": [{"type": "text", "text": "deleted rent"}], "isError": False}
    assert [line for line in _received(received) if line.startswith("delete_entry")] == [
        'delete_entry {"entry": "rent"}'
    ]
    (entry,) = [entry for entry in run.log if entry.tool == "delete_entry"]
    assert (entry.status, entry.approval and entry.approval.choice) == ("ok", "approve")


def test_a_call_from_the_app_that_the_tool_policy_blocks_is_refused_without_asking(
    tools: list[MCPTool], received: Path
) -> None:
    # The default tool policy blocks destructive tools: the model is not offered delete_entry, and its app may not
    # call it either
    config = AgentConfig(approval=ApprovalPolicy(destructive=True))
    with ChatSession(_model(), tools, config=config) as session:
        _shown(session)
        reply = _ask(session, "tools/call", DELETE_RENT)
        events = session.events()
        run = session.run()
    assert reply["error"].startswith("The call was not made: tool 'delete_entry' is annotated destructive")
    assert not [event for event in events if event["type"] == "approval"]
    assert not any(line.startswith("delete_entry") for line in _received(received))
    (entry,) = [entry for entry in run.log if entry.tool == "delete_entry"]
    assert entry.status == "blocked"


def test_a_denied_call_from_the_app_answers_the_app_with_an_error_and_never_reaches_the_server(
    tools: list[MCPTool], received: Path
) -> None:
    with ChatSession(_model(), tools, config=ASK_BEFORE_DESTRUCTIVE) as session:
        _shown(session)
        request_id = session.app_request("c1", "tools/call", DELETE_RENT)
        approval = _event(session, "approval", by_app=LEDGER_APP)
        session.decide(approval["call_id"], "deny", reason="Keep the rent.")
        reply = _reply(session, request_id)
        end = _event(session, "tool_end", call_id=approval["call_id"])
        run = session.run()
    assert "result" not in reply and "denied it. Their reason: Keep the rent." in reply["error"]
    assert end["status"] == "denied"
    assert not any(line.startswith("delete_entry") for line in _received(received))
    (entry,) = [entry for entry in run.log if entry.tool == "delete_entry"]
    assert (entry.status, entry.approval and entry.approval.choice) == ("denied", "deny")


def test_closing_the_chat_ends_an_apps_call_that_waits_for_approval(tools: list[MCPTool], received: Path) -> None:
    with ChatSession(_model(), tools, config=ASK_BEFORE_DESTRUCTIVE) as session:
        _shown(session)
        session.app_request("c1", "tools/call", DELETE_RENT)
        _event(session, "approval", by_app=LEDGER_APP)
    # The session closed (the with block ended), and the call was never made
    assert not any(line.startswith("delete_entry") for line in _received(received))
    with pytest.raises(RuntimeError, match="Open the chat session"):
        session.app_request("c1", "view")


def test_an_app_reaches_its_own_servers_resources_and_nothing_of_another_server_nor_a_method_it_may_not_use(
    tools: list[MCPTool], received: Path
) -> None:
    with ChatSession(_model(), tools, config=AgentConfig()) as session:
        _shown(session)
        listed = _ask(session, "resources/list")
        read = _ask(session, "resources/read", {"uri": "data://ledger/entries"})
        other_tool = _ask(session, "tools/call", {"name": "show_chart", "arguments": {"series": "x"}})
        unknown_tool = _ask(session, "tools/call", {"name": "format_disk", "arguments": {}})
        other_resource = _ask(session, "resources/read", {"uri": "ui://charts/chart.html"})
        unknown_method = _ask(session, "sampling/createMessage", {"messages": []})
        no_app = _ask(session, "view", call_id="c9")
        replies = [e for e in session.events() if e["type"] == "app_reply"]
    # Its own server's resources, as the protocol writes them
    assert sorted(entry["uri"] for entry in listed["result"]["resources"]) == ["data://ledger/entries", APP_URI]
    assert read["result"] == {
        "contents": [{"uri": "data://ledger/entries", "mimeType": "text/plain", "text": "rent 1200\nfood 300"}]
    }
    # Another server's tool, a tool nobody has, another server's resource, another method: refused, saying why
    assert other_tool["error"] == "The app of show_ledger may only call tools of ledger; it asked for show_chart."
    assert unknown_tool["error"] == "The app of show_ledger may only call tools of ledger; it asked for format_disk."
    assert "ui://charts/chart.html" in other_resource["error"] and "[server: ledger]" in other_resource["error"]
    assert unknown_method["error"] == "An app may not ask for sampling/createMessage."
    assert "The chat shows no app for the call 'c9'." in no_app["error"]
    # The chart server saw nothing (its tool was never called), the ledger server only the model's call
    assert _received(received) == ['show_ledger {"month": "May"}']
    # And nothing of a server's settings reached the app: not its environment, not its command line
    answered = json.dumps(replies)
    assert SECRET not in answered and "app_ledger_server.py" not in answered and "LEDGER_TOKEN" not in answered


def test_an_apps_message_starts_a_turn_marked_as_the_apps_and_is_refused_while_a_turn_runs(
    tools: list[MCPTool],
) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "Compare May with April."}]}
    model = _model(
        AIMessage("April was cheaper."), calls(("c3", "delete_entry", {"entry": "food"})), AIMessage("Kept.")
    )
    config = AgentConfig(approval=ApprovalPolicy(destructive=True), policy=ToolPolicy(destructive="allow"))
    with ChatSession(model, tools, config=config) as session:
        _shown(session)
        after = session.events()[-1]["seq"]
        reply = _ask(session, "ui/message", message)
        user = _event(session, "user", after)
        answer = _event(session, "assistant", user["seq"])
        _event(session, "turn_end", user["seq"])
        # While a turn runs (it waits for an approval), an app's message is refused
        session.send("Delete food.")
        approval = _event(session, "approval", answer["seq"])
        refused = _ask(session, "ui/message", message)
        session.decide(approval["call_id"], "deny")
        _event(session, "turn_end", approval["seq"])
        run = session.run()
    assert reply["result"] == {}
    assert (user["text"], user["by_app"]) == ("Compare May with April.", LEDGER_APP)
    assert answer["text"] == "April was cheaper."
    assert refused["error"] == "The app's message was not sent: the assistant is still answering."
    humans = [m.text for m in run.conversation.new_messages if isinstance(m, HumanMessage)]
    # and the model is told the message is the app's, not the person's
    assert humans == [
        "Show May's ledger.", f"[Sent by the {LEDGER_APP}, not typed by the person.] Compare May with April.",
        "Delete food.",
    ]  # fmt: skip


def test_the_apps_of_an_earlier_conversation_show_again_with_the_replys_text_as_their_result(
    tools: list[MCPTool],
) -> None:
    history = [
        HumanMessage("Show May's ledger."),
        AIMessage("", tool_calls=[{"id": "c0", "name": "show_ledger", "args": {"month": "May"}}]),
        ToolMessage("May: 1500 in total", tool_call_id="c0", name="show_ledger"),
        AIMessage("Shown."),
    ]
    with ChatSession(scripted(), tools, config=AgentConfig(), history=history) as session:
        start = _event(session, "tool_start", call_id="c0")
        view = _ask(session, "view", call_id="c0")["result"]
    assert start["app"] == {"uri": APP_URI, "server": "ledger"}
    assert view["input"] == {"month": "May"}
    assert view["result"] == {"content": [{"type": "text", "text": "May: 1500 in total"}], "isError": False}
    assert "<p id='ledger'>ledger</p>" in view["document"]


def test_with_show_mcp_apps_off_the_page_is_told_and_no_app_may_ask(tools: list[MCPTool]) -> None:
    with ChatSession(_model(), tools, config=AgentConfig()) as session:
        service = ChatViewService(session, show_tool_calls=True, show_apps=False)
        shown = ChatViewService(session, show_tool_calls=True)
        assert service.init()["show_apps"] is False and shown.init()["show_apps"] is True
        with pytest.raises(Exception, match="MCP Apps are not shown in this chat"):
            service.app_request("c1", "view")
        _shown(session)
        # The page that shows apps asks through the service, and the answer comes through poll
        request_id = shown.app_request("c1", "view")
        reply = _until(
            lambda: next((e for e in shown.poll(0)["events"] if e.get("request_id") == request_id), None), "the reply"
        )
    assert reply["result"]["uri"] == APP_URI


def test_the_published_basic_app_renders_from_its_server_and_calls_its_tool_from_the_app() -> None:
    spec = ServerSpec(target=shlex.join(app_server_command("basic-vanillajs")), name="basic")
    tools = anyio.run(lambda: list_server_tools(spec)).tools
    model = scripted(calls(("c1", "get-time", {})), AIMessage("It is time."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        session.send("What time is it?")
        start = _event(session, "tool_start", call_id="c1")
        _event(session, "turn_end")
        view = _ask(session, "view")["result"]
        called = _ask(session, "tools/call", {"name": "get-time", "arguments": {}})["result"]
    assert start["app"] == {"uri": "ui://get-time/mcp-app.html", "server": "basic"}
    assert view["document"].lower().startswith('<!doctype html><meta http-equiv="content-security-policy"')
    assert view["size"] > 1000 and view["result"]["structuredContent"]["time"] == view["result"]["content"][0]["text"]
    assert called["structuredContent"]["time"] >= view["result"]["structuredContent"]["time"]


def test_the_chat_keeps_the_last_50_calls_with_an_app_and_only_calls_of_tools_with_one() -> None:
    server = ServerSpec(target="https://ledger.example/mcp", name="ledger")
    with_app = MCPTool(name="show_ledger", tool_name="show_ledger", server=server, app_uri=APP_URI)
    kept = AppCalls()
    assert kept.started("plain", MCPTool(name="plain", tool_name="plain", server=server), {}) is None
    for number in range(APP_CALLS_KEPT + 1):
        assert kept.started(f"c{number}", with_app, {"n": number}) == {"uri": APP_URI, "server": "ledger"}
    assert kept.get("plain") is None and kept.get("c0") is None
    assert kept.get("c1") is not None and kept.get(f"c{APP_CALLS_KEPT}") is not None


def test_an_apps_result_is_the_protocols_call_tool_result_with_the_runs_secrets_masked() -> None:
    server = ServerSpec(target="https://ledger.example/mcp", name="ledger")
    kept = AppCalls()
    kept.started("c1", MCPTool(name="show_ledger", tool_name="show_ledger", server=server, app_uri=APP_URI), {})
    result = ToolResult(
        content=(
            TextPart(f"key {SECRET}", audience=("user",)),
            ImagePart("iVBORw0KGgo=", "image/png"),
            ResourceLinkPart("data://ledger/entries", "entries", mime_type="text/plain"),
            ResourcePart("data://ledger/notes", "text/plain", text="notes"),
        ),
        structured={"total": 1500},
    )
    kept.ended("c1", result, None, [SECRET])
    call = kept.get("c1")
    assert call is not None and call.result == {
        "content": [
            {"type": "text", "text": "key ***", "annotations": {"audience": ["user"]}},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "data://ledger/entries", "name": "entries", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "data://ledger/notes", "mimeType": "text/plain", "text": "notes"}},
        ],
        "isError": False,
        "structuredContent": {"total": 1500},
    }
    # A call that failed before its tool answered gives the app its error as an error result
    kept.started("c2", call.tool, {})
    kept.ended("c2", None, f"The server timed out ({SECRET}).", [SECRET])
    failed = kept.get("c2")
    assert failed is not None and failed.result == text_result("The server timed out (***).", True)
