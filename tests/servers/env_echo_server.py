"""Test server: tells, over stdio, what its environment variable ``API_TOKEN`` holds, as a SHA-256 digest (so that a
test sees the value arrived, and masking of secrets a server quotes does not hide it): the tool ``token_digest`` and
the resource ``env://API_TOKEN/digest``; "unset" without the variable."""

from __future__ import annotations

import hashlib
import os

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations


def token_digest() -> str:
    value = os.environ.get("API_TOKEN")
    return "unset" if value is None else hashlib.sha256(value.encode()).hexdigest()


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-env-echo-test", log_level="WARNING")
    server.tool(annotations=ToolAnnotations(readOnlyHint=True), description="The digest of API_TOKEN.")(token_digest)
    server.resource("env://API_TOKEN/digest", description="The digest of API_TOKEN.")(token_digest)
    return server


if __name__ == "__main__":
    build_server().run("stdio")
