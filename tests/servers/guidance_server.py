"""Test server: a server that says things about itself, on the SDK's `MCPServer`.

- its `instructions` say how to use it (`--instructions TEXT` says something else; `--instructions-bytes N` makes them
  N bytes long, as a hostile server's may be);
- `weather` answers with one text part for the person only (`audience: ["user"]`), one for the model only
  (`["assistant"]`) and one for both (no audience);
- `--ttl-ms N` gives its tool listings that lifetime (`ttlMs`, protocol 2026-07-28; the SDK's `CacheHint`);
- `add_forecast` adds the tool `forecast` without telling any client (no `list_changed`): a client sees it only when it
  lists the tools again, as it should once the lifetime of its last listing has passed. A test calls it over a
  connection of its own, so the chat under test never called the server.

Runs over stdio, or over Streamable HTTP on 127.0.0.1 with `--port 0` (it prints `guidance test server listening on
http://127.0.0.1:PORT/mcp`).
"""

from __future__ import annotations

import argparse

from mcp.server import CacheHint
from mcp.server.mcpserver import MCPServer
from mcp_types import Annotations, TextContent, ToolAnnotations

from knime_mcp.demo_server import HOST, serve_http

INSTRUCTIONS = "Ask weather for a city's weather; it answers in degrees Celsius."
_READS = ToolAnnotations(read_only_hint=True)


def build_server(*, instructions: str, instructions_bytes: int | None, ttl_ms: int | None) -> MCPServer:
    if instructions_bytes is not None:
        instructions = "é" * (instructions_bytes // 2)
    hints = {"tools/list": CacheHint(ttl_ms=ttl_ms)} if ttl_ms is not None else None
    server = MCPServer("knime-mcp-guidance-test", instructions=instructions, cache_hints=hints)

    @server.tool(annotations=_READS)
    def weather(city: str) -> list[TextContent]:
        """The weather in a city."""
        return [
            TextContent(
                type="text", text=f"Sunny in {city} (for the person)", annotations=Annotations(audience=["user"])
            ),
            TextContent(
                type="text", text="raw: 21.5C (for the model)", annotations=Annotations(audience=["assistant"])
            ),
            TextContent(type="text", text="21 degrees (for both)"),
        ]

    def forecast(city: str) -> str:
        """Tomorrow's weather in a city."""
        return f"Rain in {city}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    def add_forecast() -> str:
        """Add the tool `forecast`, telling no client."""
        server.add_tool(forecast, annotations=_READS)
        return "added"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=None, help="serve Streamable HTTP on this port (0: any)")
    parser.add_argument("--instructions", default=INSTRUCTIONS, help="what the server says about itself")
    parser.add_argument("--instructions-bytes", type=int, default=None, help="instructions of this many bytes")
    parser.add_argument("--ttl-ms", type=int, default=None, help="the lifetime of the tool listings")
    args = parser.parse_args()
    server = build_server(
        instructions=args.instructions, instructions_bytes=args.instructions_bytes, ttl_ms=args.ttl_ms
    )
    if args.port is None:
        server.run("stdio")
    else:
        serve_http(server.streamable_http_app(host=HOST), "/mcp", port=args.port, name="guidance test server")


if __name__ == "__main__":
    main()
