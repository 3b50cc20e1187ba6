"""The HTTP Tool Provider given a Base URL and no OpenAPI document: it finds the API's document there (a real FastAPI
app, tests/servers/http_api_server.py), or fails naming each path it tried (the demo MCP server serves none)."""

from __future__ import annotations

import knime.extension as knext
import pytest

import node_host
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext
from test_http_provider_node import _http_provider

pytestmark = pytest.mark.knime_node


def test_a_base_url_without_a_document_is_a_valid_setting() -> None:
    (schema,) = node_host.configure_node(
        _http_provider("", document__base_url="http://nonexistent.invalid"), ConfigureContext(), None
    )
    assert "MCP Tool" in schema.column_names


def test_the_node_lists_the_operations_of_the_document_found_at_the_base_url(http_api_url: str) -> None:
    node = _http_provider("", document__base_url=http_api_url, auth__kind="QUERY", auth__credential="k")
    ctx = ExecuteContext(credentials={"k": ("", "v")})
    (table,) = node_host.execute_node(node, ctx, None)
    tools = tools_from_frame(table.to_pandas())
    assert {"listPets", "createPet", "secureByQueryKey"} <= {tool.name for tool in tools}
    assert {tool.server.target for tool in tools} == {http_api_url}
    assert {tool.server.auth.parameter for tool in tools} == {"api_key"}  # the found document's key name
    assert all(is_sealed_here(tool.server) for tool in tools)


def test_a_base_url_serving_no_document_fails_the_node_naming_the_paths_tried(demo_http_url: str) -> None:
    node = _http_provider("", document__base_url=demo_http_url.removesuffix("/mcp"))
    with pytest.raises(knext.InvalidParametersError, match=r"No OpenAPI document was found .*/openapi\.json.*HTTP 404"):
        node_host.execute_node(node, ExecuteContext(), None)


def test_a_base_url_set_by_a_flow_variable_is_not_searched_on_this_machine(http_api_url: str) -> None:
    ctx = ExecuteContext()
    ctx.flow_variables["api"] = http_api_url
    with pytest.raises(knext.InvalidParametersError, match="flow variable 'api'"):
        node_host.execute_node(_http_provider("", document__base_url=http_api_url), ctx, None)
