"""MCP Apps of the published example servers in the Agent Chat page, in a real headless Chromium: the view's data
service on a real :class:`~knime_mcp.agent.chat_session.ChatSession` with the scripted chat model, talking over stdio
to `@modelcontextprotocol/server-basic-vanillajs`, `-cohort-heatmap`, `-customer-segmentation`, `-budget-allocator`,
`-scenario-modeler` and `-map` (pinned in tests/peers), hosted by tests/view_harness.py.

The model calls an app's tool; the app shows under the tool card and draws what its HTML draws from the call's
result; a call the app makes reaches its server and the answer comes back into the app, through the run's approval
rules. Each test saves the chat as tests/artifacts/apps/<server>.png; with `KNIME_MCP_UPDATE_SCREENSHOT=1` the
budget allocator's becomes docs/chat-app.png, the README's picture.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from app_frames import enter_app, leave_app, save_screenshot
from fixtures.npm_servers import app_server_command
from knime_mcp.agent.approval import ApprovalPolicy
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import calls, scripted
from view_harness import headless_chromium, idle, open_chat, say, shown, until

DOCS_PICTURE = Path(__file__).resolve().parent.parent / "docs" / "chat-app.png"
PICTURED = "budget-allocator"
"""The example whose screenshot is the README's picture (a chart, sliders and a status bar)."""


@dataclass(frozen=True, kw_only=True)
class ExampleApp:
    """One example server: the tool the model calls and what its app draws once it has its data."""

    server: str
    tool: str
    request: str
    """What the person asks for."""
    drawn: tuple[str, ...]
    """Selectors of elements the app draws (a chart's canvas, a grid's cells): each must be there."""
    arguments: dict[str, Any] = field(default_factory=dict)


EXAMPLES = (
    ExampleApp(
        server="basic-vanillajs",
        tool="get-time",
        request="What time is it on the server?",
        drawn=("#get-time-btn", "#server-time"),
    ),
    ExampleApp(
        server="cohort-heatmap",
        tool="get-cohort-data",
        request="How well do our monthly cohorts retain?",
        drawn=("h1", "[class*=_heatmapGrid_] [class*=_cell_]"),
    ),
    ExampleApp(
        server="customer-segmentation",
        tool="get-customer-data",
        request="How do our customer segments compare?",
        drawn=("canvas#scatter-chart", "#legend *"),
    ),
    ExampleApp(
        server="budget-allocator",
        tool="get-budget-data",
        request="Help me split next quarter's marketing budget.",
        drawn=("canvas#budget-chart", "#sliders-container *"),
    ),
    ExampleApp(
        server="scenario-modeler",
        tool="get-scenario-data",
        request="Project our MRR for the next 12 months.",
        drawn=("h1.header-title", ".chart-container canvas", ".metrics-grid .metric-value"),
    ),
)


def _tools(name: str) -> list[MCPTool]:
    spec = ServerSpec(target=shlex.join(app_server_command(name)), name=name)
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        driver.set_window_size(900, 1100)  # room for a question, an app and the answer in one screenshot
        yield driver


@pytest.fixture(scope="module")
def example_tools() -> dict[str, list[MCPTool]]:
    """Each example server's tools, listed once for the module."""
    return {example.server: _tools(example.server) for example in EXAMPLES}


_CHARTS = "return [...document.querySelectorAll('canvas')].map((canvas) => canvas.toDataURL()).join()"


