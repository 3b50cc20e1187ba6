"""The Agent Chat page (src/nodes/chat_view) in a real headless Chromium, through KNIME's own
@knime/ui-extension-service and a stand-in for KNIME's UI (tests/view_harness.py), over the view's data service
(src/nodes/agent_chat/service.py) on a scripted chat session (tests/fakes/fake_chat_session.py).

What a person sees and does: a message, an approval card (hints, editable arguments, approve / deny with a reason),
tool-call cards with status, duration, images and a collapsible result, the answer as Markdown, Stop mid-call,
forms (fields from a JSON schema; URL mode opening only on a click), sign-in links; and that nothing a tool or a
model sends runs as script or loads anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from fakes.fake_chat_session import FakeChatSession
from nodes.agent_chat.service import ChatViewService
from view_harness import PAGE_FILES, ViewHost, headless_chromium, idle, network_requests, open_chat, say, shown, until

SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "chat-view.png"
UPDATE_SCREENSHOT_ENV = "KNIME_MCP_UPDATE_SCREENSHOT"
"""Set to 1 to write the chat's screenshot to docs/chat-view.png (the README's picture)."""

PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC"
)
"""A 1x1 red PNG, as a tool's image arrives (a data URL)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


def chat(browser: Chrome, session: FakeChatSession, *, show_tool_calls: bool = True
         ) -> contextlib.AbstractContextManager[ViewHost]:  # fmt: skip
    """The page open on ``session`` through the view's data service."""
    return open_chat(browser, ChatViewService(session, show_tool_calls=show_tool_calls))


def _delete_after_approval(session: FakeChatSession, text: str) -> None:
    arguments = {"id": 3}
    session.emit("approval", call_id="c1", tool="ledger__delete_entry", server="ledger", kind="mcp",
                 hints={"read_only": False, "destructive": True, "idempotent": False, "open_world": False,
                        "annotated": True}, arguments=arguments)  # fmt: skip
    decision = session.wait_for(lambda: session.decisions.get("c1"))
    session.emit("tool_start", call_id="c1", tool="ledger__delete_entry", server="ledger", kind="mcp",
                 arguments=decision["arguments"] or arguments)  # fmt: skip
    session.emit("tool_end", call_id="c1", status="ok", duration_ms=1234, text="Deleted entry 4.", images=[PIXEL])
    for piece in ("Entry **4** ", "is gone.\n\n", "- it was *the last one*"):
        session.emit("assistant_delta", text=piece)
    session.emit("assistant", text="Entry **4** is gone.\n\n- it was *the last one*")


def test_a_message_an_approval_a_tool_call_and_the_answer(browser: Chrome, tmp_path: Path) -> None:
    # Given the chat on a session whose turn asks before deleting an entry
    session = FakeChatSession(_delete_after_approval)
    session.emit("assistant", text="Hello, I keep the *ledger*.")  # the initial message, as the session's history
    with chat(browser, session) as host:
        assert shown(browser, ".message.assistant em").text == "ledger"
        # When the person types a message
        say(browser, "Delete entry 3")
        # Then it shows, and an approval card asks, with the tool, the server, the hints and the arguments
        assert shown(browser, ".message.user").text == "Delete entry 3"
        card = shown(browser, ".card.approval")
        assert card.find_element(By.CSS_SELECTOR, ".tool-name").text == "ledger__delete_entry"
        assert "ledger" in card.find_element(By.CSS_SELECTOR, ".where").text
        assert [hint.text for hint in card.find_elements(By.CSS_SELECTOR, ".hint")] == ["destructive"]
        # When the person edits the arguments and approves
        box = card.find_element(By.CSS_SELECTOR, ".approval-arguments")
        box.clear()
        box.send_keys('{"id": 4}')
        card.find_element(By.CSS_SELECTOR, "button.approve").click()
        # Then the decision reaches the session with the edited arguments, and the tool card shows the call's end
        tool = shown(browser, '.card.tool[data-status="ok"]')
        assert session.decisions["c1"] == {"choice": "approve", "arguments": {"id": 4}, "reason": None}
        assert tool.find_element(By.CSS_SELECTOR, ".tool-status").text.lower() == "ok"
        assert tool.find_element(By.CSS_SELECTOR, ".duration").text == "1.2 s"
        assert tool.find_element(By.CSS_SELECTOR, ".images img").get_attribute("src") == PIXEL
        result = tool.find_element(By.CSS_SELECTOR, ".result-text")
        assert not result.is_displayed()  # collapsed until opened
        tool.find_element(By.CSS_SELECTOR, ".result summary").click()
        assert result.text == "Deleted entry 4."
        # And the answer renders as Markdown, once, and the turn ends
        idle(browser)
        answers = browser.find_elements(By.CSS_SELECTOR, ".message.assistant")
        assert len(answers) == 2
        assert answers[1].find_element(By.CSS_SELECTOR, "strong").text == "4"
        assert answers[1].find_element(By.CSS_SELECTOR, "li em").text == "the last one"
        assert host.alerts == []
        picture = tmp_path / "chat-view.png"
        browser.switch_to.default_content()
        assert browser.save_screenshot(str(picture)) and picture.read_bytes().startswith(b"\x89PNG")
        if os.environ.get(UPDATE_SCREENSHOT_ENV) == "1":
            SCREENSHOT.parent.mkdir(exist_ok=True)
            shutil.copyfile(picture, SCREENSHOT)


