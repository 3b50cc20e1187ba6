"""Test layer: the demo server and the Python test servers answer the raw `mcp` SDK as their fixtures promise.

These pin down `knime_mcp.demo_server` and `fixtures/python_servers.py`; the product's own client is tested against
the same servers elsewhere.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import struct
import subprocess
import sys
import sysconfig
import zlib
from collections.abc import Callable
from pathlib import Path

import httpx2
import jsonschema
import pytest
from mcp import Client
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ImageContent, TextContent

from fixtures.processes import listening_addresses
from fixtures.python_servers import BASIC_AUTH_USER, DEMO_COMMAND, RunningServer, running_server

DEMO_TOOLS = {
    "echo",
    "add",
    "create_order",
    "convert_temperature",
    "render_chart",
    "word_stats",
    "fail",
    "sleep",
    "delete_record",
}
_ORDER = {"customer": {"name": "Ada", "email": "ada@example.org"}, "items": [{"sku": "A-1", "quantity": 2}]}
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}


def _stdio(command: list[str]) -> Transport:
    return stdio_client(StdioServerParameters(command=command[0], args=command[1:]))


@pytest.fixture(params=["stdio", "sse", "streamable-http"])
def demo_transport(request: pytest.FixtureRequest) -> Transport:
    """A fresh SDK transport to the demo server, once per transport."""
    if request.param == "stdio":
        return _stdio(request.getfixturevalue("demo_stdio_command"))
    if request.param == "sse":
        return sse_client(request.getfixturevalue("demo_sse_url"))
    return streamable_http_client(request.getfixturevalue("demo_http_url"))


async def _call(transport: Transport, tool: str, arguments: dict[str, object]) -> CallToolResult:
    async with Client(transport) as client:
        return await client.call_tool(tool, arguments)


def _text(result: CallToolResult) -> str:
    part = result.content[0]
    assert isinstance(part, TextContent)
    return part.text


@pytest.mark.anyio
async def test_demo_server_lists_all_its_tools_with_titles_and_descriptions(demo_transport: Transport) -> None:
    async with Client(demo_transport) as client:
        tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == DEMO_TOOLS
    assert all(tool.title and tool.description for tool in tools)


@pytest.mark.anyio
async def test_echo_returns_the_text_it_was_given(demo_transport: Transport) -> None:
    result = await _call(demo_transport, "echo", {"text": "Grüße aus KNIME"})
    assert not result.is_error
    assert _text(result) == "Grüße aus KNIME"


@pytest.mark.anyio
async def test_fail_returns_an_error_result_carrying_the_message(demo_http_url: str) -> None:
    result = await _call(streamable_http_client(demo_http_url), "fail", {"message": "disk on fire"})
    assert result.is_error
    assert "disk on fire" in _text(result)


def _png_chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """The chunks after the signature, as (kind, data), each checked against its CRC."""
    chunks: list[tuple[bytes, bytes]] = []
    offset = 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset : offset + 8])
        data = png[offset + 8 : offset + 8 + length]
        assert struct.unpack(">I", png[offset + 8 + length : offset + 12 + length])[0] == zlib.crc32(kind + data)
        chunks.append((kind, data))
        offset += 12 + length
    return chunks


@pytest.mark.anyio
async def test_render_chart_returns_a_valid_png_one_bar_wide_per_value(demo_http_url: str) -> None:
    result = await _call(streamable_http_client(demo_http_url), "render_chart", {"values": [3, 1, 4, 1, 5]})
    [image] = result.content
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    (ihdr, header), (idat, pixels), (iend, _) = _png_chunks(png)
    assert (ihdr, idat, iend) == (b"IHDR", b"IDAT", b"IEND")
    width, height, bit_depth, color_type = struct.unpack(">IIBB", header[:10])
    assert (width, height, bit_depth, color_type) == (2 + 5 * 8, 48, 8, 2)
    assert len(zlib.decompress(pixels)) == height * (1 + 3 * width)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("word_stats", {"text": "the quick brown fox jumps over the lazy dog"}),
        ("create_order", _ORDER),
        ("add", {"a": 2, "b": 40}),
    ],
)
async def test_structured_output_matches_the_tools_output_schema(
    demo_http_url: str, tool: str, arguments: dict[str, object]
) -> None:
    async with Client(streamable_http_client(demo_http_url)) as client:
        schema = next(t.output_schema for t in (await client.list_tools()).tools if t.name == tool)
        result = await client.call_tool(tool, arguments)
    assert schema is not None and result.structured_content is not None
    jsonschema.validate(result.structured_content, schema)


@pytest.mark.anyio
async def test_word_stats_counts_words_and_finds_the_longest(demo_http_url: str) -> None:
    result = await _call(streamable_http_client(demo_http_url), "word_stats", {"text": "The cat saw the elephant"})
    assert result.structured_content == {"words": 5, "unique_words": 4, "characters": 24, "longest_word": "elephant"}


@pytest.mark.anyio
async def test_convert_temperature_rejects_a_unit_outside_its_enum(demo_http_url: str) -> None:
    async with Client(streamable_http_client(demo_http_url)) as client:
        [tool] = [t for t in (await client.list_tools()).tools if t.name == "convert_temperature"]
        arguments = {"value": 1, "from_unit": "rankine", "to_unit": "kelvin"}
        result = await client.call_tool("convert_temperature", arguments)
    assert tool.input_schema["properties"]["from_unit"]["enum"] == ["celsius", "fahrenheit", "kelvin"]
    assert result.is_error


@pytest.mark.anyio
async def test_delete_record_is_annotated_destructive_and_add_read_only(demo_http_url: str) -> None:
    async with Client(streamable_http_client(demo_http_url)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    delete, add = tools["delete_record"].annotations, tools["add"].annotations
    assert delete is not None and (delete.destructive_hint, delete.read_only_hint) == (True, False)
    assert add is not None and (add.read_only_hint, add.idempotent_hint) == (True, True)


@pytest.mark.anyio
async def test_paged_server_yields_all_tools_over_several_cursor_pages(paged_server_url: str) -> None:
    names: list[str] = []
    pages = 0
    cursor: str | None = None
    async with Client(streamable_http_client(paged_server_url)) as client:
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [tool.name for tool in page.tools]
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
    assert pages == 3
    assert names == [f"tool_{number:02d}" for number in range(25)]


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


_AUTH_SERVERS: dict[str, Callable[[str], dict[str, str]]] = {
    "auth_server_url": lambda token: {"Authorization": f"Bearer {token}"},
    "basic_auth_server_url": lambda token: {"Authorization": _basic(BASIC_AUTH_USER, token)},
    "api_key_server_url": lambda token: {"X-API-Key": token},
}


@pytest.mark.anyio
@pytest.mark.parametrize("server", list(_AUTH_SERVERS))
async def test_auth_server_answers_401_without_the_credential(server: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue(server)
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, json=_INITIALIZE, headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert "WWW-Authenticate" in response.headers


@pytest.mark.anyio
@pytest.mark.parametrize("server", list(_AUTH_SERVERS))
async def test_auth_server_serves_the_demo_tools_with_the_credential(
    server: str, auth_token: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(server)
    async with httpx2.AsyncClient(headers=_AUTH_SERVERS[server](auth_token)) as http:
        result = await _call(streamable_http_client(url, http_client=http), "add", {"a": 1, "b": 2})
    assert _text(result) == "3"


@pytest.mark.anyio
async def test_sse_only_server_serves_the_demo_tools_over_sse_at_its_events_url(sse_only_server_url: str) -> None:
    assert sse_only_server_url.endswith("/events")
    result = await _call(sse_client(sse_only_server_url), "echo", {"text": "over SSE"})
    assert _text(result) == "over SSE"


@pytest.mark.anyio
async def test_sse_only_server_answers_a_streamable_http_post_with_405(sse_only_server_url: str) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(sse_only_server_url, json=_INITIALIZE)
    assert response.status_code == 405


@pytest.mark.anyio
async def test_not_mcp_server_answers_html_404_for_its_mcp_url_and_200_for_its_page(
    not_mcp_server_url: str, not_mcp_page_url: str
) -> None:
    async with httpx2.AsyncClient() as http:
        missing = await http.post(not_mcp_server_url, json=_INITIALIZE)
        page = await http.post(not_mcp_page_url, json=_INITIALIZE)
    assert (missing.status_code, page.status_code) == (404, 200)
    assert page.headers["content-type"].startswith("text/html")


def test_fake_exit_at_start_exits_with_code_3_and_says_why_on_stderr(fake_exit_stdio_command: list[str]) -> None:
    completed = subprocess.run(fake_exit_stdio_command, capture_output=True, text=True, timeout=30, check=False)
    assert completed.returncode == 3
    assert "cannot start" in completed.stderr


@pytest.mark.parametrize("server", ["demo_http_server", "demo_sse_server"])
def test_demo_http_server_listens_on_loopback_only(server: str, request: pytest.FixtureRequest) -> None:
    running: RunningServer = request.getfixturevalue(server)
    assert listening_addresses(running.process.pid) == {"127.0.0.1"}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize(("transport", "path"), [("streamable-http", "/mcp"), ("sse", "/sse")])
def test_demo_http_server_exits_with_code_0_and_no_traceback_on_a_stop_signal(
    transport: str, path: str, stop_signal: signal.Signals, tmp_path: Path
) -> None:
    command = [*DEMO_COMMAND, "--transport", transport]
    with running_server(command, tmp_path / "server.log") as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith(path)
        server.process.send_signal(stop_signal)
        assert server.process.wait(timeout=30) == 0
    assert "Traceback" not in server.log_path.read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_demo_stdio_server_exits_with_code_0_on_sigterm_while_its_stdin_is_open(
    demo_stdio_command: list[str],
) -> None:
    process = subprocess.Popen(demo_stdio_command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()


def test_the_demo_server_runs_as_a_file_too_although_its_folder_holds_a_package_named_mcp(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parent.parent / "src" / "knime_mcp" / "demo_server.py"
    command = [sys.executable, str(script), "--transport", "streamable-http", "--port", "0"]
    with running_server(command, tmp_path / "demo.log") as server:
        assert server.url.startswith("http://127.0.0.1:")  # printed once it listens: the SDK was imported


@pytest.mark.anyio
@pytest.mark.parametrize("uri", ["demo://chart/3,1,2", "demo://chart/3%2C1%2C2"])
async def test_the_chart_resource_takes_its_comma_separated_values_literally_or_encoded(
    demo_http_url: str, uri: str
) -> None:
    async with Client(streamable_http_client(demo_http_url)) as client:
        contents = (await client.read_resource(uri)).contents
    png = base64.b64decode(contents[0].blob)  # type: ignore[union-attr]
    assert png.startswith(b"\x89PNG") and struct.unpack(">I", png[16:20])[0] == 2 + 3 * 8  # three bars


def test_the_demo_server_starts_as_knime_starts_it_with_only_the_extensions_src_folder_on_the_path(
    tmp_path: Path,
) -> None:
    # Given KNIME's Python: the dependencies are installed, knime-mcp is not, and only src/ is on the path (KNIME puts
    # the extension module's folder there). A venv whose .pth file adds this environment's packages, without running
    # their .pth files (one of which is the editable install of knime_mcp).
    knime_env = tmp_path / "knime-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(knime_env)], check=True, timeout=60)
    candidates = (knime_env / "bin" / "python", knime_env / "Scripts" / "python.exe")
    python = next(path for path in candidates if path.is_file())
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([python, "-c", purelib], capture_output=True, text=True, check=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "workflow"
    elsewhere.mkdir()
    bare = subprocess.run([python, "-c", "import knime_mcp"], capture_output=True, text=True, cwd=elsewhere)
    assert "No module named 'knime_mcp'" in bare.stderr
    # When the MCP Tool Provider's server "demo" is listed there, from another folder
    provider = (
        "from knime_mcp.config import demo_server_spec\n"
        "from knime_mcp.mcp.sync import SyncMcpClient\n"
        "with SyncMcpClient(demo_server_spec()) as client:\n"
        "    print(sorted(tool.name for tool in client.list_tools()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    done = subprocess.run([python, "-c", provider], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    # Then the demo server starts with that Python and lists its tools over stdio
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(sorted(DEMO_TOOLS))