def _wait_for_still_charts(browser: Chrome) -> None:
    """Waits until the app's charts have stopped moving (two looks in a row see the same pixels), so a screenshot
    shows them drawn, not mid-animation."""
    last: list[str] = [""]

    def still() -> bool:
        now = browser.execute_script(_CHARTS)
        settled, last[0] = now == last[0], now
        return settled

    until(browser, still)


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.server for example in EXAMPLES])
def test_an_example_app_shows_under_its_tool_card_with_what_it_draws(
    browser: Chrome, example_tools: dict[str, list[MCPTool]], example: ExampleApp
) -> None:
    # Given a chat whose model calls the example server's tool that has an app
    answer = AIMessage("Here is the data in the server's own app, right in the chat: try it out.")
    model = scripted(calls(("c1", example.tool, example.arguments)), answer)
    with ChatSession(model, example_tools[example.server], config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
            say(browser, example.request)
            # When the call ended, the app shows in a slot under the call's card
            shown(browser, '.card.tool[data-call-id="c1"][data-status="ok"]')
            idle(browser)
            frame = shown(browser, '.card.tool[data-call-id="c1"] .app iframe.app-frame')
            assert frame.get_attribute("sandbox") == "allow-scripts"
            # Then the app draws what its HTML makes of the result
            enter_app(browser, "c1")
            for selector in example.drawn:
                shown(browser, selector)
            _wait_for_still_charts(browser)
            leave_app(browser)
            browser.execute_script("document.querySelector('.messages').scrollTop = 0")
            picture = save_screenshot(browser, example.server)
            assert host.alerts == []
        run = session.run()
    assert [(entry.tool, entry.status) for entry in run.log][0] == (example.tool, "ok")
    if example.server == PICTURED and os.environ.get("KNIME_MCP_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(picture, DOCS_PICTURE)


def _times(session: ChatSession) -> list[str]:
    """The times the server's get-time calls answered, in order (each call's structured result)."""
    return [json.loads(entry.result or "{}").get("structured", {}).get("time", "") for entry in session.run().log]


def test_get_server_time_in_the_app_reaches_the_server_and_its_answer_shows_in_the_app(
    browser: Chrome, example_tools: dict[str, list[MCPTool]]
) -> None:
    # Given basic-vanillajs's app, shown with the time of the model's call
    model = scripted(calls(("c1", "get-time", {})), AIMessage("There it is."))
    with ChatSession(model, example_tools["basic-vanillajs"], config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "What time is it on the server?")
            idle(browser)
            enter_app(browser, "c1")
            (first,) = _times(session)
            until(browser, lambda: browser.find_element(By.ID, "server-time").text == first)
            # When the person presses the app's "Get Server Time"
            browser.find_element(By.ID, "get-time-btn").click()
            # Then the app's call reaches the server, and the server's answer shows in the app
            until(browser, lambda: len(session.run().log) == 2)
            second = _times(session)[1]
            until(browser, lambda: browser.find_element(By.ID, "server-time").text == second)
            leave_app(browser)
            # And the chat shows the app's call as a card of its own, marked as the app's
            card = shown(browser, ".card.tool[data-by-app]")
            assert card.find_element(By.CSS_SELECTOR, ".tool-name").text == "get-time"
            assert "basic-vanillajs" in card.get_attribute("data-by-app")
    assert [(entry.tool, entry.server, entry.status) for entry in session.run().log] == [
        ("get-time", "basic-vanillajs", "ok"),
        ("get-time", "basic-vanillajs", "ok"),
    ]
    assert first != second


def test_the_cohort_heatmap_app_asks_its_server_again_when_the_person_picks_another_metric(
    browser: Chrome, example_tools: dict[str, list[MCPTool]]
) -> None:
    # Given the cohort heatmap's app, which loads its data with a call of its own
    model = scripted(calls(("c1", "get-cohort-data", {})), AIMessage("Here are the cohorts."))
    with ChatSession(model, example_tools["cohort-heatmap"], config=AgentConfig()) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "Show the cohorts.")
            idle(browser)
            enter_app(browser, "c1")
            shown(browser, "[class*=_heatmapGrid_] [class*=_cell_]")
            # When the person picks "Revenue Retention"
            Select(browser.find_element(By.CSS_SELECTOR, "header select")).select_by_value("revenue")
            # Then the app calls its server's tool with that metric, through the chat
            until(browser, lambda: any(e.record.arguments.get("metric") == "revenue" for e in session.run().log))
            shown(browser, "[class*=_heatmapGrid_] [class*=_cell_]")
            leave_app(browser)
    log = session.run().log
    assert {(entry.tool, entry.status) for entry in log} == {("get-cohort-data", "ok")}
    assert [entry.record.arguments.get("metric") for entry in log][-1] == "revenue"


def test_an_app_call_the_policy_names_waits_for_approval_and_a_denial_answers_the_app_with_an_error(
    browser: Chrome, example_tools: dict[str, list[MCPTool]]
) -> None:
    # Given a chat that asks before every call of get-time, and the app shown after the model's approved call
    ask = AgentConfig(approval=ApprovalPolicy(pattern="get-time"))
    model = scripted(calls(("c1", "get-time", {})), AIMessage("There it is."))
    with ChatSession(model, example_tools["basic-vanillajs"], config=ask) as session:
        with open_chat(browser, ChatViewService(session, show_tool_calls=True)):
            say(browser, "What time is it on the server?")
            shown(browser, '.card.approval[data-call-id="c1"] button.approve').click()
            idle(browser)
            enter_app(browser, "c1")
            (first,) = _times(session)
            until(browser, lambda: browser.find_element(By.ID, "server-time").text == first)
            # When the app calls get-time, the call waits on an approval card naming the app
            browser.find_element(By.ID, "get-time-btn").click()
            leave_app(browser)
            card = shown(browser, ".card.approval[data-by-app]")
            app_name = card.get_attribute("data-by-app")
            assert app_name.endswith("app (basic-vanillajs)") and f"from {app_name}" in card.text
            assert card.find_element(By.CSS_SELECTOR, ".tool-name").text == "get-time"
            assert len(session.run().log) == 1
            enter_app(browser, "c1")
            assert browser.find_element(By.ID, "server-time").text == first
            leave_app(browser)
            # And only after Approve does it reach the server and its answer show in the app
            card.find_element(By.CSS_SELECTOR, "button.approve").click()
            until(browser, lambda: len(session.run().log) == 2)
            second = _times(session)[1]
            enter_app(browser, "c1")
            until(browser, lambda: browser.find_element(By.ID, "server-time").text == second)
            # When the app calls again and the person denies it, the app is answered with an error
            browser.find_element(By.ID, "get-time-btn").click()
            leave_app(browser)
            denied = shown(browser, ".card.approval[data-by-app]:not([data-choice])")
            denied.find_element(By.CSS_SELECTOR, "button.deny").click()
            enter_app(browser, "c1")
            until(browser, lambda: browser.find_element(By.ID, "server-time").text == "[ERROR]")
            leave_app(browser)
    statuses = [(entry.tool, entry.status) for entry in session.run().log]
    assert statuses == [("get-time", "ok"), ("get-time", "ok"), ("get-time", "denied")]
