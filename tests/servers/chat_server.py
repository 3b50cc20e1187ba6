"""Test server for the chat session: a tool that waits until it is cancelled and writes down that it was, a tool that
says which session answers it, and a tool that asks a person to open a web page (a URL-mode elicitation).

- `wait` appends `started` to the file given as the first argument, waits, and appends `cancelled` when the client's
  `notifications/cancelled` interrupts it (the SDK's server cancels the handler's task), so a test reads on disk
  that the cancellation reached the server;
- `whoami` answers `call N in process P`: over stdio every session is a process of its own, so two answers with the
  same process come from one session;
- `visit` asks the client to have a person open a page (URL mode) and says what came back.

Runs over stdio with the SDK's `MCPServer` (the 2026-07-28 protocol: the form is an input-required round).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult

VISIT_URL = "https://example.org/consent?step=1"


def main() -> None:
    marks = Path(sys.argv[1])
    server = MCPServer("knime-mcp-chat-test")
    calls = 0

    def mark(word: str) -> None:
        with marks.open("a", encoding="utf-8") as file:
            file.write(f"{word}\n")

    @server.tool()
    async def wait() -> str:
        """Wait for an hour, unless cancelled."""
        mark("started")
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            mark("cancelled")
            raise
        return "waited"

    @server.tool()
    def whoami() -> str:
        """Say which call of which process this is."""
        nonlocal calls
        calls += 1
        return f"call {calls} in process {os.getpid()}"

    @server.tool()
    async def visit(ctx: Context) -> str | InputRequiredResult:
        """Ask a person to open the consent page."""
        answer = (ctx.input_responses or {}).get("answer")
        if not isinstance(answer, ElicitResult):
            params = ElicitRequestURLParams(message="Please give consent.", url=VISIT_URL, elicitation_id="e1")
            return InputRequiredResult(input_requests={"answer": ElicitRequest(params=params)})
        return f"Visit answered: {answer.action}."

    server.run("stdio")


if __name__ == "__main__":
    main()
