"""The Agent Prompter's tool-call log keeps each call's MCP App (*App URI*, *App bytes*): the app read once per run
after its tool's first successful call, a failed read a warning and an empty size (never a failed call), app-only
tools never offered; against tests/servers/app_server.py over stdio and a scripted OpenAI-compatible endpoint (the
model's side only). And a chat's earlier log, written before the app columns, still goes before a new one."""

from __future__ import annotations

import json
import shlex
import sys

import pandas as pd
import pyarrow as pa
import pytest

from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.call_log import LOG_COLUMNS, log_table
from node_contexts import ExecuteContext
from nodes.agent_chat.view_service import _concat_logs
from servers.app_server import CHART_HTML

pytestmark = pytest.mark.knime_node

CHART = "ui://charts/chart.html"


def test_the_log_keeps_each_calls_app_read_once_and_an_unreadable_app_only_warns() -> None:
    tools = provider_tools_table((shlex.join([sys.executable, str(SERVERS_DIR / "app_server.py")]), "", {}))
    script = [
        tool_calls(("c1", "show_chart", {"series": "a"})),
        tool_calls(("c2", "show_chart", {"series": "b"}), ("c3", "legacy_view", {}), ("c4", "oversized_view", {})),
        tool_calls(("c5", "plain", {"text": "x"}), ("c6", "chart_reads", {})),
        answer("done"),
    ]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script) as endpoint:
        _, log = run_agent_node(agent_node("Show the charts."), ctx, chat_model_port(endpoint.base_url), tools)

    assert "refresh_chart" not in offered_tools(endpoint.requests[0]) and "show_chart" in offered_tools(
        endpoint.requests[0]
    )
    assert list(log["Status"]) == ["ok"] * 6
    assert list(log["App URI"].fillna("-")) == [CHART, CHART, CHART, "ui://charts/huge.html", "-", "-"]
    size = len(CHART_HTML.encode())
    assert list(log["App bytes"].astype("Int64").fillna(-1)) == [size, size, size, -1, -1, -1]
    # The chart's app was read once for the three calls of two tools that share it
    assert json.loads(log["Result"].iloc[5])["structured"] == {"result": 1}
    (warning,) = [line for line in ctx.warnings if "could not be read" in line]
    assert "'oversized_view'" in warning and "more than 5,000,000" in warning


def test_a_chats_earlier_log_without_the_app_columns_goes_before_the_new_log_with_missing_cells() -> None:
    older = [(name, kind) for name, kind in LOG_COLUMNS if not name.startswith("App ")]
    earlier = log_table([]).select([name for name, _ in older])
    earlier = pa.Table.from_pylist(
        [{**dict.fromkeys(earlier.column_names), "Turn": 1, "Tool": "add", "Status": "ok"}], schema=earlier.schema
    )
    earlier = earlier.add_column(0, "<RowID>", pa.array(["Row0"]))
    joined = _concat_logs(earlier, log_table([])).to_pandas()
    assert list(joined.columns) == [name for name, _ in LOG_COLUMNS]
    assert list(joined["Tool"]) == ["add"] and pd.isna(joined["App URI"].iloc[0]) and pd.isna(joined["App bytes"][0])
