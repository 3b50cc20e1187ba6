"""Hostile inputs to the Tool Caller (issue 11): a server's catastrophic ``pattern``, a cell of JSON text nested too
deeply or holding NaN, and image data that is not base64. Each must fail its own row with a clear message (the run
goes on with the error column, and stops with that message in fail mode), never freeze or abort the whole run.

The tools come from tests/servers/hostile_schema_server.py, a real MCP server over stdio. The pattern tests run the
Tool Caller in a child process with a generous time limit: a backtracking ``re`` holds the GIL, so nothing in this
process could interrupt it, and without the fix the test must fail rather than hang. No test asserts a duration.
"""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest

from fixtures.python_servers import SERVERS_DIR, TESTS_DIR
from knime_mcp.caller.convert import MAX_JSON_DEPTH
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.config import ServerSpec
from knime_mcp.errors import McpToolError
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.seal import seal_spec
from knime_mcp.tools.tool import MCPTool

HANG_BOUND = 60
"""Seconds a child process may take; without the bounded pattern check, ``re`` spends far longer on one row."""

CATASTROPHIC_WORD = "a" * 60 + "!"
"""Exponential work for ``^(a+)+$`` under ``re`` and for ``^(a|aa)+$`` under both ``re`` and ``regex``."""


def hostile_tools() -> dict[str, MCPTool]:
    """tests/servers/hostile_schema_server.py's tools over stdio, sealed as the MCP Tool Provider seals them."""
    command = shlex.join([sys.executable, str(SERVERS_DIR / "hostile_schema_server.py")])
    with SyncMcpClient(seal_spec(ServerSpec(target=command))) as client:
        return {tool.name: tool for tool in client.list_tools()}


@pytest.fixture(scope="module")
def hostile() -> dict[str, MCPTool]:
    """Listed once for the module: each call starts its own server process anyway."""
    return hostile_tools()


def _rows(tool: MCPTool, columns: dict[str, list[Any]], on_error: str = "column") -> list[dict[str, Any]]:
    written: list[pa.RecordBatch] = []
    options = CallerOptions(on_error=on_error)  # type: ignore[arg-type]
    call_table_sync(tool, [pa.record_batch(columns)], written.append, options=options)
    return pa.Table.from_batches(written).to_pylist()


def rows_or_error(tool: str, words: list[str], on_error: str) -> list[dict[str, Any]] | str:
    """The rows of calling ``tool`` for ``words``, or the message of the error that stopped the run."""
    try:
        return _rows(hostile_tools()[tool], {"word": words}, on_error)
    except McpToolError as exc:
        return str(exc)


def _in_child(tool: str, words: list[str], on_error: str = "column") -> Any:
    """:func:`rows_or_error` in a child process, which fails the test when it runs out of time."""
    code = (
        "import json, sys; from test_hostile_inputs import rows_or_error; "
        "print(json.dumps(rows_or_error(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3])))"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, tool, json.dumps(words), on_error],
        cwd=TESTS_DIR, capture_output=True, text=True, timeout=HANG_BOUND, check=True,
    )  # fmt: skip
    return json.loads(child.stdout)


# -- a server's pattern ---------------------------------------------------------------------------------------------


def test_the_issues_pattern_that_re_backtracks_on_is_checked_at_once_and_the_run_goes_on(
    hostile: dict[str, MCPTool],
) -> None:
    # Given `shout`, whose word must match ^(a+)+$ (21 s per row under Python's re, as issue 11 measured)
    assert hostile["shout"].input_schema["properties"]["word"]["pattern"] == "^(a+)+$"
    # When the Tool Caller calls it for a word that does not match, between two that do
    rows = _in_child("shout", ["aaa", CATASTROPHIC_WORD, "a"])
    # Then the mismatch is that row's invalid-arguments error, and the other rows ran
    assert [row["Result"] for row in rows] == ["AAA", None, "A"]
    assert rows[1]["Is error"] and f"{CATASTROPHIC_WORD!r} does not match '^(a+)+$'" in rows[1]["Error"]


def test_a_pattern_that_backtracks_without_bound_is_refused_for_its_row_and_the_run_goes_on() -> None:
    # Given `echo`, whose word must match ^(a|aa)+$, which no backtracking engine rejects in bounded time
    # When the Tool Caller calls it for a word that does not match, between two that do
    rows = _in_child("echo", ["aa", CATASTROPHIC_WORD, "aaa"])
    # Then that row is refused, saying the tool's pattern took too long, and the other rows ran
    assert [row["Result"] for row in rows] == ["aa", None, "aaa"]
    assert rows[1]["Error"].startswith("Invalid arguments for tool 'echo': word: the tool's pattern '^(a|aa)+$' took")
    assert "took too long to check" in rows[1]["Error"]


def test_in_fail_mode_a_pattern_that_backtracks_without_bound_stops_the_run_at_its_row_saying_so() -> None:
    # Given `echo` and a word its pattern cannot reject in bounded time, in the second row
    # When the Tool Caller runs in fail mode
    error = _in_child("echo", ["a", CATASTROPHIC_WORD], on_error="fail")
    # Then the run stops at that row with the clear message
    assert error.startswith("Row 2: Invalid arguments for tool 'echo': word: the tool's pattern '^(a|aa)+$' took")


