"""MCP Apps in the Agent Chat page, in a real headless Chromium over the real chat session and real servers: the app
of a tool call shows under its card in the sandbox proxy (src/nodes/chat_view/sandbox.html, an opaque origin) with the
app's document in an inner sandboxed srcdoc frame; the page hands it the call's input and result through ext-apps'
AppBridge; the page's message guard drops what an app posts in KNIME's UI-extension protocol; a link an app asks to
open is a card the person must click; and with *Show MCP Apps* off no app shows.

The server: tests/servers/echo_app_server.py, whose app speaks the protocol by hand, so the test reads what the host
did and drives the app from inside its frame. The published example servers' apps (built on ext-apps' App) and
hostile apps are tests/test_chat_apps_examples.py's.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
from collections.abc import Iterator

import anyio
import pytest
from langchain_core.messages import AIMessage
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from app_frames import enter_app, leave_app
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import calls, scripted
from view_harness import ViewHost, headless_chromium, idle, open_chat, say, shown, until

ECHO_APP = [sys.executable, str(SERVERS_DIR / "echo_app_server.py")]


def _tools(command: list[str], name: str) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(ServerSpec(target=shlex.join(command), name=name))).tools


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def echo_tools() -> list[MCPTool]:
    return _tools(ECHO_APP, "echoes")


def _echo_session(tools: list[MCPTool]) -> ChatSession:
    model = scripted(calls(("c1", "show_echo", {"text": "hello app"})), AIMessage("Shown."))
    return ChatSession(model, tools, config=AgentConfig())


@contextlib.contextmanager
def _echo_app_shown(browser: Chrome, tools: list[MCPTool]) -> Iterator[tuple[ChatSession, ViewHost]]:
    """The page on a chat whose model called the echo tool: the turn has ended and its app shows."""
    with _echo_session(tools) as session, open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
        say(browser, "Echo in the app.")
        idle(browser)
        shown(browser, '.app[data-status="shown"] iframe.app-frame')
        yield session, host


def test_an_app_shows_under_its_card_in_an_opaque_sandbox_with_its_input_and_result(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    with _echo_session(echo_tools) as session, open_chat(browser, ChatViewService(session, show_tool_calls=True)):
        # When the model calls a tool that has an app
        say(browser, "Echo in the app.")
        idle(browser)
        # Then the app shows under the call's card, in the sandbox proxy: a frame without the page's origin
        proxy = shown(browser, '.card.tool[data-call-id="c1"] .app[data-status="shown"] iframe.app-frame')
        assert proxy.get_attribute("sandbox") == "allow-scripts"
        assert proxy.get_attribute("src").endswith("/view/sandbox.html")
        browser.switch_to.frame(proxy)
        assert browser.execute_script("return window.origin") == "null"
        inner = shown(browser, "iframe")
        assert inner.get_attribute("sandbox") == "allow-scripts"
        browser.switch_to.frame(inner)
        assert browser.execute_script("return [location.href, window.origin]") == ["about:srcdoc", "null"]
        # And the app's inline script ran under its policy, and got the host, the call's input and its result
        assert shown(browser, "#host").text == "KNIME Agent Chat|light|inline|styled"
        assert json.loads(shown(browser, "#input").text) == {"text": "hello app"}
        assert until(browser, lambda: browser.find_element(By.ID, "result").text) == "echo: hello app"
        leave_app(browser)
        # And the frame took the height the app asked for, and the card's width
        assert until(browser, lambda: proxy.size["height"] == 300)
        slot = browser.find_element(By.CSS_SELECTOR, ".app")
        assert proxy.size["width"] == browser.execute_script("return arguments[0].clientWidth", slot)
        # And no higher than the page's limit, however high the app asks to be
        size = "{jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: {height: 5000}}"
        _inside_app(browser, f"window.parent.postMessage({size}, '*')")
        assert until(browser, lambda: proxy.size["height"] == 900)


def _inside_app(browser: Chrome, script: str) -> None:
    """Runs `script` in the app of call c1 (its inner frame), as the app's own code would, and leaves it."""
    enter_app(browser, "c1")
    browser.execute_script(script)
    leave_app(browser)


