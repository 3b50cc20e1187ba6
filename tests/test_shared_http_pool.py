"""One HTTP connection pool per listing of several servers, and no TLS context where nothing is encrypted.

A listing of many servers gives their sessions one :class:`~knime_mcp.net.http_pool.HttpPool` (a pool each built a
TLS context each, one after the other: benchmark figure 11), so connections one server's session left open serve the
next session there; a relay in front of the demo server counts the connections that reach it. A pool builds the
default TLS context on its first https request only: certificates the environment names but that cannot be read
stop an https server, not a plain http one.
"""

from __future__ import annotations

import selectors
import socket
import socketserver
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import anyio
import pytest

from knime_mcp.calls.listing import list_server_tools, list_servers_tools
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError


class ConnectionCounter(socketserver.ThreadingTCPServer):
    """A TCP relay on 127.0.0.1 in front of a real server, counting the connections clients open through it."""

    daemon_threads = True

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.connections = 0
        super().__init__(("127.0.0.1", 0), _Relay)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class _Relay(socketserver.BaseRequestHandler):
    server: ConnectionCounter

    def handle(self) -> None:
        self.server.connections += 1
        with socket.create_connection(self.server.upstream) as upstream, selectors.DefaultSelector() as selector:
            client: socket.socket = self.request
            selector.register(client, selectors.EVENT_READ, (client, upstream))
            selector.register(upstream, selectors.EVENT_READ, (upstream, client))
            while True:
                for key, _ in selector.select():
                    source, target = key.data
                    if not (data := source.recv(65536)):
                        return
                    target.sendall(data)


@pytest.fixture
def counted_demo(demo_http_url: str) -> Iterator[tuple[ConnectionCounter, str]]:
    """A relay in front of the demo server over Streamable HTTP, and the demo server's URL through it."""
    parts = urlsplit(demo_http_url)
    assert parts.hostname and parts.port
    with ConnectionCounter((parts.hostname, parts.port)) as counter:
        thread = threading.Thread(target=counter.serve_forever, daemon=True)
        thread.start()
        yield counter, counter.url(parts.path)
        counter.shutdown()


def test_a_listing_of_several_servers_lets_the_next_session_reuse_connections_the_last_one_left_open(
    counted_demo: tuple[ConnectionCounter, str],
) -> None:
    counter, url = counted_demo
    spec = ServerSpec(target=url)
    # Given the connections one listing of the server opens
    anyio.run(lambda: list_server_tools(spec))
    alone = counter.connections
    counter.connections = 0
    # When a listing of several servers lists it twice, one after the other
    listing = anyio.run(lambda: list_servers_tools([("a", spec), ("b", spec)], servers_at_once=1))
    # Then both are listed, and the second listing reused connections the first left in the one pool
    assert not listing.failed and {"a_echo", "b_echo"} <= {tool.name for tool in listing.tools}
    assert counter.connections < 2 * alone, (counter.connections, alone)


def test_plain_http_servers_are_listed_when_the_certificates_the_environment_names_cannot_be_read(
    demo_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given SSL_CERT_FILE naming a file that does not exist
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/knime-mcp-ca.pem")
    spec = ServerSpec(target=demo_http_url)
    # Then a plain http server is listed alone and among several, as none of its traffic is encrypted
    assert "echo" in {tool.name for tool in anyio.run(lambda: list_server_tools(spec)).tools}
    listing = anyio.run(lambda: list_servers_tools([("a", spec), ("b", spec)]))
    assert not listing.failed and {"a_echo", "b_echo"} <= {tool.name for tool in listing.tools}
    # But an https server fails before it is reached, naming the variable to fix
    https = ServerSpec(target="https://127.0.0.1:9/mcp")
    with pytest.raises(ConfigError, match="SSL_CERT_FILE cannot be read"):
        anyio.run(lambda: list_server_tools(https))
