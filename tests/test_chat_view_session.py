"""The Agent Chat page in a real headless Chromium over the real chat session: the view's data service
(src/nodes/agent_chat/service.py) on :class:`~knime_mcp.agent.chat_session.ChatSession`, with the scripted chat model
and real MCP servers over stdio (the demo server, tests/servers/chat_server.py), hosted by tests/view_harness.py.

A person types, approves or denies the call, watches it, stops it mid-call (the server sees the cancellation), and
what a tool returns shows as text, whatever markup it holds.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.approval import ApprovalPolicy
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import calls, scripted
from view_harness import headless_chromium, idle, network_requests, open_chat, say, shown, until

HOSTILE = '<img src=x onerror="window.top.pwned=1"> <script>window.top.pwned=2</script>'
ASK_ALL = AgentConfig(approval=ApprovalPolicy(everything=True))


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture
def demo_tools(demo_stdio_command: list[str]) -> list[MCPTool]:
    return _tools(ServerSpec(target=shlex.join(demo_stdio_command), name="demo"))


def test_a_message_an_approval_the_call_and_the_answer(browser: Chrome, demo_tools: list[MCPTool]) -> None:
    # Given a chat that asks before every call, and a model that calls echo and then answers
    model = scripted(calls(("c1", "echo", {"text": "hello"})), AIMessage("The server said **hello**."))
    opening = [AIMessage("Hi! Ask me to *echo* something.")]
    with ChatSession(model, demo_tools, config=ASK_ALL, history=opening) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            assert shown(browser, ".message.assistant em").text == "echo"
            # When the person types a message, the turn waits on an approval card
            say(browser, "Please echo hello.")
            card = shown(browser, ".card.approval")
            assert card.find_element(By.CSS_SELECTOR, ".tool-name").text == "echo"
            assert "demo" in card.find_element(By.CSS_SELECTOR, ".where").text
            assert not browser.find_elements(By.CSS_SELECTOR, ".card.tool")
            # And when they approve, the call is made, its card ends "ok" with the result, and the answer shows
            card.find_element(By.CSS_SELECTOR, "button.approve").click()
            tool = shown(browser, '.card.tool[data-status="ok"]')
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == "hello"
            idle(browser)
            answer = browser.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1]
            assert answer.find_element(By.CSS_SELECTOR, "strong").text == "hello"
            assert host.alerts == []
        run = session.run()
    assert [(entry.tool, entry.status) for entry in run.log] == [("echo", "ok")]


def test_a_chat_opened_again_shows_the_conversation_so_far(browser: Chrome, demo_tools: list[MCPTool]) -> None:
    # Given a chat held earlier, with a tool call, and a session going on from it (as the view opens again)
    model = scripted(calls(("c1", "echo", {"text": "hello"})), AIMessage("The server said **hello**."))
    with ChatSession(model, demo_tools, config=AgentConfig()) as first:
        with open_chat(browser, ChatViewService(first, show_tool_calls=True)):
            say(browser, "Please echo hello.")
            shown(browser, '.card.tool[data-status="ok"]')
            idle(browser)
        earlier = first.run().conversation.new_messages
    with ChatSession(scripted(AIMessage("Bye.")), demo_tools, config=AgentConfig(), history=earlier) as session:
        # When the page opens on it
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            # Then it shows the earlier messages and the call, ended, before anything new is said
            assert shown(browser, ".message.user").text == "Please echo hello."
            tool = shown(browser, '.card.tool[data-status="ok"]')
            assert tool.find_element(By.CSS_SELECTOR, ".tool-name").text == "echo"
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == "hello"
            answer = shown(browser, ".message.assistant")
            assert answer.find_element(By.CSS_SELECTOR, "strong").text == "hello"
            # And the chat goes on after them
            say(browser, "Thanks.")
            idle(browser)
            messages = browser.find_elements(By.CSS_SELECTOR, ".message")
            assert [m.text for m in messages] == ["Please echo hello.", "The server said hello.", "Thanks.", "Bye."]
            assert host.alerts == []


def test_a_denial_with_a_reason_reaches_the_model(browser: Chrome, demo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "echo", {"text": "secret plan"})), AIMessage("Understood, I will not."))
    with ChatSession(model, demo_tools, config=ASK_ALL) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "Echo the plan.")
            card = shown(browser, ".card.approval")
            card.find_element(By.CSS_SELECTOR, ".deny-reason").send_keys("not in public")
            card.find_element(By.CSS_SELECTOR, "button.deny").click()
            idle(browser)
            assert browser.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text == "Understood, I will not."
        run = session.run()
    (denied,) = [m for m in run.conversation.new_messages if isinstance(m, ToolMessage)]
    assert denied.status == "error" and "not in public" in denied.text


def test_stop_mid_call_cancels_the_call_on_the_server(browser: Chrome, tmp_path: Path) -> None:
    # Given a call of a tool that waits until it is cancelled, writing down on disk what happens to it
    marks = tmp_path / "marks.txt"
    command = [sys.executable, str(SERVERS_DIR / "chat_server.py"), str(marks)]
    tools = _tools(ServerSpec(target=shlex.join(command), name="chat"))
    model = scripted(calls(("c1", "wait", {})), AIMessage("unused"))
    with ChatSession(model, tools, config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "Wait for me.")
            shown(browser, '.card.tool[data-status="running"]')
            until(browser, lambda: marks.exists() and "started" in marks.read_text())
            # When the person presses Stop
            browser.find_element(By.CSS_SELECTOR, ".stop").click()
            # Then the card ends cancelled, the turn is over, and the server saw the cancellation
            shown(browser, '.card.tool[data-status="cancelled"]')
            idle(browser)
            until(browser, lambda: "cancelled" in marks.read_text())
        run = session.run()
    assert [(entry.tool, entry.status) for entry in run.log] == [("wait", "cancelled")]


def test_markup_in_a_tool_result_shows_as_text_and_runs_nothing(browser: Chrome, demo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "echo", {"text": HOSTILE})), AIMessage(f"It said {HOSTILE}"))
    with ChatSession(model, demo_tools, config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            say(browser, "Echo this markup.")
            tool = shown(browser, '.card.tool[data-status="ok"]')
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == HOSTILE
            idle(browser)
            assert HOSTILE in browser.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text
            assert browser.find_elements(By.TAG_NAME, "img") == []
            assert browser.find_elements(By.CSS_SELECTOR, ".messages script") == []
            browser.switch_to.default_content()
            assert browser.execute_script("return window.pwned === undefined")
            assert all(url.startswith(host.url) for url in network_requests(browser))
            assert "/view/x" not in host.requests
