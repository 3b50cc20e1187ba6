"""What every tool call passes through on its way to the SDK, kept lean (benchmark figures 1 and 8): the concurrency
limit, the call key that matches what the transport saw to the call, and the OAuth client left unloaded where no
server signs in."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from knime_mcp import McpClient, ServerSpec
from knime_mcp.mcp.request_sender import _call_key

pytestmark = pytest.mark.anyio

GATHERING_SERVER = Path(__file__).parent / "servers" / "gathering_server.py"
SETTLE = 2.0
"""Seconds the gathered calls wait for one more once all but the last are there: a call sent with the others arrives
within milliseconds of them, however loaded the machine."""


async def test_a_client_lets_no_more_calls_overlap_than_its_concurrency_limit() -> None:
    """Four calls on a client limited to three: three gather together (and give up waiting for a fourth after
    SETTLE seconds: a client without the limit would have sent it with them), and the fourth goes out only once a slot
    is free."""
    answers: list[str] = []
    spec = ServerSpec(target=shlex.join([sys.executable, str(GATHERING_SERVER)]))
    async with McpClient(spec, max_concurrency=3) as client:

        async def call() -> None:
            answers.append((await client.call_tool("gather", {"count": 4, "settle": SETTLE})).text)

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(call)
    assert sorted(answers) == ["together: 3"] * 3 + ["together: 4"]


def test_a_concurrency_limit_below_one_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        McpClient(ServerSpec(target="http://127.0.0.1:1/mcp"), max_concurrency=0)


def test_every_request_of_a_process_gets_a_call_key_of_its_own() -> None:
    keys = [_call_key() for _ in range(10_000)]
    assert len(set(keys)) == len(keys)


def test_a_client_of_a_server_that_does_not_sign_in_never_loads_the_oauth_client(demo_http_url: str) -> None:
    """The OAuth client (and the JWT and key libraries under it) is loaded for a server that signs in, not for
    every client: a cold start pays for its imports."""
    code = (
        "import sys, anyio\n"
        "from knime_mcp import McpClient, ServerSpec\n"
        "async def main():\n"
        f"    async with McpClient(ServerSpec(target={demo_http_url!r})) as client:\n"
        "        print(len(await client.list_tools()))\n"
        "anyio.run(main)\n"
        "print(sorted(name for name in sys.modules if name == 'knime_mcp.auth' or name.startswith('jwt')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    lines = done.stdout.split("\n")
    assert int(lines[0]) > 0 and lines[1] == "[]", done.stdout + done.stderr
