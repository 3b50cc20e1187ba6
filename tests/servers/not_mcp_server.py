"""Test server: a plain web site, not an MCP server, for the errors a client shows when pointed at the wrong URL.

Any method on `/` answers 200 with an HTML page; every other path answers 404 with an HTML page. Prints `not-MCP
test server listening on http://127.0.0.1:PORT/`.
"""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from knime_mcp.demo_server import HOST, listening_socket

_PAGE = b"<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>Just a web page</h1></body></html>"
_NOT_FOUND = b"<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>"


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        status, body = (200, _PAGE) if self.path.split("?")[0] == "/" else (404, _NOT_FOUND)
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_DELETE = do_HEAD = _answer


class _LoopbackHTTPServer(ThreadingHTTPServer):
    """Serves on a socket from `listening_socket`, and turns Nagle off on each accepted connection."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__((HOST, 0), _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = listening_socket()
        self.server_address = self.socket.getsockname()

    def get_request(self) -> tuple[socket.socket, tuple[str, int]]:
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


def main() -> None:
    with _LoopbackHTTPServer() as server:
        print(f"not-MCP test server listening on http://{HOST}:{server.server_address[1]}/", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
