"""HTTP tools in a tools table: the request an HTTP tool makes travels with it, in every form of the table, and is
covered by the tool's seal."""

from __future__ import annotations

import json

import pytest

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.http import BODY_ARGUMENTS, HttpOperation, HttpParameter
from knime_mcp.seal import is_sealed_here, seal_spec
from knime_mcp.tools.arrow import tools_from_arrow, tools_from_frame, tools_to_arrow, tools_to_frame
from knime_mcp.tools.tool import MCPTool, ToolAnnotations

GET_PET = HttpOperation(
    method="GET",
    path="/pets/{petId}",
    parameters=(
        HttpParameter(name="petId", location="path"),
        HttpParameter(name="fields", location="query"),
        HttpParameter(name="x_request_id", location="header", wire_name="X-Request-Id"),
    ),
)


def _tool(operation: HttpOperation, *, sealed: bool = True) -> MCPTool:
    server = ServerSpec(target="https://api.example.com/v1", name="pets")
    schema = {"type": "object", "properties": {"petId": {"type": "integer"}}, "required": ["petId"]}
    return MCPTool(
        name="get_pet",
        tool_name="get_pet",
        input_schema=schema,
        parameter_schema=schema,
        annotations=ToolAnnotations(read_only=True, destructive=False, idempotent=True, annotated=True),
        server=seal_spec(server) if sealed else server,
        http=operation,
    )


@pytest.mark.parametrize("operation", [GET_PET, HttpOperation(method="POST", body=BODY_ARGUMENTS)])
def test_an_http_tool_keeps_its_request_in_the_json_cell_and_in_arrow(operation: HttpOperation) -> None:
    tool = _tool(operation)
    (from_cell,) = tools_from_frame(tools_to_frame([tool]))
    (from_arrow,) = tools_from_arrow(tools_to_arrow([tool]))
    assert from_cell.http == from_arrow.http == operation
    assert is_sealed_here(from_cell.server) and is_sealed_here(from_arrow.server)


def test_an_mcp_tool_cell_has_no_http_entry_and_reads_back_without_one() -> None:
    tool = _tool(GET_PET).with_changes(http=None)
    assert "http" not in json.loads(tool.to_json())
    assert MCPTool.from_json(tool.to_json()).http is None


def test_changing_a_sealed_tools_request_voids_its_seal() -> None:
    # Given a sealed read-only GET, whose cell is edited into a DELETE
    cell = json.loads(_tool(GET_PET).to_json())
    assert is_sealed_here(MCPTool.from_dict(cell).server)  # unedited, it reads back sealed
    cell["http"]["method"] = "DELETE"
    # When the table is read, then the tool's server is no longer the one a person chose here
    edited = MCPTool.from_json(json.dumps(cell))
    assert edited.http is not None and edited.http.method == "DELETE" and not is_sealed_here(edited.server)


@pytest.mark.parametrize(
    ("http", "said"),
    [
        ({"method": "FETCH", "path": "/x"}, "HTTP method 'FETCH'"),
        ({"method": "GET", "path": "x"}, "does not start with '/'"),
        ({"method": "GET", "path": "/x", "parameters": [{"name": "id", "in": "path"}]}, "not in the path"),
        ({"method": "GET", "path": "/x", "parameters": [{"name": "id", "in": "cookie"}]}, "goes to 'cookie'"),
        ({"path": "/x"}, "has no 'method'"),
        ("GET /x", "not a JSON object"),
    ],
)
def test_a_malformed_request_in_a_table_is_named(http: object, said: str) -> None:
    cell = {**json.loads(_tool(GET_PET, sealed=False).to_json()), "http": http}
    with pytest.raises(ConfigError, match=said):
        MCPTool.from_json(json.dumps(cell))


@pytest.mark.parametrize("operation", [GET_PET, None])
def test_the_cell_a_table_holds_is_the_tools_dict_as_json(operation: HttpOperation | None) -> None:
    # The cell is written from parts serialised once per table; it must say what to_dict says, seal included
    tool = _tool(GET_PET).with_changes(http=operation, title="Pet \u00e9", notes=("a note",), output_schema={})
    assert json.loads(tool.to_json()) == tool.to_dict()
