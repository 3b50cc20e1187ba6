"""Test server: tools with an MCP App whose page speaks the protocol by hand, so a test sees what the host did.

`show_echo(text)` answers `echo: <text>` and names `ui://echo/app.html`; `lost_echo(text)` names
`ui://echo/lost.html`, which the server does not have. The app is one HTML document with an inline script (no
library): it sends `ui/initialize`, writes what the host says about itself (`#host`: name, theme, display mode,
whether it got KNIME's style variables; `#theme` the theme, again whenever the host says it changed) and then the
tool's input (`#input`, JSON) and result (`#result`, the text) into the page, and asks for a height of 300 px.
`window.ask(method, params)` sends a request the way an app does and writes the answer (or error) into `#answer`, so
a test drives the app from inside its frame.

Runs over stdio.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

APP_URI = "ui://echo/app.html"
LOST_URI = "ui://echo/lost.html"
APP_HEIGHT = 300

APP_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>Echo app</title></head>
<body>
<p id="host"></p><p id="theme"></p><p id="input"></p><p id="result"></p><p id="answer"></p>
<script>
let next = 1;
const waiting = new Map();
const show = (id, text) => { document.getElementById(id).textContent = text; };
function request(method, params) {
  const id = next++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve) => waiting.set(id, resolve));
}
window.ask = (method, params) => request(method, params).then((reply) => show("answer", JSON.stringify(reply)));
window.addEventListener("message", (event) => {
  const message = event.data;
  if (message.id !== undefined && waiting.has(message.id)) {
    waiting.get(message.id)(message.error ? { error: message.error.message } : { result: message.result });
    waiting.delete(message.id);
  } else if (message.method === "ui/notifications/host-context-changed" && message.params.theme) {
    show("theme", message.params.theme);
  } else if (message.method === "ui/notifications/tool-input") {
    show("input", JSON.stringify(message.params.arguments));
  } else if (message.method === "ui/notifications/tool-result") {
    show("result", message.params.content[0].text);
  }
});
const hello = { appInfo: { name: "echo", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" };
request("ui/initialize", hello)
  .then(({ result }) => {
    const context = result.hostContext;
    const styled = Boolean(context.styles?.variables?.["--color-text-primary"]);
    show("theme", context.theme);
    show("host", [result.hostInfo.name, context.theme, context.displayMode, styled ? "styled" : "unstyled"].join("|"));
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
    const size = { height: HEIGHT };
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: size }, "*");
  });
</script>
</body></html>
""".replace("HEIGHT", str(APP_HEIGHT))


def main() -> None:
    server = MCPServer("knime-mcp-echo-app-test")

    @server.tool(meta={"ui": {"resourceUri": APP_URI}})
    def show_echo(text: str) -> str:
        """Echo a text and show it in the echo app."""
        return f"echo: {text}"

    @server.tool(meta={"ui": {"resourceUri": LOST_URI}})
    def lost_echo(text: str) -> str:
        """Echo a text; its app cannot be read."""
        return f"echo: {text}"

    @server.resource(APP_URI, mime_type="text/html;profile=mcp-app", meta={"ui": {"prefersBorder": True}})
    def app() -> str:
        return APP_HTML

    server.run("stdio")


if __name__ == "__main__":
    main()
