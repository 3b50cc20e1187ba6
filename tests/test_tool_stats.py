"""Tool statistics (:mod:`knime_mcp.agent.tool_stats`) of real agent runs against the demo server, with a scripted
model calling its tools (a failing tool counted as an error), from the run's log in every form the log takes (its
entries, their records, the Agent Prompter's table, pandas), and the command line's ``--stats`` after ``agent``,
``chat`` and ``call-table``."""

from __future__ import annotations

import io
import json
import statistics
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.agent.call_log import log_table
from knime_mcp.agent.loop import AgentConfig
from knime_mcp.agent.tool_stats import P95_FROM_CALLS, STATS_COLUMNS, ToolStats, statistics_table, tool_statistics
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, run_scripted, scripted

SCRIPT = (
    calls(("c1", "echo", {"text": "hello"}), ("c2", "add", {"a": 2, "b": 3}), ("c3", "fail", {"message": "boom"})),
    calls(("c4", "echo", {"text": "a longer text to echo back"}), ("c5", "delete_record", {"record_id": "7"})),
)
"""Two model messages of tool calls: echo twice, add, the tool that always fails, and a destructive tool the default
policy never offers (refused before it reaches a server)."""


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo")).tools


@pytest.fixture(scope="module")
def agent_run(demo_tools: list[MCPTool]) -> Any:
    from langchain_core.messages import AIMessage

    model = scripted(*SCRIPT, AIMessage("Done."))
    return run_scripted(model, demo_tools, config=AgentConfig())


def _by_tool(stats: list[ToolStats]) -> dict[str, ToolStats]:
    return {row.tool: row for row in stats}


def test_a_real_runs_statistics_count_each_tools_calls_errors_durations_and_result_sizes(agent_run: Any) -> None:
    # Given an agent run on the demo server: echo twice, add once, fail once, and a blocked call of delete_record
    log = agent_run.log
    # When its log is summarised
    stats = _by_tool(tool_statistics(log))
    # Then each tool has a row, in the order first called, with its calls and errors
    assert list(stats) == ["echo", "add", "fail", "delete_record"]
    assert [(row.calls, row.errors) for row in stats.values()] == [(2, 0), (1, 0), (1, 1), (1, 1)]
    assert [row.server for row in stats.values()] == ["demo", "demo", "demo", None]  # never offered: no server
    # And the durations and result sizes are the log's: median and slowest of the calls that ran, sizes of the ok ones
    echoes = [entry for entry in log if entry.tool == "echo"]
    durations = sorted(entry.duration_ms for entry in echoes)
    assert stats["echo"].median_ms == statistics.median(durations) and stats["echo"].slowest_ms == durations[-1]
    sizes = [entry.result_size for entry in echoes]
    assert stats["echo"].mean_result_size == statistics.fmean(sizes) and stats["echo"].largest_result_size == max(sizes)
    assert stats["fail"].median_ms is not None and stats["fail"].mean_result_size is None  # it ran, and gave no result
    # And the call of the destructive tool, which the policy never offered, reached no tool: an error, no duration
    assert stats["delete_record"].median_ms is None and stats["delete_record"].slowest_ms is None


def test_the_log_as_records_as_the_nodes_table_and_as_pandas_gives_the_same_statistics(agent_run: Any) -> None:
    expected = tool_statistics(agent_run.log)
    table = log_table(agent_run.log)
    assert tool_statistics([entry.to_dict() for entry in agent_run.log]) == expected
    assert tool_statistics(table) == expected
    assert tool_statistics(table.to_pandas()) == expected
    # and two logs concatenated count every call of both
    doubled = _by_tool(tool_statistics([*agent_run.log, *agent_run.log]))
    assert [row.calls for row in doubled.values()] == [4, 2, 2, 2]


def test_the_statistics_table_has_the_nodes_columns_one_row_per_tool(agent_run: Any) -> None:
    table = statistics_table(tool_statistics(agent_run.log))
    assert table.column_names == [name for name, _ in STATS_COLUMNS]
    assert table.column("Tool").to_pylist() == ["echo", "add", "fail", "delete_record"]


def _records(durations: list[float]) -> list[dict[str, Any]]:
    return [{"tool": "t", "status": "ok", "duration_ms": ms, "result_size": 1} for ms in durations]


def test_the_slowest_is_the_95th_percentile_from_20_calls_and_the_slowest_call_below() -> None:
    below = [float(ms) for ms in range(1, P95_FROM_CALLS)]
    assert tool_statistics(_records(below))[0].slowest_ms == max(below)
    many = [float(ms) for ms in range(1, 101)]  # 1 ms to 100 ms: the 95th percentile (nearest rank) is 95 ms
    (row,) = tool_statistics(_records(many))
    assert row.slowest_ms == 95.0 and row.median_ms == 50.5 and row.calls == 100


