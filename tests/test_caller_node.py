"""The MCP Tool Caller node, run through configure and execute as KNIME runs it (Given/When/Then)."""

from __future__ import annotations

import shlex
import time

import knime.extension as knext
import pandas as pd
import pytest

import knext_bootstrap
from knime_mcp.arrow import tools_to_frame
from knime_mcp.config import ServerSpec
from knime_mcp.errors import CancelledByUser, ToolCallError
from knime_mcp.sync import SyncMcpClient
from node_contexts import ConfigureContext, ExecuteContext

if not knext_bootstrap.USING_HOST:
    pytest.skip("node tests drive nodes through the headless host's runner", allow_module_level=True)

import knext_host_tools  # noqa: E402

RESULTS = ["Result", "Structured result", "Image", "Is error", "Error", "Duration (ms)"]


def _caller(**settings: object):  # type: ignore[no-untyped-def]
    import extension  # noqa: F401  (registers the category)
    from nodes.caller import MCPToolCaller

    node = MCPToolCaller()
    for path, value in settings.items():
        group, name = path.split("__")
        setattr(getattr(node, group), name, value)
    return node


def _tools_table(target: str) -> knext.Table:
    """What an MCP Tool Provider outputs for ``target``."""
    with SyncMcpClient(ServerSpec(target=target)) as client:
        return knext.Table.from_pandas(tools_to_frame(client.list_tools()))


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> knext.Table:
    return _tools_table(demo_http_url)


def _data(frame: pd.DataFrame, batch_size: int) -> knext.BatchOutputTable:
    """An input table in several batches, as KNIME hands large tables to execute."""
    frames = [frame.iloc[start : start + batch_size] for start in range(0, len(frame), batch_size)]
    return knext.BatchOutputTable.from_batches(frames)


def test_configure_appends_the_result_columns_to_the_input_spec(demo_tools: knext.Table) -> None:
    # Given an input with a text column, and a provider's tools table
    data = knext.Schema.from_columns([knext.Column(knext.string(), "text")])
    # When the caller is configured
    (spec,) = knext_host_tools.configure_node(_caller(tool__name="echo"), ConfigureContext(), data, demo_tools.schema)
    # Then the output is the input plus the typed result columns
    assert spec.column_names == ["text", *RESULTS]
    assert [spec[name].ktype for name in RESULTS] == [
        knext.string(), knext.string(), knext.blob(), knext.bool_(), knext.string(), knext.double()
    ]  # fmt: skip


def test_configure_without_a_tools_table_is_an_invalid_setting() -> None:
    data = knext.Schema.from_columns([knext.Column(knext.string(), "text")])
    with pytest.raises(knext.InvalidParametersError, match="no 'MCP Tool' column"):
        knext_host_tools.configure_node(_caller(), ConfigureContext(), data, data)


def test_configure_rejects_a_mapping_that_is_not_json(demo_tools: knext.Table) -> None:
    data = knext.Schema.from_columns([knext.Column(knext.string(), "text")])
    node = _caller(tool__name="echo", tool__mapping='{"text": ')
    with pytest.raises(knext.InvalidParametersError, match="not valid JSON"):
        knext_host_tools.configure_node(node, ConfigureContext(), data, demo_tools.schema)


def test_execute_calls_the_tool_for_1000_rows_in_order_and_keeps_the_rowids(demo_tools: knext.Table) -> None:
    # Given 1,000 rows in batches of 100 and the echo tool at concurrency 8
    texts = [f"row {i}" for i in range(1000)]
    node = _caller(tool__name="echo", calls__concurrency=8)
    ctx = ExecuteContext()
    # When the node executes
    (table,) = knext_host_tools.execute_node(node, ctx, _data(pd.DataFrame({"text": texts}), 100), demo_tools)
    # Then every row got its own result, in order, under its own RowID, and progress reached the end
    frame = table.to_pandas()
    assert list(frame.columns) == ["text", *RESULTS]
    assert frame["Result"].tolist() == texts
    assert list(frame.index[:2]) == ["Row0", "Row1"] and frame.index[-1] == "Row999"
    assert ctx.progress[-1] == (1.0, "1,000 of 1,000 rows called")
    assert not ctx.warnings


def test_a_mapping_feeds_parameters_from_differently_named_columns(demo_tools: knext.Table) -> None:
    node = _caller(tool__name="add", tool__mapping='{"a": "{x}", "b": "{y}"}')
    data = knext.Table.from_pandas(pd.DataFrame({"x": [1, 2], "y": [10.0, 20.0]}))
    (table,) = knext_host_tools.execute_node(node, ExecuteContext(), data, demo_tools)
    assert table.to_pandas()["Result"].tolist() == ["11", "22"]


def test_error_column_mode_records_failed_rows_and_warns(demo_tools: knext.Table) -> None:
    # Given rows for the always-failing tool, with errors going to a column
    node = _caller(tool__name="fail", calls__on_error="COLUMN")
    ctx = ExecuteContext()
    data = knext.Table.from_pandas(pd.DataFrame({"message": ["first", "second"]}))
    # When the node executes
    (table,) = knext_host_tools.execute_node(node, ctx, data, demo_tools)
    # Then both rows carry their error, and the node warns about them
    frame = table.to_pandas()
    assert frame["Is error"].tolist() == [True, True]
    assert "second" in frame["Error"].iloc[1]
    assert ctx.warnings == ["2 of 2 rows failed; see the 'Error' column."]


def test_fail_mode_fails_the_node_at_the_first_failed_row(demo_tools: knext.Table) -> None:
    node = _caller(tool__name="fail")
    data = knext.Table.from_pandas(pd.DataFrame({"message": ["boom"]}))
    with pytest.raises(ToolCallError, match="^Row 1 \\(RowID Row0\\): tool 'fail' reported an error"):
        knext_host_tools.execute_node(node, ExecuteContext(), data, demo_tools)


def test_an_unknown_tool_name_is_an_invalid_setting_that_lists_the_tools(demo_tools: knext.Table) -> None:
    data = knext.Table.from_pandas(pd.DataFrame({"text": ["hi"]}))
    with pytest.raises(knext.InvalidParametersError, match="no tool 'ech'.*'echo'"):
        knext_host_tools.execute_node(_caller(tool__name="ech"), ExecuteContext(), data, demo_tools)


def test_an_empty_input_gives_an_empty_output_with_the_result_columns(demo_tools: knext.Table) -> None:
    data = knext.Table.from_pandas(pd.DataFrame({"text": pd.Series([], dtype=str)}))
    (table,) = knext_host_tools.execute_node(_caller(tool__name="echo"), ExecuteContext(), data, demo_tools)
    assert table.num_rows == 0 and table.column_names == ["text", *RESULTS]


def test_cancel_stops_the_calls_in_flight(demo_stdio_command: list[str]) -> None:
    # Given rows that each sleep ten minutes on a stdio server
    tools = _tools_table(shlex.join(demo_stdio_command))
    data = _data(pd.DataFrame({"seconds": [600.0] * 20}), 5)
    started = time.monotonic()
    ctx = ExecuteContext(cancel_when=lambda: time.monotonic() - started > 2.0)
    # When the user cancels, Then the node stops instead of waiting for the calls
    with pytest.raises((CancelledByUser, knext_host_tools.NodeCanceled)):
        knext_host_tools.execute_node(_caller(tool__name="sleep", calls__concurrency=4), ctx, data, tools)
