"""The MCP client against real servers over real transports, and its answers to bad input."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.processes import child_pids
from knime_mcp import ClientPool, McpClient, ServerSpec, SyncMcpClient, Timeouts
from knime_mcp.config import AuthRef
from knime_mcp.errors import ConfigError, ServerAuthError, ServerConnectError, ToolTimeoutError
from knime_mcp.tools.results import ImagePart, ResourceLinkPart

pytestmark = pytest.mark.anyio

DEMO_TOOLS = {"echo", "add", "create_order", "convert_temperature", "render_chart", "word_stats", "fail", "sleep"}
EVERYTHING_TOOLS = {"echo", "get-sum", "get-tiny-image", "get-structured-content", "get-resource-links"}


def _stdio(command: list[str], **kwargs: object) -> ServerSpec:
    return ServerSpec(target=shlex.join(command), **kwargs)  # type: ignore[arg-type]


@pytest.fixture(params=["stdio", "sse", "streamable-http"])
def demo_spec(request: pytest.FixtureRequest) -> ServerSpec:
    if request.param == "stdio":
        return _stdio(request.getfixturevalue("demo_stdio_command"))
    url = request.getfixturevalue("demo_sse_url" if request.param == "sse" else "demo_http_url")
    return ServerSpec(target=url)


async def test_demo_server_lists_and_calls_tools_over_every_transport(demo_spec: ServerSpec) -> None:
    async with McpClient(demo_spec) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        echoed = await client.call_tool("echo", {"text": "grüezi"})
        summed = await client.call_tool("add", {"a": 2, "b": 40})
    assert DEMO_TOOLS <= tools.keys()
    assert tools["echo"].server == demo_spec
    assert echoed.text == "grüezi"
    assert summed.structured == {"result": 42}


async def test_auto_transport_resolves_to_the_transport_the_url_speaks(demo_http_url: str, demo_sse_url: str) -> None:
    async with McpClient(ServerSpec(target=demo_http_url)) as http, McpClient(ServerSpec(target=demo_sse_url)) as sse:
        assert (http.transport, sse.transport) == ("streamable-http", "sse")


async def test_auto_transport_falls_back_to_sse_when_streamable_http_is_refused(sse_only_server_url: str) -> None:
    assert not sse_only_server_url.rstrip("/").endswith("/sse")
    async with McpClient(ServerSpec(target=sse_only_server_url)) as client:
        tools = await client.list_tools()
    assert client.transport == "sse"
    assert tools


async def test_server_everything_answers_the_calls_a_knime_user_makes(everything_spec: ServerSpec) -> None:
    async with McpClient(everything_spec) as client:
        names = {tool.name for tool in await client.list_tools()}
        echo = await client.call_tool("echo", {"message": "hello"})
        total = await client.call_tool("get-sum", {"a": 2, "b": 3})
        image = await client.call_tool("get-tiny-image", {})
        structured = await client.call_tool("get-structured-content", {"location": "New York"})
        links = await client.call_tool("get-resource-links", {"count": 2})
    assert EVERYTHING_TOOLS <= names
    assert "hello" in echo.text
    assert "5" in total.text
    png = [part for part in image.content if isinstance(part, ImagePart)]
    assert png and png[0].bytes.startswith(b"\x89PNG") and png[0].mime_type == "image/png"
    assert structured.structured is not None and "temperature" in structured.structured
    assert sum(isinstance(part, ResourceLinkPart) for part in links.content) == 2


async def test_server_memory_schemas_with_arrays_of_nested_objects_arrive_intact(
    memory_stdio_command: list[str], memory_stdio_env: dict[str, str]
) -> None:
    async with McpClient(_stdio(memory_stdio_command, env=memory_stdio_env)) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        created = await client.call_tool(
            "create_entities",
            {"entities": [{"name": "knime-mcp-test", "entityType": "project", "observations": ["uses MCP"]}]},
        )
    entities = tools["create_entities"].input_schema["properties"]["entities"]
    assert entities["type"] == "array" and entities["items"]["type"] == "object"
    assert not created.is_error


async def test_list_tools_follows_pagination_cursors_to_the_end(paged_server_url: str) -> None:
    async with McpClient(ServerSpec(target=paged_server_url)) as client:
        tools = await client.list_tools()
    names = [tool.name for tool in tools]
    assert len(names) == len(set(names)) > 10


async def test_one_session_serves_concurrent_calls(demo_http_url: str) -> None:
    import anyio

    results: dict[int, str] = {}
    async with McpClient(ServerSpec(target=demo_http_url), max_concurrency=4) as client:

        async def call(number: int) -> None:
            results[number] = (await client.call_tool("echo", {"text": str(number)})).text

        async with anyio.create_task_group() as group:
            for number in range(40):
                group.start_soon(call, number)
    assert results == {number: str(number) for number in range(40)}


async def test_pool_opens_one_session_per_server_for_many_callers(demo_http_url: str, demo_sse_url: str) -> None:
    import anyio

    specs = [ServerSpec(target=demo_http_url), ServerSpec(target=demo_sse_url)]
    opened: list[McpClient] = []
    async with ClientPool() as pool:

        async def call(number: int) -> None:
            client = await pool.client(specs[number % 2])
            opened.append(client)
            await client.call_tool("echo", {"text": "x"})

        async with anyio.create_task_group() as group:
            for number in range(20):
                group.start_soon(call, number)
    assert len({id(client) for client in opened}) == 2


async def test_a_call_past_its_timeout_is_cancelled_and_names_the_timeout(demo_http_url: str) -> None:
    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        with pytest.raises(ToolTimeoutError, match="within 0.5 s") as caught:
            await client.call_tool("sleep", {"seconds": 30}, timeout=0.5)
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
    assert "Hint:" in str(caught.value)


async def test_tool_error_results_come_back_flagged_not_raised(demo_http_url: str) -> None:
    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        result = await client.call_tool("fail", {"message": "boom"})
    assert result.is_error and "boom" in result.text


async def test_image_results_keep_their_png_bytes(demo_http_url: str) -> None:
    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        result = await client.call_tool("render_chart", {"values": [1, 2, 3]})
    assert result.images and result.images[0].bytes.startswith(b"\x89PNG")


def test_sync_client_reuses_one_session_from_plain_code(demo_http_url: str) -> None:
    with SyncMcpClient(ServerSpec(target=demo_http_url)) as client:
        texts = [client.call_tool("echo", {"text": str(n)}).text for n in range(5)]
        tools = client.list_tools()
    assert texts == ["0", "1", "2", "3", "4"] and tools


async def test_a_client_cannot_be_opened_twice(demo_http_url: str) -> None:
    client = McpClient(ServerSpec(target=demo_http_url))
    async with client:
        pass
    with pytest.raises(RuntimeError, match="only once"):
        async with client:
            pass


# -- bad input: every failure names the server and says what to do ---------------------------------------------------


def _assert_clear(error: BaseException, server_part: str) -> None:
    text = str(error)
    assert f"[server: {server_part}" in text and "Hint:" in text


async def test_connection_refused_is_a_clear_connect_error() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ServerConnectError, match="Could not connect") as caught:
        async with McpClient(ServerSpec(target=f"http://127.0.0.1:{port}/mcp")):
            pass
    _assert_clear(caught.value, "http://127.0.0.1")


async def test_unresolvable_host_says_the_name_could_not_be_resolved() -> None:
    with pytest.raises(ServerConnectError, match="could not be resolved") as caught:
        async with McpClient(ServerSpec(target="http://nonexistent.invalid/mcp")):
            pass
    _assert_clear(caught.value, "http://nonexistent.invalid/mcp")


async def test_http_server_that_is_not_mcp_answers_404_with_a_path_hint(not_mcp_server_url: str) -> None:
    with pytest.raises(ServerConnectError, match="HTTP 404") as caught:
        async with McpClient(ServerSpec(target=not_mcp_server_url)):
            pass
    assert "/mcp" in str(caught.value)


async def test_html_page_instead_of_mcp_is_a_handshake_error(not_mcp_page_url: str) -> None:
    with pytest.raises(ServerConnectError) as caught:
        async with McpClient(ServerSpec(target=not_mcp_page_url, transport="streamable-http")):
            pass
    _assert_clear(caught.value, "http://127.0.0.1")


async def test_missing_credentials_get_401_as_an_auth_error(auth_server_url: str) -> None:
    with pytest.raises(ServerAuthError, match="HTTP 401") as caught:
        async with McpClient(ServerSpec(target=auth_server_url)):
            pass
    assert "credential" in str(caught.value)


async def test_auto_transport_reports_an_oauth_server_as_asking_for_sign_in(oauth_server_url: str) -> None:
    with pytest.raises(ServerAuthError, match="sign-in with OAuth") as caught:
        async with McpClient(ServerSpec(target=oauth_server_url)):
            pass
    assert "Set the authentication to OAuth sign-in" in str(caught.value) and "--auth oauth" in str(caught.value)


async def test_an_oauth_server_accepts_its_access_token_as_a_bearer_credential(
    oauth_server_url: str, auth_token: str
) -> None:
    spec = ServerSpec(target=oauth_server_url, auth=AuthRef(kind="bearer", credential="api"))
    async with McpClient(spec, credentials=lambda name: ("", auth_token)) as client:
        assert [tool.name for tool in await client.list_tools()] == ["echo"]


async def test_wrong_credentials_get_401_as_an_auth_error(auth_server_url: str) -> None:
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", credential="api"))
    with pytest.raises(ServerAuthError):
        async with McpClient(spec, credentials=lambda name: ("", "wrong-token")):
            pass


async def test_bearer_token_from_a_credential_is_accepted(auth_server_url: str, auth_token: str) -> None:
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", credential="api"))
    async with McpClient(spec, credentials=lambda name: ("", auth_token)) as client:
        assert await client.list_tools()


async def test_bearer_token_from_an_environment_reference_is_accepted(
    auth_server_url: str, auth_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNIME_MCP_TEST_SECRET", auth_token)
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", secret="${KNIME_MCP_TEST_SECRET}"))
    async with McpClient(spec) as client:
        assert await client.list_tools()


async def test_basic_auth_and_custom_header_credentials_are_sent(
    basic_auth_server_url: str, api_key_server_url: str, auth_token: str
) -> None:
    basic = ServerSpec(target=basic_auth_server_url, auth=AuthRef(kind="basic", credential="c"))
    header = ServerSpec(target=api_key_server_url, auth=AuthRef(kind="header", credential="c", header="X-API-Key"))
    for spec in (basic, header):
        async with McpClient(spec, credentials=lambda name: ("knime", auth_token)) as client:
            assert await client.list_tools()


async def test_missing_environment_variable_fails_fast_naming_it(auth_server_url: str) -> None:
    spec = ServerSpec(target=auth_server_url, auth=AuthRef(kind="bearer", secret="${KNIME_MCP_UNSET_VARIABLE}"))
    with pytest.raises(ConfigError, match="KNIME_MCP_UNSET_VARIABLE"):
        async with McpClient(spec):
            pass


async def test_server_that_accepts_and_never_answers_hits_the_connect_timeout(fake_hang_url: str) -> None:
    spec = ServerSpec(target=fake_hang_url, timeouts=Timeouts(connect=1.0))
    with pytest.raises(ServerConnectError, match="connect timeout of 1 s") as caught:
        async with McpClient(spec):
            pass
    _assert_clear(caught.value, "http://127.0.0.1")


async def test_stdio_command_not_found_says_so() -> None:
    with pytest.raises(ServerConnectError, match="Could not start the server command") as caught:
        async with McpClient(ServerSpec(target="/nonexistent/knime-mcp-no-such-command --stdio")):
            pass
    assert "PATH" in str(caught.value)


async def test_stdio_server_that_exits_at_start_reports_what_it_printed(fake_exit_stdio_command: list[str]) -> None:
    with pytest.raises(ServerConnectError) as caught:
        async with McpClient(_stdio(fake_exit_stdio_command, timeouts=Timeouts(connect=10.0))):
            pass
    assert "printed" in str(caught.value)


async def test_a_token_the_server_prints_is_masked_in_the_error(
    fake_exit_stdio_command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stdio server given its token through the environment, which prints it at start-up and then fails
    monkeypatch.setenv("KNIME_MCP_TEST_TOKEN", "tok-canary-51c7e0")
    spec = _stdio(fake_exit_stdio_command, env={"FAKE_SERVER_TOKEN": "${KNIME_MCP_TEST_TOKEN}"})
    # When connecting fails
    with pytest.raises(ServerConnectError) as caught:
        async with McpClient(spec):
            pass
    # Then what it printed is relayed, with the token masked
    assert "fake server: using token ***" in str(caught.value)
    assert "tok-canary-51c7e0" not in str(caught.value) and "tok-canary-51c7e0" not in repr(caught.value.args)


async def test_malformed_frames_from_a_broken_server_are_a_clear_error(fake_malformed_stdio_command: list[str]) -> None:
    with pytest.raises(ServerConnectError, match="not MCP JSON-RPC") as caught:
        async with McpClient(_stdio(fake_malformed_stdio_command, timeouts=Timeouts(connect=3.0))):
            pass
    _assert_clear(caught.value, "")


def test_basic_auth_header_is_built_from_the_credential() -> None:
    from knime_mcp.config import resolve_headers

    spec = ServerSpec(target="https://example.com/mcp", auth=AuthRef(kind="basic", credential="c"))
    headers = resolve_headers(spec, lambda name: ("user", "pa:ss"))
    assert base64.b64decode(headers["Authorization"].removeprefix("Basic ")) == b"user:pa:ss"


async def test_closing_a_stdio_client_reaps_the_server_process(demo_stdio_command: list[str]) -> None:
    import psutil

    me = psutil.Process()
    before = {child.pid for child in me.children(recursive=True)}
    async with McpClient(_stdio(demo_stdio_command)) as client:
        await client.list_tools()
        started = {child.pid for child in me.children(recursive=True)} - before
    assert started
    assert not [pid for pid in started if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]


async def test_a_dead_server_trips_the_circuit_breaker_and_then_fails_fast() -> None:
    import socket

    from knime_mcp.net.breaker import CircuitBreaker

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = ServerSpec(target=f"http://127.0.0.1:{port}/mcp")
    messages = []
    async with ClientPool(breaker=CircuitBreaker(threshold=2, cooldown=60)) as pool:
        for _ in range(4):
            with pytest.raises(ServerConnectError) as caught:
                await pool.client(spec)
            messages.append(str(caught.value))
    assert [m.startswith("Could not connect") for m in messages] == [True, True, False, False]
    assert "after 2 failures in a row" in messages[-1] and "Hint:" in messages[-1]


async def test_an_auth_failure_is_not_retried_for_every_call(auth_server_url: str) -> None:
    async with ClientPool() as pool:
        with pytest.raises(ServerAuthError) as first:
            await pool.client(ServerSpec(target=auth_server_url))
        with pytest.raises(ServerAuthError) as second:
            await pool.client(ServerSpec(target=auth_server_url))
    assert first.value is second.value


async def test_a_pool_checking_unsealed_servers_refuses_local_ones_before_connecting(
    demo_http_url: str, demo_stdio_command: list[str]
) -> None:
    before = child_pids()
    async with ClientPool(check_unsealed=True) as pool:
        with pytest.raises(ConfigError) as refused_url:
            await pool.client(ServerSpec(target=demo_http_url))
        with pytest.raises(ConfigError, match="command line taken from data was refused") as refused_command:
            await pool.client(_stdio(demo_stdio_command))
        assert child_pids() == before
    assert "127.0.0.1, a loopback address" in str(refused_url.value)
    for refused in (refused_url, refused_command):
        assert "not listed by an MCP Tool Provider on this machine" in str(refused.value)


async def test_a_pool_checking_unsealed_servers_connects_sealed_ones_as_they_are(
    demo_http_url: str, demo_stdio_command: list[str]
) -> None:
    from knime_mcp.seal import seal_spec

    async with ClientPool(check_unsealed=True) as pool:
        for spec in (ServerSpec(target=demo_http_url), _stdio(demo_stdio_command)):
            client = await pool.client(seal_spec(spec))
            assert (await client.call_tool("echo", {"text": "sealed"})).text == "sealed"


async def test_calls_to_a_server_that_died_under_an_open_session_fail_fast_after_a_few_tries(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    import sys

    from fixtures.python_servers import running_server
    from knime_mcp.net.breaker import CircuitBreaker

    command = [sys.executable, "-m", "knime_mcp.demo_server", "--transport", "streamable-http"]
    with running_server(command, tmp_path_factory.mktemp("dying") / "server.log") as server:
        spec = ServerSpec(target=server.url)
        client = McpClient(spec, breaker=CircuitBreaker(threshold=2, cooldown=60))
        async with client:
            await client.call_tool("echo", {"text": "alive"})
            server.process.terminate()
            server.process.wait(10)
            messages = []
            for _ in range(4):
                with pytest.raises(ServerConnectError) as caught:
                    await client.call_tool("echo", {"text": "anyone?"})
                messages.append(str(caught.value))
    assert "failures in a row" not in messages[1] and "after 2 failures in a row" in messages[2]
    assert messages[3].startswith("Not trying the server again")


async def test_a_pinned_client_sends_requests_to_the_pinned_address_under_the_host_name_it_checked() -> None:
    import httpx2

    from knime_mcp.net.http_pool import HttpPool, _BorrowedTransport
    from knime_mcp.net.urlguard import PinnedHost

    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(204)

    pin = PinnedHost("tools.example", "2606:4700:4700::1111")
    pool = HttpPool()
    pool.route = lambda url, tls: httpx2.MockTransport(answer)  # type: ignore[method-assign]
    transport = _BorrowedTransport(pool, pin)
    request = httpx2.Request("POST", "https://tools.example:8443/mcp?x=1")
    await transport.handle_async_request(request)

    [sent] = seen
    assert str(sent.url) == "https://[2606:4700:4700::1111]:8443/mcp?x=1"
    assert sent.headers["host"] == "tools.example:8443" and sent.extensions["sni_hostname"] == "tools.example"


async def test_a_pinned_session_makes_every_request_to_the_pinned_address(fake_misbehaving_url: str) -> None:
    """The handshake and the calls all reach the fake on 127.0.0.1, though the URL's name resolves nowhere."""
    from urllib.parse import urlsplit

    from knime_mcp.net.urlguard import PinnedHost

    port = urlsplit(fake_misbehaving_url).port
    spec = ServerSpec(target=f"http://pinned.invalid:{port}/ok/mcp", timeouts=Timeouts(connect=10.0, call=10.0))
    async with McpClient(spec, pin=PinnedHost("pinned.invalid", "127.0.0.1")) as client:
        assert [tool.tool_name for tool in await client.list_tools()] == ["echo"]
        assert (await client.call_tool("echo", {"text": "pinned"})).text == "pinned"


