"""The chat session: a conversation kept going turn after turn over one session per server, its events as a chat page
and the terminal read them (streamed answers, tool calls as they start and end, forms, approvals), and a stop that
reaches the server; against this project's MCP servers (tests/servers), with the scripted chat model."""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from fixtures.oauth_servers import SCRIPTED_BROWSER, OAuthServers, browser_visits
from fixtures.python_servers import SERVERS_DIR
from knime_mcp import auth as oauth
from knime_mcp.agent.approval import ApprovalPolicy
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, scripted

ASKING = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")]), name="asking")
IMAGES = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "image_server.py")]), name="images")

_PATIENCE = 60.0
"""Seconds a test waits for an event before it fails (a wait for readiness, not a timing)."""


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks.txt"


@pytest.fixture
def chat_tools(marks: Path) -> list[MCPTool]:
    """The chat server's tools; its `wait` tool writes to ``marks``."""
    command = [sys.executable, str(SERVERS_DIR / "chat_server.py"), str(marks)]
    return _tools(ServerSpec(target=shlex.join(command), name="chat"))


def _until(check: Callable[[], Any], what: str) -> Any:
    """Poll ``check`` until it returns something truthy, and return that."""
    deadline = time.monotonic() + _PATIENCE
    while not (found := check()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)
    return found


def _event(session: ChatSession, kind: str, after: int = 0) -> dict[str, Any]:
    """The first event of ``kind`` after ``after``, once it came."""
    return _until(lambda: next((e for e in session.events(after) if e["type"] == kind), None), f"a {kind!r} event")


def _turn(session: ChatSession, text: str) -> list[dict[str, Any]]:
    """Send ``text`` and return the turn's events, once it ended."""
    after = session.events()[-1]["seq"] if session.events() else 0
    session.send(text)
    end = _event(session, "turn_end", after)
    return [event for event in session.events(after) if event["seq"] <= end["seq"]]


