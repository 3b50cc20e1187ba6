"""Test server: the demo MCP server and the pet store test API over HTTPS, each under several certificates.

Started as `tls_server.py FOLDER`, where FOLDER holds the PEM files a test's CA (made by `trustme`) issued:
`good.pem` (127.0.0.1), `expired.pem` (127.0.0.1, out of date), `wrong-name.pem` (example.org only), and `ca.pem`,
the CA that client certificates must come from. Serves, all on 127.0.0.1 in one process:

- `good`, `expired`, `wrong-name`: the demo server's Streamable HTTP endpoint at `/mcp` under that certificate;
- `client-cert`: the same under `good.pem`, refusing any client without a certificate from `ca.pem`: a TLS front
  (OpenSSL through :mod:`ssl`, as nginx would be) before the demo server on plain HTTP. Not uvicorn's own TLS:
  asyncio drops the connection without the TLS alert that says a client certificate is required, which real
  servers send;
- `client-cert-silent`: the same, with uvicorn's own TLS requiring a client certificate from `ca.pem`: it drops a
  client without one with no alert, so the client sees only a connection closed without an answer;
- `api`: the pet store test API (tests/servers/http_api_server.py) under `good.pem`, its document at `/openapi.json`.

Prints `TLS test server NAME listening on URL` for each, once all listen, and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import signal
import socket
import ssl
import sys
import threading
from pathlib import Path

import uvicorn
from http_api_server import build_app

from knime_mcp.demo_server import HOST, build_server, listening_socket

SERVERS = {
    "good": ("good.pem", "mcp"),
    "expired": ("expired.pem", "mcp"),
    "wrong-name": ("wrong-name.pem", "mcp"),
    "client-cert": (None, "mcp"),
    "client-cert-silent": ("good.pem", "mcp"),
    "api": ("good.pem", "api"),
}


def _client_cert_front(folder: Path, backend_port: int) -> socket.socket:
    """A listener whose connections must show a client certificate from ``ca.pem``, relayed to ``backend_port``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "good.pem")
    context.load_verify_locations(folder / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED
    listener = listening_socket()

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=_relay, args=(context, conn, backend_port), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def _close_after_alert(conn: ssl.SSLSocket) -> None:
    """Close as a TLS server does: what the client sent meanwhile is read first, since closing a socket with unread
    data resets the connection, and a reset discards the alert the client has not read yet."""
    with conn:
        conn.shutdown(socket.SHUT_WR)  # an SSLSocket leaves TLS here and reads plain bytes from now on
        conn.settimeout(5)
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                pass


def _relay(context: ssl.SSLContext, conn: socket.socket, backend_port: int) -> None:
    tls = context.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
    try:
        tls.do_handshake()  # fails, and alerts the client, without a certificate
    except OSError:  # ssl.SSLError is one
        _close_after_alert(tls)
        return
    with tls, socket.create_connection((HOST, backend_port)) as plain, selectors.DefaultSelector() as selector:
        selector.register(tls, selectors.EVENT_READ)
        selector.register(plain, selectors.EVENT_READ)
        while True:
            ready = {key.fileobj for key, _ in selector.select()}
            for source, sink in ((tls, plain), (plain, tls)):
                if source in ready:
                    data = source.recv(65536)
                    if not data:
                        return
                    sink.sendall(data)
                    while source is tls and tls.pending():
                        sink.sendall(tls.recv(65536))


async def serve(folder: Path) -> None:
    servers = []
    lines = []
    for name, (cert, kind) in SERVERS.items():
        sock = listening_socket()
        front = sock if cert else _client_cert_front(folder, sock.getsockname()[1])
        base = f"https://{HOST}:{front.getsockname()[1]}"
        app = build_server().streamable_http_app(host=HOST) if kind == "mcp" else build_app(base, "not-a-secret")
        tls: dict[str, object] = {"ssl_certfile": str(folder / cert)} if cert else {}
        if name == "client-cert-silent":
            tls |= {"ssl_ca_certs": str(folder / "ca.pem"), "ssl_cert_reqs": ssl.CERT_REQUIRED}
        config = uvicorn.Config(app, log_level="warning", lifespan="on", **tls)  # type: ignore[arg-type]
        server = uvicorn.Server(config)
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]  # one handler stops all
        servers.append((server, sock))
        lines.append(f"TLS test server {name} listening on {base}{'/mcp' if kind == 'mcp' else ''}")
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in servers]
    while not all(server.started for server, _ in servers):
        await asyncio.sleep(0.01)
    print("\n".join(lines), flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    for server, _ in servers:
        server.should_exit = True
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
