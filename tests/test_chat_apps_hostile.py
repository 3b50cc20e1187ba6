"""A hostile MCP App in the Agent Chat page, in a real headless Chromium: tests/servers/hostile_app_server.py (a fake
named as such: no published server tries these) beside the demo server, in a real
:class:`~knime_mcp.agent.chat_session.ChatSession` with the scripted chat model, hosted by tests/view_harness.py.

The app tries to read the chat page and KNIME's document, reach another origin, forge KNIME's messages, talk to the
chat page around its proxy frame, use another server of the chat, open a window, use storage and speak as the
person. It reports each outcome by calling its own server's `report` tool through the host; the tests read those
reports and what the page, the data service and a loopback listener saw. The chat is set up once for the module.
"""

from __future__ import annotations

import json
import shlex
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from app_frames import enter_app, leave_app, save_screenshot
from fixtures.python_servers import DEMO_COMMAND, SERVERS_DIR
from knime_mcp.agent.chat_session import ChatSession
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.tools.tool import MCPTool
from nodes.agent_chat.service import ChatViewService
from scripted_model import ScriptedChatModel, calls, offered, scripted
from servers.hostile_app_server import PRETENDED, SPOOFED
from view_harness import ViewHost, headless_chromium, idle, open_chat, say, shown, until

_RECORD_MESSAGES = """
window.heard = [];
window.addEventListener("message", (event) => {
  if (event.source === window.parent) return;
  const frames = [...document.querySelectorAll("iframe.app-frame")].map((frame) => frame.contentWindow);
  window.heard.push({ from_app: frames.includes(event.source), data: JSON.stringify(event.data) });
});
"""
"""Installed in the chat page after its guard: every message from a window other than KNIME's that gets past the
guard to the page's own listeners is kept in ``window.heard``, with whether it came from an app's frame."""


class ProbeListener:
    """A loopback HTTP listener standing for another origin; ``paths`` holds every request it got."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.paths.append(self.path)
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # bound and listening: ready
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@dataclass(frozen=True, kw_only=True)
class HostileChat:
    """The chat with the hostile app shown and its probes done, open for the module's tests."""

    browser: Chrome
    host: ViewHost
    session: ChatSession
    model: ScriptedChatModel
    reports: Path
    listener: ProbeListener

    def outcomes(self) -> dict[str, str]:
        """What the app reported, by probe."""
        if not self.reports.exists():
            return {}
        lines = self.reports.read_text(encoding="utf-8").splitlines()
        return {report["probe"]: report["outcome"] for report in map(json.loads, lines)}

    def heard(self) -> list[tuple[bool, Any]]:
        """The messages from windows other than KNIME's that got past the page's guard: (from an app frame, data)."""
        return [
            (item["from_app"], json.loads(item["data"])) for item in self.browser.execute_script("return window.heard")
        ]


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return anyio.run(lambda: list_server_tools(spec)).tools


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileChat]:
    listener = ProbeListener()
    reports = tmp_path_factory.mktemp("hostile-app") / "reports.jsonl"
    hostile = [sys.executable, str(SERVERS_DIR / "hostile_app_server.py"), str(reports), listener.url]
    tools = [
        *_tools(ServerSpec(target=shlex.join(hostile), name="hostile")),
        *_tools(ServerSpec(target=shlex.join([*DEMO_COMMAND, "--transport", "stdio"]), name="demo")),
    ]
    model = scripted(
        calls(("c1", "hostile_view", {})), AIMessage("Here is the app."), AIMessage("I will not delete anything.")
    )
    try:
        with headless_chromium() as browser, ChatSession(model, tools, config=AgentConfig()) as session:
            with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
                browser.execute_script(_RECORD_MESSAGES)
                hostile_chat = HostileChat(
                    browser=browser, host=host, session=session, model=model, reports=reports, listener=listener
                )
                say(browser, "Show the app.")
                idle(browser)
                until(browser, lambda: "done" in hostile_chat.outcomes())
                save_screenshot(browser, "hostile")
                yield hostile_chat
    finally:
        listener.close()


def test_the_app_reads_neither_the_chat_page_nor_knime_and_reaches_no_other_origin(chat: HostileChat) -> None:
    outcomes = chat.outcomes()
    assert outcomes["parent_document"] == "threw SecurityError"
    assert outcomes["top_document"] == "threw SecurityError"
    assert outcomes["fetch_other_origin"] == "threw TypeError"
    assert outcomes["image_other_origin"] == "blocked"
    assert chat.listener.paths == []


