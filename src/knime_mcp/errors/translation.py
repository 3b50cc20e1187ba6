"""The one seam that translates foreign errors (the SDK's, httpx2's, anyio's, pydantic's, the OS's) into the tree.

Each maps to the most specific :mod:`knime_mcp.errors.tree` class, chained with ``raise … from exc``, so that SDK,
httpx, anyio and OSError errors never reach a KNIME user raw, and the CLI's exit code and the node's message can tell
a connection, an authentication and a tool failure apart.
"""

from __future__ import annotations

import errno
import re
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

from knime_mcp.errors.certificates import certificate_error
from knime_mcp.errors.tree import (
    McpToolError,
    ServerAuthError,
    ServerConnectError,
    ServerProtocolError,
    SessionLostError,
    ToolCallError,
    ToolTimeoutError,
)

__all__ = ["SESSION_TERMINATED", "translate", "translate_errors"]

SESSION_TERMINATED = "Session terminated"
"""The SDK's message for a 404 on a Streamable HTTP session id: the server no longer knows the session."""

_CONNECT_HINT = "Check that the server is running and that the URL or command is right."


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception: anyio task groups wrap transport failures in ExceptionGroups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _first_line(text: str, limit: int = 300) -> str:
    """Foreign messages can be multi-line dumps holding raw response bytes; the user needs the gist."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _from_status(status: int, server: str, challenge: str | None = None) -> McpToolError:
    if challenge is not None and _challenge_field(challenge, "error") == "insufficient_scope":
        wanted = _challenge_field(challenge, "scope")
        return ServerAuthError(
            f"The server refused the request: it needs a larger scope than the token has (HTTP {status}, "
            f"insufficient_scope{f'; it asks for {wanted!r}' if wanted else ''}).",
            server=server,
            hint="With OAuth sign-in the larger scope was asked for once and the server still refuses: ask its "
            "administrators which scope this needs and whether your account may have it. With a bearer token, use one "
            "with that scope.",
        )
    if challenge is not None and challenge.lstrip().lower().startswith("bearer") and "resource_metadata" in challenge:
        return ServerAuthError(
            f"The server asks for sign-in with OAuth (HTTP {status}).",
            server=server,
            hint="Set the authentication to OAuth sign-in, or OAuth client credentials for a batch run (on the "
            "command line: --auth oauth).",
        )
    if status in (401, 403) or challenge is not None:
        return ServerAuthError(
            f"The server refused the credentials (HTTP {status}).",
            server=server,
            hint="Set the authentication (bearer token, header or basic) and check that the credential is valid.",
        )
    if status == 413:
        return ToolCallError(
            "The server refused the request as too large (HTTP 413); it did not run.",
            server=server,
            hint="Send less in one call (split the input), or raise the server's request size limit.",
        )
    if status in (400, 404, 405, 406, 415):
        return ServerConnectError(
            f"The server answered HTTP {status}: this URL does not speak MCP.",
            server=server,
            hint="Check the endpoint path (often /mcp for Streamable HTTP, /sse for SSE) and the transport setting.",
        )
    return ServerConnectError(f"The server answered HTTP {status}.", server=server, hint=_CONNECT_HINT)


def _challenge_field(challenge: str, name: str) -> str | None:
    """One parameter of a ``WWW-Authenticate`` challenge (RFC 6750 section 3), quoted or not."""
    found = re.search(rf'(?:^|[\s,]){name}=(?:"([^"]*)"|([^\s,]+))', challenge)
    return (found.group(1) if found.group(1) is not None else found.group(2)) if found else None


_TOO_LARGE = "byte limit"
"""In the SDK's error for a reply larger than the transport's limit ("Server-sent event exceeded the N byte limit"),
and in the parse error for a JSON body that exceeded it ("The response exceeded the N byte limit")."""

_OAUTH_HINTS = {
    "invalid_client": "Check the client id and secret or private key (the KNIME credential, or --client-id and "
    "--client-secret or --private-key).",
    "invalid_grant": "The stored sign-in expired or was revoked: sign in again (knime-mcp login URL, or run the node "
    "in KNIME Analytics Platform).",
    "invalid_scope": "Ask for scopes the server offers (the Scope setting, or --scope), or leave the scope empty.",
    "unauthorized_client": "This client may not use that grant; ask the server's administrators, or use another "
    "authentication.",
    "issuer": "The authorization server is not the one the MCP server names; do not sign in until that is fixed.",
}
"""Hints for the OAuth failures users can act on, by the error code or word in the SDK's message."""


def _oauth_failure(leaf: BaseException, server: str) -> ServerAuthError | None:
    """An OAuth flow the SDK gave up on, as an authentication error with what to do."""
    from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError

    if not isinstance(leaf, OAuthFlowError):
        return None
    detail = _first_line(str(leaf))
    if isinstance(leaf, OAuthRegistrationError):
        return ServerAuthError(
            f"The authorization server refused to register knime-mcp as a client ({detail}).",
            server=server,
            hint="Ask the server's administrators for a client id and give it in the OAuth settings (--client-id).",
        )
    hint = next((hint for word, hint in _OAUTH_HINTS.items() if word in detail), None)
    return ServerAuthError(
        f"The OAuth sign-in failed: {detail}.",
        server=server,
        hint=hint or "Check the OAuth settings (client id, scope) against the server's documentation.",
    )


