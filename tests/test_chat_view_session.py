"""The Agent Chat page in a real headless Chromium over the real chat session: the view's data service
(src/nodes/agent_chat/service.py) on :class:`~knime_mcp.agent.chat_session.ChatSession`, with the scripted chat model
and real MCP servers (the demo server, tests/servers/chat_server.py and asking_server.py, the OAuth-protected server
behind the real authorization server of fixtures/oauth_servers.py), hosted by tests/view_harness.py.

A person types, approves or denies the call or allows its tool for the session, watches it, stops it mid-call (the
server sees the protocol's cancellation, over stdio and Streamable HTTP, and the card says so), signs in where a
server's card says (the link opens on their click only), fills in a server's form, and what a tool returns shows as
text, whatever markup it holds.
"""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from fixtures.oauth_servers import OAuthServers, browser_visits
from fixtures.python_servers import SERVERS_DIR, running_server
from knime_mcp import auth as oauth
from knime_mcp.agent.approval import ApprovalPolicy
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.tools.results import ToolResult
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import calls, scripted
from servers.chat_server import how_the_wait_ended
from view_harness import headless_chromium, idle, network_requests, open_chat, say, shown, until

HOSTILE = '<img src=x onerror="window.top.pwned=1"> <script>window.top.pwned=2</script>'
ASK_ALL = AgentConfig(approval=ApprovalPolicy(everything=True))


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture
def demo_tools(demo_stdio_command: list[str]) -> list[MCPTool]:
    return _tools(ServerSpec(target=shlex.join(demo_stdio_command), name="demo"))


def test_a_message_an_approval_the_call_and_the_answer(chromium: Chrome, demo_tools: list[MCPTool]) -> None:
    # Given a chat that asks before every call, and a model that calls echo and then answers
    model = scripted(calls(("c1", "echo", {"text": "hello"})), AIMessage("The server said **hello**."))
    opening = [AIMessage("Hi! Ask me to *echo* something.")]
    with ChatSession(model, demo_tools, config=ASK_ALL, history=opening) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            assert shown(chromium, ".message.assistant em").text == "echo"
            # When the person types a message, the turn waits on an approval card
            say(chromium, "Please echo hello.")
            card = shown(chromium, ".card.approval")
            assert card.find_element(By.CSS_SELECTOR, ".tool-name").text == "echo"
            assert "demo" in card.find_element(By.CSS_SELECTOR, ".where").text
            assert not chromium.find_elements(By.CSS_SELECTOR, ".card.tool")
            # And when they approve, the call is made, its card ends "ok" with the result, and the answer shows
            card.find_element(By.CSS_SELECTOR, "button.approve").click()
            tool = shown(chromium, '.card.tool[data-status="ok"]')
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == "hello"
            idle(chromium)
            answer = chromium.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1]
            assert answer.find_element(By.CSS_SELECTOR, "strong").text == "hello"
            assert host.alerts == []
        run = session.run()
    assert [(entry.tool, entry.status) for entry in run.log] == [("echo", "ok")]


def test_a_chat_opened_again_shows_the_conversation_so_far(chromium: Chrome, demo_tools: list[MCPTool]) -> None:
    # Given a chat held earlier, with a tool call, and a session going on from it (as the view opens again)
    model = scripted(calls(("c1", "echo", {"text": "hello"})), AIMessage("The server said **hello**."))
    with ChatSession(model, demo_tools, config=AgentConfig()) as first:
        with open_chat(chromium, ChatViewService(first, show_tool_calls=True)):
            say(chromium, "Please echo hello.")
            shown(chromium, '.card.tool[data-status="ok"]')
            idle(chromium)
        earlier = first.run().conversation.new_messages
    with ChatSession(scripted(AIMessage("Bye.")), demo_tools, config=AgentConfig(), history=earlier) as session:
        # When the page opens on it
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            # Then it shows the earlier messages and the call, ended, before anything new is said
            assert shown(chromium, ".message.user").text == "Please echo hello."
            tool = shown(chromium, '.card.tool[data-status="ok"]')
            assert tool.find_element(By.CSS_SELECTOR, ".tool-name").text == "echo"
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == "hello"
            answer = shown(chromium, ".message.assistant")
            assert answer.find_element(By.CSS_SELECTOR, "strong").text == "hello"
            # And the chat goes on after them
            say(chromium, "Thanks.")
            idle(chromium)
            messages = chromium.find_elements(By.CSS_SELECTOR, ".message")
            assert [m.text for m in messages] == ["Please echo hello.", "The server said hello.", "Thanks.", "Bye."]
            assert host.alerts == []


