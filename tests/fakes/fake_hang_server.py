"""Fake: a TCP listener on 127.0.0.1 that accepts connections and never answers, for connect and read timeouts.

No real server keeps a connection open in silence on purpose. Prints `fake hang server listening on
http://127.0.0.1:PORT/mcp`, then holds every accepted connection open without reading from it.
"""

from __future__ import annotations

import socket

from knime_mcp.demo_server import HOST, listening_socket


def main() -> None:
    held: list[socket.socket] = []
    with listening_socket() as listener:
        print(f"fake hang server listening on http://{HOST}:{listener.getsockname()[1]}/mcp", flush=True)
        while True:
            connection, _address = listener.accept()
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            held.append(connection)


if __name__ == "__main__":
    main()