def test_a_denial_goes_to_the_session_with_its_reason(browser: Chrome) -> None:
    def script(session: FakeChatSession, text: str) -> None:
        session.emit("approval", call_id="c9", tool="drop_table", server="", kind="workflow", hints={}, arguments={})
        decision = session.wait_for(lambda: session.decisions.get("c9"))
        session.emit("assistant", text=f"Not done: {decision['reason']}")

    session = FakeChatSession(script)
    with chat(browser, session):
        say(browser, "Drop it")
        card = shown(browser, ".card.approval")
        assert [hint.text for hint in card.find_elements(By.CSS_SELECTOR, ".hint")] == ["no annotations"]
        assert "KNIME workflow" in card.find_element(By.CSS_SELECTOR, ".where").text
        card.find_element(By.CSS_SELECTOR, ".deny-reason").send_keys("not on a Friday")
        card.find_element(By.CSS_SELECTOR, "button.deny").click()
        idle(browser)
        assert session.decisions["c9"] == {"choice": "deny", "arguments": None, "reason": "not on a Friday"}
        assert card.find_element(By.CSS_SELECTOR, ".outcome").text == "Denied: not on a Friday"
        assert not card.find_element(By.CSS_SELECTOR, "button.approve").is_enabled()


def test_invalid_edited_arguments_are_not_sent(browser: Chrome) -> None:
    def script(session: FakeChatSession, text: str) -> None:
        session.emit("approval", call_id="c2", tool="t", server="s", kind="mcp", hints={"annotated": True},
                     arguments={"a": 1})  # fmt: skip
        session.wait_for(lambda: session.decisions.get("c2"))

    session = FakeChatSession(script)
    with chat(browser, session):
        say(browser, "go")
        card = shown(browser, ".card.approval")
        box = card.find_element(By.CSS_SELECTOR, ".approval-arguments")
        box.clear()
        box.send_keys("[1, 2")
        card.find_element(By.CSS_SELECTOR, "button.allow-session").click()
        assert shown(browser, ".card.approval .problem").text == "The arguments must be a JSON object."
        assert session.decisions == {}
        box.clear()
        box.send_keys('{"a": 2}')
        card.find_element(By.CSS_SELECTOR, "button.allow-session").click()
        idle(browser)
        assert session.decisions["c2"] == {"choice": "allow_session", "arguments": {"a": 2}, "reason": None}


def test_stop_mid_call_ends_the_turn(browser: Chrome) -> None:
    def script(session: FakeChatSession, text: str) -> None:
        session.emit("tool_start", call_id="w1", tool="chat__wait", server="chat", kind="mcp", arguments={})
        session.wait_for(lambda: session.stopped)
        session.emit("tool_end", call_id="w1", status="cancelled", duration_ms=10, text="Cancelled.", images=[])

    session = FakeChatSession(script)
    with chat(browser, session):
        say(browser, "wait")
        shown(browser, '.card.tool[data-status="running"]')
        stop = browser.find_element(By.CSS_SELECTOR, ".stop")
        assert stop.is_displayed() and not browser.find_element(By.CSS_SELECTOR, ".send").is_enabled()
        stop.click()
        shown(browser, '.card.tool[data-status="cancelled"]')
        idle(browser)
        assert session.stopped


