"""Test server: tools with a visible side effect, one per kind of annotation, and a ledger of the calls received.

`delete_entry` is annotated destructive, `stamp` is annotated but not destructive, `write_note` has no annotations
at all (as most FastMCP servers leave their tools). Each call of them is written to the ledger under its `key`;
`ledger(key)` (read-only) answers the calls received for a key as lines `tool text`, which is how a test sees, from
the server's side, that a call was made exactly once or never. Runs over Streamable HTTP on 127.0.0.1 and prints
`ledger test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from knime_mcp.demo_server import HOST, serve_http

_READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, destructiveHint=False, openWorldHint=False)
_CREATES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
_DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)

Key = Annotated[str, Field(min_length=1, description="Calls are recorded per key; use a fresh key per test.")]


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-ledger-test", log_level="WARNING")
    received: defaultdict[str, list[str]] = defaultdict(list)

    @server.tool(annotations=_DESTRUCTIVE, structured_output=False)
    def delete_entry(key: Key, entry: str = "") -> str:
        """Annotated destructive."""
        received[key].append(f"delete_entry {entry}")
        return f"deleted {entry!r}"

    @server.tool(annotations=_CREATES, structured_output=False)
    def stamp(key: Key, text: str = "") -> str:
        """Annotated, not destructive."""
        received[key].append(f"stamp {text}")
        return f"stamped {text!r}"

    @server.tool(structured_output=False)
    def write_note(key: Key, text: str) -> str:
        """No annotations at all."""
        received[key].append(f"write_note {text}")
        return f"noted {text!r}"

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def ledger(key: Key) -> str:
        """The calls received for `key`, one per line."""
        return "\n".join(received[key])

    return server


def main() -> None:
    serve_http(build_server().streamable_http_app(host=HOST), "/mcp", name="ledger test server")


if __name__ == "__main__":
    main()
