"""Test server: a tool whose result breaks its own output schema, over stdio.

`count_words` declares ``{"count": integer}`` as its output schema but sends the count as text (``"3"``), a bug
seen in real servers. The server's own check is lenient (pydantic takes ``"3"`` as an int); JSON Schema is not, so
a client sees a result that does not match.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel


class Counted(BaseModel):
    count: int


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-schema-breaking-test", log_level="WARNING")

    @server.tool()
    def count_words(text: str) -> Annotated[CallToolResult, Counted]:
        """Count the words of a text; the structured count is sent as text, breaking the output schema."""
        count = str(len(text.split()))
        return CallToolResult(content=[TextContent(text=f"{count} words")], structured_content={"count": count})

    return server


if __name__ == "__main__":
    build_server().run("stdio")