def test_show_tool_calls_off_hides_the_cards(browser: Chrome) -> None:
    def script(session: FakeChatSession, text: str) -> None:
        session.emit("tool_start", call_id="c1", tool="echo", server="demo", kind="mcp", arguments={"text": "x"})
        session.emit("tool_end", call_id="c1", status="ok", duration_ms=5, text="x", images=[])
        session.emit("assistant", text="done")

    with chat(browser, FakeChatSession(script), show_tool_calls=False):
        say(browser, "echo x")
        idle(browser)
        assert shown(browser, ".message.assistant").text == "done"
        assert browser.find_elements(By.CSS_SELECTOR, ".card.tool") == []


HOSTILE = '<img src=x onerror="window.top.pwned=1"> <script>window.top.pwned=2</script>'


def test_what_a_tool_or_model_sends_shows_as_text_and_loads_nothing(browser: Chrome) -> None:
    # Given a turn whose tool result, answer and sign-in link carry markup and remote resources
    def script(session: FakeChatSession, text: str) -> None:
        session.emit("tool_start", call_id="h1", tool=HOSTILE, server=HOSTILE, kind="mcp", arguments={"q": HOSTILE})
        session.emit("tool_end", call_id="h1", status="ok", duration_ms=1, text=HOSTILE,
                     images=["https://example.invalid/tracker.png", "javascript:alert(1)", PIXEL])  # fmt: skip
        session.emit("sign_in", server=HOSTILE, url="javascript:window.top.pwned=3")
        session.emit("assistant", text=f"{HOSTILE}\n\n![logo](https://example.invalid/logo.png) "
                     "[docs](https://example.org/docs) [bad](javascript:window.top.pwned=4)")  # fmt: skip

    with chat(browser, FakeChatSession(script)) as host:
        say(browser, "search")
        idle(browser)
        tool = shown(browser, '.card.tool[data-status="ok"]')
        tool.find_element(By.CSS_SELECTOR, ".result summary").click()
        tool.find_element(By.CSS_SELECTOR, ".arguments summary").click()
        # Then the markup shows as text, in the result, the arguments, the names and the answer
        assert tool.find_element(By.CSS_SELECTOR, ".result-text").text == HOSTILE
        assert json.loads(tool.find_element(By.CSS_SELECTOR, ".arguments pre").text) == {"q": HOSTILE}
        assert tool.find_element(By.CSS_SELECTOR, ".tool-name").text == HOSTILE
        answer = shown(browser, ".message.assistant")
        assert HOSTILE in answer.text and "[image: logo]" in answer.text
        links = {link.text: link.get_attribute("href") for link in answer.find_elements(By.TAG_NAME, "a")}
        assert links == {"docs": "https://example.org/docs"}  # the javascript: link stays text
        assert browser.find_element(By.CSS_SELECTOR, ".card.sign-in").find_elements(By.TAG_NAME, "a") == []
        # And no script ran, the only image is the tool's PNG data URL, and nothing was requested but the page
        assert [img.get_attribute("src") for img in browser.find_elements(By.TAG_NAME, "img")] == [PIXEL]
        browser.switch_to.default_content()
        assert browser.execute_script("return window.pwned === undefined")
        requested = network_requests(browser)
        page = [url for url in requested if not url.startswith("data:")]
        assert all(url.startswith(host.url) for url in page), page
        assert set(host.requests) <= {"/", "/favicon.ico", "/rpc", *(f"/view/{file}" for file in PAGE_FILES)}


def test_a_form_from_a_schema_is_answered_with_typed_content(browser: Chrome) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "description": "Who you are"},
            "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
            "colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
            "agree": {"type": "boolean", "title": "Agree"},
        },
        "required": ["name", "colour"],
    }

    def script(session: FakeChatSession, text: str) -> None:
        session.emit("form", form_id="f1", server="asking", message="Tell me more.", schema=schema, url=None)
        answer = session.wait_for(lambda: session.answers.get("f1"))
        session.emit("assistant", text=f"Thanks, {answer['content']['name']}.")

    session = FakeChatSession(script)
    with chat(browser, session):
        say(browser, "ask me")
        card = shown(browser, ".card.form")
        assert card.find_element(By.CSS_SELECTOR, ".form-message").text == "Tell me more."
        card.find_element(By.CSS_SELECTOR, "button.accept").click()
        assert "Name" in shown(browser, ".card.form .problem").text  # required, left empty
        assert session.answers == {}
        card.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys("Ada")
        card.find_element(By.CSS_SELECTOR, "select[name=colour] option[value=green]").click()
        card.find_element(By.CSS_SELECTOR, "input[name=agree]").click()
        card.find_element(By.CSS_SELECTOR, "button.accept").click()
        idle(browser)
        assert session.answers["f1"] == {
            "action": "accept", "content": {"name": "Ada", "count": 2, "colour": "green", "agree": True},
        }  # fmt: skip
        assert shown(browser, ".message.assistant").text == "Thanks, Ada."


