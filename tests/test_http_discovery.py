"""An API given by its base URL alone: its OpenAPI document found at the paths frameworks serve it, against a real
FastAPI app (tests/servers/http_api_server.py), a static host with a Spring-style and a Swagger 2.0 document
(tests/servers/static_files_server.py) and the demo MCP server, which serves no document; through the Python API
and the CLI (the node's tests are in test_http_provider_node.py)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_runs import run_cli
from fixtures.python_servers import SERVERS_DIR, running_server
from knime_mcp.calls.dispatch import Dispatcher
from knime_mcp.calls.listing import ToolListing, list_http_tools
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import AuthRef
from knime_mcp.errors import ConfigError, ServerConnectError
from knime_mcp.http.discovery import DOCUMENT_PATHS
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.tool import MCPTool
from test_many_servers import closed_port_url

TOKEN_VARIABLE = "KNIME_MCP_TEST_DISCOVERY_TOKEN"


@pytest.fixture(scope="module")
def static_api_url(tmp_path_factory: pytest.TempPathFactory, oas_examples: Path) -> Iterator[str]:
    """A static host: `/v3/api-docs` (as Spring serves it) holds an OpenAPI 3.0 document under `/spring`, and
    `/swagger.json` a Swagger 2.0 one under `/legacy`."""
    folder = tmp_path_factory.mktemp("static-api")
    (folder / "spring" / "v3").mkdir(parents=True)
    shutil.copy(oas_examples / "3.0/json/petstore.json", folder / "spring" / "v3" / "api-docs")
    (folder / "legacy").mkdir()
    shutil.copy(oas_examples / "2.0/json/petstore.json", folder / "legacy" / "swagger.json")
    command = [sys.executable, str(SERVERS_DIR / "static_files_server.py"), str(folder)]
    with running_server(command, folder.parent / f"{folder.name}.log") as server:
        yield server.url


def _listing(base_url: str, **options: object) -> ToolListing:
    return run_sync(list_http_tools, None, base_url=base_url, **options)


def _named(tools: list[MCPTool], name: str) -> MCPTool:
    return next(tool for tool in tools if tool.name == name)


def test_a_fastapi_base_url_alone_lists_the_operations_of_its_openapi_json(http_api_url: str) -> None:
    listing = _listing(http_api_url)
    assert {"listPets", "createPet", "getPet"} <= {tool.name for tool in listing.tools}
    assert {tool.server.target for tool in listing.tools} == {http_api_url}
    assert all(is_sealed_here(tool.server) for tool in listing.tools)  # a person's base URL, as a document URL is


def test_a_discovered_apis_tool_is_called_with_the_credential_at_the_base_url(
    http_api_url: str, auth_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, auth_token)
    listing = _listing(http_api_url, auth=AuthRef(kind="bearer", secret=f"${{{TOKEN_VARIABLE}}}"))
    create = _named(listing.tools, "createPet")
    assert create.server.auth.kind == "bearer"

    async def call() -> object:
        async with ClientPool() as pool:
            pet = {"name": "Rex", "species": "dog", "owner": {"name": "Ann", "address": {"city": "Bern"}}}
            return await Dispatcher(pool).call(create, {"body": pet})

    outcome = run_sync(call)
    assert outcome.error is None, outcome.error
    assert outcome.result is not None and outcome.result.structured["id"] == 7


def test_a_base_url_with_a_path_is_searched_under_that_path_then_at_the_root(static_api_url: str) -> None:
    listing = _listing(f"{static_api_url}/spring")
    assert len(listing.tools) == 20  # the petstore's operations, found at /spring/v3/api-docs
    assert {tool.server.target for tool in listing.tools} == {f"{static_api_url}/spring"}


def test_a_server_that_serves_no_document_is_an_error_naming_every_path_tried(demo_http_url: str) -> None:
    base = demo_http_url.removesuffix("/mcp")
    with pytest.raises(ConfigError, match="No OpenAPI document was found") as raised:
        _listing(f"{base}/api?token=${{NOT_SHOWN}}")
    message = raised.value.message
    for path in DOCUMENT_PATHS:
        assert f"/api/{path}" in message and f"/{path}" in message
    assert "HTTP 404" in message and "NOT_SHOWN" not in message


def test_only_a_swagger_2_document_found_says_how_to_convert_it(static_api_url: str) -> None:
    with pytest.raises(ConfigError, match=r"/legacy/swagger\.json \(Swagger 2\.0, not supported\)") as raised:
        _listing(f"{static_api_url}/legacy")
    assert "swagger2openapi" in (raised.value.hint or "")


def test_a_base_url_nothing_listens_at_fails_at_once_saying_it_cannot_connect() -> None:
    with pytest.raises(ServerConnectError) as raised:
        _listing(closed_port_url().removesuffix("/mcp"))
    assert raised.value.server is not None and raised.value.server.endswith("/openapi.json")


def test_a_base_url_from_data_may_not_reach_this_machine(http_api_url: str) -> None:
    with pytest.raises(ConfigError, match="public internet addresses") as raised:
        _listing(http_api_url, untrusted_hint="Switch on 'Trust a document address from a flow variable'.")
    assert raised.value.hint == "Switch on 'Trust a document address from a flow variable'."


def test_http_tools_with_only_base_url_lists_the_apis_tools(
    capsys: pytest.CaptureFixture[str], http_api_url: str
) -> None:
    code, out, _ = run_cli(capsys, "http-tools", "--base-url", http_api_url, "--format", "json", "--include", "Pet")
    assert code == 0 and [tool["name"] for tool in json.loads(out)][:2] == ["listPets", "createPet"]


def test_http_tools_at_a_base_url_without_a_document_exits_naming_the_paths_tried(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    code, _, err = run_cli(capsys, "http-tools", "--base-url", demo_http_url.removesuffix("/mcp"))
    assert code == 3 and "No OpenAPI document was found" in err and "/v3/api-docs" in err