async def test_a_name_that_resolves_elsewhere_after_the_check_cannot_lead_the_session_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DNS rebinding: the check sees a public address, a second lookup would give a local server; the session goes
    to the address that was checked, and the local server is never contacted."""
    import socket

    real_getaddrinfo = socket.getaddrinfo
    answers = iter(["8.8.8.8"])

    def rebinding(host: str | bytes, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        if host in ("rebind.example", b"rebind.example"):  # anyio hands over the name IDNA-encoded
            address = next(answers, "127.0.0.1")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, args[0]))]
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as local:
        local.bind(("127.0.0.1", 0))
        local.listen()
        local.settimeout(0.5)
        port = local.getsockname()[1]
        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        spec = ServerSpec(target=f"http://rebind.example:{port}/mcp", timeouts=Timeouts(connect=3.0))
        async with ClientPool(check_unsealed=True) as pool:
            with pytest.raises(ServerConnectError):
                await pool.client(spec)
        monkeypatch.undo()
        with pytest.raises(TimeoutError):
            local.accept()


class _FakeProxy:
    """Fake: an HTTP proxy that records the request line of each request it is sent and answers 502."""

    def __init__(self) -> None:
        import socket
        import threading

        self.request_lines: list[str] = []
        self._stopped = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()
        self._listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(5)
                head = b""
                while b"\r\n\r\n" not in head and (chunk := connection.recv(65536)):
                    head += chunk
                self.request_lines.append(head.split(b"\r\n", 1)[0].decode())
                connection.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def close(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)
        self._listener.close()


@pytest.fixture
def fake_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeProxy]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    proxy = _FakeProxy()
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    yield proxy
    proxy.close()


async def test_http_sessions_go_through_the_proxy_the_environment_names(fake_proxy: _FakeProxy) -> None:
    spec = ServerSpec(target="http://mcp.example/mcp", transport="streamable-http", timeouts=Timeouts(connect=5.0))
    with pytest.raises(ServerConnectError, match="HTTP 502"):
        async with McpClient(spec):
            pass
    assert fake_proxy.request_lines[0] == "POST http://mcp.example/mcp HTTP/1.1"


async def test_hosts_in_no_proxy_are_reached_directly(
    fake_proxy: _FakeProxy, demo_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with McpClient(ServerSpec(target=demo_http_url)) as client:
        assert (await client.call_tool("echo", {"text": "direct"})).text == "direct"
    assert fake_proxy.request_lines == []



async def test_a_restarted_server_that_forgot_the_session_gets_a_new_one_and_the_call_is_sent_again(
    npm_peers: Any, tmp_path: Path
) -> None:
    """Over Streamable HTTP, server-everything refuses a session id it does not know (HTTP 400). The request never
    ran there, so even a call that is not safe to repeat is sent again on a new session."""
    transport, path = "streamableHttp", "/mcp"
    from contextlib import AsyncExitStack, contextmanager
    from urllib.parse import urlsplit

    from fixtures.npm_servers import run_everything_over_http

    run = contextmanager(run_everything_over_http)
    async with AsyncExitStack() as stack:
        with run(npm_peers, transport, path, tmp_path) as first:
            client = await stack.enter_async_context(McpClient(ServerSpec(target=first.url)))
            assert (await client.call_tool("echo", {"message": "before"})).text == "Echo: before"
        with run(npm_peers, transport, path, tmp_path, port=urlsplit(first.url).port):
            assert (await client.call_tool("echo", {"message": "after"})).text == "Echo: after"
            assert len(await client.list_tools()) > 1


async def test_a_client_at_default_settings_lets_a_burst_of_read_only_calls_overlap_as_the_sdk_does() -> None:
    """A plain script's burst is not held to a handful at a time (the raw SDK fires all at once); the nodes' and the
    CLI's *Concurrency* settings, and one call at a time for tools that write, are separate knobs."""
    import sys

    import anyio

    burst = 64
    answers: list[str] = []
    server = Path(__file__).parent / "servers" / "gathering_server.py"
    async with McpClient(_stdio([sys.executable, str(server)])) as client:

        async def call() -> None:
            answers.append((await client.call_tool("gather", {"count": burst})).text)

        async with anyio.create_task_group() as group:
            for _ in range(burst):
                group.start_soon(call)
    assert answers == [f"together: {burst}"] * burst