def test_notes_of_changed_tools_and_calls_awaiting_approval_are_no_calls_and_a_denied_call_takes_no_time() -> None:
    records = [
        {"tool": "tools/list_changed", "status": "tools_changed", "duration_ms": 0.0},
        {"tool": "t", "status": "awaiting_approval", "duration_ms": 0.0},
        {"tool": "t", "status": "denied", "duration_ms": 0.0},
        {"tool": "t", "status": "timeout", "duration_ms": 500.0, "result_size": 0},
    ]
    (row,) = tool_statistics(records)
    assert (row.tool, row.calls, row.errors, row.median_ms, row.mean_result_size) == ("t", 2, 2, 500.0, None)


def test_a_table_that_is_not_a_tool_call_log_is_an_error_naming_the_columns_it_lacks() -> None:
    import pyarrow as pa

    with pytest.raises(ConfigError, match=r"no 'Tool' or 'Status' \(or 'Is error'\) column") as raised:
        tool_statistics(pa.table({"Duration (ms)": [1.0]}))
    assert "Tool calls" in (raised.value.hint or "") and "Constant Value Column" in (raised.value.hint or "")


# -- the command line ----------------------------------------------------------------------------------------------


def _agent_argv(endpoint: FakeOpenAIEndpoint, url: str, *flags: str) -> list[str]:
    return [
        "agent",
        url,
        "--name",
        "demo",
        "--base-url",
        endpoint.base_url,
        "--model",
        "fake",
        "--prompt",
        "Go.",
        *flags,
    ]


def _script() -> list[Any]:
    return [tool_calls(("c1", "echo", {"text": "hi"}), ("c2", "fail", {"message": "boom"})), answer("Done.")]


def test_agent_stats_prints_each_tools_statistics_after_the_run(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    with FakeOpenAIEndpoint(_script()) as endpoint:
        code, out, err = run_cli(capsys, *_agent_argv(endpoint, demo_http_url, "--stats"))
    assert code == 0, err
    heading, header, *rows = out[out.index("Tool statistics:") :].splitlines()
    assert header.split()[:4] == ["TOOL", "SERVER", "CALLS", "ERRORS"]
    assert [row.split()[:4] for row in rows] == [["echo", "demo", "1", "0"], ["fail", "demo", "1", "1"]]


def test_agent_stats_in_json_are_the_nodes_columns_and_without_the_flag_there_are_none(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    with FakeOpenAIEndpoint(_script()) as endpoint:
        code, out, err = run_cli(capsys, *_agent_argv(endpoint, demo_http_url, "--stats", "--format", "json"))
    assert code == 0, err
    rows = json.loads(out)["tool_statistics"]
    assert [(row["Tool"], row["Calls"], row["Errors"]) for row in rows] == [("echo", 1, 0), ("fail", 1, 1)]
    assert list(rows[0]) == [name for name, _ in STATS_COLUMNS]
    with FakeOpenAIEndpoint(_script()) as endpoint:
        code, out, err = run_cli(capsys, *_agent_argv(endpoint, demo_http_url, "--format", "json"))
    assert code == 0 and "tool_statistics" not in json.loads(out), err


def test_chat_stats_prints_the_whole_chats_statistics_when_it_ends(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, demo_http_url: str
) -> None:
    script = [*_script(), tool_calls(("c3", "echo", {"text": "again"})), answer("Again.")]
    monkeypatch.setattr("sys.stdin", io.StringIO("Go.\nOnce more.\n/exit\n"))
    with FakeOpenAIEndpoint(script) as endpoint:
        argv = ["chat", demo_http_url, "--name", "demo", "--base-url", endpoint.base_url, "--model", "fake", "--stats"]
        code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    rows = out[out.index("Tool statistics:") :].splitlines()[2:]
    assert [row.split()[:4] for row in rows] == [["echo", "demo", "2", "0"], ["fail", "demo", "1", "1"]]


def test_call_table_stats_summarise_the_rows_calls_of_its_tool(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path
) -> None:
    source, output = tmp_path / "in.csv", tmp_path / "out.parquet"
    source.write_text("message\nfirst\nsecond\nthird\n", encoding="utf-8")
    argv = [
        "call-table",
        demo_http_url,
        "fail",
        "--input",
        str(source),
        "--output",
        str(output),
        "--on-error",
        "column",
    ]
    code, out, err = run_cli(capsys, *argv, "--stats")
    assert code == 0, err
    rows = out[out.index("Tool statistics:") :].splitlines()[2:]
    assert [row.split()[:4] for row in rows] == [["fail", "-", "3", "3"]]
    durations = sorted(pq.read_table(output).column("Duration (ms)").to_pylist())
    assert f"{statistics.median(durations):,.0f}" == rows[0].split()[4]