def translate(
    exc: BaseException, server: str, *, http_status: int | None = None, challenge: str | None = None
) -> McpToolError:
    """Map one foreign exception to the most specific knime-mcp error.

    ``http_status`` is the HTTP error seen on the connection, when the SDK has turned it into a JSON-RPC error;
    ``challenge`` its ``WWW-Authenticate`` header, when it asked for authentication.
    """
    # The SDK, httpx2, anyio and pydantic load here, not at import: the CLI's `--help` must not pay for them.
    import anyio
    import httpx2
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, PARSE_ERROR, REQUEST_TIMEOUT
    from pydantic import ValidationError

    leaf = _leaf(exc)
    if (oauth := _oauth_failure(leaf, server)) is not None:
        return oauth
    if http_status is not None and not isinstance(leaf, McpToolError):
        return _from_status(http_status, server, challenge)
    if isinstance(leaf, (httpx2.TransportError, ssl.SSLError)) and (tls := certificate_error(leaf, server)):
        return tls
    match leaf:
        case McpToolError():
            return leaf
        case httpx2.HTTPStatusError():
            return _from_status(leaf.response.status_code, server, leaf.response.headers.get("WWW-Authenticate"))
        case httpx2.ConnectTimeout() | httpx2.PoolTimeout():
            return ServerConnectError(
                "Timed out connecting to the server.", server=server, hint=_CONNECT_HINT
            )
        case httpx2.TimeoutException():
            return ServerConnectError(
                "The server did not answer in time.",
                server=server,
                hint="Raise the connect timeout, or check that the server is responsive.",
            )
        case httpx2.ConnectError() if "Name or service not known" in str(leaf) or "nodename" in str(leaf):
            return ServerConnectError(
                "The server's host name could not be resolved.", server=server, hint=_CONNECT_HINT
            )
        case httpx2.ConnectError():
            return ServerConnectError(f"Could not connect: {leaf}.", server=server, hint=_CONNECT_HINT)
        case httpx2.TransportError():
            # httpx2 leaves some of these without a message ("peer closed connection" has one, ReadError not)
            return ServerConnectError(
                f"The connection failed: {str(leaf) or type(leaf).__name__}.", server=server, hint=_CONNECT_HINT
            )
        case FileNotFoundError() | PermissionError():
            return ServerConnectError(
                f"Could not start the server command: {leaf.strerror or leaf}.",
                server=server,
                hint="Check that the command is installed and on PATH, or give its full path.",
            )
        case OSError() if leaf.errno in (errno.ECONNREFUSED, errno.ECONNRESET, errno.EPIPE):
            return ServerConnectError(f"The connection failed: {leaf.strerror}.", server=server, hint=_CONNECT_HINT)
        case MCPError() if leaf.error.code in (CONNECTION_CLOSED, PARSE_ERROR) and _TOO_LARGE in leaf.error.message:
            return ToolCallError(
                f"The server's reply is larger than knime-mcp reads in one message: the tool ran, but its result "
                f"is lost ({_first_line(leaf.error.message)}).",
                server=server,
                hint="Ask the tool for less at a time (a filter, a page, a smaller range).",
            )
        case MCPError() if leaf.error.code == CONNECTION_CLOSED or leaf.error.message == SESSION_TERMINATED:
            return SessionLostError(
                "The server closed the connection.",
                server=server,
                hint="The server may have restarted, crashed or exited; check its log.",
            )
        case MCPError() if leaf.error.code == REQUEST_TIMEOUT:
            return ToolTimeoutError("The server did not answer in time.", server=server)
        case MCPError() if leaf.error.code == PARSE_ERROR and "recursion limit" in leaf.error.message:
            return ServerConnectError(
                "The server's answer is nested too deeply to read (more levels than the JSON parser allows).",
                server=server,
                hint="A tool's schema is probably nested hundreds of levels deep; exclude that tool on the server.",
            )
        case MCPError() if leaf.error.code == PARSE_ERROR:
            return ServerConnectError(
                f"The server sent a response that is not valid JSON-RPC ({_first_line(leaf.error.message)}).",
                server=server,
                hint="The server or a proxy in front of it is broken; check its log.",
            )
        case MCPError():
            return ToolCallError(f"The server answered with an error: {_first_line(leaf.error.message)}", server=server)
        case ValidationError():
            return ServerProtocolError(
                f"Protocol violation: the server's answer does not follow the MCP schema "
                f"({_first_line(str(leaf.errors()[0]['msg']))}).",
                server=server,
                hint="The server may speak another protocol version or send tool schemas too deeply nested to read.",
            )
        case TimeoutError():
            return ServerConnectError("The server did not answer in time.", server=server, hint=_CONNECT_HINT)
        case anyio.ClosedResourceError() | anyio.BrokenResourceError() | anyio.EndOfStream():
            return SessionLostError(
                "The server closed the connection.",
                server=server,
                hint="The server may have crashed or exited; check its log.",
            )
        case _:
            return ServerConnectError(
                f"Unexpected failure talking to the server: {type(leaf).__name__}: {leaf}",
                server=server,
                hint=_CONNECT_HINT,
            )


@contextmanager
def translate_errors(server: str) -> Iterator[None]:
    """Re-raise SDK, httpx2, anyio and OS errors as knime-mcp errors.

    Cancellation passes through: it is a BaseException, and so is any exception group holding one.
    """
    try:
        yield
    except McpToolError:
        raise
    except Exception as exc:
        raise translate(exc, server) from exc
