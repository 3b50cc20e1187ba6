"""The tools table: the Arrow extension column through IPC, Parquet and pandas, and the KNIME JSON form."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knime_mcp.errors import ConfigError
from knime_mcp.tools.arrow import (
    COLUMNS,
    EXTENSION_NAME,
    MCPToolType,
    register_mcp_tool_type,
    tools_from_arrow,
    tools_from_frame,
    tools_to_arrow,
    tools_to_frame,
    tools_to_table,
    write_tools,
)
from knime_mcp.tools.schema import apply_schema_mode
from knime_mcp.tools.table_reading import _py_values
from knime_mcp.tools.tool import MCPTool
from tool_factory import ENTITIES_SCHEMA, make_tool, realistic_tools

TOOLS = [
    *realistic_tools(20),
    make_tool("create_entities", ENTITIES_SCHEMA, title=None, description=""),
    make_tool("ünïcode", {}, notes=("first note", "second note")),
]


def ipc_round_trip(table: pa.Table) -> pa.Table:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


def test_tools_survive_the_arrow_table_and_back() -> None:
    assert tools_from_arrow(tools_to_arrow(TOOLS)) == TOOLS


def test_the_arrow_table_has_the_tool_column_then_readable_columns() -> None:
    table = tools_to_arrow(TOOLS[:1])

    assert table.column_names == list(COLUMNS) == [
        "MCP Tool", "Name", "Title", "Description", "Input Schema", "Output Schema",
        "Read-only", "Destructive", "Idempotent", "Open-world", "Server", "Notes", "Tool ID", "Kind", "Tags",
        "App", "Permissions",
    ]  # fmt: skip
    assert isinstance(table.schema.field("MCP Tool").type, MCPToolType)
    row = table.drop_columns(["MCP Tool"]).to_pylist()[0]
    assert row == {
        "Name": "tool_0",
        "Title": "Tool 0",
        "Description": "The tool_0 tool.",
        "Input Schema": json.dumps(TOOLS[0].input_schema, separators=(",", ":")),
        "Output Schema": '{"type":"object","properties":{"hits":{"type":"integer"}}}',
        "Read-only": True,
        "Destructive": False,
        "Idempotent": False,
        "Open-world": True,
        "Server": "demo",
        "Notes": "parameter 'x' dropped: an array is not offered in simple schema mode",
        "Tool ID": TOOLS[0].tool_id,
        "Kind": "MCP",
        "Tags": ["demo"],
        "App": None,
        "Permissions": ["network"],
    }


def test_notes_are_one_line_each_in_the_notes_column() -> None:
    assert tools_to_arrow(TOOLS[-1:]).column("Notes").to_pylist() == ["first note\nsecond note"]


def test_an_empty_tool_list_gives_an_empty_table_with_all_columns() -> None:
    table = tools_to_arrow([])

    assert table.num_rows == 0 and table.column_names == list(COLUMNS)
    assert tools_from_arrow(table) == []


def test_a_shaped_schema_that_differs_from_the_input_schema_survives() -> None:
    shaped = apply_schema_mode(make_tool("weather", {**ENTITIES_SCHEMA, "required": []}), "simple")
    assert shaped is not None and shaped.parameter_schema != shaped.input_schema

    assert tools_from_arrow(tools_to_arrow([shaped])) == [shaped]


def test_a_shaped_schema_that_differs_from_the_input_schema_survives_the_knime_table() -> None:
    shaped = apply_schema_mode(make_tool("weather", {**ENTITIES_SCHEMA, "required": []}), "simple")
    assert shaped is not None and shaped.parameter_schema != shaped.input_schema

    assert tools_from_arrow(tools_to_table([shaped, *TOOLS[:2]])) == [shaped, *TOOLS[:2]]


_DECOY = {
    "type": "object",
    "properties": {
        "server": {"type": "string", "description": 'not the "server": {}, "notes": []'},
        "parameter_schema": {"type": "object", "properties": {"output_schema": {}}},
    },
}
"""A schema holding the keys a KNIME cell cuts at, nested: reading must not take them for the cell's own."""


