"""Test server: tools whose first call for a key hangs, and a counter of the calls each key received.

`lookup` is annotated read-only and idempotent (safe to retry); `charge` is neither. The first call of either with a
given `key` sleeps an hour, so the client's call timeout fires; later calls answer `attempt N` at once. `calls(key)`
tells how many calls the server received for a key, which is how a test sees retries from the server's side. Runs
over Streamable HTTP on 127.0.0.1 and prints `flaky test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from knime_mcp.demo_server import HOST, serve_http

_HANG_SECONDS = 3600
_SAFE = ToolAnnotations(readOnlyHint=True, idempotentHint=True, destructiveHint=False, openWorldHint=False)
_UNSAFE = ToolAnnotations(readOnlyHint=False, idempotentHint=False, destructiveHint=True, openWorldHint=False)

Key = Annotated[str, Field(description="Calls are counted per key; use a fresh key per test.")]


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-flaky-test", log_level="WARNING")
    received: Counter[str] = Counter()

    async def answer(key: str) -> str:
        received[key] += 1
        if received[key] == 1:
            await anyio.sleep(_HANG_SECONDS)
        return f"attempt {received[key]}"

    @server.tool(annotations=_SAFE, structured_output=False)
    async def lookup(key: Key) -> str:
        """Read-only and idempotent: the first call per key hangs, later ones answer."""
        return await answer(key)

    @server.tool(annotations=_UNSAFE, structured_output=False)
    async def charge(key: Key) -> str:
        """Neither read-only nor idempotent: the first call per key hangs, later ones answer."""
        return await answer(key)

    @server.tool(annotations=_SAFE)
    def calls(key: Key) -> int:
        """How many calls of `lookup` or `charge` the server received for `key`."""
        return received[key]

    return server


def main() -> None:
    serve_http(build_server().streamable_http_app(host=HOST), "/mcp", name="flaky test server")


if __name__ == "__main__":
    main()