def test_a_turn_with_a_tool_call_streams_its_events_in_order(demo_stdio_command: list[str]) -> None:
    # Given a chat over the demo server, and a model that calls echo and then answers
    tools = _tools(ServerSpec(target=shlex.join(demo_stdio_command), name="demo"))
    model = scripted(calls(("c1", "echo", {"text": "hi there"})), AIMessage("The server said hi there."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        # When a person sends a message
        events = _turn(session, "Echo hi there.")
        run = session.run()
    # Then the events come in order, with increasing numbers, the answer streaming before it is whole
    kinds = [event["type"] for event in events]
    deltas = kinds.count("assistant_delta")
    assert kinds == ["user", "tool_start", "tool_end", *["assistant_delta"] * deltas, "assistant", "turn_end"]
    assert deltas > 1 and [event["seq"] for event in events] == sorted({event["seq"] for event in events})
    user, start, end = events[:3]
    assert user["text"] == "Echo hi there."
    assert start | {"seq": 0} == {
        "seq": 0, "type": "tool_start", "call_id": "c1", "tool": "echo", "server": "demo", "kind": "mcp",
        "arguments": {"text": "hi there"},
    }  # fmt: skip
    assert (end["call_id"], end["status"], end["text"], end["images"]) == ("c1", "ok", "hi there", [])
    assert end["duration_ms"] >= 0
    answer = "".join(event["text"] for event in events if event["type"] == "assistant_delta")
    assert answer == events[-2]["text"] == "The server said hi there."
    # And the run so far holds the conversation and the log, for a node's outputs
    assert [message.type for message in run.conversation.new_messages] == ["human", "ai", "tool", "ai"]
    assert [(entry.tool, entry.status) for entry in run.log] == [("echo", "ok")]
    assert not session.running


def test_two_turns_go_through_one_session_per_server(chat_tools: list[MCPTool]) -> None:
    model = scripted(
        calls(("c1", "whoami", {})), AIMessage("First."), calls(("c2", "whoami", {})), AIMessage("Second.")
    )
    with ChatSession(model, chat_tools, config=AgentConfig()) as session:
        first = next(e for e in _turn(session, "Who?") if e["type"] == "tool_end")
        second = next(e for e in _turn(session, "Who again?") if e["type"] == "tool_end")
        run = session.run()
    # The second call is the same process's second call: one stdio session for the whole chat
    process = first["text"].removeprefix("call 1 in process ")
    assert first["text"].startswith("call 1 in ") and second["text"] == f"call 2 in process {process}"
    # And the model saw the whole conversation in the second turn
    assert [message.type for message in run.conversation.new_messages] == ["human", "ai", "tool", "ai"] * 2
    assert [message.text for message in model.requests[2][0] if message.type == "human"] == ["Who?", "Who again?"]


def test_stop_mid_call_cancels_the_call_on_the_server_and_the_chat_goes_on(
    chat_tools: list[MCPTool], marks: Path
) -> None:
    # Given a call of a tool that waits for an hour
    model = scripted(calls(("c1", "wait", {})), calls(("c2", "whoami", {})), AIMessage("Still here."))
    with ChatSession(model, chat_tools, config=AgentConfig()) as session:
        session.send("Wait.")
        _until(lambda: marks.exists() and "started" in marks.read_text(), "the server to start the call")
        # When the person stops the turn
        session.stop()
        end = _event(session, "tool_end")
        _event(session, "turn_end")
        # Then the server saw the cancellation, the call ends as cancelled, and the turn is over
        _until(lambda: "cancelled" in marks.read_text(), "the server to see the cancellation")
        assert (end["call_id"], end["status"]) == ("c1", "cancelled") and not session.running
        # And the next turn is answered, the model having been told that the call was cancelled
        events = _turn(session, "Who are you?")
        run = session.run()
    assert [e["text"] for e in events if e["type"] == "assistant"] == ["Still here."]
    (stopped,) = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage) and m.tool_call_id == "c1"]
    assert "cancelled" in stopped.text and stopped.status == "error"
    assert [(entry.tool, entry.status) for entry in run.log] == [("wait", "cancelled"), ("whoami", "ok")]


def test_a_form_a_server_asks_for_is_answered_by_the_person() -> None:
    model = scripted(calls(("c1", "ask_name", {})), AIMessage("Greeted."))
    with ChatSession(model, _tools(ASKING), config=AgentConfig()) as session:
        session.send("Greet me.")
        form = _event(session, "form")
        assert (form["server"], form["message"], form["url"]) == ("asking", "What is your name?", None)
        assert form["schema"]["required"] == ["name"]
        # An answer that breaks the schema is refused, and the form stays open
        session.answer_form(form["form_id"], "accept", {"name": 5})
        refusal = _event(session, "error", form["seq"])
        assert "name" in refusal["message"] and session.running
        session.answer_form(form["form_id"], "accept", {"name": "Ada"})
        end = _event(session, "tool_end")
        _event(session, "turn_end")
    assert (end["status"], end["text"]) == ("ok", "Hello, Ada!")


def test_a_declined_form_tells_the_server_so() -> None:
    model = scripted(calls(("c1", "confirm", {})), AIMessage("Not confirmed."))
    with ChatSession(model, _tools(ASKING), config=AgentConfig()) as session:
        session.send("Confirm.")
        form = _event(session, "form")
        session.answer_form(form["form_id"], "decline")
        end = _event(session, "tool_end")
    assert end["text"] == "Not confirmed (decline)."


def test_a_url_form_shows_the_page_and_waits_for_the_person(chat_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "visit", {})), AIMessage("Done."))
    with ChatSession(model, chat_tools, config=AgentConfig()) as session:
        session.send("Give consent.")
        form = _event(session, "form")
        assert (form["url"], form["message"], form["server"]) == (
            "https://example.org/consent?step=1",
            "Please give consent.",
            "chat",
        )
        session.answer_form(form["form_id"], "accept")
        end = _event(session, "tool_end")
    assert end["text"] == "Visit answered: accept."


