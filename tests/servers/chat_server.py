"""Test server for the chat session: a tool that waits until it is cancelled and writes down what stopped it, a tool
that says which process answers it, and a tool that asks a person to open a web page (a URL-mode elicitation).

- `wait` appends `started <request id>` to the file given as the first argument, waits, and appends
  `interrupted <request id>` when its handler is cancelled; every `notifications/cancelled` the server receives is
  appended as `notifications/cancelled <request id>: <reason>` (a middleware sees it as it arrives). So a test reads
  on disk whether the client cancelled the call with the protocol's notification (stdio, SSE, and Streamable HTTP on
  the protocols before 2026-07-28) or by closing the call's response stream, which is the cancellation on Streamable
  HTTP at 2026-07-28 (the server MUST treat it so; no notification is sent there, and the SDK's server drops one);
  a transport that went away ends the handler with no notification either, and the next call then reaches a new
  session (over stdio, a new process);
- `whoami` answers `call N in process P`, and `in session S` after it over Streamable HTTP with a session (the
  protocols before 2026-07-28): over stdio every session is a process of its own, so two answers with the
  same process come from one session;
- `visit` asks the client to have a person open a page (URL mode) and says what came back.

    python chat_server.py MARKS [--transport stdio|streamable-http|sse]

Runs with the SDK's `MCPServer` (the 2026-07-28 protocol: the form is an input-required round); over HTTP it prints
`chat test server listening on <url>`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult

from knime_mcp.demo_server import HOST, serve_http

VISIT_URL = "https://example.org/consent?step=1"


def how_the_wait_ended(marks: Path) -> list[str]:
    """For a test: what the server wrote down of the last `wait` call after it started it, sorted (the notification
    and the interrupted handler come in either order), the call's request id left out; lines about other requests (a
    listing's session cancelling its `subscriptions/listen` as it closes) are not among them."""
    lines = marks.read_text(encoding="utf-8").splitlines() if marks.exists() else []
    starts = [index for index, line in enumerate(lines) if line.startswith("started ")]
    if not starts:
        return []
    request_id = lines[starts[-1]].removeprefix("started ")
    mine = [line for line in lines[starts[-1] + 1 :] if line.split(":", 1)[0].rpartition(" ")[2] == request_id]
    return sorted(line.replace(f" {request_id}", "", 1) for line in mine)


def build_server(marks: Path) -> MCPServer:
    calls = 0

    def mark(line: str) -> None:
        with marks.open("a", encoding="utf-8") as file:
            file.write(f"{line}\n")

    async def record_cancellations(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "notifications/cancelled":
            params = ctx.params or {}
            mark(f"notifications/cancelled {params.get('requestId')}: {params.get('reason')}")
        return await call_next(ctx)

    server = MCPServer("knime-mcp-chat-test", log_level="WARNING", middleware=[record_cancellations])

    @server.tool()
    async def wait(ctx: Context) -> str:
        """Wait for an hour, unless cancelled."""
        mark(f"started {ctx.request_id}")
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            mark(f"interrupted {ctx.request_id}")
            raise
        return "waited"

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Say which call of which process (and HTTP session, if any) this is."""
        nonlocal calls
        calls += 1
        session = (ctx.headers or {}).get("mcp-session-id")
        return f"call {calls} in process {os.getpid()}" + (f" in session {session}" if session else "")

    @server.tool()
    async def visit(ctx: Context) -> str | InputRequiredResult:
        """Ask a person to open the consent page."""
        answer = (ctx.input_responses or {}).get("answer")
        if not isinstance(answer, ElicitResult):
            params = ElicitRequestURLParams(message="Please give consent.", url=VISIT_URL, elicitation_id="e1")
            return InputRequiredResult(input_requests={"answer": ElicitRequest(params=params)})
        return f"Visit answered: {answer.action}."

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description="The chat session's test server.")
    parser.add_argument("marks", type=Path, help="the file the server writes what happened to its calls into")
    parser.add_argument("--transport", choices=("stdio", "streamable-http", "sse"), default="stdio")
    args = parser.parse_args()
    server = build_server(args.marks)
    if args.transport == "streamable-http":
        serve_http(server.streamable_http_app(host=HOST), "/mcp", name="chat test server")
    elif args.transport == "sse":
        serve_http(server.sse_app(host=HOST), "/sse", name="chat test server")
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
