"""Test server: a sign-in tool whose arguments are secrets, over stdio, so that a test can show that the values of
secret-looking arguments never reach an error, a table column, a log or the terminal, even when they are invalid.
With `--transport streamable-http` it serves on 127.0.0.1 instead, printing `... listening on <url>`.
"""

from __future__ import annotations

import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from knime_mcp.demo_server import HOST, serve_http


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-sign-in-test", log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def sign_in(user: str, password: Annotated[str, Field(min_length=12)], auth_code: int = 0) -> str:
        """Sign in; the password must have at least 12 characters, the one-time code is a number."""
        return f"welcome, {user}"

    return server


if __name__ == "__main__":
    if sys.argv[1:] == ["--transport", "streamable-http"]:
        serve_http(build_server().streamable_http_app(host=HOST), "/mcp", name="sign-in test server")
    else:
        build_server().run("stdio")