def test_images_of_a_tool_result_come_as_png_data_urls() -> None:
    model = scripted(calls(("c1", "picture", {"format": "jpeg"})), AIMessage("A picture."))
    with ChatSession(model, _tools(IMAGES), config=AgentConfig()) as session:
        end = next(e for e in _turn(session, "Draw.") if e["type"] == "tool_end")
    (image,) = end["images"]
    assert image.startswith("data:image/png;base64,iVBORw0KGgo") and end["text"] == "a jpeg picture"


@pytest.fixture(scope="module")
def demo_tools(demo_stdio_command: list[str]) -> list[MCPTool]:
    return _tools(ServerSpec(target=shlex.join(demo_stdio_command), name="demo"))


def test_a_call_waits_for_approval_and_runs_with_the_arguments_the_person_approved(
    demo_tools: list[MCPTool],
) -> None:
    model = scripted(calls(("c1", "echo", {"text": "draft"})), AIMessage("Done."))
    config = AgentConfig(approval=ApprovalPolicy(everything=True))
    with ChatSession(model, demo_tools, config=config) as session:
        session.send("Echo.")
        asked = _event(session, "approval")
        # Nothing ran while the person had not answered
        assert not [e for e in session.events() if e["type"] == "tool_start"] and session.running
        assert (asked["call_id"], asked["tool"], asked["server"], asked["kind"]) == ("c1", "echo", "demo", "mcp")
        assert asked["arguments"] == {"text": "draft"} and asked["hints"]["read_only"] is True
        session.decide("c1", "approve", arguments={"text": "final"})
        end = _event(session, "tool_end")
        _event(session, "turn_end")
        run = session.run()
    assert (end["status"], end["text"]) == ("ok", "final")
    assert run.log[0].approval is not None and run.log[0].approval.choice == "approve"


def test_a_denied_call_is_not_made_and_the_model_hears_the_reason(demo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "echo", {"text": "x"})), AIMessage("Understood."))
    config = AgentConfig(approval=ApprovalPolicy(pattern="^echo$"))
    with ChatSession(model, demo_tools, config=config) as session:
        session.send("Echo.")
        _event(session, "approval")
        session.decide("c1", "deny", reason="not today")
        end = _event(session, "tool_end")
        _event(session, "turn_end")
        run = session.run()
    assert end["status"] == "denied" and "not today" in end["text"]
    (reply,) = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
    assert "not today" in reply.text and reply.status == "error"


def test_allow_for_this_session_holds_for_the_later_turns(demo_tools: list[MCPTool]) -> None:
    model = scripted(
        calls(("c1", "echo", {"text": "a"})), AIMessage("One."), calls(("c2", "echo", {"text": "b"})), AIMessage("2.")
    )
    with ChatSession(model, demo_tools, config=AgentConfig(approval=ApprovalPolicy(everything=True))) as session:
        session.send("First.")
        _event(session, "approval")
        session.decide("c1", "allow_session")
        first_end = _event(session, "turn_end")
        events = _turn(session, "Second.")
    assert first_end and "approval" not in [e["type"] for e in events]
    assert [e["text"] for e in events if e["type"] == "tool_end"] == ["b"]


def test_stop_while_a_call_waits_for_approval_ends_the_turn_without_the_call(demo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "echo", {"text": "a"})), AIMessage("Later."))
    with ChatSession(model, demo_tools, config=AgentConfig(approval=ApprovalPolicy(everything=True))) as session:
        session.send("Echo.")
        _event(session, "approval")
        session.stop()
        _event(session, "turn_end")
        run = session.run()
    assert "tool_start" not in [e["type"] for e in session.events()]
    (reply,) = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
    assert "cancelled" in reply.text


