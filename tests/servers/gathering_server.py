"""Test server: a `gather` tool whose calls answer only once ``count`` of them are in flight together, so a test sees
how many calls a client lets overlap without timing anything (`gather_reading`: the same, annotated read-only;
`gather_across`: the same across servers).

Each call waits until ``count`` calls have arrived, or :data:`WAIT_SECONDS` have passed (generous, for a loaded
machine), and answers how many had arrived by then. With ``settle``, the calls wait only that long for the last
call once all the others have arrived: a test that expects a client to hold the last one back need not wait out
:data:`WAIT_SECONDS`, while a client that sent it with the others has it there at once. Runs over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from uuid import uuid4

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

WAIT_SECONDS = 30
"""Under the client's call timeout (60 s), so a client that holds calls back sees how many overlapped."""

server = MCPServer("gathering-test-server", log_level="WARNING")
_calls: dict[str, anyio.Event] = {}
"""One event per call that arrived, set when ``count`` have."""


@server.tool()
async def gather(
    count: Annotated[int, Field(ge=1, description="How many calls to wait for.")],
    settle: Annotated[
        float | None, Field(gt=0, description="Seconds to wait for the last call once all the others are in flight.")
    ] = None,
) -> str:
    """Answer once ``count`` calls are in flight together: 'together: N'."""
    here = _calls.setdefault(f"call {len(_calls)}", anyio.Event())
    if len(_calls) >= count:
        for event in _calls.values():
            event.set()
    with anyio.move_on_after(WAIT_SECONDS):
        while settle is not None and len(_calls) < count - 1:
            await anyio.sleep(0.01)
        with anyio.move_on_after(WAIT_SECONDS if settle is None else settle):
            await here.wait()
    return f"together: {len(_calls)}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def gather_reading(count: Annotated[int, Field(ge=1, description="How many calls to wait for.")]) -> str:
    """``gather``, annotated read-only: calls a client may overlap."""
    return await gather(count)


@server.tool()
async def gather_across(
    count: Annotated[int, Field(ge=1, description="How many calls to wait for.")],
    folder: Annotated[str, Field(description="A folder the servers gathering together share.")],
) -> str:
    """``gather`` across servers: each call leaves a file in ``folder`` and answers once ``count`` files are there."""
    Path(folder, uuid4().hex).touch()
    with anyio.move_on_after(WAIT_SECONDS):
        while len(list(Path(folder).iterdir())) < count:
            await anyio.sleep(0.01)
    return f"together: {len(list(Path(folder).iterdir()))}"


if __name__ == "__main__":
    anyio.run(server.run_stdio_async)
