"""Test layer: getting at an MCP App in the Agent Chat page of tests/view_harness.py, and saving what it shows.

The page shows an app under its tool card in a slot (``.app[data-call-id]``) holding the sandbox proxy frame
(``iframe.app-frame``, src/nodes/chat_view/sandbox.html), which holds the app's own document in an inner frame.
:func:`enter_app` leaves the driver inside that inner frame once the page has handed the app its input and result
(the slot's ``data-status`` is ``shown``); :func:`leave_app` goes back to the chat page. :func:`save_screenshot`
writes the browser's window (the chat page with its apps) under tests/artifacts/apps/ for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver import Chrome

from view_harness import shown

__all__ = ["ARTIFACTS", "enter_app", "leave_app", "save_screenshot"]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "apps"
"""Where screenshots of the chat with its apps go (git-ignored)."""


def enter_app(browser: Chrome, call_id: str) -> None:
    """From the chat page into the app of tool call ``call_id``, once the page has given it its result."""
    proxy = shown(browser, f'.app[data-call-id="{call_id}"][data-status="shown"] iframe.app-frame')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", proxy)
    browser.switch_to.frame(proxy)
    browser.switch_to.frame(shown(browser, "iframe"))


def leave_app(browser: Chrome) -> None:
    """From an app's inner frame back to the chat page."""
    browser.switch_to.parent_frame()
    browser.switch_to.parent_frame()


def save_screenshot(browser: Chrome, name: str) -> Path:
    """The browser's window as tests/artifacts/apps/<name>.png; the driver stays in the frame it was in."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    browser.save_screenshot(str(path))
    return path
