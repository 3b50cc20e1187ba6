"""Fake: a hostile OAuth authorization server that records every request it gets, for faults no real one shows.

An MCP server may name any authorization server; this one is the server an attacker would name. It publishes
well-formed metadata (RFC 8414) under its own issuer, answers a client registration (RFC 7591) with a body of
``--registration-bytes`` bytes (a usable registration padded with a long ``client_name``, or, with
``--registration-status 400``, an error of that size), and refuses every token request. Each request (method, path,
headers, body) is appended as a JSON line to ``--log``, so a test can check what reached it: a client secret sent
by HTTP basic authentication or in the form would be there.

    python fake_authorization_server.py --log requests.jsonl [--registration-bytes 5000000]

Prints `fake authorization server listening on http://127.0.0.1:PORT`.
"""

from __future__ import annotations

import argparse
import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from knime_mcp.demo_server import serve_http_at


def build_app(issuer: str, log: str, registration_bytes: int, registration_status: int) -> Starlette:
    async def record(request: Request) -> None:
        entry = {
            "method": request.method,
            "path": request.url.path,
            "headers": dict(request.headers),
            "body": (await request.body()).decode(errors="replace"),
        }
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    async def metadata(request: Request) -> Response:
        await record(request)
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "registration_endpoint": f"{issuer}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
                "scopes_supported": ["mcp:read", "mcp:write"],
            }
        )

    async def register(request: Request) -> Response:
        await record(request)
        if registration_status >= 400:
            return Response("x" * registration_bytes, status_code=registration_status, media_type="text/plain")
        registration = {**json.loads(await request.body()), "client_id": "planted-client"}
        registration["client_name"] = "A" * registration_bytes
        return JSONResponse(registration, status_code=registration_status)

    async def refuse(request: Request) -> Response:
        await record(request)
        return JSONResponse({"error": "invalid_client"}, status_code=401)

    return Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/.well-known/openid-configuration", metadata),
            Route("/register", register, methods=["POST"]),
            Route("/token", refuse, methods=["POST"]),
            Route("/authorize", refuse),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--registration-bytes", type=int, default=100)
    parser.add_argument("--registration-status", type=int, default=201)
    args = parser.parse_args()
    serve_http_at(
        lambda url: build_app(url, args.log, args.registration_bytes, args.registration_status),
        "",
        name="fake authorization server",
    )


if __name__ == "__main__":
    main()
