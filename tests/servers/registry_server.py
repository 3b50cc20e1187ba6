"""Test server: a stand-in of the MCP Registry's read API (FastAPI), serving the entries of
`tests/fixtures/registry/entries.json` (where each comes from: `NOTE.md` there).

`GET /{v}/servers?search=&cursor=&limit=&version=latest` lists them as the registry does (`{"servers": [{"server": …,
"_meta": {"io.modelcontextprotocol.registry/official": …}}], "metadata": {"nextCursor": …, "count": …}}`), at most 3
per page so that every search pages; `GET /{v}/servers/{name}/versions/{version}` answers one (`latest` too). `{v}` is
each of `REGISTRY_VERSIONS` (default `v0.1,v0`: the official registry serves both, alike). A search for `huge-answer`
answers 10 MB. `{DEMO_URL}` in an entry is `REGISTRY_DEMO_URL`. With `REGISTRY_CERT` (a PEM file of a key and its
certificate chain, as `trustme` writes one) it serves over https under that certificate: an organisation's registry
under its own CA.

Prints `registry stand-in listening on http://127.0.0.1:PORT` (`https://` with `REGISTRY_CERT`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse, StreamingResponse

from knime_mcp.demo_server import HOST, listening_socket, serve_http_at

_ENTRIES = Path(__file__).resolve().parent.parent / "fixtures" / "registry" / "entries.json"
_PAGE = 3
_OFFICIAL = "io.modelcontextprotocol.registry/official"


def _entries() -> list[dict[str, Any]]:
    text = _ENTRIES.read_text(encoding="utf-8").replace("{DEMO_URL}", os.environ.get("REGISTRY_DEMO_URL", ""))
    groups = json.loads(text)
    servers = [server for group in ("real", "runnable", "hostile") for server in groups[group]]
    latest = {server["name"]: server["version"] for server in servers}  # the file lists older versions first
    return [
        {"server": server, "_meta": {_OFFICIAL: {
            "status": "active", "publishedAt": "2025-10-01T00:00:00Z", "updatedAt": "2025-10-01T00:00:00Z",
            "isLatest": latest[server["name"]] == server["version"]}}}
        for server in servers
    ]  # fmt: skip


def build_app() -> FastAPI:
    app = FastAPI()
    entries = _entries()
    versions = os.environ.get("REGISTRY_VERSIONS", "v0.1,v0").split(",")

    @app.get("/{api}/servers", response_model=None)
    def servers(
        api: str, search: str = "", cursor: str = "", limit: int = 30, version: str = ""
    ) -> JSONResponse | StreamingResponse:
        if api not in versions:
            raise HTTPException(404, "Not Found")
        if search == "huge-answer":
            return StreamingResponse((b" " * 2**20 for _ in range(10)), media_type="application/json")
        found = [
            item for item in entries
            if search in item["server"]["name"] and (version != "latest" or item["_meta"][_OFFICIAL]["isLatest"])
        ]  # fmt: skip
        start = int(cursor or 0)
        page = found[start : start + min(limit, _PAGE)]
        more = start + len(page) < len(found)
        metadata = {"count": len(page), **({"nextCursor": str(start + len(page))} if more else {})}
        return JSONResponse({"servers": page, "metadata": metadata})

    @app.get("/{api}/servers/{name:path}/versions/{version}")
    def one(api: str, name: str, version: str) -> dict[str, Any]:
        if api not in versions:
            raise HTTPException(404, "Not Found")
        for item in entries:
            server, meta = item["server"], item["_meta"][_OFFICIAL]
            if server["name"] == name and (server["version"] == version or version == "latest" and meta["isLatest"]):
                return item
        raise HTTPException(404, "Server not found")

    return app


def main() -> None:
    cert = os.environ.get("REGISTRY_CERT")
    if not cert:
        serve_http_at(lambda _url: build_app(), "", name="registry stand-in")
        return
    import uvicorn

    with listening_socket() as sock:
        server = uvicorn.Server(uvicorn.Config(build_app(), log_level="warning", ssl_certfile=cert))
        print(f"registry stand-in listening on https://{HOST}:{sock.getsockname()[1]}", flush=True)
        server.run(sockets=[sock])


if __name__ == "__main__":
    main()
