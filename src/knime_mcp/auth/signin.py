"""Interactive sign-in: the system browser, the loopback redirect, and a bounded wait that cancel ends at once.

The browser opens through :mod:`webbrowser`, so the ``BROWSER`` environment variable chooses the program (a text
browser on a headless machine, or a script); it opens beside the wait, never before it, since a text browser runs
until the person quits it. The authorization URL is always shown too (the CLI prints it, a node puts it in its
progress message and log), for machines where no browser opens. A face that shows the URL as a link the person
opens (the chat page) wraps its ``show`` in :class:`LinkOnly`, and no browser opens by itself. While the person
signs in, the connect timeout of the session that asked is paused: a sign-in takes minutes, a handshake seconds.
"""

from __future__ import annotations

import math
import threading
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.shared.auth import AuthorizationCodeResult

from knime_mcp.auth.loopback import LoopbackRedirect
from knime_mcp.errors import ServerAuthError

__all__ = ["SIGN_IN_SECONDS", "BrowserSignIn", "LinkOnly", "connect_deadline"]

SIGN_IN_SECONDS = 300.0
"""How long a sign-in waits for the browser to come back."""

connect_deadline: ContextVar[anyio.CancelScope | None] = ContextVar("connect_deadline", default=None)
"""The cancel scope that bounds the handshake of the session being opened, paused while a person signs in."""


class LinkOnly:
    """A ``show_sign_in`` that is all a sign-in does: the person opens the link themselves (the chat page opens it on
    their click), so no browser is started for them."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show

    def __call__(self, url: str) -> None:
        self._show(url)


class BrowserSignIn:
    """The SDK's redirect and callback handlers for one server; ``show(url)`` tells the person where to sign in."""

    def __init__(self, server: str, *, show: Callable[[str], None], timeout: float | None = None) -> None:
        self._server = server
        self._show = show
        self._timeout = SIGN_IN_SECONDS if timeout is None else timeout
        self._redirect = LoopbackRedirect()
        self._state = ""
        """The ``state`` of the sign-in under way, which the browser must bring back (the SDK makes one per sign-in)."""

    @property
    def redirect_uri(self) -> str:
        return self._redirect.redirect_uri

    async def open_browser(self, url: str) -> None:
        """The SDK's redirect handler: the redirect port starts taking connections, for this sign-in's ``state``."""
        self._state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        self._redirect.listen()
        self._show(url)
        if isinstance(self._show, LinkOnly):
            return
        threading.Thread(target=webbrowser.open, args=(url,), name="knime-mcp sign-in browser", daemon=True).start()

    async def wait_for_code(self) -> AuthorizationCodeResult:
        with _paused(connect_deadline.get()), anyio.move_on_after(self._timeout) as waiting:
            return await self._redirect.receive(self._server, self._state)
        assert waiting.cancelled_caught
        raise ServerAuthError(
            f"The sign-in timed out: the browser did not come back within {self._timeout:g} s.",
            server=self._server,
            hint="Sign in again, and finish signing in in the browser that opens (or at the address shown).",
        )

    def close(self) -> None:
        self._redirect.close()


@contextmanager
def _paused(scope: anyio.CancelScope | None) -> Iterator[None]:
    if scope is None:
        yield
        return
    remaining = scope.deadline - anyio.current_time()
    scope.deadline = math.inf
    try:
        yield
    finally:
        scope.deadline = anyio.current_time() + remaining
