"""A server that speaks only ``initialize`` (every ``mcp`` 1.x server) is probed with ``server/discover`` once.

The server here is a stand-in for a real 1.x server (tests/fakes/fake_mcp1_server.py): ``mcp`` 1.x cannot be
installed beside the ``mcp`` 2.x this project uses. It answers the probe as 1.x does and logs every method it gets.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from knime_mcp import ClientPool, McpClient, ServerSpec, call_table_sync
from knime_mcp.errors import OutcomeUnknownError
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.tool import MCPTool

pytestmark = pytest.mark.anyio

_STAND_IN = Path(__file__).parent / "fakes" / "fake_mcp1_server.py"


@pytest.fixture
def methods(tmp_path: Path) -> Path:
    return tmp_path / "methods.log"


@pytest.fixture
def mcp1_spec(methods: Path) -> ServerSpec:
    return ServerSpec(target=shlex.join([sys.executable, str(_STAND_IN), str(methods)]), transport="stdio")


def _received(methods: Path) -> list[str]:
    return methods.read_text().split()


async def test_the_first_connection_probes_once_and_the_tools_remember_initialize(
    mcp1_spec: ServerSpec, methods: Path
) -> None:
    async with McpClient(mcp1_spec) as client:
        tools = await client.list_tools()
    assert _received(methods)[:2] == ["server/discover", "initialize"]
    assert client.handshake == "initialize"
    assert [tool.server.handshake for tool in tools] == ["initialize"]
    assert '"handshake":"initialize"' in tools[0].to_json()
    assert is_sealed_here(tools[0].server)


async def test_a_reconnect_after_a_lost_session_sends_no_discover(mcp1_spec: ServerSpec, methods: Path) -> None:
    async with McpClient(mcp1_spec) as client:
        await client.list_tools()
        with pytest.raises(OutcomeUnknownError):
            await client.call_tool("exit")  # the stand-in does not know it and ends: the session is lost
        result = await client.call_tool("echo", {"text": "again"})
    assert result.text == "again"
    received = _received(methods)
    assert received.count("initialize") == 2
    assert received.count("server/discover") == 1


def test_a_caller_run_from_a_providers_table_sends_no_discover(mcp1_spec: ServerSpec, methods: Path) -> None:
    import pyarrow as pa

    async def list_tools() -> list[MCPTool]:
        async with McpClient(mcp1_spec) as client:
            return await client.list_tools()

    from knime_mcp.mcp.sync import run_sync

    (cell,) = [tool.to_json() for tool in run_sync(list_tools)]  # what the provider writes into the table
    methods.unlink()
    written: list[pa.RecordBatch] = []
    batch = pa.record_batch({"text": ["a", "b"]})
    call_table_sync(MCPTool.from_json(cell), [batch], written.append)
    assert pa.Table.from_batches(written).column("Result").to_pylist() == ["a", "b"]
    assert "server/discover" not in _received(methods)
    assert _received(methods)[0] == "initialize"


async def test_a_pool_keyed_by_a_spec_with_a_handshake_shares_the_session_of_one_without(
    mcp1_spec: ServerSpec, methods: Path
) -> None:
    from dataclasses import replace

    async with ClientPool() as pool:
        first = await pool.client(replace(mcp1_spec, handshake="initialize"))
        assert await pool.client(mcp1_spec) is first
    assert "server/discover" not in _received(methods)


def test_a_table_written_before_the_handshake_field_reads_as_unknown() -> None:
    spec = ServerSpec(target="http://127.0.0.1:8000/mcp")
    old = ServerSpec.from_json('{"target":"http://127.0.0.1:8000/mcp"}')
    assert old.handshake is None and "handshake" not in old.to_json()
    remembered = ServerSpec.from_dict({**spec.to_dict(), "handshake": "initialize"})
    assert remembered == spec and remembered.identity == spec.identity


async def test_a_server_that_answers_discover_is_remembered_as_discover(demo_http_url: str) -> None:
    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        tools = await client.list_tools()
    assert client.handshake == "discover" and tools[0].server.handshake == "discover"
