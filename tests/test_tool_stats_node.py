"""The Tool Statistics node as KNIME runs it (Given/When/Then), on the Agent Prompter's tool-call log of a real run
against the demo server (a scripted OpenAI endpoint calling its tools, one of which fails), on several logs
concatenated, and on the MCP Tool Caller's output with a Tool column added; a table that is no log is an invalid
setting naming the columns it lacks."""

from __future__ import annotations

import statistics
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.agent.tool_stats import STATS_COLUMNS
from node_contexts import ConfigureContext, ExecuteContext
from nodes.tool_statistics import ToolStatistics

pytestmark = pytest.mark.knime_node


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> Any:
    return provider_tools_table((demo_http_url, "", {}))


@pytest.fixture(scope="module")
def agent_log(demo_tools: Any) -> pd.DataFrame:
    """The Agent Prompter's *Tool calls* output: echo twice, add once, and the demo server's failing tool once."""
    script = [
        tool_calls(("c1", "echo", {"text": "hi"}), ("c2", "add", {"a": 1, "b": 2}), ("c3", "fail", {"message": "x"})),
        tool_calls(("c4", "echo", {"text": "a longer text"})),
        answer("Done."),
    ]
    with FakeOpenAIEndpoint(script) as endpoint:
        model = chat_model_port(endpoint.base_url)
        _, log = run_agent_node(agent_node("Go."), ExecuteContext({"llm": ("", API_KEY)}), model, demo_tools)
    return log


def _statistics(table: Any) -> pd.DataFrame:
    node = ToolStatistics()
    (schema,) = node_host.configure_node(node, ConfigureContext(), table.schema)
    assert schema.column_names == [name for name, _ in STATS_COLUMNS]
    (stats,) = node_host.execute_node(node, ExecuteContext(), table)
    return stats.to_pandas().set_index("Tool")


def test_the_agents_log_becomes_one_row_per_tool_with_calls_errors_durations_and_result_sizes(
    agent_log: pd.DataFrame,
) -> None:
    # Given the Agent Prompter's tool-call log of a real run
    # When the Tool Statistics node reads it
    stats = _statistics(node_host.source_table(agent_log.reset_index(drop=True)))
    # Then each tool has a row, in the order first called, with its calls and errors (the failing tool's call is one)
    assert list(stats.index) == ["echo", "add", "fail"]
    assert stats["Calls"].tolist() == [2, 1, 1] and stats["Errors"].tolist() == [0, 0, 1]
    assert set(stats["Server"]) == set(agent_log["Server"])
    # And the durations and sizes are the log's own
    echoes = agent_log[agent_log["Tool"] == "echo"]
    assert stats.loc["echo", "Median (ms)"] == pytest.approx(statistics.median(echoes["Duration (ms)"]))
    assert stats.loc["echo", "Slowest (ms)"] == pytest.approx(max(echoes["Duration (ms)"]))
    assert stats.loc["echo", "Mean Result Size"] == pytest.approx(echoes["Result Size"].mean())
    assert stats.loc["echo", "Largest Result Size"] == max(echoes["Result Size"])
    assert pd.isna(stats.loc["fail", "Mean Result Size"])  # it failed: no result to measure


def test_logs_concatenated_count_every_call_of_each(agent_log: pd.DataFrame) -> None:
    twice = pd.concat([agent_log, agent_log], ignore_index=True)
    stats = _statistics(node_host.source_table(twice))
    assert stats["Calls"].tolist() == [4, 2, 2] and stats["Errors"].tolist() == [0, 0, 2]


def test_the_tool_callers_output_with_a_tool_column_is_read_as_a_log(demo_tools: Any) -> None:
    # Given the MCP Tool Caller's output of three calls of the failing tool and, as a person adds it, a Tool column
    from nodes.tool_caller import MCPToolCaller

    caller = node_host.set_parameters(MCPToolCaller(), tool__name="fail", calls__on_error="COLUMN")
    data = knext.Table.from_pandas(pd.DataFrame({"message": ["a", "b", "c"]}))
    (called,) = node_host.execute_node(caller, ExecuteContext(), data, demo_tools)
    frame = called.to_pandas().reset_index(drop=True)
    frame["Tool"] = "fail"
    # When the Tool Statistics node reads it
    stats = _statistics(node_host.source_table(frame))
    # Then the calls and errors are its rows', the durations its Duration (ms)
    assert stats["Calls"].tolist() == [3] and stats["Errors"].tolist() == [3]
    assert stats.loc["fail", "Median (ms)"] == pytest.approx(statistics.median(frame["Duration (ms)"]))


def test_a_table_that_is_no_tool_call_log_is_an_invalid_setting_naming_the_column_it_lacks() -> None:
    schema = knext.Schema.from_columns(
        [knext.Column(knext.double(), "Duration (ms)"), knext.Column(knext.bool_(), "Is error")]
    )
    with pytest.raises(knext.InvalidParametersError, match=r"not a tool-call log: it has no 'Tool' column"):
        node_host.configure_node(ToolStatistics(), ConfigureContext(), schema)