def test_a_denial_with_a_reason_reaches_the_model(chromium: Chrome, demo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "echo", {"text": "secret plan"})), AIMessage("Understood, I will not."))
    with ChatSession(model, demo_tools, config=ASK_ALL) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)):
            say(chromium, "Echo the plan.")
            card = shown(chromium, ".card.approval")
            card.find_element(By.CSS_SELECTOR, ".deny-reason").send_keys("not in public")
            card.find_element(By.CSS_SELECTOR, "button.deny").click()
            idle(chromium)
            assert chromium.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text == "Understood, I will not."
        run = session.run()
    (denied,) = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
    assert denied.status == "error" and "not in public" in denied.text


class _ChatServer(NamedTuple):
    spec: ServerSpec
    marks: Path
    """The file the server writes down what happened to its `wait` call in."""
    stopped_by: list[str]
    """What it writes down after it started a call that is stopped, sorted, the call's request id left out."""


@pytest.fixture(params=["stdio", "streamable-http"])
def chat_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[_ChatServer]:
    """tests/servers/chat_server.py over stdio, where a stop sends the protocol's ``notifications/cancelled`` (the
    SDK's reason: "caller cancelled"), or over Streamable HTTP at 2026-07-28, where closing the call's response stream
    is the cancellation and no notification is expected: either way the server interrupts the call's handler."""
    marks = tmp_path / "marks.txt"
    command = [sys.executable, str(SERVERS_DIR / "chat_server.py"), str(marks)]
    if request.param == "stdio":
        spec = ServerSpec(target=shlex.join(command), name="chat")
        yield _ChatServer(spec, marks, ["interrupted", "notifications/cancelled: caller cancelled"])
        return
    with running_server([*command, "--transport", "streamable-http"], tmp_path / "server.log") as server:
        yield _ChatServer(ServerSpec(target=server.url, name="chat"), marks, ["interrupted"])


def _result_texts(chromium: Chrome) -> list[str]:
    """The results of the calls that ended "ok", in order, each opened to be read."""
    texts = []
    for card in chromium.find_elements(By.CSS_SELECTOR, '.card.tool[data-status="ok"]'):
        card.find_element(By.CSS_SELECTOR, ".result summary").click()
        texts.append(card.find_element(By.CSS_SELECTOR, ".result-text").text)
    return texts


def test_stop_mid_call_cancels_the_call_on_the_server_and_the_card_says_so(
    chromium: Chrome, chat_server: _ChatServer
) -> None:
    # Given a chat whose model asks the server who it is, then calls a tool that waits until it is cancelled
    marks = chat_server.marks
    model = scripted(
        calls(("c1", "whoami", {})), calls(("c2", "wait", {})), calls(("c3", "whoami", {})), AIMessage("Still here.")
    )
    with ChatSession(model, _tools(chat_server.spec), config=AgentConfig()) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            say(chromium, "Wait for me.")
            shown(chromium, '.card.tool[data-call-id="c2"][data-status="running"]')
            until(chromium, lambda: marks.exists() and "started" in marks.read_text())
            # When the person presses Stop
            chromium.find_element(By.CSS_SELECTOR, ".stop").click()
            # Then the card ends cancelled and says, in the open, that the server was told to stop the call
            card = shown(chromium, '.card.tool[data-status="cancelled"]')
            told = "Cancelled on the server: the person stopped the turn, and chat was told to stop the call."
            assert card.find_element(By.CSS_SELECTOR, ".stop-note").text == told
            idle(chromium)
            # And the server saw that call cancelled as its transport's protocol says, not its session ending
            until(chromium, lambda: how_the_wait_ended(marks) == chat_server.stopped_by)
            # And the next turn's call reaches the same server process
            say(chromium, "Who are you?")
            idle(chromium)
            first, second = _result_texts(chromium)
            assert first.startswith("call 1 in process ") and second == first.replace("call 1 ", "call 2 ", 1)
            assert chromium.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text == "Still here."
            assert host.alerts == []
        run = session.run()
    # And the tool-call log says what the card said
    assert [(entry.tool, entry.status) for entry in run.log] == [
        ("whoami", "ok"), ("wait", "cancelled"), ("whoami", "ok"),
    ]  # fmt: skip
    assert run.log[1].error == told


