"""The exception tree of knime-mcp, and the one seam that translates foreign errors into it.

    McpToolError                 exit code 1 (anything not more specific)
    ├── UsageError               exit code 2 (the CLI's words are off)
    ├── CancelledByUser          exit code 130 (KNIME's cancel button, or Ctrl-C)
    ├── IterationLimitError      exit code 1 (the agent was still calling tools at its iteration limit)
    ├── ChatModelError           exit code 3 (the chat model could not be reached or refused the request)
    ├── ConfigError              exit code 3 (a bad setting, a missing ${VAR} or credential)
    ├── ServerConnectError       exit code 3 (refused, unknown host, not an MCP server, timeout, died)
    │   ├── ServerAuthError      exit code 3 (401/403)
    │   ├── ServerBusyError      exit code 3 (429 or 5xx on a request; may carry Retry-After)
    │   ├── CircuitOpenError     exit code 3 (the circuit breaker fails the server's calls fast; not retried)
    │   └── SessionLostError     exit code 3 (an open session ended: the server restarted or crashed)
    │       └── SessionExpiredError  (the session was gone before the request reached it: it never ran)
    ├── ServerProtocolError      exit code 3 (the server answered, but its reply breaks the MCP schema; not a dead
    │                            server, so the circuit breaker does not count it)
    └── ToolError                exit code 4 (the tool ran and failed, or never answered)
        ├── ToolTimeoutError
        ├── OutcomeUnknownError  (the session was lost during a call that is not safe to repeat)
        ├── ToolCallError        (isError results, invalid arguments, unknown tools)
        ├── ResourceError        (no resource at a URI, a template argument missing, contents over a size limit)
        └── PromptError          (an unknown prompt, an argument missing)

KNIME and the CLI show only ``str(exc)``, so ``__str__`` carries the message, the server's display name and a hint.
A display name never holds a URL's userinfo, and no message here ever holds a secret value.
"""

from __future__ import annotations

import errno
import re
import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import ClassVar

__all__ = [
    "MAX_RETRY_AFTER_SECONDS",
    "SESSION_TERMINATED",
    "CancelledByUser",
    "ChatModelError",
    "CircuitOpenError",
    "ConfigError",
    "IterationLimitError",
    "McpToolError",
    "OutcomeUnknownError",
    "PromptError",
    "ResourceError",
    "ServerAuthError",
    "ServerBusyError",
    "ServerConnectError",
    "ServerProtocolError",
    "SessionExpiredError",
    "SessionLostError",
    "ToolCallError",
    "ToolError",
    "ToolTimeoutError",
    "UsageError",
    "translate_errors",
]


class McpToolError(Exception):
    """Base of every error knime-mcp raises on purpose."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, server: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.server = server
        self.hint = hint

    def __str__(self) -> str:
        text = self.message
        if self.server:
            text += f" [server: {self.server}]"
        if self.hint:
            text += f" Hint: {self.hint}"
        return text


class UsageError(McpToolError):
    exit_code = 2


class CancelledByUser(McpToolError):
    """The user cancelled the run; calls in flight were cancelled too."""

    exit_code = 130

    def __init__(self) -> None:
        super().__init__("Execution was cancelled.")


class IterationLimitError(McpToolError):
    """The model kept calling tools until the iteration limit."""


class ChatModelError(McpToolError):
    """The chat model could not be reached or refused the request; the message never holds the API key."""

    exit_code = 3


class ConfigError(McpToolError):
    exit_code = 3


class ServerConnectError(McpToolError):
    exit_code = 3


class ServerAuthError(ServerConnectError):
    pass


MAX_RETRY_AFTER_SECONDS = 30.0
"""The longest ``Retry-After`` knime-mcp waits for before a retry. A server asking for longer (an hour is common) is
not retried at all: that call fails at once saying when the server wants to be called again, and the circuit breaker
fails the server's other calls fast until then, instead of each costing the wait."""


class ServerBusyError(ServerConnectError):
    """The server refused a request with 429 or a 5xx status; safe-to-repeat calls are retried, unless it asked to
    wait longer than :data:`MAX_RETRY_AFTER_SECONDS`."""

    def __init__(self, status: int, retry_after: float | None, *, server: str | None = None) -> None:
        self.status = status
        self.retry_after = retry_after
        if self.too_long_to_wait:
            back = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + (retry_after or 0.0)))
            super().__init__(
                f"The server answered HTTP {status}; it asked to retry after {retry_after:g} s (at {back}), longer "
                f"than knime-mcp waits ({MAX_RETRY_AFTER_SECONDS:g} s), so the call was not retried.",
                server=server,
                hint="Run again after that time; until then every call to this server fails at once.",
            )
            return
        wait = f"; it asked to retry after {retry_after:g} s" if retry_after is not None else ""
        super().__init__(
            f"The server answered HTTP {status}{wait}.",
            server=server,
            hint="The server is overloaded or failing; read-only and idempotent tools are retried, others are not.",
        )

    @property
    def too_long_to_wait(self) -> bool:
        """Whether the server asked for a longer wait than knime-mcp gives it."""
        return self.retry_after is not None and self.retry_after > MAX_RETRY_AFTER_SECONDS


class CircuitOpenError(ServerConnectError):
    """A call not made: the circuit breaker leaves a failing server alone for a while. Retrying it would only wait."""


class SessionLostError(ServerConnectError):
    """An open session ended under a call; the client reconnects once before giving up."""


class SessionExpiredError(SessionLostError):
    """The request never reached a live session: the server refused it because it no longer knows the session (it
    restarted, or let the session expire), or the session had ended before the request was written (a stdio server
    that exited, an SSE stream that closed). It never ran, so the client may always send it again on a new
    session."""


class ServerProtocolError(McpToolError):
    """The server answered, but its reply breaks the MCP schema: a bug in the server (or a protocol version it only
    claims to speak), not a connection failure. Waiting does not heal it, and the server stays reachable."""

    exit_code = 3


class ToolError(McpToolError):
    exit_code = 4


class ToolTimeoutError(ToolError):
    pass


class ToolCallError(ToolError):
    pass


class OutcomeUnknownError(ToolError):
    pass


class ResourceError(ToolError):
    """A resource could not be read as asked; like a failed tool call, the server is still there."""


class PromptError(ToolError):
    """A prompt could not be got as asked; like a failed tool call, the server is still there."""


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


MASK = "***"


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret value in it replaced by :data:`MASK`, longest first (so a secret holding another
    is masked whole)."""
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def masked(error: McpToolError, secrets: Iterable[str]) -> McpToolError:
    """``error`` with every secret value in its message and hint masked: servers echo what they were given (a stdio
    server printing its token at start-up, an HTTP body quoting a header)."""
    secrets = list(secrets)
    error.message = scrub(error.message, secrets)
    error.hint = error.hint and scrub(error.hint, secrets)
    error.args = (error.message,)
    return error


_OAUTH_HINTS = {
    "invalid_client": "Check the client id and secret (the KNIME credential, or --client-id and --client-secret).",
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
                f"The connection failed: {leaf or type(leaf).__name__}.", server=server, hint=_CONNECT_HINT
            )
        case ssl.SSLError():
            return ServerConnectError(f"TLS failed: {leaf}.", server=server, hint="Check the server's certificate.")
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
