"""Test server: tools whose schema or result is hostile to a client, over stdio.

- `shout` declares its `word` with the pattern ``^(a+)+$`` (issue 11: Python's ``re`` takes exponential time to
  reject ``"aaa…a!"``), `echo` with ``^(a|aa)+$``, which even the ``regex`` package cannot reject in bounded time.
  The server's own check (pydantic, Rust regex) is linear, so only the client can freeze on them.
- `bad_image` returns its caption and image content whose data is the given text, sent as it is (not base64).
- `count_keys` takes any JSON object, for cells of JSON text.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, TextContent
from pydantic import Field

NESTED_PATTERN = "^(a+)+$"
"""Catastrophic for Python's ``re``; the ``regex`` package rejects it at once."""

AMBIGUOUS_PATTERN = "^(a|aa)+$"
"""Catastrophic for both ``re`` and ``regex``."""


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-hostile-schema-test", log_level="WARNING")

    @server.tool()
    def shout(word: Annotated[str, Field(pattern=NESTED_PATTERN)]) -> str:
        """Return the word in capitals; it must be made of the letter a."""
        return word.upper()

    @server.tool()
    def echo(word: Annotated[str, Field(pattern=AMBIGUOUS_PATTERN)]) -> str:
        """Return the word; it must be made of the letter a."""
        return word

    @server.tool(structured_output=False)
    def bad_image(caption: str, data: str) -> list[TextContent | ImageContent]:
        """Return the caption, and image content whose data is `data` as it is."""
        return [TextContent(type="text", text=caption), ImageContent(type="image", data=data, mime_type="image/png")]

    @server.tool()
    def count_keys(data: dict[str, Any]) -> int:
        """Count the keys of a JSON object."""
        return len(data)

    return server


if __name__ == "__main__":
    build_server().run("stdio")
