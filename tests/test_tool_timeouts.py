"""A tools table's *Timeout (s)* column: each value checked as the data it is, and a tool's own timeout used for its
calls instead of the run's, for MCP tools (the real demo server) and HTTP tools (the real REST API on 127.0.0.1)."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from knime_mcp.calls.dispatch import CallOutcome, Dispatcher
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.http import HttpOperation, HttpParameter
from knime_mcp.mcp.sync import run_sync
from knime_mcp.seal import seal_spec
from knime_mcp.tools.tool import MCPTool, ToolAnnotations
from knime_mcp.tools.tool_columns import MAX_TOOL_TIMEOUT, TIMEOUT_COLUMN, with_tool_columns

SLOW = HttpOperation(method="GET", path="/slow", parameters=(HttpParameter(name="seconds", location="query"),))
READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, annotated=True)


@pytest.fixture(scope="module")
def sleep_tool(demo_http_url: str) -> MCPTool:
    tools = run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo")).tools
    return next(tool for tool in tools if tool.name == "sleep")


def _slow_api_tool(base: str) -> MCPTool:
    schema = {"type": "object", "properties": {"seconds": {"type": "number"}}}
    return MCPTool(
        name="slow", tool_name="slow", input_schema=schema, parameter_schema=schema, annotations=READ_ONLY,
        server=seal_spec(ServerSpec(target=base, name="api")), http=SLOW,
    )  # fmt: skip


def _call(tool: MCPTool, arguments: dict[str, Any], *, run_timeout: float | None) -> CallOutcome:
    async def go() -> CallOutcome:
        async with ClientPool() as pool:
            return await Dispatcher(pool, timeout=run_timeout).call(tool, arguments)

    return run_sync(go)


def test_each_rows_timeout_goes_to_its_tool_and_a_missing_cell_leaves_the_nodes_own(sleep_tool: MCPTool) -> None:
    tools = with_tool_columns(
        [sleep_tool] * 4, {TIMEOUT_COLUMN: [30, 2.5, None, math.nan]}, ["Row0", "Row1", "Row2", "Row3"]
    )
    assert [tool.timeout for tool in tools] == [30.0, 2.5, None, None]
    assert tools[2] is sleep_tool and sleep_tool.timeout is None


@pytest.mark.parametrize("cell", [0, -1, MAX_TOOL_TIMEOUT + 1, math.inf, "30", True])
def test_a_timeout_that_is_not_a_positive_number_of_seconds_up_to_a_day_is_the_rows_error(
    sleep_tool: MCPTool, cell: Any
) -> None:
    said = rf"^Column {re.escape(repr(TIMEOUT_COLUMN))}, row Row7: .* is not a timeout in seconds"
    with pytest.raises(ConfigError, match=said) as err:
        with_tool_columns([sleep_tool], {TIMEOUT_COLUMN: [cell]}, ["Row7"])
    assert "at most 86400 (24 h)" in (err.value.hint or "")


def test_an_mcp_tools_own_timeout_cuts_its_call_short_of_the_runs(sleep_tool: MCPTool) -> None:
    outcome = _call(sleep_tool.with_changes(timeout=0.5), {"seconds": 30}, run_timeout=120)
    assert outcome.record.status == "timeout" and "did not answer" in (outcome.record.error or "")
    # and the advice names where that timeout is set, not the run's
    assert "Raise the tool's 'Timeout (s)' in its tools table" in (outcome.record.error or "")
    assert "Raise the call timeout" not in (outcome.record.error or "")


def test_an_mcp_tools_own_timeout_lets_its_call_run_past_the_runs(sleep_tool: MCPTool) -> None:
    outcome = _call(sleep_tool.with_changes(timeout=60), {"seconds": 1}, run_timeout=0.2)
    assert outcome.ok and outcome.result is not None and outcome.result.text == "Slept 1 s."
    assert _call(sleep_tool, {"seconds": 1}, run_timeout=0.2).record.status == "timeout"


def test_an_http_tools_own_timeout_is_the_one_its_request_gets(http_api_url: str) -> None:
    tool = _slow_api_tool(http_api_url)
    cut = _call(tool.with_changes(timeout=0.3), {"seconds": 30}, run_timeout=120)
    assert cut.record.status == "timeout" and "within 0.3 s" in (cut.record.error or "")
    waited = _call(tool.with_changes(timeout=60), {"seconds": 1}, run_timeout=0.2)
    assert waited.ok and waited.result is not None and waited.result.structured == {"slept": 1.0}
