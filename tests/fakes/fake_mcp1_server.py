"""Fake: a stdio MCP server that speaks only the ``initialize`` handshake, as every ``mcp`` 1.x server does.

A stand-in for a real 1.x server, which cannot share an environment with the ``mcp`` 2.x this project uses. Like
1.x, it answers a method it does not know, ``server/discover`` included, with -32602 "Invalid request parameters"
(and a real one logs a long validation error each time). It appends each method it receives to the file named by
its first argument, so a test can tell whether a client probed it. A call of the tool ``exit`` ends it unanswered,
as a crash would.
"""

from __future__ import annotations

import json
import sys

_TOOL = {
    "name": "echo",
    "description": "Return the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def _answer(method: str, params: dict) -> dict:
    match method:
        case "initialize":
            return {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcp1-stand-in", "version": "1.26.0"},
            }
        case "tools/list":
            return {"tools": [_TOOL]}
        case "tools/call":
            if params.get("name") == "exit":
                sys.exit(0)
            text = str((params.get("arguments") or {}).get("text", ""))
            return {"content": [{"type": "text", "text": text}], "isError": False}
        case "ping":
            return {}
    raise LookupError(method)


def main() -> None:
    log_path = sys.argv[1]
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method is None:
            continue
        with open(log_path, "a") as log:
            log.write(f"{method}\n")
        if "id" not in message:
            continue
        try:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": _answer(method, message.get("params") or {})}
        except LookupError:
            error = {"code": -32602, "message": "Invalid request parameters", "data": ""}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
