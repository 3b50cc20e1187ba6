"""Test server: counts the `tools/list` requests it answers, on the SDK's `MCPServer` (which declares
`tools.listChanged`), so a test can show how often a client lists its tools.

- `echo` returns its text and changes nothing;
- `sprout` adds a new tool (`sprout_1`, `sprout_2`, ...) at every call and tells nobody: no notification at all,
  on any protocol, so a client sees the new tool only if it lists the tools again after the call;
- `listings` returns how many `tools/list` requests this process has answered so far.

Runs over stdio (one process per session, so the count is that session's).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import Tool, ToolAnnotations

_READS = ToolAnnotations(read_only_hint=True)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)


class CountingServer(MCPServer):
    """An `MCPServer` that counts the tool listings it answers."""

    listings = 0

    async def list_tools(self) -> list[Tool]:
        CountingServer.listings += 1
        return await super().list_tools()


def build_server() -> MCPServer:
    server = CountingServer("knime-mcp-listing-count-test")
    sprouted = 0

    @server.tool(annotations=_READS)
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool(annotations=_WRITES)
    def sprout() -> str:
        """Add one more tool, without telling the client."""
        nonlocal sprouted
        sprouted += 1
        name = f"sprout_{sprouted}"
        description = f"Added by call {sprouted} of sprout."
        server.add_tool(lambda: f"{name} ran", name=name, description=description, annotations=_READS)
        return f"added {name}"

    @server.tool(annotations=_READS)
    def listings() -> str:
        """How many times this server listed its tools."""
        return str(CountingServer.listings)

    return server


if __name__ == "__main__":
    build_server().run("stdio")
