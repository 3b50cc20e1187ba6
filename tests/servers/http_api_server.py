"""Test server: a small REST API (FastAPI) that serves its own OpenAPI 3.1 document at `/openapi.json`.

It has what HTTP tools meet in real APIs: path and query parameters (a repeated list, an enum), a header
parameter, a nested JSON body, a PNG image, plain text, bearer and API-key (query and header) security, a failing
endpoint, a slow one, a read-only GET, a PUT and a DELETE. The secret comes from `KNIME_MCP_TEST_TOKEN` (never the
command line), and serves as the bearer token and the API key alike.

Every request to a `/flaky/...` endpoint is counted under its `key` and answered 503 `times` times, then 200;
`GET /attempts/{key}` reads the count (it is not in the OpenAPI document). So a test shows which methods are retried.

Also outside the document, for redirects and large answers: `/redirect/{status}/{hops}` redirects `hops` times with
`status`, the last time to `/echo`, which says which method, body and credentials arrived; `/away?to=URL&status=N`
redirects to any URL; `/big?megabytes=N` answers N MB of JSON text.

Prints `HTTP API test server listening on http://127.0.0.1:PORT` (the base URL, which the document's `servers` names).

No `from __future__ import annotations`: FastAPI reads the handlers' annotations, which name the closures' locals.
"""

import asyncio
import base64
import hmac
import os
from collections import Counter
from enum import StrEnum
from typing import Annotated

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Response, Security
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.security import APIKeyHeader, APIKeyQuery, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from knime_mcp.demo_server import serve_http_at

TOKEN_ENV = "KNIME_MCP_TEST_TOKEN"
FAILURE_BODY = "Internal failure: " + "x" * 5000
"""What `GET /fail` answers with status 500: longer than any excerpt a tool error carries."""

# A 1x1 red pixel.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


class Species(StrEnum):
    DOG = "dog"
    CAT = "cat"
    BIRD = "bird"


class Address(BaseModel):
    city: str
    street: str | None = None


class Owner(BaseModel):
    name: Annotated[str, Field(min_length=1)]
    address: Address


class NewPet(BaseModel):
    name: Annotated[str, Field(min_length=1, description="The pet's name.")]
    species: Species
    owner: Owner
    tags: list[str] = []


class Pet(NewPet):
    id: int