def test_an_oauth_sign_in_link_comes_as_an_event_naming_its_server(oauth_servers: OAuthServers, browser: Path) -> None:
    # Given the tools of an OAuth server, listed after a sign-in that is forgotten since
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"), name="guarded")
    tools = anyio.run(lambda: list_server_tools(spec, show_sign_in=lambda url: None)).tools
    assert oauth.forget_server(oauth_servers.http_url) > 0
    listed = len(browser_visits(browser))
    model = scripted(calls(("c1", "echo", {"text": "hi"})), AIMessage("Signed in."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        # When the chat calls one of them, then the person is shown where to sign in
        session.send("Echo.")
        sign_in = _event(session, "sign_in")
        assert sign_in["server"] == "guarded" and sign_in["url"].startswith(oauth_servers.issuer)
        # And when they open the link (the page opens it on their click), the call goes through
        subprocess.run([sys.executable, str(SCRIPTED_BROWSER), sign_in["url"]], check=True, timeout=_PATIENCE)
        _event(session, "turn_end")
        events = session.events()
    # And the session opened no browser of its own: the person's visit is the only one
    for opening in [t for t in threading.enumerate() if t.name == "knime-mcp sign-in browser"]:
        opening.join(_PATIENCE)  # a browser the session started (the BROWSER command) has logged its visit by now
    assert browser_visits(browser)[listed:] == [sign_in["url"]]
    assert [event["status"] for event in events if event["type"] == "tool_end"] == ["ok"]


def test_a_chat_with_history_shows_it_first(demo_tools: list[MCPTool]) -> None:
    # Given a conversation so far: a question, an answered tool call with a secret in its arguments, and the answer
    history = [
        HumanMessage("Echo hi."),
        AIMessage("", tool_calls=[{"id": "c0", "name": "echo", "args": {"text": "hi", "api_key": "sk-123"}}]),
        ToolMessage("hi", tool_call_id="c0", name="echo"),
        AIMessage("It said **hi**."),
        AIMessage("Anything else?"),
    ]
    model = scripted(AIMessage("Bye."))
    with ChatSession(model, demo_tools, config=AgentConfig(), history=history) as session:
        # When a page opens on it, then its first events are that conversation, the tool call as an ended card
        earlier = session.events()
        assert [(e["type"], e.get("text")) for e in earlier] == [
            ("user", "Echo hi."), ("tool_start", None), ("tool_end", "hi"), ("assistant", "It said **hi**."),
            ("assistant", "Anything else?"),
        ]  # fmt: skip
        start, end = earlier[1:3]
        assert (start["call_id"], start["tool"], start["arguments"]["text"]) == ("c0", "echo", "hi")
        assert start["arguments"]["api_key"] != "sk-123" and (end["call_id"], end["status"]) == ("c0", "ok")
        # And the chat goes on from it, the new events numbered after it
        events = _turn(session, "Thanks.")
    assert events[0]["seq"] == len(earlier) + 1
    assert [e["text"] for e in events if e["type"] in ("user", "assistant")] == ["Thanks.", "Bye."]
    assert [m.text for m in model.requests[0][0] if m.type == "human"] == ["Echo hi.", "Thanks."]


def test_a_tasks_status_messages_come_as_progress_events_between_its_start_and_end(
    everything_stdio_command: list[str],
) -> None:
    # Given server-everything's research tool, which runs only as an MCP task and says each stage as its status
    tools = _tools(ServerSpec(target=shlex.join(everything_stdio_command), name="everything"))
    model = scripted(calls(("c1", "simulate-research-query", {"topic": "KNIME"})), AIMessage("Researched."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        events = _turn(session, "Research KNIME.")
    # Then each status polled came once, as a progress event of the tool, while the call ran
    kinds = [event["type"] for event in events]
    progress = [event for event in events if event["type"] == "progress"]
    assert progress and kinds.index("tool_start") < kinds.index("progress")
    assert kinds.index("tool_end") == progress[-1]["seq"] - events[0]["seq"] + 1
    assert {event["tool"] for event in progress} == {"simulate-research-query"}
    texts = [event["text"] for event in progress]
    assert len(set(texts)) == len(texts) and all(text.endswith("...") for text in texts)
