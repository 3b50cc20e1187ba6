"""The MCP Tool cell's format: cells written by 0.5.0 still read and keep their seals, the current layout reads as
a whole parse of the same text would, and any edit to a sealed cell voids its seal whichever way it is read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pydantic_core import from_json

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.seal import is_sealed_here, seal_spec, team_seal_key
from knime_mcp.tools.annotations import ToolAnnotations
from knime_mcp.tools.arrow import tools_from_arrow, tools_to_table
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.tool_cells import CELL_FORMAT, TableReader
from tool_factory import ENTITIES_SCHEMA, make_tool, realistic_tools

OLD = json.loads((Path(__file__).parent / "data" / "tool_cells_0_5_0.json").read_text(encoding="utf-8"))
"""Cells the 0.5.0 writer wrote (``tools_to_table``), sealed with a team key kept beside them."""


@pytest.fixture
def old_key() -> Iterator[None]:
    with team_seal_key(OLD["team_key"]):
        yield


def read(cells: list[str]) -> list[MCPTool]:
    return tools_from_arrow(pa.table({"MCP Tool": cells}))


def whole(text: str) -> MCPTool:
    """The tool a whole parse of ``text`` gives: what every cell must read as."""
    return TableReader(MCPTool.from_fields).tool(from_json(text))


def test_cells_written_by_0_5_0_read_back_as_the_tools_they_were_written_from(old_key: None) -> None:
    search, memory_add, get_pet, unsealed = read(OLD["cells"])

    assert (search.name, search.title, search.description) == ("search", "Search", 'Searches, "quoted" ünïcode.')
    assert search.tags == ("demo", "read-only") and search.annotations.read_only
    assert search.output_schema == {"type": "object", "properties": {"hits": {"type": "integer"}}}
    assert memory_add.tool_name == "add" and memory_add.task_support == "optional"
    assert memory_add.parameter_schema == {"type": "object", "properties": {"query": {"type": "string"}}}
    assert memory_add.parameter_schema != memory_add.input_schema
    assert memory_add.notes == ("parameter 'x' dropped",) and memory_add.server.handshake == "initialize"
    assert get_pet.http is not None and get_pet.http.path == "/pets/{petId}" and get_pet.tags == ("pets",)
    assert get_pet.server.headers == {"X-Team": "blue"}
    assert [is_sealed_here(tool.server) for tool in (search, memory_add, get_pet, unsealed)] == [
        True, True, True, False,
    ]  # fmt: skip


def test_cells_written_by_0_5_0_are_written_again_in_the_current_format_to_the_same_tools(old_key: None) -> None:
    tools = read(OLD["cells"])
    cells = tools_to_table(tools).column("MCP Tool").to_pylist()

    assert all(json.loads(cell)["cell_format"] == CELL_FORMAT for cell in cells)
    assert read(cells) == tools
    assert [is_sealed_here(tool.server) for tool in read(cells)] == [True, True, True, False]


@pytest.mark.parametrize(
    "edit",
    [
        lambda cell: {**cell, "name": "renamed"},
        lambda cell: {**cell, "tool_name": "delete_everything"},
        lambda cell: {
            **cell,
            "annotations": {**cell["annotations"], "read_only": not cell["annotations"]["read_only"]},
        },
        lambda cell: {**cell, "task_support": "required"},
        lambda cell: {**cell, "server": {**cell["server"], "target": "http://169.254.169.254/mcp"}},
        lambda cell: {**cell, "seal": "0" * 64},
    ],
    ids=["name", "tool name", "hints", "task support", "server", "seal"],
)
@pytest.mark.parametrize("written", ["0.5.0", "current"])
def test_an_edited_cell_fails_its_seal_in_either_format(edit, written: str, old_key: None) -> None:  # type: ignore[no-untyped-def]
    cells = OLD["cells"][:3] if written == "0.5.0" else [tool.to_json() for tool in read(OLD["cells"][:3])]
    # The edited cell comes after an unedited one of the same server, whose end a reader compares with the next
    edited = [json.dumps(edit(json.loads(cell)), separators=(",", ":")) for cell in cells]
    compact = [json.dumps(json.loads(cell), separators=(",", ":")) for cell in cells]

    for row in range(len(cells)):
        tools = read([*compact[:row], edited[row]])
        assert is_sealed_here(tools[-1].server) is False
        assert all(is_sealed_here(tool.server) for tool in tools[:-1])


def test_an_edited_end_is_not_taken_for_the_previous_rows_end() -> None:
    # Given two rows of one sealed server, the second edited to name another server in its end
    first, second = (tool.to_json() for tool in realistic_tools(4)[::2])
    forged = second.replace('"target":"http://127.0.0.1:8000/mcp"', '"target":"http://169.254.169.254/"')
    assert forged != second

    # When read in one table, then the first keeps its seal and the second, read with its own end, has none
    tools = read([first, forged])
    assert is_sealed_here(tools[0].server) and not is_sealed_here(tools[1].server)
    assert tools[1].server.target == "http://169.254.169.254/"


_DECOYS = [
    make_tool("decoy_description", description=',"annotations":{},"server":{"target":"http://169.254.169.254/"}}'),
    make_tool("decoy_env", server=seal_spec(ServerSpec(target="npx -y server", name="env", env={"annotations": "x"}))),
    make_tool(
        "decoy_header",
        server=seal_spec(ServerSpec(target="http://127.0.0.1:9/mcp", headers={"X-A": ',"annotations":{}}'})),
    ),
    make_tool("decoy_schema", {"type": "object", "properties": {"annotations": {}, "server": {"type": "string"}}}),
    make_tool("decoy_output", output_schema={"annotations": {}, "server": {"target": "x"}}),
    make_tool("decoy_title", title='","annotations":{},"server":{}}', tags=('"annotations":',)),
]
"""Tools whose text holds the key the current layout cuts a cell at, where it is not the cell's own."""


