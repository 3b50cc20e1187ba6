"""Test server: a UTCP provider written with the UTCP project's own server-side library (``utcp``): FastAPI handlers
decorated with ``@utcp_tool``, and ``UtcpManual.create_from_decorators()`` served at ``GET /utcp``, as utcp.io's
implementation guide shows. The handlers take no framework parameters (the decorator would offer a ``request`` as a
required argument); a middleware checks the API key instead.

- ``weather``: ``GET /api/weather/{city}?units=C``, its manual asking for ``$API_KEY`` in the ``X-Api-Key`` header;
- ``shout``: ``GET /api/shout?text=…``, the same key.

Every ``/api/`` request needs ``X-Api-Key: <KNIME_MCP_TEST_TOKEN>`` (401 otherwise). The app serves no OpenAPI
document, so a base URL's discovery finds the manual at ``/utcp``. Prints `UTCP provider listening on
http://127.0.0.1:PORT`.

No `from __future__ import annotations`: FastAPI and the decorator read the handlers' annotations.
"""

import os
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from utcp.data.auth_implementations.api_key_auth import ApiKeyAuth
from utcp.data.utcp_manual import UtcpManual
from utcp.python_specific_tooling.tool_decorator import utcp_tool
from utcp_http.http_call_template import HttpCallTemplate

from knime_mcp.demo_server import serve_http_at

TOKEN_ENV = "KNIME_MCP_TEST_TOKEN"
KEY_HEADER = "X-Api-Key"


def build_app(base_url: str, token: str) -> FastAPI:
    app = FastAPI(title="UTCP provider", openapi_url=None, docs_url=None, redoc_url=None)
    key = ApiKeyAuth(api_key="$API_KEY", var_name=KEY_HEADER, location="header")

    def template(name: str, path: str) -> HttpCallTemplate:
        return HttpCallTemplate(name=name, url=f"{base_url}{path}", http_method="GET", auth=key)

    @app.middleware("http")
    async def check_key(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path.startswith("/api/") and request.headers.get(KEY_HEADER) != token:
            return JSONResponse({"detail": "a valid X-Api-Key is needed"}, status_code=401)
        return await call_next(request)

    @app.get("/api/weather/{city}")
    @utcp_tool(tool_call_template=template("weather_api", "/api/weather/{city}"))
    def weather(city: str, units: str = "C") -> dict:
        """Today's weather in a city.
        city: the city's name
        units: C or F"""
        return {"city": city, "units": units, "temperature": 21 if units == "C" else 70}

    @app.get("/api/shout")
    @utcp_tool(tool_call_template=template("shout_api", "/api/shout"))
    def shout(text: str) -> dict:
        """The text in capitals.
        text: what to shout"""
        return {"shouted": text.upper()}

    @app.get("/utcp")
    def manual() -> dict:
        return UtcpManual.create_from_decorators().model_dump()

    return app


def main() -> None:
    token = os.environ[TOKEN_ENV]
    serve_http_at(lambda url: build_app(url, token), "", name="UTCP provider")


if __name__ == "__main__":
    main()