def test_a_url_form_shows_the_url_and_opens_it_only_on_a_click(browser: Chrome) -> None:
    url = "https://example.org/consent?step=1"

    def script(session: FakeChatSession, text: str) -> None:
        session.emit("form", form_id="u1", server="chat", message="Please confirm.", schema=None, url=url)
        session.wait_for(lambda: session.answers.get("u1"))

    session = FakeChatSession(script)
    with chat(browser, session):
        browser.execute_script("window.opened = []; window.open = (...a) => { window.opened.push(a); return null; };")
        say(browser, "visit")
        card = shown(browser, ".card.form")
        assert card.find_element(By.CSS_SELECTOR, ".url").text == url
        assert card.find_element(By.CSS_SELECTOR, ".where").text == "chat"
        assert browser.execute_script("return window.opened") == []
        card.find_element(By.CSS_SELECTOR, "button.accept").click()
        idle(browser)
        assert browser.execute_script("return window.opened") == [[url, "_blank", "noopener,noreferrer"]]
        assert session.answers["u1"] == {"action": "accept", "content": None}


def test_a_sign_in_link_shows_with_the_server_and_opens_on_a_click(browser: Chrome) -> None:
    url = "http://127.0.0.1:9/authorize?client_id=knime"

    def script(session: FakeChatSession, text: str) -> None:
        session.emit("sign_in", server="notes", url=url)
        session.emit("error", message="Sign in to notes, then send your message again.")

    with chat(browser, FakeChatSession(script)):
        browser.execute_script("window.opened = []; window.open = (...a) => { window.opened.push(a); return null; };")
        say(browser, "notes?")
        link = shown(browser, ".card.sign-in a")
        assert link.text == url and link.get_attribute("rel") == "noopener noreferrer"
        assert "notes" in browser.find_element(By.CSS_SELECTOR, ".card.sign-in .where").text
        assert shown(browser, ".message.error").text == "Sign in to notes, then send your message again."
        link.click()
        assert browser.execute_script("return window.opened") == [[url, "_blank", "noopener,noreferrer"]]


def test_a_multi_select_field_is_answered_with_the_chosen_values(browser: Chrome) -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b"}]},
                     "default": ["b"]},
        },
    }  # fmt: skip

    def script(session: FakeChatSession, text: str) -> None:
        session.emit("form", form_id="m1", server="asking", message="Pick.", schema=schema, url=None)
        session.wait_for(lambda: session.answers.get("m1"))

    session = FakeChatSession(script)
    with chat(browser, session):
        say(browser, "pick")
        card = shown(browser, ".card.form")
        options = card.find_elements(By.CSS_SELECTOR, "select[name=tags][multiple] option")
        assert [(option.text, option.is_selected()) for option in options] == [("Alpha", False), ("b", True)]
        options[0].click()  # chosen too, beside the default
        card.find_element(By.CSS_SELECTOR, "button.accept").click()
        idle(browser)
        assert session.answers["m1"] == {"action": "accept", "content": {"tags": ["a", "b"]}}


def test_a_calls_progress_and_a_tasks_status_show_in_the_status_line(browser: Chrome) -> None:
    def script(session: FakeChatSession, text: str) -> None:
        session.emit("tool_start", call_id="r1", tool="research", server="everything", kind="mcp", arguments={})
        session.emit("progress", tool="research", text="Analyzing content...")
        session.wait_for(lambda: session.stopped)

    session = FakeChatSession(script)
    with chat(browser, session):
        say(browser, "research")
        status = browser.find_element(By.CSS_SELECTOR, ".status")
        until(browser, lambda: status.text == "research: Analyzing content...")
        browser.find_element(By.CSS_SELECTOR, ".stop").click()
        idle(browser)