def build_app(base_url: str, token: str) -> FastAPI:
    """The API, naming `base_url` as its server, guarded by `token`."""
    app = FastAPI(title="Pet store test API", version="1.0.0", servers=[{"url": base_url}])
    attempts: Counter[str] = Counter()

    bearer = HTTPBearer(auto_error=False)
    query_key = APIKeyQuery(name="api_key", auto_error=False)
    header_key = APIKeyHeader(name="X-API-Key", auto_error=False)

    def check(sent: str | None) -> None:
        if sent is None or not hmac.compare_digest(sent.encode(), token.encode()):
            raise HTTPException(status_code=401, detail="Wrong or missing credentials.")

    def bearer_auth(credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]) -> None:
        check(credentials.credentials if credentials else None)

    def query_key_auth(key: Annotated[str | None, Security(query_key)]) -> None:
        check(key)

    def header_key_auth(key: Annotated[str | None, Security(header_key)]) -> None:
        check(key)

    @app.get("/pets", operation_id="listPets", summary="List pets, filtered.")
    async def list_pets(
        species: Species | None = None,
        tags: Annotated[list[str] | None, Query(description="Every tag a pet must have.")] = None,
        limit: Annotated[int, Query(ge=1, le=100)] = 10,
    ) -> dict[str, object]:
        """Read-only; echoes the filter it got, so a test sees how the query was sent."""
        return {"species": species, "tags": tags or [], "limit": limit, "pets": []}

    @app.post(
        "/pets", operation_id="createPet", status_code=201, dependencies=[Depends(bearer_auth)], summary="Add a pet."
    )
    async def create_pet(pet: NewPet) -> Pet:
        return Pet(id=7, **pet.model_dump())

    @app.delete("/pets/{pet_id}", operation_id="deletePet", status_code=204, summary="Remove a pet.")
    async def delete_pet(pet_id: int) -> Response:
        return Response(status_code=204)

    @app.get("/pets/{pet_id}/photo", operation_id="getPetPhoto", summary="The pet's photo, a PNG image.")
    async def get_photo(pet_id: int) -> Response:
        return Response(PNG, media_type="image/png")

    @app.get("/pets/{pet_id}/card", operation_id="getPetCard", summary="The pet's index card, plain text.")
    async def get_card(pet_id: int) -> PlainTextResponse:
        return PlainTextResponse(f"Pet {pet_id}\nA good pet.")

    # After the other `/pets/{pet_id}/...` routes, which its `path` convertor would otherwise swallow.
    @app.get("/pets/{pet_id:path}", operation_id="getPet", summary="One pet by its id.")
    async def get_pet(
        pet_id: str, x_request_id: Annotated[str | None, Header(description="Echoed back.")] = None
    ) -> dict[str, object]:
        """The path parameter is any string, so a test can send `/`, spaces and `%` through it."""
        return {"pet_id": pet_id, "request_id": x_request_id}

    @app.get("/secure/query", operation_id="secureByQueryKey", dependencies=[Depends(query_key_auth)])
    async def secure_query() -> dict[str, str]:
        return {"access": "granted by query key"}

    @app.get("/secure/header", operation_id="secureByHeaderKey", dependencies=[Depends(header_key_auth)])
    async def secure_header() -> dict[str, str]:
        return {"access": "granted by header key"}

    @app.get("/fail", operation_id="fail", summary="Always fails with status 500.")
    async def fail() -> PlainTextResponse:
        return PlainTextResponse(FAILURE_BODY, status_code=500)

    @app.get("/slow", operation_id="slow", summary="Answers after `seconds`.")
    async def slow(seconds: Annotated[float, Query(ge=0, le=30)] = 1.0) -> dict[str, float]:
        await asyncio.sleep(seconds)
        return {"slept": seconds}

    @app.api_route("/flaky/{key}", methods=["GET", "POST", "PUT", "DELETE"])
    async def flaky(key: str, times: int = 1) -> JSONResponse:
        """503 for the first `times` requests under `key`, then 200."""
        attempts[key] += 1
        if attempts[key] <= times:
            return JSONResponse({"error": "busy"}, status_code=503)
        return JSONResponse({"attempt": attempts[key]})

    @app.get("/attempts/{key}", include_in_schema=False)
    async def attempts_of(key: str) -> int:
        return attempts[key]

    every_method = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]

    @app.api_route("/redirect/{status}/{hops}", methods=every_method, include_in_schema=False)
    async def redirect(status: int, hops: int) -> RedirectResponse:
        return RedirectResponse(f"/redirect/{status}/{hops - 1}" if hops > 1 else "/echo", status_code=status)

    @app.api_route("/away", methods=every_method, include_in_schema=False)
    async def away(to: str, status: int = 302) -> RedirectResponse:
        return RedirectResponse(to, status_code=status)

    @app.api_route("/echo", methods=every_method, include_in_schema=False)
    async def echo(request: Request) -> dict[str, object]:
        """What arrived; of each credential only whether it was the right one (a result showing it would be masked)."""
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
        basic = base64.b64encode(f"user:{token}".encode()).decode()
        sent = {
            "bearer": bearer == token,
            "basic": request.headers.get("Authorization") == f"Basic {basic}",
            "header key": request.headers.get("X-API-Key") == token,
            "query key": request.query_params.get("api_key") == token,
        }
        body = (await request.body()).decode()
        return {"method": request.method, "body": body, "credentials": [name for name, right in sent.items() if right]}

    @app.api_route("/big", methods=["GET", "POST"], include_in_schema=False)
    async def big(megabytes: int = 2) -> Response:
        return Response(b'"' + b"x" * (megabytes * 1_000_000) + b'"', media_type="application/json")

    return app


def main() -> None:
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise SystemExit(f"set {TOKEN_ENV} to the secret that clients must send")
    serve_http_at(lambda url: build_app(url, token), "", name="HTTP API test server")


if __name__ == "__main__":
    main()