def test_forged_knime_messages_and_calls_around_the_proxy_frame_are_dropped(chat: HostileChat) -> None:
    assert chat.outcomes()["spoofed_messages"] == "posted"
    # The page's listeners heard only the app frames' JSON-RPC: nothing from the app's inner frame, nothing that
    # looks like KNIME's; KNIME's data service got no extra call, and nothing forged shows
    heard = chat.heard()
    assert heard and all(from_app and "jsonrpc" in data and "type" not in data for from_app, data in heard)
    assert chat.host.calls.count("send") == 1
    assert SPOOFED not in chat.browser.find_element(By.CSS_SELECTOR, ".messages").text
    # And the tools/call posted straight to the chat page never reached the server
    assert "bridge_bypass" not in chat.outcomes()


def test_the_app_reaches_only_its_own_server(chat: HostileChat) -> None:
    outcomes = chat.outcomes()
    assert outcomes["other_server_tool"].startswith("error: ")
    assert "hostile" in outcomes["other_server_tool"] and "echo" in outcomes["other_server_tool"]
    assert outcomes["other_server_resource"].startswith("error: ")
    assert "hostile" in outcomes["other_server_resource"]
    assert outcomes["own_resource"] == "ok"
    # The app's own calls are logged as the app's, of its own server; the demo server was never called
    log = chat.session.run().log
    assert {(entry.tool, entry.server) for entry in log} == {("hostile_view", "hostile"), ("report", "hostile")}


def test_the_sandbox_gives_the_app_no_popup_and_no_storage(chat: HostileChat) -> None:
    outcomes = chat.outcomes()
    assert outcomes["window_open"] == "no window"
    assert outcomes["local_storage"] == "threw SecurityError"
    assert outcomes["cookie"] == "threw SecurityError"
    assert len(chat.browser.window_handles) == 1


def test_the_apps_report_tool_is_never_offered_to_the_model(chat: HostileChat) -> None:
    assert "report" not in offered(chat.model, 0)
    assert "hostile_view" in offered(chat.model, 0)


def test_a_message_the_app_sends_as_the_person_shows_as_the_apps(chat: HostileChat) -> None:
    # When the app sends a ui/message pretending to be the person
    enter_app(chat.browser, "c1")
    chat.browser.find_element(By.ID, "pretend").click()
    leave_app(chat.browser)
    # Then the chat shows it marked as the app's, and the turn it starts runs
    message = shown(chat.browser, ".message.user[data-by-app]")
    assert PRETENDED in message.text
    assert "hostile" in message.get_attribute("data-by-app")
    idle(chat.browser)
    until(chat.browser, lambda: "ui_message" in chat.outcomes())
    assert chat.outcomes()["ui_message"] == "ok"
    assert chat.browser.find_elements(By.CSS_SELECTOR, ".message.assistant")[-1].text == "I will not delete anything."
    person, app = [m.text for m in chat.session.run().conversation.new_messages if isinstance(m, HumanMessage)][:2]
    assert person == "Show the app."
    # and the model is told who sent it
    assert app.startswith("[Sent by the ") and app.endswith(f", not typed by the person.] {PRETENDED}")


def test_the_apps_frame_may_navigate_to_no_https_address_either(chat: HostileChat) -> None:
    # Given the proxy frame that holds the app (its frame-src governs where the app's own frame may go; the proxy's
    # base policy allows https frames, narrowed to the app's declared frame domains: this app declared none)
    enter_app(chat.browser, "c1")
    chat.browser.switch_to.parent_frame()
    # When a frame of the proxy is sent to an https address (TLS to the listener would fail: the policy decides first)
    target = chat.listener.url.replace("http://", "https://") + "navigate"
    violation = chat.browser.execute_async_script(
        """const [target, done] = arguments;
        const heard = (event) => done(event.effectiveDirective + " " + event.blockedURI);
        document.addEventListener("securitypolicyviolation", heard, { once: true });
        const probe = document.createElement("iframe");
        probe.src = target;
        document.body.append(probe);""",
        target,
    )
    chat.browser.execute_script("document.body.lastElementChild.remove()")
    chat.browser.switch_to.parent_frame()
    # Then the policy refuses it as a frame the app may not go to (a report names only the origin)
    assert violation == f"frame-src {target.removesuffix('/navigate')}"


def test_an_app_that_navigates_its_frame_away_is_closed_and_reaches_nothing(chat: HostileChat) -> None:
    # When the app sends its frame to another address (its CSP's connect-src does not cover a navigation)
    enter_app(chat.browser, "c1")
    chat.browser.find_element(By.ID, "leave").click()
    chat.browser.switch_to.parent_frame()
    # Then its proxy frame closes it and says so, the address got no request, and the chat goes on
    assert shown(chat.browser, "p").text == "The app left its own page, so it was closed."
    assert chat.browser.find_elements(By.TAG_NAME, "iframe") == []
    chat.browser.switch_to.parent_frame()
    assert chat.listener.paths == []
    assert chat.browser.find_element(By.CSS_SELECTOR, ".send").is_enabled()
