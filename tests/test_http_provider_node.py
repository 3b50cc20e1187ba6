"""The HTTP Tool Provider node, run through configure and execute as KNIME runs it (Given/When/Then)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import COLUMNS, tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node

WEBHOOK_SCHEMA = json.dumps({"type": "object", "properties": {"text": {"type": "string"}}})


def _http_provider(document: str, **settings: object):  # type: ignore[no-untyped-def]
    import extension

    node = extension.HTTPToolProvider()
    # KNIME sets every parameter from saved settings; here what an earlier test chose must not carry over.
    defaults = {
        "document__document": document, "document__base_url": "", "document__trust_flow_variable": False,
        "document__trust_webhooks": False, "document__max_document_mb": 10, "document__max_response_mb": 64,
        "auth__kind": "NONE", "auth__credential": "", "auth__name": "",
        "selection__include": "", "selection__exclude": "", "selection__prefix": "",
        "selection__schema_mode": "FULL", "selection__destructive": "ALLOW",
    }  # fmt: skip
    return node_host.set_parameters(node, **{**defaults, **settings})


def _webhooks(*urls: str) -> knext.Table:
    frame = pd.DataFrame(
        {
            "Name": [f"hook{number}" for number, _ in enumerate(urls, start=1)],
            "Description": ["Tell the team."] * len(urls),
            "URL": list(urls),
            "Method": [None] * len(urls),
            "Input Schema": [WEBHOOK_SCHEMA] * len(urls),
        }
    )
    return node_host.source_table(frame)


@pytest.fixture(scope="module")
def petstore_file(oas_examples: Path) -> str:
    return str(oas_examples / "3.0/json/petstore.json")


def test_configure_gives_the_mcp_tool_providers_columns_without_reading_the_document() -> None:
    (schema,) = node_host.configure_node(
        _http_provider("http://nonexistent.invalid/openapi.json"), ConfigureContext(), None
    )
    assert schema.column_names == list(COLUMNS)
    assert schema["Read-only"].ktype == knext.bool_()


def test_configure_without_a_document_or_webhooks_is_an_invalid_setting() -> None:
    with pytest.raises(knext.InvalidParametersError, match="No OpenAPI document given"):
        node_host.configure_node(_http_provider(""), ConfigureContext(), None)


def test_a_webhook_table_without_a_url_column_is_an_invalid_setting() -> None:
    schema = knext.Schema.from_columns([knext.Column(knext.string(), "Name")])
    with pytest.raises(knext.InvalidParametersError, match="The webhook table has no 'URL' column"):
        node_host.configure_node(_http_provider(""), ConfigureContext(), schema)


def test_execute_lists_the_documents_operations_at_the_server_it_names_in_a_warning(petstore_file: str) -> None:
    node = _http_provider(petstore_file, selection__prefix="shop", selection__destructive="READ_ONLY")
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(node, ctx, None)
    frame = table.to_pandas()
    assert list(frame.columns) == list(COLUMNS)
    tools = tools_from_frame(frame)
    assert "shop_getPetById" in {tool.name for tool in tools}
    assert all(tool.http is not None and tool.http.method == "GET" for tool in tools)
    # The server a document from a file names is the document's word: not sealed, and the warning names it
    assert {tool.server.target for tool in tools} == {"http://petstore.swagger.io/v2"}
    assert not any(is_sealed_here(tool.server) for tool in tools)
    assert "call http://petstore.swagger.io/v2" in ctx.warnings[0] and "Base URL" in ctx.warnings[0]
    # Set as Base URL, it is the person's: sealed
    node = _http_provider(petstore_file, document__base_url="http://petstore.swagger.io/v2")
    (table,) = node_host.execute_node(node, ExecuteContext(), None)
    assert all(is_sealed_here(tool.server) for tool in tools_from_frame(table.to_pandas()))


def test_the_base_url_and_the_api_key_header_from_the_document_go_to_the_tools(petstore_file: str) -> None:
    # Given an API key in a header whose name is left to the document (its apiKey scheme names 'api_key')
    node = _http_provider(
        petstore_file, document__base_url="https://staging.example.com/v2", auth__kind="HEADER",
        auth__credential="petstore-key",
    )  # fmt: skip
    (table,) = node_host.execute_node(node, ExecuteContext(credentials={"petstore-key": ("", "s3cret")}), None)
    tools = tools_from_frame(table.to_pandas())
    assert {tool.server.target for tool in tools} == {"https://staging.example.com/v2"}
    auth = tools[0].server.auth
    assert (auth.kind, auth.header, auth.credential) == ("header", "api_key", "petstore-key")
    assert "s3cret" not in table.to_pandas().to_json()


def test_an_api_key_in_a_query_parameter_named_in_the_settings(petstore_file: str) -> None:
    node = _http_provider(
        petstore_file, document__base_url="http://petstore.swagger.io/v2", auth__kind="QUERY", auth__credential="k",
        auth__name="key",
    )  # fmt: skip
    (table,) = node_host.execute_node(node, ExecuteContext(credentials={"k": ("", "v")}), None)
    auth = tools_from_frame(table.to_pandas())[0].server.auth
    assert (auth.kind, auth.parameter) == ("query", "key")


def test_a_credential_for_the_server_a_document_file_names_needs_it_as_base_url(petstore_file: str) -> None:
    node = _http_provider(petstore_file, auth__kind="BEARER", auth__credential="k")
    with pytest.raises(knext.InvalidParametersError, match="Set Base URL to http://petstore.swagger.io/v2"):
        node_host.execute_node(node, ExecuteContext(credentials={"k": ("", "v")}), None)


def test_authentication_without_a_credential_is_an_invalid_setting(petstore_file: str) -> None:
    with pytest.raises(knext.InvalidParametersError, match="Choose the credential"):
        node_host.configure_node(_http_provider(petstore_file, auth__kind="BEARER"), ConfigureContext(), None)


def test_webhook_rows_are_added_after_the_operations_and_stay_unsealed(petstore_file: str) -> None:
    node = _http_provider(petstore_file, selection__include="^getPetById$|^hook")
    (table,) = node_host.execute_node(node, ExecuteContext(), _webhooks("https://hooks.example.com/T1"))
    tools = tools_from_frame(table.to_pandas())
    assert [tool.name for tool in tools] == ["getPetById", "hook1"]
    hook = tools[1]
    assert hook.server.target == "https://hooks.example.com/T1" and hook.http is not None
    assert hook.http.body == "*" and not is_sealed_here(hook.server)


def test_trusted_webhooks_alone_are_sealed() -> None:
    node = _http_provider("", document__trust_webhooks=True)
    (table,) = node_host.execute_node(node, ExecuteContext(), _webhooks("http://127.0.0.1:9/hook"))
    (tool,) = tools_from_frame(table.to_pandas())
    assert is_sealed_here(tool.server)


def test_a_bad_webhook_row_fails_the_node_naming_the_row() -> None:
    table = _webhooks("https://hooks.example.com/T1", "")
    with pytest.raises(knext.InvalidParametersError, match="Webhook Row1: no URL"):
        node_host.execute_node(_http_provider(""), ExecuteContext(), table)


def test_a_swagger_2_document_fails_the_node_saying_how_to_convert(oas_examples: Path) -> None:
    node = _http_provider(str(oas_examples / "2.0/json/petstore.json"))
    with pytest.raises(knext.InvalidParametersError, match="swagger2openapi"):
        node_host.execute_node(node, ExecuteContext(), None)


def test_a_document_path_set_by_a_flow_variable_is_not_read(petstore_file: str) -> None:
    ctx = ExecuteContext()
    ctx.flow_variables["doc"] = petstore_file
    with pytest.raises(knext.InvalidParametersError, match="flow variable 'doc'"):
        node_host.execute_node(_http_provider(petstore_file), ctx, None)
    # Unless the flow variable is trusted
    trusted = _http_provider(petstore_file, document__trust_flow_variable=True)
    (table,) = node_host.execute_node(trusted, ctx, None)
    assert len(table.to_pandas()) == 20


def test_the_fastapi_document_over_http_with_its_query_key(http_api_url: str) -> None:
    node = _http_provider(f"{http_api_url}/openapi.json", auth__kind="QUERY", auth__credential="k")
    (table,) = node_host.execute_node(node, ExecuteContext(credentials={"k": ("", "v")}), None)
    tools = tools_from_frame(table.to_pandas())
    assert "createPet" in {tool.name for tool in tools}
    assert {tool.server.auth.parameter for tool in tools} == {"api_key"}


def test_a_document_larger_than_the_largest_document_setting_fails_the_node(tmp_path: Path) -> None:
    big = tmp_path / "openapi.json"
    big.write_text(json.dumps({"openapi": "3.0.3", "paths": {}, "x-padding": "x" * 2**20}))
    node = _http_provider(str(big), document__max_document_mb=1)
    with pytest.raises(knext.InvalidParametersError, match="larger than 1 MB"):
        node_host.execute_node(node, ExecuteContext(), None)


def test_the_largest_response_setting_travels_with_the_tools_and_bounds_their_answers(http_api_url: str) -> None:
    from knime_mcp.calls.dispatch import CallOutcome, Dispatcher, RetryPolicy
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.errors import ToolCallError
    from knime_mcp.mcp.sync import run_sync

    # Given a trusted webhook whose answer is 2 MB, listed with Largest response (MB) = 1
    node = _http_provider("", document__trust_webhooks=True, document__max_response_mb=1)
    (table,) = node_host.execute_node(node, ExecuteContext(), _webhooks(f"{http_api_url}/big"))
    (tool,) = tools_from_frame(table.to_pandas())
    # Then the tools table carries the setting, sealed with the rest of the server
    assert tool.server.max_response_bytes == 2**20 and is_sealed_here(tool.server)

    # And a call of the tool fails saying the size, the cap and the setting to raise
    async def call() -> CallOutcome:
        async with ClientPool(check_unsealed=True) as pool:
            return await Dispatcher(pool, retry=RetryPolicy(attempts=1)).call(tool, {"text": "hi"})

    outcome = run_sync(call)
    message = str(outcome.error)
    assert isinstance(outcome.error, ToolCallError) and "(2,000,002 bytes) is larger than" in message
    assert "(1 MB)" in message and "Raise Largest response (MB)" in message


@pytest.mark.knime_launcher
def test_with_knimes_tool_type_http_tools_get_missing_knime_tool_cells_named_in_the_warning(
    knime_tool_branch: Any, petstore_file: str
) -> None:
    from real_knime.tool_overlay import tool_cells

    # Given a KNIME with the unified Tool type, whose MCP kind names an MCP server and cannot describe an HTTP request
    node = _http_provider(
        petstore_file, document__base_url="http://petstore.swagger.io/v2", selection__include="^getPetById$"
    )
    ctx = ExecuteContext()
    # When the HTTP Tool Provider is configured and executed
    (spec,) = node_host.configure_node(node, ConfigureContext(), None)
    (table,) = node_host.execute_node(node, ctx, None)
    # Then its columns stay the MCP Tool Provider's (so both tables concatenate), the KNIME Tool cell is missing,
    # and the warning names the tool and why
    assert spec.column_names == table.schema.column_names == [*COLUMNS, "KNIME Tool"]
    assert table.to_pyarrow().column("Name").to_pylist() == ["getPetById"]
    assert tool_cells(table) == [None]
    reason = "'getPetById' (an HTTP tool: KNIME's Tool type describes MCP servers only)"
    assert ctx.warnings and reason in ctx.warnings[-1]


def test_a_knime_without_the_unified_tool_type_gets_no_knime_tool_column(petstore_file: str) -> None:
    node = _http_provider(
        petstore_file, document__base_url="http://petstore.swagger.io/v2", selection__include="^getPetById$"
    )
    ctx = ExecuteContext()
    (spec,) = node_host.configure_node(node, ConfigureContext(), None)
    (table,) = node_host.execute_node(node, ctx, None)
    assert spec.column_names == table.schema.column_names == list(COLUMNS)
    assert not ctx.warnings
