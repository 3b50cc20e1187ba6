"""Test server: a ledger with an MCP App, whose app calls the server's tools as a chat's app would.

- `show_ledger` (read-only) names the app `ui://ledger/app.html` and answers text and structured content;
  `ledger_totals` is app-only (`visibility: ["app"]`): the app may call it, a model is never offered it;
  `delete_entry` is annotated destructive (approval policies ask about it); `plain` has no app.
- Resources: the app (`text/html;profile=mcp-app`, with a CSP for one API) and `data://ledger/entries` (text).
- Every tool call is appended to the file given as the first argument (`tool arguments`), which is how a test sees,
  from the server's side, that a call was made exactly once or never.

Runs over stdio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

APP_URI = "ui://ledger/app.html"
APP_HTML = "<!doctype html><html><head><title>Ledger</title></head><body><p id='ledger'>ledger</p></body></html>"
ENTRIES = "rent 1200\nfood 300"

_READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
_DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)
_APP_UI = {"csp": {"connectDomains": ["https://api.ledger.example"]}, "prefersBorder": False}


def main() -> None:
    calls = Path(sys.argv[1])
    server = MCPServer("knime-mcp-app-ledger-test", log_level="WARNING")

    def received(tool: str, **arguments: object) -> None:
        with calls.open("a", encoding="utf-8") as file:
            file.write(f"{tool} {json.dumps(arguments, sort_keys=True)}\n")

    @server.tool(annotations=_READ_ONLY, title="Show Ledger", meta={"ui": {"resourceUri": APP_URI}})
    def show_ledger(month: str) -> dict[str, object]:
        """The ledger of a month, shown in its app."""
        received("show_ledger", month=month)
        return {"month": month, "total": 1500}

    @server.tool(
        annotations=_READ_ONLY, structured_output=False, meta={"ui": {"resourceUri": APP_URI, "visibility": ["app"]}}
    )
    def ledger_totals(month: str) -> str:
        """The month's totals; for the ledger's app only."""
        received("ledger_totals", month=month)
        return f"totals of {month}: 1500"

    @server.tool(annotations=_DESTRUCTIVE, structured_output=False)
    def delete_entry(entry: str) -> str:
        """Delete an entry of the ledger."""
        received("delete_entry", entry=entry)
        return f"deleted {entry}"

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def plain(text: str) -> str:
        """A tool without an app."""
        received("plain", text=text)
        return text

    @server.resource(APP_URI, mime_type="text/html;profile=mcp-app", meta={"ui": _APP_UI})
    def app() -> str:
        return APP_HTML

    @server.resource("data://ledger/entries", mime_type="text/plain")
    def entries() -> str:
        return ENTRIES

    server.run("stdio")


if __name__ == "__main__":
    main()