@pytest.mark.parametrize("tool", _DECOYS, ids=[tool.name for tool in _DECOYS])
def test_a_cell_holding_the_key_it_is_cut_at_reads_back_as_the_tool_and_keeps_its_seal(tool: MCPTool) -> None:
    (back,) = read([tool.to_json()])

    assert back == tool and is_sealed_here(back.server)
    assert read([_DECOYS[0].to_json(), tool.to_json()])[1] == tool  # after another row's end too


@pytest.mark.parametrize(
    "text",
    [
        # The head holds a server of its own: a whole parse takes the last, as the cut must not read the first
        lambda cell: cell.replace('"seal":', '"server":{"target":"http://169.254.169.254/"},"seal":', 1),
        # The end holds a key besides the hints and the server
        lambda cell: cell[:-1] + ',"name":"other"}',
    ],
    ids=["server in the head", "more in the end"],
)  # fmt: skip
def test_a_cell_not_cut_cleanly_reads_as_a_whole_parse_of_its_text(text) -> None:  # type: ignore[no-untyped-def]
    sealed = make_tool("echo")
    cell = text(sealed.to_json())
    (back,) = read([sealed.to_json(), cell])[1:]

    assert back == whole(cell)


def test_a_current_cell_without_a_parameter_schema_offers_its_input_schema() -> None:
    tool = make_tool("create_entities", ENTITIES_SCHEMA)
    assert "parameter_schema" not in json.loads(tool.to_json())

    (back,) = read([tool.to_json()])
    assert back.parameter_schema == back.input_schema == ENTITIES_SCHEMA and is_sealed_here(back.server)


def test_a_shaped_parameter_schema_is_written_and_read_back() -> None:
    tool = make_tool("echo", parameter_schema={"type": "object"})
    assert json.loads(tool.to_json())["parameter_schema"] == {"type": "object"}

    assert read([tool.to_json()]) == [tool]


def test_a_cell_in_a_later_format_is_refused_naming_the_update() -> None:
    cell = make_tool("echo").to_json().replace(f'"cell_format":{CELL_FORMAT}', '"cell_format":3')

    with pytest.raises(ConfigError, match="row 0: The tool's cell format is 3; this knime-mcp reads") as err:
        read([cell])
    assert "Update knime-mcp" in str(err.value)


def test_the_hints_of_many_rows_are_shared_and_each_rows_own() -> None:
    tools = [make_tool(f"t{n}", annotations=ToolAnnotations(read_only=n % 2 == 0, annotated=True)) for n in range(6)]

    assert read([tool.to_json() for tool in tools]) == tools
