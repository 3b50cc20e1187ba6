"""A minimal stdio MCP server without the SDK: one `echo` tool answered at once, so a benchmark measures the client.

Speaks just enough of the protocol (initialize, tools/list, tools/call, ping; notifications are ignored) for the
Tool Caller's memory benchmark, which makes 250,000 calls: the SDK's server costs about 1 ms of CPU per call, this
one about 20 µs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

_ECHO = {
    "name": "echo",
    "description": "Return the given text unchanged.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
}


def _result(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "knime-mcp-fast-bench", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [_ECHO]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": str(params.get("arguments", {}).get("text", ""))}]}
    return {}


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result = _result(message["method"], message.get("params") or {})
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
