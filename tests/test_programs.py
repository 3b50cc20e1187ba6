"""A stdio server whose program is not installed fails before it is started, naming the program and what installs
it; one found on the PATH the server gets starts as before."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from knime_mcp.config import ServerSpec, demo_server_spec
from knime_mcp.errors import ServerConnectError
from knime_mcp.mcp.client import McpClient

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("command", "install"),
    [
        ("npx -y @modelcontextprotocol/server-memory", "Node.js"),
        ("uvx mcp-server-fetch", "https://docs.astral.sh/uv/"),
        ("docker run -i --rm mcp/time", "Docker"),
        ("knime-mcp-no-such-program --serve", "'knime-mcp-no-such-program'"),
    ],
)
async def test_a_program_not_on_path_is_named_with_what_installs_it(tmp_path: Path, command: str, install: str) -> None:
    spec = ServerSpec(target=command, name="pasted", env={"PATH": str(tmp_path)})
    with pytest.raises(ServerConnectError) as caught:
        async with McpClient(spec):
            pass
    program = command.split()[0]
    assert f"program {program!r} is not installed" in caught.value.message
    assert caught.value.server == "pasted"
    assert caught.value.hint is not None and install in caught.value.hint and "PATH" in caught.value.hint


async def test_a_program_on_the_servers_path_starts() -> None:
    demo = demo_server_spec()
    spec = ServerSpec(
        target=f"{Path(sys.executable).name} -m knime_mcp.demo_server",
        cwd=demo.cwd,
        env={"PATH": os.path.dirname(sys.executable)},
    )
    async with McpClient(spec) as client:
        assert "echo" in {tool.name for tool in await client.list_tools()}
