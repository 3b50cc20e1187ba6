"""The Agent Chat page's look (frontend/chat_view/src/chat.css) in a real headless Chromium: KNIME's design tokens
(@knime/kds-styles) and fonts, in light and dark.

The page (src/nodes/chat_view, through tests/view_harness.py's stand-in for KNIME's UI) shows a conversation from a
scripted session (tests/fakes/fake_chat_session.py): a message, a Markdown answer with code, a tool call and an
approval of a destructive call. What it checks: the fonts are Roboto and Roboto Mono loaded from the page's own
fonts/ folder (nothing from anywhere else); the body, the buttons and the destructive hint wear the KNIME tokens'
colours; and the browser's dark preference (DevTools' emulated ``prefers-color-scheme``) turns the page dark while
the light one keeps it light.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from selenium.webdriver import Chrome

from fakes.fake_chat_session import FakeChatSession
from nodes.agent_chat.service import ChatViewService
from view_harness import PAGE_DIR, ViewHost, headless_chromium, network_requests, open_chat, shown

ANSWER = 'Entry **4** is *gone*: `delete_entry(4)` returned\n\n```\n{"deleted": 4}\n```'


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture
def page(browser: Chrome) -> Iterator[ViewHost]:
    """The page on a conversation that shows every kind of text: plain, bold, italic, code, buttons, badges."""
    session = FakeChatSession(lambda session, text: None)
    session.emit("user", text="Delete entry 4")
    session.emit("tool_start", call_id="c1", tool="ledger__delete_entry", server="ledger", kind="mcp",
                 arguments={"id": 4})  # fmt: skip
    session.emit("tool_end", call_id="c1", status="ok", duration_ms=812, text="Deleted entry 4.", images=[])
    session.emit("assistant", text=ANSWER)
    session.emit("approval", call_id="c2", tool="ledger__drop", server="ledger", kind="mcp",
                 hints={"destructive": True, "annotated": True}, arguments={})  # fmt: skip
    with open_chat(browser, ChatViewService(session, show_tool_calls=True)) as host:
        shown(browser, ".card.approval")
        yield host
    prefer(browser, "")


def prefer(browser: Chrome, scheme: str) -> None:
    """The browser's colour preference as DevTools emulates it ("light", "dark"; "" for the system's)."""
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]}
    )


def computed(browser: Chrome, selector: str, prop: str) -> str:
    return browser.execute_script(
        "return getComputedStyle(document.querySelector(arguments[0])).getPropertyValue(arguments[1])", selector, prop
    )


def token(browser: Chrome, name: str, prop: str) -> str:
    """What ``prop: var(name)`` computes to on the page (the token resolved in the page's colour scheme); fails
    when the page does not define the token."""
    assert browser.execute_script(
        "return getComputedStyle(document.documentElement).getPropertyValue(arguments[0]).trim()", name
    ), f"the page does not define {name}"
    return browser.execute_script(
        """const probe = document.createElement("span");
        probe.style.setProperty(arguments[1], `var(${arguments[0]})`);
        document.body.append(probe);
        const value = getComputedStyle(probe).getPropertyValue(arguments[1]);
        probe.remove();
        return value;""",
        name,
        prop,
    )


def luminance(colour: str) -> float:
    """The relative luminance (WCAG) of a computed ``rgb(...)``/``rgba(...)`` colour."""
    red, green, blue = (int(part) / 255 for part in re.findall(r"[\d.]+", colour)[:3])

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def test_the_fonts_are_roboto_and_roboto_mono_from_the_pages_own_folder(browser: Chrome, page: ViewHost) -> None:
    loaded = browser.execute_async_script(
        """const done = arguments[arguments.length - 1];
        document.body.getBoundingClientRect();  // lays the page out: the faces its text uses start loading
        document.fonts.ready.then(() => done([...document.fonts]
          .filter((face) => face.status === "loaded")
          .map((face) => [face.family.replaceAll('"', ""), String(face.weight), face.style])));"""
    )
    faces = {tuple(face) for face in loaded}
    assert {("Roboto", "400", "normal"), ("Roboto", "400", "italic"), ("Roboto", "500", "normal"),
            ("Roboto", "700", "normal"), ("Roboto Mono", "400", "normal")} <= faces  # fmt: skip
    assert computed(browser, "body", "font-family").startswith("Roboto")
    assert computed(browser, ".message.assistant pre", "font-family").startswith('"Roboto Mono"')
    requested = [url for url in network_requests(browser) if not url.startswith("data:")]
    fonts = [url for url in requested if url.endswith(".woff2")]
    assert fonts and all(url.startswith(f"{page.url}view/fonts/") for url in fonts), fonts
    assert all(url.startswith(page.url) for url in requested), requested


def test_the_page_wears_knimes_token_colours(browser: Chrome, page: ViewHost) -> None:
    prefer(browser, "light")
    assert computed(browser, "body", "color") == token(browser, "--kds-color-text-and-icon-neutral", "color")
    assert computed(browser, "body", "background-color") == token(
        browser, "--kds-color-page-default", "background-color"
    )
    assert computed(browser, ".card.tool", "background-color") == token(
        browser, "--kds-color-surface-default", "background-color"
    )
    assert computed(browser, "button.send", "background-color") == token(
        browser, "--kds-color-background-primary-bold-initial", "background-color"
    )
    danger = token(browser, "--kds-color-text-and-icon-danger", "color")
    assert computed(browser, ".hint.destructive", "color") == danger
    assert computed(browser, "button.deny", "color") == danger


def test_dark_preference_turns_the_page_dark_and_light_keeps_it_light(browser: Chrome, page: ViewHost) -> None:
    prefer(browser, "light")
    assert luminance(computed(browser, "body", "background-color")) > 0.8
    assert luminance(computed(browser, "body", "color")) < 0.1
    assert luminance(computed(browser, ".card.tool", "background-color")) > 0.8
    prefer(browser, "dark")
    assert luminance(computed(browser, "body", "background-color")) < 0.05
    assert luminance(computed(browser, "body", "color")) > 0.7
    assert luminance(computed(browser, ".card.tool", "background-color")) < 0.05
    assert luminance(computed(browser, ".message.assistant", "color")) > 0.7
    assert computed(browser, "body", "color") == token(browser, "--kds-color-text-and-icon-neutral", "color")


def test_a_browser_without_light_dark_gets_every_colour_token_as_its_light_value() -> None:
    # Given the committed stylesheet (KNIME's tokens are light-dark() pairs, which Chromium reads from version 123 on)
    css = (PAGE_DIR / "chat.css").read_text(encoding="utf-8")
    fallback_at = css.index("@supports not (color: light-dark(")
    paired = set(re.findall(r"(--[\w-]+):\s*light-dark\(", css[:fallback_at]))
    # Then where light-dark() is not understood, every paired token has a plain value, the light one
    fallback = dict(re.findall(r"(--[\w-]+):\s*([^;{}]+)[;}]", css[fallback_at:]))
    assert paired and paired <= fallback.keys()
    assert not any("light-dark" in value for value in fallback.values())
    assert fallback["--kds-color-surface-default"] == "hsl(0 0% 98%)"