@pytest.mark.parametrize(
    "tool",
    [
        make_tool("decoy", _DECOY, output_schema={"annotations": {}, "server": {"name": "x"}}),
        make_tool("decoy_parameters", _DECOY, parameter_schema={"type": "object"}),
        make_tool("decoy_text", description=',"input_schema":{},"server":{},"notes":[]', title='"notes":'),
    ],
)
def test_a_cell_holding_the_keys_it_is_cut_at_reads_back_as_the_tool(tool: MCPTool) -> None:
    assert tools_from_arrow(tools_to_table([tool])) == [tool]


@pytest.mark.parametrize(
    "text",
    [
        lambda tool: json.dumps(tool.to_dict()),
        lambda tool: json.dumps(dict(reversed(tool.to_dict().items())), separators=(",", ":")),
        lambda tool: tool.to_json().replace(',"annotations":', ',"annotations": '),
        lambda tool: tool.to_json().replace('{"cell_format":2,', '{"cell_format":2 ,'),
    ],
)
def test_a_cell_not_in_the_layout_the_provider_writes_reads_back_as_the_tool(
    text: Callable[[MCPTool], str],
) -> None:
    """Tables written by earlier versions, by hand or by other tools: read whole, to the same tools."""
    assert tools_from_arrow(pa.table({"MCP Tool": [text(tool) for tool in TOOLS]})) == TOOLS


@pytest.mark.parametrize(
    "array",
    [
        pa.array(["a", None, "ü"]),
        pa.array(["a", None], pa.large_string()),
        pa.array([True, None, False]),
        pa.array([1, None]),
        pa.array([["a", "b"], None, []], pa.list_(pa.string())),
        pa.array([["a"], None, []], pa.list_(pa.string())).slice(1),
    ],
)
def test_struct_fields_read_as_to_pylist_reads_them_with_lists_as_tuples(array: pa.Array) -> None:
    expected = [tuple(value) if isinstance(value, list) else value for value in array.to_pylist()]
    assert _py_values(array) == expected


def test_tools_survive_an_ipc_stream() -> None:
    table = ipc_round_trip(tools_to_arrow(TOOLS))

    assert isinstance(table.schema.field("MCP Tool").type, MCPToolType)
    assert tools_from_arrow(table) == TOOLS


def test_tools_survive_a_table_of_many_chunks() -> None:
    batches = [tools_to_arrow(TOOLS[:5]), tools_to_arrow(TOOLS[5:])]

    assert tools_from_arrow(pa.concat_tables(batches)) == TOOLS


def test_a_cell_and_a_chunk_convert_to_mcp_tools() -> None:
    chunk = tools_to_arrow(TOOLS).column("MCP Tool").chunk(0)

    assert chunk[3].as_py() == TOOLS[3]
    assert chunk.slice(2, 3).to_tools() == TOOLS[2:5]
    assert chunk.to_pylist() == TOOLS


def test_tools_survive_parquet_read_back_in_a_fresh_process(tmp_path: Path) -> None:
    path = tmp_path / "tools.parquet"
    write_tools(TOOLS, path, "parquet")
    # Threaded reads of a file with a Python extension type make the process abort at exit now and then
    # ("terminate called without an active exception", upstream apache/arrow#34314, seen with pyarrow 26).
    code = (
        "import sys, knime_mcp.tools.arrow as arrow, pyarrow.parquet as pq\n"
        "table = pq.read_table(sys.argv[1], use_threads=False)\n"
        "print(type(table.schema.field('MCP Tool').type).__name__)\n"
        "print('\\n'.join(tool.to_json() for tool in arrow.tools_from_arrow(table)))\n"
    )

    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stderr
    type_name, *lines = result.stdout.splitlines()
    assert type_name == "MCPToolType"
    assert lines == [tool.to_json() for tool in TOOLS]


def test_an_arrow_ipc_file_written_for_the_cli_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "tools.arrow"

    write_tools(TOOLS, path, "arrow")

    assert tools_from_arrow(pa.ipc.open_file(str(path)).read_all()) == TOOLS


def test_parquet_read_without_the_type_registered_still_gives_the_tools(tmp_path: Path) -> None:
    path = tmp_path / "tools.parquet"
    write_tools(TOOLS, path, "parquet")
    pa.unregister_extension_type(EXTENSION_NAME)
    try:
        table = pq.read_table(path)
    finally:
        register_mcp_tool_type()

    assert not isinstance(table.schema.field("MCP Tool").type, pa.ExtensionType)
    assert tools_from_arrow(table) == TOOLS


