"""The exception tree of knime-mcp: what can go wrong, at the level a caller catches it, with the CLI's exit code.

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

import time
from typing import ClassVar

__all__ = [
    "MAX_RETRY_AFTER_SECONDS",
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
