"""Test server: a webhook receiver that records each payload it gets, for a test to read back.

`POST /hooks/{name}` stores the JSON body, the request's headers and its query under `name` and answers 200
`{"received": n}`;
`GET /received/{name}` answers the list of `{"payload": …, "headers": {…}, "query": {…}}` stored so far.

Prints `webhook receiver listening on http://127.0.0.1:PORT`.
"""

from __future__ import annotations

from collections import defaultdict

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from knime_mcp.demo_server import serve_http_at


def build_app() -> Starlette:
    received: defaultdict[str, list[dict[str, object]]] = defaultdict(list)

    async def hook(request: Request) -> JSONResponse:
        name = request.path_params["name"]
        query = dict(request.query_params)
        received[name].append({"payload": await request.json(), "headers": dict(request.headers), "query": query})
        return JSONResponse({"received": len(received[name])})

    async def read(request: Request) -> JSONResponse:
        return JSONResponse(received[request.path_params["name"]])

    return Starlette(
        routes=[Route("/hooks/{name}", hook, methods=["POST"]), Route("/received/{name}", read, methods=["GET"])]
    )


def main() -> None:
    serve_http_at(lambda _url: build_app(), "", name="webhook receiver")


if __name__ == "__main__":
    main()
