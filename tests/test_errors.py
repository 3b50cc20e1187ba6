"""Foreign errors are translated at one seam into the most specific knime-mcp error."""

from __future__ import annotations

import errno

import anyio
import httpx2
import mcp_types
import pytest
from mcp.shared.exceptions import MCPError

from knime_mcp.errors import (
    ConfigError,
    McpToolError,
    ServerAuthError,
    ServerConnectError,
    SessionLostError,
    ToolCallError,
    ToolTimeoutError,
    translate,
    translate_errors,
)

_REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/mcp")


def _status(code: int) -> httpx2.HTTPStatusError:
    return httpx2.HTTPStatusError("status", request=_REQUEST, response=httpx2.Response(code, request=_REQUEST))


@pytest.mark.parametrize(
    ("foreign", "expected"),
    [
        (_status(401), ServerAuthError),
        (_status(403), ServerAuthError),
        (_status(404), ServerConnectError),
        (_status(500), ServerConnectError),
        (httpx2.ConnectTimeout("slow", request=_REQUEST), ServerConnectError),
        (httpx2.ReadTimeout("slow", request=_REQUEST), ServerConnectError),
        (httpx2.ConnectError("refused", request=_REQUEST), ServerConnectError),
        (httpx2.RemoteProtocolError("bad", request=_REQUEST), ServerConnectError),
        (FileNotFoundError(errno.ENOENT, "No such file or directory"), ServerConnectError),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), ServerConnectError),
        (MCPError(code=mcp_types.CONNECTION_CLOSED, message="Connection closed"), SessionLostError),
        (MCPError(code=mcp_types.INVALID_REQUEST, message="Session terminated"), SessionLostError),
        (MCPError(code=mcp_types.REQUEST_TIMEOUT, message="timed out"), ToolTimeoutError),
        (MCPError(code=mcp_types.INVALID_PARAMS, message="bad"), ToolCallError),
        (anyio.ClosedResourceError(), SessionLostError),
        (anyio.BrokenResourceError(), SessionLostError),
        (TimeoutError(), ServerConnectError),
        (ExceptionGroup("transport", [httpx2.ConnectError("refused", request=_REQUEST)]), ServerConnectError),
        (RuntimeError("anything else"), ServerConnectError),
    ],
)
def test_every_foreign_error_maps_to_a_knime_mcp_error(foreign: Exception, expected: type[McpToolError]) -> None:
    error = translate(foreign, "srv")
    assert type(error) is expected
    assert "[server: srv]" in str(error)


def test_an_http_status_seen_on_the_connection_wins_over_the_sdk_stand_in() -> None:
    stand_in = MCPError(code=mcp_types.INTERNAL_ERROR, message="Server returned an error response")
    assert isinstance(translate(stand_in, "srv", http_status=401), ServerAuthError)


def test_translate_errors_keeps_our_own_errors_and_chains_foreign_ones() -> None:
    with pytest.raises(ConfigError):
        with translate_errors("srv"):
            raise ConfigError("bad setting")
    with pytest.raises(SessionLostError) as caught:
        with translate_errors("srv"):
            raise anyio.BrokenResourceError()
    assert isinstance(caught.value.__cause__, anyio.BrokenResourceError)


def test_exit_codes_tell_usage_connection_and_tool_errors_apart() -> None:
    from knime_mcp.errors import UsageError

    assert (UsageError("x").exit_code, ServerConnectError("x").exit_code, ToolCallError("x").exit_code) == (2, 3, 4)