def test_registering_again_or_reloading_the_module_is_harmless() -> None:
    code = (
        "import importlib, pyarrow as pa, knime_mcp.tools.arrow as arrow\n"
        "arrow.register_mcp_tool_type(); arrow.register_mcp_tool_type()\n"
        "arrow = importlib.reload(arrow)\n"
        "from tool_factory import realistic_tools\n"
        "tools = realistic_tools(3)\n"
        "sink = pa.BufferOutputStream()\n"
        "table = arrow.tools_to_arrow(tools)\n"
        "with pa.ipc.new_stream(sink, table.schema) as writer: writer.write_table(table)\n"
        "read = pa.ipc.open_stream(sink.getvalue()).read_all()\n"
        "print(type(read.schema.field('MCP Tool').type) is arrow.MCPToolType, arrow.tools_from_arrow(read) == tools)\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parent
    )

    assert result.stdout.split() == ["True", "True"]


def test_the_arrow_table_converts_to_pandas_with_mcp_tool_objects() -> None:
    frame = tools_to_arrow(TOOLS).to_pandas()

    assert list(frame.columns) == list(COLUMNS)
    assert list(frame["MCP Tool"]) == TOOLS
    assert frame["Read-only"].dtype == bool
    assert tools_from_frame(frame) == TOOLS


def test_tools_survive_the_knime_frame_and_back() -> None:
    assert tools_from_frame(tools_to_frame(TOOLS)) == TOOLS


def test_the_knime_frame_holds_json_strings_and_plain_booleans() -> None:
    frame = tools_to_frame(TOOLS)

    assert list(frame.columns) == list(COLUMNS)
    assert frame["MCP Tool"].dtype == object
    assert [type(cell) for cell in frame["MCP Tool"]] == [str] * len(TOOLS)
    assert json.loads(frame["MCP Tool"][0]) == TOOLS[0].to_dict()
    assert [frame[column].dtype for column in ("Read-only", "Destructive", "Idempotent", "Open-world")] == [bool] * 4
    assert frame["Notes"].iloc[-1] == "first note\nsecond note"
    assert frame["Output Schema"].iloc[1] is None


def test_the_knime_frame_and_the_arrow_table_show_the_same_readable_columns() -> None:
    readable = list(COLUMNS[1:])

    from_arrow = tools_to_arrow(TOOLS).select(readable).to_pylist()
    from_knime = tools_to_table(TOOLS).select(readable).to_pylist()
    from_frame = tools_to_frame(TOOLS)[readable].to_dict("records")

    assert from_knime == from_arrow
    lists = ("Tags", "Permissions")  # numpy arrays in pandas
    assert [{**row, **{column: list(row[column]) for column in lists}} for row in from_frame] == from_arrow


def test_the_knime_table_the_provider_writes_holds_json_text_and_reads_back_as_the_tools() -> None:
    table = tools_to_table(TOOLS)

    assert table.column_names == list(COLUMNS)
    assert table.schema.field("MCP Tool").type == pa.string()
    assert [json.loads(cell) for cell in table.column("MCP Tool").to_pylist()] == [tool.to_dict() for tool in TOOLS]
    assert table.drop_columns(["MCP Tool"]).to_pylist() == tools_to_arrow(TOOLS).drop_columns(["MCP Tool"]).to_pylist()
    assert tools_from_arrow(table) == TOOLS


def test_the_json_column_of_a_knime_table_read_as_arrow_gives_the_tools() -> None:
    table = pa.Table.from_pandas(tools_to_frame(TOOLS), preserve_index=False)

    assert tools_from_arrow(table) == TOOLS


def test_a_frame_without_the_tool_column_is_a_config_error_pointing_to_the_provider() -> None:
    frame = pd.DataFrame({"Prompt": ["hi"]})

    with pytest.raises(ConfigError) as caught:
        tools_from_frame(frame)

    assert str(caught.value) == (
        "Column 'MCP Tool' does not hold MCP tools: the table has no such column. "
        "Hint: Connect the MCP Tool Provider's output table, or choose the column that holds its MCP tools."
    )


