"""MCP over WebSocket, refused with the reason: a ``ws://`` or ``wss://`` server address fails as it is given.

The MCP specification's transports are stdio and Streamable HTTP; WebSocket never was one, and the ``mcp`` SDK 2.x
this project builds on dropped its unsupported WebSocket client (python-sdk #2785). No maintained MCP WebSocket
client for Python exists to take its place, so a ``ws://`` address would otherwise be taken for a command line and
fail as an unknown program. Value layer: :class:`~knime_mcp.config.spec.ServerSpec` checks every address here, so a
node's setting, a pasted configuration, a table's server and the command line all say the same.

    refuse_websocket("wss://example.com/mcp")   # ConfigError: MCP over WebSocket is not supported …
"""

from __future__ import annotations

from knime_mcp.errors import ConfigError

__all__ = ["WEBSOCKET_SCHEMES", "WEBSOCKET_TYPES", "refuse_websocket"]

WEBSOCKET_SCHEMES = ("ws://", "wss://")
WEBSOCKET_TYPES = frozenset({"ws", "websocket"})
"""The ``type`` (or ``transport``) values that name WebSocket in the pasted configurations' formats."""


def refuse_websocket(target: str, transport: str | None = None) -> None:
    """A ConfigError saying why and what to do for a WebSocket server: a ``ws://`` or ``wss://`` ``target``, or a
    ``transport`` of :data:`WEBSOCKET_TYPES`; nothing for any other."""
    address = target.strip().lower()
    if not (address.startswith(WEBSOCKET_SCHEMES) or transport in WEBSOCKET_TYPES):
        return
    secure = not address.startswith("ws://")
    raise ConfigError(
        "MCP over WebSocket (ws:// and wss:// addresses) is not supported: the MCP specification's transports are "
        "stdio and Streamable HTTP, and the MCP Python SDK that knime-mcp uses dropped its WebSocket client in 2.0.",
        hint=f"Use the server's Streamable HTTP endpoint instead: an {'https' if secure else 'http'}:// URL, often "
        "ending in /mcp.",
    )
