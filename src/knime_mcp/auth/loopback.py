"""The redirect listener of an interactive sign-in (RFC 8252, section 7.3).

The authorization server sends the browser back to ``http://127.0.0.1:PORT/callback?code=…&state=…``. The port is
bound when the sign-in is prepared, because the redirect address goes into the client's registration, but it takes
connections only from when the browser is opened: before that a local process that connects is refused, so nothing
it sends waits in the queue to be answered later. Then the listener answers the redirect path with the ``state`` of
this sign-in only, tells the browser it may close, and hands the code to the SDK's OAuth client; any other request
(another path, another or no ``state``) gets 404 and the wait goes on, so no local process can end or spoil a sign-in.
Authorization servers allow any port for a loopback redirect of a native client, so a client registered once is
reused whatever port a later sign-in gets.
"""

from __future__ import annotations

import secrets
import socket
from typing import TYPE_CHECKING

import anyio
from mcp.shared.auth import AuthorizationCodeResult

from knime_mcp.errors import ServerAuthError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse

__all__ = ["LoopbackRedirect"]

HOST = "127.0.0.1"
"""The loopback address the browser is sent back to: RFC 8252 asks for the IP literal, not ``localhost``."""

CALLBACK_PATH = "/callback"

_PAGE = "<!doctype html><title>knime-mcp</title><p>{}</p><p>You can close this window.</p>"


class LoopbackRedirect:
    """A port on 127.0.0.1 that the browser comes back to; whoever creates it closes it."""

    def __init__(self) -> None:
        # Bound without SO_REUSEADDR, so that no other program can bind the port beside it, and not yet listening.
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            self._socket.bind((HOST, 0))
        except OSError:
            self._socket.close()
            raise
        self.redirect_uri = f"http://{HOST}:{self._socket.getsockname()[1]}{CALLBACK_PATH}"

    def listen(self) -> None:
        """Take connections from now on: called as the browser is opened, so that it may come back at once."""
        self._socket.listen(16)

    async def receive(self, server: str, state: str) -> AuthorizationCodeResult:
        """Answer on the port until the browser comes back with ``state``; its code, or the server's refusal
        (``error=…``) as a :class:`ServerAuthError`."""
        # The web server loads only when a person signs in.
        import uvicorn
        from starlette.applications import Starlette
        from starlette.responses import HTMLResponse
        from starlette.routing import Route

        query: dict[str, str] = {}
        arrived = anyio.Event()

        async def back(request: Request) -> HTMLResponse:
            given = request.query_params.get("state", "").encode()
            if not state or not secrets.compare_digest(given, state.encode()):
                return HTMLResponse(_PAGE.format("This is not the sign-in knime-mcp is waiting for."), status_code=404)
            if arrived.is_set():
                return HTMLResponse(_PAGE.format("This sign-in was already completed."), status_code=409)
            query.update(request.query_params)
            arrived.set()
            done = "Signed in to the MCP server." if "code" in query else "The sign-in did not complete."
            return HTMLResponse(_PAGE.format(done))

        app = Starlette(routes=[Route(CALLBACK_PATH, back)])
        listener = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        async with anyio.create_task_group() as group:
            # uvicorn closes the sockets it serves: it gets a duplicate, so the port stays for a later sign-in.
            group.start_soon(listener.serve, [self._socket.dup()])
            try:
                await arrived.wait()
            finally:
                listener.should_exit = True
        return _code(query, server)

    def close(self) -> None:
        self._socket.close()


def _code(query: dict[str, str], server: str) -> AuthorizationCodeResult:
    if (error := query.get("error")) is None:
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))
    described = f" ({query['error_description']})" if query.get("error_description") else ""
    if error == "access_denied":
        hint = "Sign in again and grant the access the server asks for."
    else:
        hint = "Check the OAuth settings (client id, scope) against the server's documentation."
    raise ServerAuthError(
        f"The sign-in failed: the authorization server answered {error!r}{described}.", server=server, hint=hint
    )
