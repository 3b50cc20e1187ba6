"""The Agent Chat page shows what servers say about themselves, in a real headless Chromium over the real chat
session (the view's data service, src/nodes/agent_chat/service.py, on
:class:`~knime_mcp.agent.chat_session.ChatSession`) with the scripted chat model and this project's guidance server
over stdio (tests/servers/guidance_server.py):

- the "Server instructions" control lists each server's instructions on request, as text whatever markup they hold;
- a tool card's result shows the parts the server meant for the person and not those for the model only.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator

import anyio
import pytest
from langchain_core.messages import AIMessage
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import calls, scripted
from view_harness import headless_chromium, idle, network_requests, open_chat, say, shown

HOSTILE = '<img src=x onerror="window.top.pwned=1"> Use <b>weather</b>.'


def _tools(*args: str) -> list[MCPTool]:
    command = [sys.executable, str(SERVERS_DIR / "guidance_server.py"), *args]
    return anyio.run(lambda: list_server_tools(ServerSpec(target=shlex.join(command), name="guidance"))).tools


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


def test_the_server_instructions_show_on_request_as_text(browser: Chrome) -> None:
    # Given a chat over a server whose instructions hold markup
    with ChatSession(scripted(), _tools("--instructions", HOSTILE), config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            panel = browser.find_element(By.CSS_SELECTOR, ".instructions")
            assert not panel.is_displayed()
            # When the person asks for the servers' instructions
            browser.find_element(By.CSS_SELECTOR, ".instructions-toggle").click()
            # Then each server's show under its name, as the text it sent: nothing of it runs or loads
            card = shown(browser, ".instructions .server-instructions")
            assert card.find_element(By.CSS_SELECTOR, ".where").text == "guidance"
            assert card.find_element(By.CSS_SELECTOR, ".instructions-text").text == HOSTILE
            assert not browser.find_elements(By.CSS_SELECTOR, ".instructions img, .instructions b")
            # And a second click hides them
            browser.find_element(By.CSS_SELECTOR, ".instructions-toggle").click()
            assert not panel.is_displayed()
            browser.switch_to.default_content()
            assert browser.execute_script("return window.pwned === undefined")
            assert all(url.startswith(host.url) for url in network_requests(browser))
            assert "/view/x" not in host.requests and host.alerts == []


def test_a_results_parts_for_the_person_show_and_those_for_the_model_do_not(browser: Chrome) -> None:
    model = scripted(calls(("c1", "weather", {"city": "Bern"})), AIMessage("Sunny."))
    with ChatSession(model, _tools(), config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "Weather in Bern?")
            tool = shown(browser, '.card.tool[data-status="ok"]')
            tool.find_element(By.CSS_SELECTOR, ".result summary").click()
            text = tool.find_element(By.CSS_SELECTOR, ".result-text").text
            idle(browser)
    assert "Sunny in Bern (for the person)" in text and "21 degrees (for both)" in text
    assert "(for the model)" not in text