def test_the_page_hears_no_ui_extension_message_from_an_app_nor_any_frame_past_its_proxy(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    with _echo_app_shown(browser, echo_tools) as (session, host):
        proxy = shown(browser, '.app[data-status="shown"] iframe.app-frame')
        # Given a listener of the page's, as @knime/ui-extension-service's waits for KNIME's answers
        browser.execute_script("window.heard = []; addEventListener('message', (e) => window.heard.push(e.data))")
        # When the app posts KNIME's UI-extension answer through its proxy, then a message straight to the page,
        # then a size change through its proxy
        _inside_app(
            browser,
            "window.parent.postMessage({type: 'UIExtensionResponse', requestId: 'spoof', payload: {result: 'x'}}, '*');"
            "window.parent.parent.postMessage({jsonrpc: '2.0', method: 'straight/to/the/page'}, '*');"
            "window.parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/size-changed',"
            " params: {height: 400}}, '*');",
        )
        # Then the size change is heard (and done), and neither of the others reached the page's listeners
        heard = until(browser, lambda: browser.execute_script("return window.heard.length && window.heard"))
        assert [message.get("method") for message in heard] == ["ui/notifications/size-changed"]
        assert until(browser, lambda: proxy.size["height"] == 400)
        assert host.alerts == []


def test_a_link_an_app_asks_to_open_opens_only_when_the_person_clicks_it(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    with (
        _echo_session(echo_tools) as session,
        open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host,
    ):
        chat_window = browser.current_window_handle
        say(browser, "Echo in the app.")
        idle(browser)
        # When the app asks to open a link
        url = f"{host.url}opened-by-the-app"
        _inside_app(browser, f"window.ask('ui/open-link', {{url: {json.dumps(url)}}})")
        # Then a card names the app and shows the link and where it goes, and nothing opened it
        card = shown(browser, ".card.app-link-card")
        assert card.find_element(By.CSS_SELECTOR, ".where").text == "show_echo app (echoes)"
        link = card.find_element(By.CSS_SELECTOR, "a.app-link")
        assert link.get_attribute("href") == url and "a private address" in card.text
        assert browser.window_handles == [chat_window] and "/opened-by-the-app" not in host.requests
        # And the app was told the host took it
        enter_app(browser, "c1")
        assert json.loads(until(browser, lambda: browser.find_element(By.ID, "answer").text)) == {"result": {}}
        leave_app(browser)
        # When the person clicks it, it opens in a window of its own
        link.click()
        (opened,) = until(browser, lambda: [w for w in browser.window_handles if w != chat_window])
        until(browser, lambda: "/opened-by-the-app" in host.requests)
        browser.switch_to.window(opened)
        browser.close()
        browser.switch_to.window(chat_window)
        browser.switch_to.frame(browser.find_element(By.ID, "view"))


def test_a_tool_call_from_an_app_shows_as_a_card_from_the_app_and_answers_it(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    with (
        _echo_session(echo_tools) as session,
        open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host,
    ):
        say(browser, "Echo in the app.")
        idle(browser)
        # When the app calls its server's tool, between turns
        _inside_app(browser, "window.ask('tools/call', {name: 'show_echo', arguments: {text: 'from the app'}})")
        # Then the call shows as a card marked with the app's name, and the app gets the result
        card = shown(browser, '.card.tool[data-by-app][data-status="ok"]')
        assert card.find_element(By.CSS_SELECTOR, ".by-app").text.startswith("from ")
        assert card.find_elements(By.CSS_SELECTOR, ".app") == []  # the app that called shows the result, no other
        enter_app(browser, "c1")
        answer = json.loads(until(browser, lambda: browser.find_element(By.ID, "answer").text))
        assert answer["result"]["content"] == [{"type": "text", "text": "echo: from the app"}]
        leave_app(browser)
        assert host.alerts == []
        run = session.run()
    assert [(entry.tool, entry.status) for entry in run.log] == [("show_echo", "ok"), ("show_echo", "ok")]


def test_an_app_that_cannot_be_read_is_a_line_under_its_card_and_the_chat_goes_on(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    model = scripted(calls(("c1", "lost_echo", {"text": "hi"})), AIMessage("Done anyway."))
    with ChatSession(model, echo_tools, config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "Echo.")
            idle(browser)
            problem = shown(browser, '.card.tool[data-call-id="c1"] .app-problem:not([hidden])')
            assert problem.text.startswith("The lost_echo app (echoes) could not be shown: ")
            assert "ui://echo/lost.html" in problem.text
            assert browser.find_elements(By.CSS_SELECTOR, "iframe.app-frame") == []
            assert browser.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text == "Done anyway."


def test_with_show_mcp_apps_off_no_app_shows(browser: Chrome, echo_tools: list[MCPTool]) -> None:
    with _echo_session(echo_tools) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True, show_apps=False)) as host:
            say(browser, "Echo in the app.")
            idle(browser)
            shown(browser, '.card.tool[data-call-id="c1"][data-status="ok"]')
            assert browser.find_elements(By.CSS_SELECTOR, ".app, iframe") == []
            assert "app_request" not in host.calls


def test_an_app_is_told_the_theme_the_page_shows_and_told_again_when_it_changes(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    def prefer(scheme: str) -> None:
        features = [{"name": "prefers-color-scheme", "value": scheme}]
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})

    prefer("dark")
    try:
        with _echo_session(echo_tools) as session, open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            # Given a person whose system is dark, as the page then is
            say(browser, "Echo in the app.")
            idle(browser)
            # Then the app is told "dark", with KNIME's colours as the page paints them
            enter_app(browser, "c1")
            assert shown(browser, "#host").text == "KNIME Agent Chat|dark|inline|styled"
            # When the system turns light, the app is told so
            prefer("light")
            assert until(browser, lambda: browser.find_element(By.ID, "theme").text == "light")
            leave_app(browser)
    finally:
        prefer("")


def test_a_message_from_an_app_starts_a_turn_shown_as_from_the_app(browser: Chrome, echo_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "show_echo", {"text": "hello app"})), AIMessage("Shown."), AIMessage("Noted."))
    with ChatSession(model, echo_tools, config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            say(browser, "Echo in the app.")
            idle(browser)
            # When the app adds a message to the chat
            content = [{"type": "text", "text": "Tell me more about this."}]
            _inside_app(browser, f"window.ask('ui/message', {{role: 'user', content: {json.dumps(content)}}})")
            # Then it shows as the person's side of the chat, marked with the app's name, and the model answers it
            message = shown(browser, ".message.user[data-by-app]")
            assert message.find_element(By.CSS_SELECTOR, ".by-app").text.startswith("from ")
            assert message.text.endswith("Tell me more about this.")
            until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text == "Noted.")
            idle(browser)
            assert host.alerts == []


