"""The Agent Chat page (src/nodes/chat_view) in a real headless Chromium against hostile page messages: an event the
page cannot show (a form's title that is an object, a tool name that is no text) becomes an error card and every
other event still shows, also when the view opens again; links to private hosts, IP literals and links whose text is
not their target say where they go before the click, in answers, sign-in cards and URL forms. Over the view's data
service (src/nodes/agent_chat/service.py) on a scripted chat session (tests/fakes/fake_chat_session.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from fakes.fake_chat_session import FakeChatSession
from nodes.agent_chat.service import ChatViewService
from view_harness import ViewHost, headless_chromium, idle, open_chat, say, shown

NOT_TEXT = {"toString": 1, "valueOf": 1}
"""JSON that a page breaks on where it expects text: no way to turn it into a string."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


def chat(browser: Chrome, session: FakeChatSession) -> contextlib.AbstractContextManager[ViewHost]:
    """The page open on ``session`` through the view's data service."""
    return open_chat(browser, ChatViewService(session, show_tool_calls=True))


def _bad_then_good(session: FakeChatSession, text: str) -> None:
    session.emit("form", form_id="f1", server="forms", message="Tell me.", url=None,
                 schema={"type": "object", "properties": {"name": {"type": "string", "title": NOT_TEXT}}})  # fmt: skip
    session.emit("tool_start", call_id="t1", tool=NOT_TEXT, server="x", kind="mcp", arguments={})
    session.emit("approval", call_id="c1", tool="delete_entry", server="ledger", kind="mcp",
                 hints={"annotated": True, "destructive": True}, arguments={"id": 3})  # fmt: skip
    session.wait_for(lambda: session.decisions.get("c1"))
    session.emit("assistant", text="Deleted.")


def test_an_event_the_page_cannot_show_is_an_error_card_and_the_rest_still_shows_also_when_opened_again(
    browser: Chrome,
) -> None:
    session = FakeChatSession(_bad_then_good)
    with chat(browser, session) as host:
        say(browser, "Delete entry 3")
        # The approval after the two bad events shows and works
        card = shown(browser, ".card.approval")
        assert card.find_element(By.CSS_SELECTOR, ".tool-name").text == "delete_entry"
        card.find_element(By.CSS_SELECTOR, "button.approve").click()
        idle(browser)
        assert session.decisions["c1"]["choice"] == "approve"
        assert shown(browser, ".message.assistant").text == "Deleted."
        broken = [card.text for card in browser.find_elements(By.CSS_SELECTOR, ".message.error.unshown")]
        assert len(broken) == 2 and "form" in broken[0] and "tool_start" in broken[1]
        assert host.alerts == []
    # When the view opens again, the chat so far is shown again from its events, bad ones included
    with chat(browser, session):
        shown(browser, ".card.approval[data-call-id=c1]")
        assert shown(browser, ".message.assistant").text == "Deleted."
        assert len(browser.find_elements(By.CSS_SELECTOR, ".message.error.unshown")) == 2


def _notes(browser: Chrome, scope: str) -> dict[str, str]:
    """Each link's text in ``scope`` and the note that follows it (empty when none)."""
    script = """
        return [...document.querySelectorAll(arguments[0] + " a")].map((a) => [
            a.textContent, a.nextElementSibling?.matches(".link-target") ? a.nextElementSibling.innerText : ""]);
    """
    return dict(browser.execute_script(script, scope))


def test_links_to_private_hosts_and_links_not_saying_their_target_show_where_they_go(browser: Chrome) -> None:
    answer = (
        "[docs](http://127.0.0.1:8080/docs), [router](http://192.168.1.1/admin), [meta](http://169.254.169.254/x), "
        "[v6](http://[::1]:9/), [dec](http://2130706433/), [lan](http://printer.local/), "
        "[https://good.example/](https://evil.example/login), [our site](https://example.org/about) and "
        "https://example.org/plain"
    )

    def script(session: FakeChatSession, text: str) -> None:
        session.emit("sign_in", server="notes", url="http://127.0.0.1:9/authorize?client_id=knime")
        session.emit("form", form_id="u1", server="chat", message="Open it.", schema=None,
                     url="http://169.254.169.254/latest/meta-data")  # fmt: skip
        session.emit("assistant", text=answer)

    with chat(browser, FakeChatSession(script)):
        say(browser, "links")
        shown(browser, ".message.assistant a")
        assert _notes(browser, ".message.assistant") == {
            "docs": "(opens 127.0.0.1:8080, a private address)",
            "router": "(opens 192.168.1.1, a private address)",
            "meta": "(opens 169.254.169.254, a private address)",
            "v6": "(opens [::1]:9, a private address)",
            "dec": "(opens 127.0.0.1, a private address)",
            "lan": "(opens printer.local, a private address)",
            "https://good.example/": "(opens evil.example)",
            "our site": "(opens example.org)",
            "https://example.org/plain": "",
        }
        assert _notes(browser, ".card.sign-in") == {
            "http://127.0.0.1:9/authorize?client_id=knime": "(opens 127.0.0.1:9, a private address)"
        }
        note = shown(browser, ".card.form .form-url .link-target")
        assert note.is_displayed() and note.text == "(opens 169.254.169.254, a private address)"
        idle(browser)
