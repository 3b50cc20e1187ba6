"""Test server: tools with MCP Apps (`_meta.ui.resourceUri`) and `ui://` resources whose `_meta.ui` a host must vet.

- `show_chart` names `ui://charts/chart.html` (a small HTML app with an honest CSP and permissions); `refresh_chart`
  is app-only (`visibility: ["app"]`): its app may call it, a model is never offered it; `legacy_view` names its app
  with the older flat key `ui/resourceUri`; `web_view` names an `https://` page, which is no app; `oversized_view`
  names the oversized app below; `plain` has none, nor has `chart_reads`, which says how often the chart's app was
  read.
- `ui://charts/hostile.html` declares hostile CSP entries (quotes, keywords, `*`, `data:`, `;` injection, a URL with
  a path) beside two honest ones, and permissions beyond the four an app may ask for.
- `ui://charts/huge.html` is more than 5,000,000 bytes of HTML; `ui://charts/notes.txt` is plain text, not HTML.
- `ui://charts/listed.html` is read without `_meta`: its `ui` settings are only in its `resources/list` entry, as
  some servers send them.

Runs over stdio.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp.server.mcpserver import MCPServer

CHART_HTML = "<!doctype html><html><head><title>Chart</title></head><body><div id='chart'>chart</div></body></html>"
HUGE_BYTES = 5_000_001

_HONEST_UI = {
    "csp": {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
        "resourceDomains": ["https://*.cdn.example.com", "http://localhost:5173"],
    },
    "permissions": {"clipboardWrite": {}, "geolocation": {}},
    "prefersBorder": True,
}

_HOSTILE_UI = {
    "csp": {
        "connectDomains": [
            "https://api.example.com",
            "*",
            "'unsafe-eval'",
            "https://evil.example; script-src *",
            "data:",
            "https://a.example, https://b.example",
            'https://q"uote.example',
        ],
        "resourceDomains": ["'unsafe-inline'", "blob:", "https://*", "http://evil.example", "https://ok.example/path"],
        "frameDomains": ["https://frames.example.com", "javascript:alert(1)"],
        "baseUriDomains": ["'self'", "https://x.example com"],
        "scriptDomains": ["https://not-a-key.example"],
    },
    "permissions": {"camera": {}, "usb": {}, "microphone": "yes", "clipboardRead": {}},
    "prefersBorder": "sure",
}


LISTED_ONLY = "ui://charts/listed.html"


class _AppServer(MCPServer):
    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        """The SDK's read, but the item of `LISTED_ONLY` without `_meta`."""
        contents = await super().read_resource(uri, context)
        if str(uri) != LISTED_ONLY or not isinstance(contents, list):
            return contents
        return [dataclasses.replace(item, meta=None) for item in contents]


def main() -> None:
    server = _AppServer("knime-mcp-app-test")
    reads = {"chart": 0}

    @server.tool(meta={"ui": {"resourceUri": "ui://charts/chart.html"}, "ui/resourceUri": "ui://charts/chart.html"})
    def show_chart(series: str) -> str:
        """Show a chart of a series in the app."""
        return f"chart of {series}"

    @server.tool(meta={"ui": {"resourceUri": "ui://charts/chart.html", "visibility": ["app"]}})
    def refresh_chart(series: str) -> str:
        """Refresh the chart's data; called by the chart app only."""
        return f"fresh data for {series}"

    @server.tool(meta={"ui/resourceUri": "ui://charts/chart.html"})
    def legacy_view() -> str:
        """A tool naming its app with the older flat key."""
        return "legacy"

    @server.tool(meta={"ui": {"resourceUri": "https://charts.example.com/chart.html"}})
    def web_view() -> str:
        """A tool naming a web page, which is no app."""
        return "web"

    @server.tool(meta={"ui": {"resourceUri": "ui://charts/huge.html"}})
    def oversized_view() -> str:
        """A tool whose app is too large to show."""
        return "oversized"

    @server.tool()
    def plain(text: str) -> str:
        """A tool without an app."""
        return text

    @server.tool()
    def chart_reads() -> int:
        """How many times the chart's app was read."""
        return reads["chart"]

    @server.resource("ui://charts/chart.html", mime_type="text/html;profile=mcp-app", meta={"ui": _HONEST_UI})
    def chart() -> str:
        reads["chart"] += 1
        return CHART_HTML

    @server.resource("ui://charts/hostile.html", mime_type="text/html;profile=mcp-app", meta={"ui": _HOSTILE_UI})
    def hostile() -> str:
        return "<html><body>hostile</body></html>"

    @server.resource("ui://charts/huge.html", mime_type="text/html;profile=mcp-app")
    def huge() -> str:
        return "<p>" + "x" * (HUGE_BYTES - 3)

    @server.resource(LISTED_ONLY, mime_type="text/html;profile=mcp-app", meta={"ui": {"prefersBorder": False}})
    def listed() -> str:
        return CHART_HTML

    @server.resource("ui://charts/notes.txt", mime_type="text/plain")
    def notes() -> str:
        return "not an app"

    server.run("stdio")


if __name__ == "__main__":
    main()