def test_stop_during_a_workflow_tool_says_the_workflow_tool_was_stopped(chromium: Chrome) -> None:
    # Given a workflow tool that runs until it is stopped (a stand-in: a real one runs in KNIME, out of this test's
    # reach, and is called the same way, as a local tool of kind "workflow")
    started = threading.Event()

    async def run_until_stopped(arguments: dict[str, Any]) -> ToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("never reached")

    flow = LocalTool(name="refresh_report", description="Refresh the report.", input_schema={}, run=run_until_stopped)
    model = scripted(calls(("c1", "refresh_report", {})), AIMessage("unused"))
    with ChatSession(model, [flow], config=AgentConfig()) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)):
            say(chromium, "Refresh the report.")
            card = shown(chromium, '.card.tool[data-status="running"]')
            assert card.find_element(By.CSS_SELECTOR, ".where").text == "KNIME workflow"
            until(chromium, started.is_set)
            # When the person presses Stop
            chromium.find_element(By.CSS_SELECTOR, ".stop").click()
            # Then the card says the workflow tool was stopped, and no server is named
            shown(chromium, '.card.tool[data-status="cancelled"]')
            said = "Stopped: the person stopped the turn before the workflow tool ended; its outcome is not used."
            assert card.find_element(By.CSS_SELECTOR, ".stop-note").text == said
            idle(chromium)
        run = session.run()
    assert [(entry.tool, entry.status, entry.error) for entry in run.log] == [("refresh_report", "cancelled", said)]


