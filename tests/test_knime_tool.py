"""KNIME's own Tool value (ToolType MCP) as fields: what of an MCPTool it carries, which tools it cannot carry and
why, and the MCPTool a KNIME Tool cell stands for (a server from data, never sealed)."""

from __future__ import annotations

import pytest

from knime_mcp import MCPTool, ServerSpec
from knime_mcp.config import AuthRef
from knime_mcp.errors import ConfigError
from knime_mcp.seal import is_sealed_here, seal_spec
from knime_mcp.tools.http_operation import HttpOperation
from knime_mcp.tools.knime_tool import (
    KnimeToolFields,
    knime_tool_cells,
    mcp_tools_of_knime,
    tool_from_knime,
)

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _tool(name: str = "echo", server: ServerSpec | None = None, **changes: object) -> MCPTool:
    values: dict[str, object] = {
        "name": name, "tool_name": name, "description": f"{name} the text", "input_schema": SCHEMA,
        "parameter_schema": SCHEMA, "server": server or seal_spec(ServerSpec(target="https://tools.example.com/mcp")),
    }  # fmt: skip
    return MCPTool(**{**values, **changes})  # type: ignore[arg-type]


def test_a_url_server_tool_maps_to_the_fields_knimes_tool_type_carries() -> None:
    bearer = seal_spec(
        ServerSpec(target="https://tools.example.com/mcp", auth=AuthRef(kind="bearer", credential="github"))
    )
    cells, note = knime_tool_cells([_tool(), _tool("search", bearer, description="", title="Search it")])

    assert note is None
    assert cells == [
        KnimeToolFields(
            name="echo", description="echo the text", parameter_schema=SCHEMA,
            server_uri="https://tools.example.com/mcp", credential_name=None,
        ),
        KnimeToolFields(
            name="search", description="Search it", parameter_schema=SCHEMA,
            server_uri="https://tools.example.com/mcp", credential_name="github",
        ),
    ]  # fmt: skip


def test_the_knime_tool_carries_the_servers_own_name_as_knime_calls_the_tool_by_it() -> None:
    prefixed = _tool("echo").with_changes(name="demo_echo")
    (cell,), note = knime_tool_cells([prefixed])
    assert cell is not None and cell.name == "echo" and note is None


def test_tools_the_type_cannot_carry_get_no_cell_and_are_named_with_the_reason() -> None:
    url = "https://tools.example.com/mcp"
    tools = [
        _tool("ok"),
        _tool("local", ServerSpec(target="npx -y @modelcontextprotocol/server-memory")),
        _tool("signin", ServerSpec(target=url, auth=AuthRef(kind="oauth"))),
        _tool("keyed", ServerSpec(target=url, headers={"X-Team": "data"})),
        _tool("basic", ServerSpec(target=url, auth=AuthRef(kind="basic", credential="c"))),
        _tool("envtoken", ServerSpec(target=url, auth=AuthRef(kind="bearer", secret="${TOKEN}"))),
        _tool("sse", ServerSpec(target=url, transport="sse")),
        _tool("task", task_support="required"),
        _tool("get_pet", ServerSpec(target="https://pets.example.com"), http=HttpOperation(method="GET", path="/pet")),
    ]
    cells, note = knime_tool_cells(tools)

    assert [cell is not None for cell in cells] == [True, *[False] * 8]
    assert note is not None
    assert note.startswith("8 tools have no KNIME Tool value (a missing cell in 'KNIME Tool')")
    for words in (
        "'local' (a stdio server)", "'signin' (OAuth sign-in)", "'keyed' (extra HTTP headers)",
        "'basic' (basic authentication)", "'envtoken' (a token from an environment variable", "'sse' (SSE",
        "'task' (runs only as an MCP task)", "'get_pet' (an HTTP tool",
    ):  # fmt: skip
        assert words in note


def test_a_long_list_of_left_out_tools_names_the_first_and_counts_the_rest() -> None:
    http = HttpOperation(method="GET", path="/x")
    tools = [_tool(f"op{n}", ServerSpec(target="https://api.example.com"), http=http) for n in range(30)]
    _, note = knime_tool_cells(tools)
    assert note is not None and "'op19'" in note and "'op20'" not in note and "and 10 more" in note


def test_a_knime_tool_cell_becomes_an_unsealed_mcp_tool_with_the_credential_it_names() -> None:
    tool = tool_from_knime(
        KnimeToolFields(
            name="search", description="Searches.", parameter_schema=SCHEMA,
            server_uri="https://tools.example.com/mcp", credential_name="github",
        )
    )  # fmt: skip

    assert (tool.name, tool.tool_name, tool.description) == ("search", "search", "Searches.")
    assert tool.input_schema == tool.parameter_schema == SCHEMA
    assert tool.server.target == "https://tools.example.com/mcp"
    assert tool.server.auth == AuthRef(kind="bearer", credential="github")
    assert not is_sealed_here(tool.server)
    assert not tool.annotations.annotated
    assert tool_from_knime(KnimeToolFields("t", "", {}, "http://h/mcp")).server.auth == AuthRef()


@pytest.mark.parametrize("uri", ["npx -y @modelcontextprotocol/server-memory", "", "file:///etc/passwd", None])
def test_a_knime_tool_naming_no_http_url_is_refused_naming_the_tool(uri: str | None) -> None:
    with pytest.raises(ConfigError, match="'search'.*not an http"):
        tool_from_knime(KnimeToolFields("search", "", {}, uri))  # type: ignore[arg-type]


def test_knime_tool_cells_that_repeat_an_mcp_tool_of_the_table_are_read_once() -> None:
    listed = [_tool("echo"), _tool("add")]
    cells = [
        KnimeToolFields("echo", "", SCHEMA, "https://tools.example.com/mcp"),  # the provider's own second column
        KnimeToolFields("echo", "", SCHEMA, "https://other.example.com/mcp"),  # another server's echo
        KnimeToolFields("weather", "", {}, "https://weather.example.com/mcp"),
    ]
    tools = mcp_tools_of_knime(cells, listed)
    assert [(tool.name, tool.server.target) for tool in tools] == [
        ("echo", "https://other.example.com/mcp"), ("weather", "https://weather.example.com/mcp"),
    ]  # fmt: skip


def test_what_the_provider_writes_reads_back_as_the_same_call() -> None:
    (cell,), _ = knime_tool_cells([_tool("echo")])
    assert cell is not None
    back = tool_from_knime(cell)
    assert (back.tool_name, back.server.target, back.parameter_schema) == (
        "echo",
        "https://tools.example.com/mcp",
        SCHEMA,
    )


def test_an_app_only_tool_gets_no_knime_tool_as_knimes_agent_would_offer_it_to_a_model() -> None:
    cells, note = knime_tool_cells([_tool("refresh", app_uri="ui://budget/app.html", app_only=True)])
    assert cells == [None]
    assert note is not None and "'refresh' (only its MCP App may call it" in note