def test_the_app_of_a_call_in_an_earlier_conversation_shows_again(browser: Chrome, echo_tools: list[MCPTool]) -> None:
    # Given a chat held earlier, whose call showed its app
    with _echo_session(echo_tools) as first, open_chat(browser, ChatViewService(first, show_tool_calls=True)):
        say(browser, "Echo in the app.")
        idle(browser)
        shown(browser, '.app[data-status="shown"]')
        earlier = first.run().conversation.new_messages
    # When the page opens on a session going on from it
    with ChatSession(scripted(AIMessage("Bye.")), echo_tools, config=AgentConfig(), history=earlier) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            # Then the call's app shows again, with the call's input and result
            enter_app(browser, "c1")
            assert json.loads(shown(browser, "#input").text) == {"text": "hello app"}
            assert until(browser, lambda: browser.find_element(By.ID, "result").text) == "echo: hello app"
            leave_app(browser)
            assert host.alerts == []


def test_an_app_that_navigates_its_frame_away_is_closed_and_heard_no_more(
    browser: Chrome, echo_tools: list[MCPTool]
) -> None:
    with _echo_app_shown(browser, echo_tools) as (session, host):
        proxy = shown(browser, '.app[data-status="shown"] iframe.app-frame')
        # When the app navigates its own frame to another page (out of the policy its server declared)
        _inside_app(browser, f"location.href = {json.dumps(host.url + 'elsewhere')}")
        # Then the proxy closes it and says so, and no app frame is left in it
        browser.switch_to.frame(proxy)
        assert shown(browser, "p").text == "The app left its own page, so it was closed."
        assert browser.find_elements(By.TAG_NAME, "iframe") == []
        browser.switch_to.parent_frame()