def test_a_sign_in_card_names_the_server_and_opens_its_link_only_on_a_click(
    chromium: Chrome, oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given the tools of an OAuth server, listed after a sign-in (in the system browser) that is forgotten since
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"), name="guarded")
    tools = anyio.run(lambda: list_server_tools(spec, show_sign_in=lambda url: None)).tools
    assert oauth.forget_server(oauth_servers.http_url) > 0
    listed = len(browser_visits(browser))
    model = scripted(calls(("c1", "echo", {"text": "signed"})), AIMessage("Signed in."))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            chat_window = chromium.current_window_handle
            # When the chat calls one of them, a card names the server and shows where to sign in
            say(chromium, "Echo signed.")
            card = shown(chromium, ".card.sign-in")
            assert card.find_element(By.CSS_SELECTOR, ".where").text == "guarded"
            link = card.find_element(By.CSS_SELECTOR, "a.sign-in-link")
            url = link.get_attribute("href")
            assert url.startswith(f"{oauth_servers.issuer}/") and link.text == url
            # And nothing opened it: no window of the page's, no browser of the session's
            assert chromium.window_handles == [chat_window] and browser_visits(browser)[listed:] == []
            # When the person clicks it, it opens in a window of its own, where they sign in
            link.click()
            (sign_in_window,) = until(chromium, lambda: [w for w in chromium.window_handles if w != chat_window])
            chromium.switch_to.window(sign_in_window)
            _sign_in_at_the_provider(chromium, oauth_servers.issuer)
            chromium.close()
            chromium.switch_to.window(chat_window)
            chromium.switch_to.frame(chromium.find_element(By.ID, "view"))
            # Then the call goes through, and the turn ends
            shown(chromium, '.card.tool[data-status="ok"]')
            idle(chromium)
            assert _result_texts(chromium) == ["signed"] and host.alerts == []
        run = session.run()
    assert browser_visits(browser)[listed:] == []
    assert [(entry.tool, entry.status) for entry in run.log] == [("echo", "ok")]


def _sign_in_at_the_provider(chromium: Chrome, issuer: str) -> None:
    """What a person does on the authorization server's own pages (oidc-provider's): log in as alice, consent."""
    login = until(chromium, lambda: next(iter(chromium.find_elements(By.NAME, "login")), None))
    assert chromium.current_url.startswith(f"{issuer}/")
    login.send_keys("alice")
    chromium.find_element(By.NAME, "password").send_keys("any")
    chromium.find_element(By.CSS_SELECTOR, "button.login-submit").click()
    until(chromium, lambda: 'value="consent"' in chromium.page_source)
    chromium.find_element(By.CSS_SELECTOR, "button.login-submit").click()
    until(chromium, lambda: chromium.current_url.startswith("http://127.0.0.1:") and issuer not in chromium.current_url)


def test_a_servers_form_is_built_from_its_schema_and_the_answer_reaches_the_server(chromium: Chrome) -> None:
    # Given a server whose tool asks for a name (required, no default) and a greeting (default "Hello")
    spec = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")]), name="asking")
    model = scripted(calls(("c1", "ask_name", {})), AIMessage("Greeted."))
    with ChatSession(model, _tools(spec), config=AgentConfig()) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            say(chromium, "Greet me.")
            # When the server asks, its form shows who asks, its message, and a field per property of its schema
            form = shown(chromium, ".card.form")
            assert form.find_element(By.CSS_SELECTOR, "header .where").text == "asking"
            assert form.find_element(By.CSS_SELECTOR, ".form-message").text == "What is your name?"
            fields = form.find_elements(By.CSS_SELECTOR, ".field")
            assert [f.get_attribute("data-field") for f in fields] == ["name", "greeting"]
            assert [f.find_element(By.CSS_SELECTOR, ".field-title").text for f in fields] == ["name *", "greeting"]
            name, greeting = (f.find_element(By.CSS_SELECTOR, "input") for f in fields)
            assert (name.get_attribute("value"), greeting.get_attribute("value")) == ("", "Hello")
            # And the required field left empty is refused on the page, the form staying open
            form.find_element(By.CSS_SELECTOR, "button.accept").click()
            assert form.find_element(By.CSS_SELECTOR, ".problem").text.startswith("name: ")
            assert form.get_attribute("data-action") is None and session.running
            # When the person fills it in and accepts
            name.send_keys("Ada")
            form.find_element(By.CSS_SELECTOR, "button.accept").click()
            # Then the server says what it got, as the call's result
            shown(chromium, '.card.tool[data-status="ok"]')
            idle(chromium)
            assert form.find_element(By.CSS_SELECTOR, ".outcome").text == "Sent"
            assert _result_texts(chromium) == ["Hello, Ada!"] and host.alerts == []
        run = session.run()
    assert [(entry.tool, entry.status) for entry in run.log] == [("ask_name", "ok")]


def test_allow_for_this_session_lets_the_next_call_of_the_tool_run_without_asking(
    chromium: Chrome, demo_tools: list[MCPTool]
) -> None:
    # Given a chat that asks before every call, and a model that calls echo twice
    model = scripted(
        calls(("c1", "echo", {"text": "one"})), calls(("c2", "echo", {"text": "two"})), AIMessage("Echoed twice.")
    )
    with ChatSession(model, demo_tools, config=ASK_ALL) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            say(chromium, "Echo one, then two.")
            # When the person allows the first call for this session
            card = shown(chromium, ".card.approval")
            card.find_element(By.CSS_SELECTOR, "button.allow-session").click()
            # Then both calls run, the second without a card of its own
            idle(chromium)
            asked = [
                approval.get_attribute("data-call-id")
                for approval in chromium.find_elements(By.CSS_SELECTOR, ".approval")
            ]
            assert asked == ["c1"]
            assert card.find_element(By.CSS_SELECTOR, ".outcome").text == "Allowed for this session"
            assert _result_texts(chromium) == ["one", "two"] and host.alerts == []
        run = session.run()
    # And the log shows both calls, each allowed for the session
    assert [(entry.tool, entry.status, entry.approval and entry.approval.choice) for entry in run.log] == [
        ("echo", "ok", "allow_session"), ("echo", "ok", "allow_session"),
    ]  # fmt: skip


def test_markup_in_a_tool_result_shows_as_text_and_runs_nothing(chromium: Chrome, demo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "echo", {"text": HOSTILE})), AIMessage(f"It said {HOSTILE}"))
    with ChatSession(model, demo_tools, config=AgentConfig()) as session:
        with open_chat(chromium, ChatViewService(session, show_tool_calls=True)) as host:
            say(chromium, "Echo this markup.")
            tool = shown(chromium, '.card.tool[data-status="ok"]')
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == HOSTILE
            idle(chromium)
            assert HOSTILE in chromium.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text
            assert chromium.find_elements(By.TAG_NAME, "img") == []
            assert chromium.find_elements(By.CSS_SELECTOR, ".messages script") == []
            chromium.switch_to.default_content()
            assert chromium.execute_script("return window.pwned === undefined")
            assert all(url.startswith(host.url) for url in network_requests(chromium))
            assert "/view/x" not in host.requests
