"""The MCP Tool Caller node, run through configure and execute as KNIME runs it (Given/When/Then)."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

import knime.extension as knext
import pandas as pd
import pyarrow as pa
import pytest

import node_host
from fixtures.oauth_servers import OAuthServers, browser_visits
from knime_mcp.auth import OAuthClient, token_store
from knime_mcp.config import ServerSpec
from knime_mcp.errors import CancelledByUser, ToolCallError
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.tools.arrow import tools_to_frame
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node

RESULTS = ["Result", "Structured result", "Image", "Other content", "Is error", "Error", "Duration (ms)"]


def _caller(**settings: object):  # type: ignore[no-untyped-def]
    import extension  # noqa: F401  (registers the category)
    from nodes.tool_caller import MCPToolCaller

    node = MCPToolCaller()
    return node_host.set_parameters(node, **settings)


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
    (spec,) = node_host.configure_node(_caller(tool__name="echo"), ConfigureContext(), data, demo_tools.schema)
    # Then the output is the input plus the typed result columns
    assert spec.column_names == ["text", *RESULTS]
    import PIL.Image

    assert [spec[name].ktype for name in RESULTS] == [
        knext.string(), knext.string(), knext.logical(PIL.Image.Image), knext.string(), knext.bool_(), knext.string(),
        knext.double(),
    ]  # fmt: skip


def test_configure_without_a_tools_table_is_an_invalid_setting() -> None:
    data = knext.Schema.from_columns([knext.Column(knext.string(), "text")])
    with pytest.raises(knext.InvalidParametersError, match="no 'MCP Tool' column"):
        node_host.configure_node(_caller(), ConfigureContext(), data, data)


def test_configure_rejects_a_mapping_that_is_not_json(demo_tools: knext.Table) -> None:
    data = knext.Schema.from_columns([knext.Column(knext.string(), "text")])
    node = _caller(tool__name="echo", tool__mapping='{"text": ')
    with pytest.raises(knext.InvalidParametersError, match="not valid JSON"):
        node_host.configure_node(node, ConfigureContext(), data, demo_tools.schema)


def test_execute_calls_the_tool_for_1000_rows_in_order_and_keeps_the_rowids(demo_tools: knext.Table) -> None:
    # Given 1,000 rows in batches of 100 and the echo tool at concurrency 8
    texts = [f"row {i}" for i in range(1000)]
    node = _caller(tool__name="echo", calls__concurrency=8)
    ctx = ExecuteContext()
    # When the node executes
    (table,) = node_host.execute_node(node, ctx, _data(pd.DataFrame({"text": texts}), 100), demo_tools)
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
    (table,) = node_host.execute_node(node, ExecuteContext(), data, demo_tools)
    assert table.to_pandas()["Result"].tolist() == ["11", "22"]


def test_error_column_mode_records_failed_rows_and_warns(demo_tools: knext.Table) -> None:
    # Given rows for the always-failing tool, with errors going to a column
    node = _caller(tool__name="fail", calls__on_error="COLUMN")
    ctx = ExecuteContext()
    data = knext.Table.from_pandas(pd.DataFrame({"message": ["first", "second"]}))
    # When the node executes
    (table,) = node_host.execute_node(node, ctx, data, demo_tools)
    # Then both rows carry their error, and the node warns about them
    frame = table.to_pandas()
    assert frame["Is error"].tolist() == [True, True]
    assert "second" in frame["Error"].iloc[1]
    assert ctx.warnings == ["2 of 2 rows failed; see the 'Error' column."]


def test_fail_mode_fails_the_node_at_the_first_failed_row(demo_tools: knext.Table) -> None:
    node = _caller(tool__name="fail")
    data = knext.Table.from_pandas(pd.DataFrame({"message": ["boom"]}))
    with pytest.raises(ToolCallError, match="^Row 1 \\(RowID Row0\\): tool 'fail' reported an error"):
        node_host.execute_node(node, ExecuteContext(), data, demo_tools)


def test_an_unknown_tool_name_is_an_invalid_setting_that_lists_the_tools(demo_tools: knext.Table) -> None:
    data = knext.Table.from_pandas(pd.DataFrame({"text": ["hi"]}))
    with pytest.raises(knext.InvalidParametersError, match="no tool 'ech'.*'echo'"):
        node_host.execute_node(_caller(tool__name="ech"), ExecuteContext(), data, demo_tools)


def _columns(schema: knext.Schema) -> list[tuple[str, knext.KnimeType]]:
    """What KNIME compares between the spec of ``configure`` and the table of ``execute``: names and types."""
    return [(column.name, column.ktype) for column in schema]


def test_an_input_without_rows_gives_an_empty_output_with_the_columns_configure_announced(
    demo_tools: knext.Table,
) -> None:
    # Given an input table without rows, which KNIME hands over without a single batch
    data = node_host.source_table(pa.table({"values": pa.array([], pa.list_(pa.float64()))}))
    node = _caller(tool__name="render_chart")
    # When the caller is configured and executes
    (spec,) = node_host.configure_node(node, ConfigureContext(), data.schema, demo_tools.schema)
    (table,) = node_host.execute_node(node, ExecuteContext(), data, demo_tools)
    # Then the output has no rows (in one empty batch) and the columns configure announced, images as PNG cells
    assert data.num_batches == 0 and (table.num_rows, table.num_batches) == (0, 1)
    assert table.column_names == ["values", *RESULTS] and _columns(table.schema) == _columns(spec)
    assert str(table.schema["Image"].ktype) == "PNG Image"


def test_the_image_column_holds_png_image_cells_missing_where_a_row_failed(demo_tools: knext.Table) -> None:
    import PIL.Image

    # Given charts to render in three batches, the second with a negative height (an invalid argument), the third
    # with invalid ones only
    values = [[1.0, 2.0], [3.0, 1.0], [-1.0], [2.0], [-1.0], [-2.0]]
    data = node_host.source_table(_data(pd.DataFrame({"values": values}), 2))
    node = _caller(tool__name="render_chart", calls__on_error="COLUMN")
    # When the caller is configured and executes
    (spec,) = node_host.configure_node(node, ConfigureContext(), data.schema, demo_tools.schema)
    (table,) = node_host.execute_node(node, ExecuteContext(), data, demo_tools)
    # Then every batch was written with the columns configure announced, the images as KNIME's PNG image cells
    assert data.num_batches == table.num_batches == 3
    assert _columns(table.schema) == _columns(spec) and str(table.schema["Image"].ktype) == "PNG Image"
    # And each chart reads back as a PIL image as wide as its bars and as high as the demo's charts, missing (with
    # the row's error) where the call failed
    frame = table.to_pandas()
    sizes = [image.size if isinstance(image, PIL.Image.Image) else image for image in frame["Image"]]
    assert sizes == [(18, 48), (18, 48), None, (10, 48), None, None]
    assert frame["Error"].isna().tolist() == [True, True, False, True, False, False]


def test_tools_whose_credential_is_not_connected_fail_the_node_naming_it(auth_server_url: str, auth_token: str) -> None:
    from nodes.tool_provider import MCPToolProvider

    # Given the tools of a server that needs a bearer token, listed with the credential holding it
    provider = MCPToolProvider()
    provider.server.server = auth_server_url
    provider.auth.kind, provider.auth.credential = "BEARER", "mcp-token"
    (tools,) = node_host.execute_node(provider, ExecuteContext({"mcp-token": ("", auth_token)}))
    data = node_host.source_table(pd.DataFrame({"text": ["hi"]}))
    # When the caller runs in a workflow without that credential, Then it fails as a setting, naming the credential
    with pytest.raises(knext.InvalidParametersError, match="Credential 'mcp-token' is not available"):
        node_host.execute_node(_caller(tool__name="echo"), ExecuteContext(), data, tools)


def test_cancel_stops_the_calls_in_flight(demo_stdio_command: list[str]) -> None:
    # Given rows that each sleep ten minutes on a stdio server
    tools = _tools_table(shlex.join(demo_stdio_command))
    data = _data(pd.DataFrame({"seconds": [600.0] * 20}), 5)
    started = time.monotonic()
    ctx = ExecuteContext(cancel_when=lambda: time.monotonic() - started > 2.0)
    # When the user cancels, Then the node stops instead of waiting for the calls
    with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
        node_host.execute_node(_caller(tool__name="sleep", calls__concurrency=4), ctx, data, tools)


# -- OAuth ----------------------------------------------------------------------------------------------------------


def _oauth_tools(url: str) -> knext.Table:
    """What an MCP Tool Provider with OAuth sign-in outputs for ``url``, after the person signed in."""
    from nodes.tool_provider import MCPToolProvider

    provider = MCPToolProvider()
    provider.server.server = url
    provider.auth.kind = "OAUTH"
    (table,) = node_host.execute_node(provider, ExecuteContext())
    return node_host.source_table(table.to_pandas())


def test_the_tools_of_an_oauth_server_are_called_with_the_stored_sign_in_without_a_person(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given the tools table of a provider that signed in to an OAuth server
    tools = _oauth_tools(oauth_servers.http_url)
    # When the caller calls its tool where nobody can sign in (browser sign-in off)
    node = _caller(tool__name="echo", calls__browser_sign_in=False)
    data = knext.Table.from_pandas(pd.DataFrame({"text": ["one", "two"]}))
    (table,) = node_host.execute_node(node, ExecuteContext(), data, tools)
    # Then every row was called with the provider's stored sign-in, and nobody was asked to sign in again
    assert table.to_pandas()["Result"].tolist() == ["one", "two"]
    assert len(browser_visits(browser)) == 1


def test_when_the_stored_sign_in_is_gone_the_caller_signs_in_again_in_the_browser_unless_switched_off(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given an OAuth server's tools table whose stored sign-in was forgotten since (expired, or signed out)
    tools = _oauth_tools(oauth_servers.http_url)
    token_store(oauth_servers.http_url, OAuthClient()).forget_tokens()
    data = knext.Table.from_pandas(pd.DataFrame({"text": ["hi"]}))
    # When the caller runs with browser sign-in off, Then it fails at once, saying how to sign in, without a browser
    with pytest.raises(Exception, match="nobody can sign in"):
        node_host.execute_node(_caller(tool__name="echo", calls__browser_sign_in=False), ExecuteContext(), data, tools)
    assert len(browser_visits(browser)) == 1
    # When it runs with browser sign-in on (the default), Then the person signs in again, as the progress message says
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(_caller(tool__name="echo"), ctx, data, tools)
    assert table.to_pandas()["Result"].tolist() == ["hi"] and len(browser_visits(browser)) == 2
    assert any((message or "").startswith("Waiting for sign-in in the browser: ") for _, message in ctx.progress)


def test_caller_settings_saved_by_0_2_0_without_browser_sign_in_load_with_it_on() -> None:
    saved = json.loads(node_host.save_settings(_caller(tool__name="echo")))
    del saved["model"]["calls"]["browser_sign_in"]
    older = json.dumps(saved)
    assert node_host.validate_settings("MCPToolCaller", older, "0.2.0") is None
    loaded = node_host.load_settings("MCPToolCaller", older, "0.2.0")
    assert loaded.calls.browser_sign_in is True and loaded.tool.name == "echo"


def _knime_mcp_tools(tool_module: Any, url: str, *names: str) -> Any:
    """A tools table holding only KNIME's own Tool cells of ToolType MCP naming ``url``'s tools, as KNIME writes
    them (e.g. from KNIME's own MCP nodes), with a WORKFLOW one among them."""
    from real_knime.tool_overlay import tool_table

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tools = [tool_module.Tool.create_mcp_tool(name, "", schema, url, name) for name in names]
    workflow = tool_module.Tool.create_workflow_tool("Row Sampler", "Samples rows.", {}, 0, [], [])
    return node_host.source_table(tool_table([*tools, workflow, None]))


@pytest.mark.knime_launcher
@pytest.mark.parametrize("trust_all_servers", [False, True])
def test_with_knimes_tool_type_a_knime_mcp_tool_is_called_as_data_through_this_extensions_client(
    knime_tool_branch: Any, demo_http_url: str, trust_all_servers: bool
) -> None:
    # Given a tools table with nothing but KNIME Tool cells, one of them the loopback demo server's echo
    tools = _knime_mcp_tools(knime_tool_branch, demo_http_url, "echo")
    data = node_host.source_table(pd.DataFrame({"text": ["hi", "there"]}))
    node = _caller(tool__name="echo", calls__on_error="COLUMN", calls__trust_all_servers=trust_all_servers)
    # When the caller is configured and executed
    (spec,) = node_host.configure_node(node, ConfigureContext(), data.schema, tools.schema)
    assert spec.column_names == ["text", *RESULTS]
    # Then its server is data, as an unsealed MCP Tool cell's: refused at a loopback address unless trusted
    if not trust_all_servers:
        with pytest.raises(knext.InvalidParametersError, match="127.0.0.1, a loopback address"):
            node_host.execute_node(node, ExecuteContext(), data, tools)
        return
    (out,) = node_host.execute_node(node, ExecuteContext(), data, tools)
    frame = out.to_pandas()
    assert list(frame["Result"]) == ["hi", "there"] and not frame["Is error"].any()


@pytest.mark.knime_launcher
def test_with_knimes_tool_type_a_knime_mcp_tool_naming_a_credential_is_sent_no_secret_unless_trusted(
    knime_tool_branch: Any, auth_server_url: str, auth_token: str
) -> None:
    from real_knime.tool_overlay import tool_table

    # Given a KNIME Tool naming the credential of a server that needs a bearer token
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    cell = knime_tool_branch.Tool.create_mcp_tool("echo", "", schema, auth_server_url, "echo", "mcp-token")
    tools = node_host.source_table(tool_table([cell]))
    data = node_host.source_table(pd.DataFrame({"text": ["hi"]}))
    ctx = ExecuteContext(credentials={"mcp-token": ("", auth_token)})
    # When the caller runs it, untrusted, Then it is refused before a secret leaves the machine
    node = _caller(tool__name="", calls__on_error="COLUMN", calls__trust_all_servers=False)
    with pytest.raises(knext.InvalidParametersError, match="asks for the KNIME credential 'mcp-token'"):
        node_host.execute_node(node, ctx, data, tools)
    # And trusted, the call goes through with the credential the cell names, as a bearer token
    node = _caller(tool__name="", calls__on_error="COLUMN", calls__trust_all_servers=True)
    (out,) = node_host.execute_node(node, ctx, data, tools)
    assert list(out.to_pandas()["Result"]) == ["hi"]


def test_a_tool_that_runs_only_as_a_task_is_called_as_tasks_for_three_rows_at_once(everything_http_url: str) -> None:
    # Given server-everything's simulate-research-query (taskSupport "required"), three rows, three calls at once
    tools = _tools_table(everything_http_url)
    node = _caller(
        tool__name="simulate-research-query", calls__concurrency=3, calls__concurrent_writes=True, calls__tasks=True
    )
    ctx = ExecuteContext()
    topics = ["MCP", "KNIME", "tasks"]
    # When the node executes
    (table,) = node_host.execute_node(node, ctx, _data(pd.DataFrame({"topic": topics}), 3), tools)
    # Then every row holds its task's report, and the tasks' status messages reached the node's progress
    frame = table.to_pandas()
    assert [text.splitlines()[0] for text in frame["Result"]] == [f"# Research Report: {topic}" for topic in topics]
    assert not frame["Is error"].any()
    assert any("tool simulate-research-query: Gathering sources..." in message for _, message in ctx.progress)


def test_numbers_json_cannot_carry_are_row_errors_in_the_error_column(demo_tools: knext.Table) -> None:
    # Given temperatures written with Arabic-Indic and fullwidth digits, beyond the range of a double, and a NaN
    # double (which KNIME keeps apart from a missing cell)
    node = _caller(tool__name="convert_temperature", calls__on_error="COLUMN")
    columns = {
        "value": pa.array(["\u0663", "\uff13", "1e999", None, "25"]),
        "from_unit": pa.array(["celsius"] * 5),
        "to_unit": pa.array(["kelvin"] * 5),
    }
    data = knext.Table.from_pyarrow(pa.table(columns))
    doubles = knext.Table.from_pyarrow(pa.table({**columns, "value": pa.array([float("nan"), None, 1e308, 1.0, 25.0])}))
    ctx = ExecuteContext()
    # When the node executes
    (table,) = node_host.execute_node(node, ctx, data, demo_tools)
    (from_doubles,) = node_host.execute_node(node, ExecuteContext(), doubles, demo_tools)
    # Then each is its row's error, naming parameter, column and value, and the other rows are called
    frame = table.to_pandas()
    assert frame["Is error"].tolist() == [True, True, True, True, False]
    errors = frame["Error"].tolist()
    assert errors[0] == (
        "parameter 'value' from column 'value': expected a number, got '\u0663', written with digits other than 0-9"
    )
    assert errors[1].endswith("got '\uff13', written with digits other than 0-9")
    assert errors[2].endswith("expected a finite number, got '1e999'")
    assert errors[3].endswith("required parameter 'value' has no value (column 'value' is missing)")
    assert frame["Result"].tolist()[4] == "298.15"
    assert ctx.warnings == ["4 of 5 rows failed; see the 'Error' column."]
    doubled = from_doubles.to_pandas()
    assert doubled["Is error"].tolist() == [True, True, False, False, False]
    assert doubled["Error"].tolist()[0].endswith("from column 'value': expected a finite number, got nan")
