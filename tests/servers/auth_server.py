"""Test server: the demo tools over Streamable HTTP, answering 401 unless a request carries the right credential.

The secret comes from the `KNIME_MCP_TEST_TOKEN` environment variable, never from the command line, where `ps`
would show it. `--scheme` picks what a request must send:

- `bearer`: `Authorization: Bearer <token>`
- `basic`: `Authorization: Basic base64(<user>:<token>)`, the user name from `--user`
- `api-key`: `X-API-Key: <token>`
- `query`: `?token=<token>` in the URL

Prints `<scheme> auth test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import os
from urllib.parse import parse_qsl

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from knime_mcp.demo_server import HOST, build_server, serve_http

TOKEN_ENV = "KNIME_MCP_TEST_TOKEN"


def require_header(app: ASGIApp, name: str, value: str, challenge: str) -> ASGIApp:
    """Pass HTTP requests whose header `name` equals `value` on to `app`; answer all others 401."""
    wanted = (name.lower().encode("latin-1"), value.encode("latin-1"))

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            sent = next((v for k, v in scope["headers"] if k == wanted[0]), b"")
            if not hmac.compare_digest(sent, wanted[1]):
                refusal = PlainTextResponse("Unauthorized", status_code=401, headers={"WWW-Authenticate": challenge})
                await refusal(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def require_query(app: ASGIApp, name: str, value: str) -> ASGIApp:
    """Pass HTTP requests whose URL query holds `name=value` on to `app`; answer all others 401."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            sent = dict(parse_qsl(scope["query_string"].decode("latin-1"))).get(name, "")
            if not hmac.compare_digest(sent.encode(), value.encode()):
                await PlainTextResponse("Unauthorized", status_code=401)(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def _expected(scheme: str, user: str, token: str) -> tuple[str, str, str]:
    """The header name, its required value, and the `WWW-Authenticate` challenge for a refusal."""
    if scheme == "bearer":
        return "Authorization", f"Bearer {token}", "Bearer"
    if scheme == "basic":
        credentials = base64.b64encode(f"{user}:{token}".encode()).decode()
        return "Authorization", f"Basic {credentials}", 'Basic realm="test"'
    return "X-API-Key", token, 'ApiKey header="X-API-Key"'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheme", choices=["bearer", "basic", "api-key", "query"], default="bearer")
    parser.add_argument("--user", default="knime", help="The user name for --scheme basic.")
    args = parser.parse_args()
    token = os.environ.get(TOKEN_ENV)
    if not token:
        parser.error(f"set {TOKEN_ENV} to the secret that clients must send")
    app = build_server().streamable_http_app(host=HOST)
    if args.scheme == "query":
        app = require_query(app, "token", token)
    else:
        app = require_header(app, *_expected(args.scheme, args.user, token))
    serve_http(app, "/mcp", name=f"{args.scheme} auth test server")


if __name__ == "__main__":
    main()
