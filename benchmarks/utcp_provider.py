"""A UTCP provider for figure 15, built as utcp.io's guide shows: a FastAPI handler decorated with utcp's own
``@utcp_tool`` and ``UtcpManual.create_from_decorators()`` served at ``GET /utcp``.

One tool, ``echo`` (``GET /api/echo?text=…``, answering ``{"text": …}``), whose manual asks for ``$API_KEY`` in the
``X-Api-Key`` header; every ``/api/`` request must carry the key given as ``--key`` (401 otherwise). Prints
``UTCP provider listening on http://127.0.0.1:PORT`` first (the decorator's own prints, and utcp's log lines below
warnings, nowhere).

No `from __future__ import annotations`: FastAPI and the decorator read the handler's annotations.
"""

import argparse
import contextlib
import io
import logging
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from utcp.data.auth_implementations.api_key_auth import ApiKeyAuth
from utcp.data.utcp_manual import UtcpManual
from utcp.python_specific_tooling.tool_decorator import utcp_tool
from utcp_http.http_call_template import HttpCallTemplate

from knime_mcp.demo_server import serve_http_at

KEY_HEADER = "X-Api-Key"


def build_app(base_url: str, key: str) -> FastAPI:
    app = FastAPI(title="UTCP provider", openapi_url=None, docs_url=None, redoc_url=None)
    template = HttpCallTemplate(
        name="echo_api",
        url=f"{base_url}/api/echo",
        http_method="GET",
        auth=ApiKeyAuth(api_key="$API_KEY", var_name=KEY_HEADER, location="header"),
    )

    @app.middleware("http")
    async def check_key(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path.startswith("/api/") and request.headers.get(KEY_HEADER) != key:
            return JSONResponse({"detail": "a valid X-Api-Key is needed"}, status_code=401)
        return await call_next(request)

    with contextlib.redirect_stdout(io.StringIO()):  # the decorator prints each tool it adds

        @app.get("/api/echo")
        @utcp_tool(tool_call_template=template)
        async def echo(text: str) -> dict:
            """The text, unchanged.
            text: what to echo"""
            return {"text": text}

    @app.get("/utcp")
    def manual() -> dict:
        return UtcpManual.create_from_decorators().model_dump()

    return app


def main() -> None:
    logging.getLogger().setLevel(logging.WARNING)  # utcp's import set it to INFO, a line for each plugin and request
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True)
    key = parser.parse_args().key
    serve_http_at(lambda url: build_app(url, key), "", name="UTCP provider")


if __name__ == "__main__":
    main()