# -- JSON text cells ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_json_text_nested_too_deeply_is_that_rows_error_and_the_run_goes_on(
    hostile: dict[str, MCPTool], depth: int
) -> None:
    # Given JSON object text nested just past the limit (readable, but deeper than checking and sending can go)
    # or far past what Python's parser can read (a RecursionError)
    deep = '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    # When the Tool Caller calls `count_keys` with it between two good rows
    rows = _rows(hostile["count_keys"], {"data": ['{"x": 1}', deep, '{"x": 1, "y": 2}']})
    # Then that row's error names parameter and column and says why, and the other rows ran
    assert [row["Result"] for row in rows] == ["1", None, "2"]
    assert rows[1]["Error"] == (
        "parameter 'data' from column 'data': expected a JSON object text, got JSON text nested deeper than "
        f"{MAX_JSON_DEPTH} levels"
    )


def test_json_text_nested_as_deeply_as_allowed_reaches_the_tool(hostile: dict[str, MCPTool]) -> None:
    # Given JSON object text nested exactly MAX_JSON_DEPTH levels
    deep = '{"a": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}"
    # When the Tool Caller calls `count_keys` with it
    (row,) = _rows(hostile["count_keys"], {"data": [deep]}, on_error="fail")
    # Then the tool got it whole
    assert row["Result"] == "1" and not row["Is error"]


def test_in_fail_mode_json_text_too_deep_for_the_parser_stops_the_run_with_a_clear_message(
    hostile: dict[str, MCPTool],
) -> None:
    # Given JSON text that Python's parser cannot read (it raises RecursionError)
    deep = "[" * 100_000 + "]" * 100_000
    # When the Tool Caller runs in fail mode
    # Then the run stops at that row with the clear message, not a RecursionError
    with pytest.raises(McpToolError, match=r"^Row 1: parameter 'data' from column 'data': .* nested deeper than"):
        _rows(hostile["count_keys"], {"data": [deep]}, on_error="fail")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_text_with_a_non_finite_number_is_that_rows_error_naming_the_column(
    hostile: dict[str, MCPTool], constant: str
) -> None:
    # Given JSON object text with NaN or an infinity, which Python reads but JSON has no value for
    # When the Tool Caller calls `count_keys` with it after a good row
    rows = _rows(hostile["count_keys"], {"data": ['{"x": 1}', f'{{"x": {constant}}}']})
    # Then that row is refused, naming parameter, column and value, instead of the tool getting null
    assert rows[0]["Result"] == "1" and rows[1]["Result"] is None
    assert rows[1]["Error"] == (
        f"parameter 'data' from column 'data': expected a JSON object text, got text with {constant}, "
        "which is not a JSON number"
    )


# -- image data -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", ["*not base64*", "QUJD\u00e9", "\u00e9\u00e9\u00e9\u00e9"])
def test_image_data_that_is_not_base64_is_that_rows_error_and_the_run_goes_on(
    hostile: dict[str, MCPTool], data: str
) -> None:
    # Given `bad_image`, whose image data is sent as the row gives it: ASCII that is no base64, or text that is not
    # even ASCII (which Python's decoder refuses with a plain ValueError)
    # When the Tool Caller calls it between rows whose captions are kept
    rows = _rows(hostile["bad_image"], {"caption": ["first", "second"], "data": [data, data]})
    # Then each row keeps its text, has no image, and says in Error that the data is not base64
    assert [(row["Result"], row["Image"], row["Is error"]) for row in rows] == [
        ("first", None, True),
        ("second", None, True),
    ]
    assert "returned an image that cannot be stored: its data (image/png) is not valid base64" in rows[0]["Error"]


def test_in_fail_mode_image_data_that_is_not_ascii_stops_the_run_with_a_clear_message(
    hostile: dict[str, MCPTool],
) -> None:
    # Given image data that is not ASCII
    # When the Tool Caller runs in fail mode
    # Then the run stops at that row saying the image cannot be stored, not with a raw ValueError
    with pytest.raises(McpToolError, match=r"^Row 1: Tool 'bad_image' returned an image that cannot be stored"):
        _rows(hostile["bad_image"], {"caption": ["first"], "data": ["QUJD\u00e9"]}, on_error="fail")


# -- the Tool Caller node, on both hosts ----------------------------------------------------------------------------


@pytest.mark.knime_node
def test_the_caller_node_fails_only_the_rows_with_hostile_cells_or_images_and_writes_png_cells() -> None:
    import io

    import knime.extension as knext
    import pandas as pd
    import PIL.Image

    import extension  # noqa: F401  (registers the category)
    import node_host
    from knime_mcp.tools.arrow import tools_to_frame
    from node_contexts import ExecuteContext
    from nodes.tool_caller import MCPToolCaller

    # Given a tools table of the hostile server, and rows of image data: a PNG followed by a web page, and text that
    # is not even ASCII
    tools = knext.Table.from_pandas(tools_to_frame(list(hostile_tools().values())))
    buffer = io.BytesIO()
    PIL.Image.new("RGB", (3, 2), "red").save(buffer, format="PNG")
    trailing = base64.b64encode(buffer.getvalue() + b"<html></html>").decode()
    data = knext.Table.from_pandas(pd.DataFrame({"caption": ["ok", "bad"], "data": [trailing, "QUJD\u00e9"]}))
    node = MCPToolCaller()
    node.tool.name, node.calls.on_error = "bad_image", "COLUMN"
    # When the Tool Caller node runs with the error column
    (table,) = node_host.execute_node(node, ExecuteContext(), data, tools)
    # Then the first row holds a PNG image cell of the picture, and the second says why it has none
    frame = table.to_pandas()
    assert frame["Is error"].tolist() == [False, True]
    assert frame["Image"][0].size == (3, 2) and frame["Image"][0].convert("RGB").getpixel((2, 1)) == (255, 0, 0)
    assert pd.isna(frame["Image"][1]) and "is not valid base64" in frame["Error"][1]