def test_a_column_of_other_text_is_a_config_error_naming_the_column_and_row() -> None:
    frame = pd.DataFrame({"Prompt": pd.Series(["hello", "world"], index=["Row0", "Row1"], dtype=object)})

    with pytest.raises(ConfigError) as caught:
        tools_from_frame(frame, column="Prompt")

    message = str(caught.value)
    assert message.startswith("Column 'Prompt' does not hold MCP tools: row Row0 holds 'hello'.")
    assert "Connect the MCP Tool Provider's output table" in message


def test_a_missing_cell_in_the_tool_column_is_reported_as_missing() -> None:
    frame = tools_to_frame(TOOLS[:2])
    frame.loc[1, "MCP Tool"] = None

    with pytest.raises(ConfigError, match="row 1 holds a missing value"):
        tools_from_frame(frame)


def test_an_arrow_column_of_numbers_is_a_config_error_naming_its_type() -> None:
    with pytest.raises(ConfigError, match="Column 'Score' does not hold MCP tools: it is of type int64"):
        tools_from_arrow(pa.table({"Score": [1, 2]}), column="Score")


def test_a_missing_tool_row_in_the_arrow_column_is_a_config_error() -> None:
    table = tools_to_arrow(TOOLS[:2])
    column = table.column("MCP Tool").chunk(0)
    holed = pa.StructArray.from_arrays(
        column.storage.flatten(), fields=list(column.storage.type), mask=pa.array([False, True])
    )

    with pytest.raises(ConfigError, match="row 1 holds a missing value"):
        tools_from_arrow(pa.table({"MCP Tool": pa.ExtensionArray.from_storage(MCPToolType(), holed)}))


def test_five_thousand_tools_survive_the_arrow_table_and_back() -> None:
    tools = realistic_tools(5_000)

    assert tools_from_arrow(ipc_round_trip(tools_to_arrow(tools))) == tools


def test_whether_a_tool_is_annotated_and_needs_a_task_survives_the_arrow_table_and_the_knime_frame() -> None:
    from knime_mcp.tools.tool import ToolAnnotations

    tools = [make_tool("plain"), make_tool("research", task_support="required", annotations=ToolAnnotations(
        read_only=True, destructive=False, annotated=True))]  # fmt: skip

    for back in (tools_from_arrow(tools_to_arrow(tools)), tools_from_frame(tools_to_frame(tools))):
        assert [(tool.annotations.annotated, tool.task_support) for tool in back] == [
            (False, "forbidden"),
            (True, "required"),
        ]


def test_a_struct_written_before_annotated_and_task_support_existed_reads_with_the_hints_at_face_value() -> None:
    storage = tools_to_arrow([make_tool("delete_record")]).column(0).combine_chunks().storage
    older = pa.StructArray.from_arrays(
        [storage.field(name) for name in storage.type.names if name not in ("annotated", "task_support")],
        fields=[field for field in storage.type if field.name not in ("annotated", "task_support")],
    )

    (tool,) = tools_from_arrow(pa.table({"MCP Tool": older}))

    assert tool.annotations.annotated and tool.annotations.destructive and tool.task_support == "forbidden"


def test_the_tags_column_shows_each_tools_own_tags_among_tools_that_share_a_server() -> None:
    from knime_mcp.tools.http_operation import HttpOperation
    from knime_mcp.tools.tags import all_tags
    from knime_mcp.tools.tool import ToolAnnotations

    tools = [
        make_tool("look", annotations=ToolAnnotations(read_only=True, annotated=True)),
        make_tool("wipe", annotations=ToolAnnotations(destructive=True, annotated=True)),
        make_tool("plain"),
        make_tool("tagged", tags=("team",)),
        make_tool("request", http=HttpOperation(method="GET", path="/x")),
        make_tool("look_again", annotations=ToolAnnotations(read_only=True, annotated=True)),
    ]

    expected = [list(all_tags(tool)) for tool in tools]
    assert len({tuple(tags) for tags in expected}) == 5
    assert tools_to_table(tools).column("Tags").to_pylist() == expected
    assert tools_to_arrow(tools).column("Tags").to_pylist() == expected
