"""The Tool Caller engine and its CLI, against the real demo server (and a flaky server for retries)."""

from __future__ import annotations

import json
import shlex
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fixtures.fault_servers import fault_url
from fixtures.python_servers import SERVERS_DIR, running_server
from knime_mcp.caller.table import CallerOptions, call_table, call_table_sync
from knime_mcp.calls.dispatch import RetryPolicy
from knime_mcp.calls.pool import ClientPool
from knime_mcp.cli.main import main
from knime_mcp.config import ServerSpec, Timeouts
from knime_mcp.errors import (
    CancelledByUser,
    ConfigError,
    McpToolError,
    ServerConnectError,
    ToolCallError,
    ToolTimeoutError,
)
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.seal import seal_spec
from knime_mcp.tools.tool import MCPTool

RESULTS = ["Result", "Structured result", "Image", "Other content", "Is error", "Error", "Duration (ms)"]
FAST_RETRIES = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.05)


def _tools(spec: ServerSpec) -> dict[str, MCPTool]:
    with SyncMcpClient(spec) as client:
        return {tool.name: tool for tool in client.list_tools()}


@pytest.fixture(scope="module")
def demo(demo_http_url: str) -> dict[str, MCPTool]:
    """The demo server's tools over Streamable HTTP."""
    return _tools(ServerSpec(target=demo_http_url))


@pytest.fixture(scope="module")
def stdio_demo(demo_stdio_command: list[str]) -> dict[str, MCPTool]:
    """The demo server's tools over stdio: every run starts its own server process."""
    return _tools(ServerSpec(target=shlex.join(demo_stdio_command)))


@pytest.fixture(scope="module")
def flaky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, MCPTool]]:
    """tests/servers/flaky_server.py: the first call per key hangs; `calls` counts what the server received."""
    command = [sys.executable, str(SERVERS_DIR / "flaky_server.py")]
    with running_server(command, tmp_path_factory.mktemp("flaky") / "server.log") as server:
        yield _tools(ServerSpec(target=server.url))


def _calls_received(flaky: dict[str, MCPTool], key: str) -> int:
    with SyncMcpClient(flaky["calls"].server) as client:
        return int(client.call_tool("calls", {"key": key}).text)


def _run(tool: MCPTool, batches: Any, **options: Any) -> tuple[pa.Table, list[pa.RecordBatch]]:
    written: list[pa.RecordBatch] = []
    call_table_sync(tool, batches, written.append, options=CallerOptions(**options))
    return pa.Table.from_batches(written), written


def _batches(columns: dict[str, list[Any]], size: int) -> list[pa.RecordBatch]:
    table = pa.table(columns)
    return [table.slice(start, size).combine_chunks().to_batches()[0] for start in range(0, table.num_rows, size)]


def _stdio_servers() -> list[psutil.Process]:
    """Demo server processes started over stdio by this test process (the HTTP fixtures run other transports)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "knime_mcp.demo_server" in child.cmdline() and "stdio" in child.cmdline():
                found.append(child)
        except psutil.NoSuchProcess:
            pass
    return found


def test_rows_keep_their_order_with_1000_rows_at_concurrency_8(demo: dict[str, MCPTool]) -> None:
    texts = [f"row {i}" for i in range(1000)]
    out, written = _run(demo["echo"], _batches({"text": texts}, 100), concurrency=8)
    assert out.column("Result").to_pylist() == texts
    assert out.column("text").to_pylist() == texts
    assert [batch.num_rows for batch in written] == [100] * 10
    assert not any(out.column("Is error").to_pylist())


def test_each_output_batch_is_the_input_batch_plus_the_result_columns(demo: dict[str, MCPTool]) -> None:
    out, _ = _run(demo["add"], [pa.record_batch({"a": [1, 2], "b": [3, 4], "label": ["x", "y"]})])
    assert out.column_names == ["a", "b", "label", *RESULTS]
    assert out.column("Result").to_pylist() == ["4", "6"]
    assert out.column("Structured result").to_pylist() == ['{"result": 4}', '{"result": 6}']
    assert out.schema.field("Image").type == pa.large_binary()
    assert all(ms is not None and ms >= 0 for ms in out.column("Duration (ms)").to_pylist())


def test_result_columns_are_renamed_when_the_input_already_has_their_names(demo: dict[str, MCPTool]) -> None:
    out, _ = _run(demo["echo"], [pa.record_batch({"text": ["hi"], "Result": ["old"]})])
    assert out.column_names == ["text", "Result", "Result (#1)", *RESULTS[1:]]
    assert out.column("Result (#1)").to_pylist() == ["hi"]


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (pa.array(["s"], pa.string()), "s"),
        (pa.array([7], pa.int32()), "7"),
        (pa.array([2**40], pa.int64()), str(2**40)),
        (pa.array([2.5], pa.float64()), "2.5"),
        (pa.array([True], pa.bool_()), "true"),
        (pa.array([["a", "b"]], pa.list_(pa.string())), '["a", "b"]'),
    ],
    ids=["string", "int32", "int64", "double", "bool", "list"],
)
def test_every_knime_type_reaches_a_string_parameter_as_text(
    demo: dict[str, MCPTool], column: pa.Array, expected: str
) -> None:
    out, _ = _run(demo["echo"], [pa.record_batch({"text": column})])
    assert out.column("Result").to_pylist() == [expected]


def test_integer_parameters_take_int32_int64_whole_doubles_and_numeric_text(demo: dict[str, MCPTool]) -> None:
    batch = pa.record_batch({"a": pa.array([1, 2, 3], pa.int32()), "b": pa.array(["10", "20", "30"])})
    out, _ = _run(demo["add"], [batch])
    assert out.column("Result").to_pylist() == ["11", "22", "33"]
    frame = pd.DataFrame({"a": np.array([2**40], dtype=np.int64), "b": [5.0]})
    out, _ = _run(demo["add"], [frame])
    assert out.column("Result").to_pylist() == [str(2**40 + 5)]


def test_json_text_columns_feed_object_and_array_parameters_and_a_missing_note_is_left_out(
    demo: dict[str, MCPTool],
) -> None:
    frame = pd.DataFrame(
        {
            "customer": ['{"name": "Ada", "email": "ada@example.com"}'] * 2,
            "items": ['[{"sku": "A-1", "quantity": 2}, {"sku": "B-2", "quantity": 1}]'] * 2,
            "note": pd.array(["ring twice", pd.NA], dtype="string"),
        }
    )
    out, _ = _run(demo["create_order"], [frame])
    orders = [json.loads(text) for text in out.column("Structured result").to_pylist()]
    assert [order["total_quantity"] for order in orders] == [3, 3]
    assert [order["note"] for order in orders] == ["ring twice", None]


def test_a_list_column_feeds_an_array_parameter_and_the_image_column_holds_png_bytes(
    demo: dict[str, MCPTool],
) -> None:
    frame = pd.DataFrame({"values": [np.array([1.0, 3.0, 2.0]), np.array([5, 0], dtype=np.int64)]})
    out, _ = _run(demo["render_chart"], [frame])
    images = out.column("Image").to_pylist()
    assert all(image.startswith(b"\x89PNG\r\n\x1a\n") for image in images)


def test_a_template_maps_columns_into_nested_arguments(demo: dict[str, MCPTool]) -> None:
    template = (
        '{"customer": {"name": "{who}", "email": "{who}@example.com"},'
        ' "items": [{"sku": "{sku}", "quantity": "{qty}"}], "note": "for {who}"}'
    )
    batch = pa.record_batch({"who": ["ada", "bob"], "sku": ["A-1", "B-2"], "qty": ["2", "5"]})
    out, _ = _run(demo["create_order"], [batch], mapping=template)
    orders = [json.loads(text) for text in out.column("Structured result").to_pylist()]
    assert [(o["customer"]["email"], o["total_quantity"], o["note"]) for o in orders] == [
        ("ada@example.com", 2, "for ada"),
        ("bob@example.com", 5, "for bob"),
    ]


def test_tool_errors_fill_the_error_columns_and_the_run_goes_on_in_error_column_mode(
    demo: dict[str, MCPTool],
) -> None:
    out, _ = _run(demo["fail"], [pa.record_batch({"message": ["first", "second"]})], on_error="column")
    assert out.column("Is error").to_pylist() == [True, True]
    errors = out.column("Error").to_pylist()
    assert "first" in errors[0] and "second" in errors[1]


def test_error_column_mode_records_bad_rows_and_calls_the_good_ones(demo: dict[str, MCPTool]) -> None:
    batch = pa.record_batch(
        {
            "value": [0.0, None, 100.0, 32.0],
            "from_unit": ["celsius", "celsius", "rankine", "fahrenheit"],
            "to_unit": ["kelvin"] * 4,
        }
    )
    out, _ = _run(demo["convert_temperature"], [batch], on_error="column")
    assert out.column("Is error").to_pylist() == [False, True, True, False]
    errors = out.column("Error").to_pylist()
    assert errors[0] is None and errors[3] is None
    assert "required parameter 'value' has no value (column 'value' is missing)" in errors[1]
    assert "rankine" in errors[2]
    assert out.column("Result").to_pylist()[3] == "273.15"


def test_fail_mode_stops_at_the_first_failed_row_and_names_it(demo: dict[str, MCPTool]) -> None:
    units = ["celsius", "kelvin", "rankine", "celsius", "celsius", "celsius", "celsius", "rankine"]
    batches = _batches({"value": [1.0] * 8, "from_unit": units, "to_unit": ["kelvin"] * 8}, 2)
    written: list[pa.RecordBatch] = []
    with pytest.raises(ToolCallError, match="^Row 3: Invalid arguments .*rankine") as error:
        call_table_sync(demo["convert_temperature"], batches, written.append, options=CallerOptions(concurrency=4))
    assert "error column" in str(error.value)
    assert [batch.num_rows for batch in written] == [2]


def test_a_missing_required_value_fails_the_run_with_the_row_and_its_knime_rowid(demo: dict[str, MCPTool]) -> None:
    batch = pa.record_batch({"<RowID>": ["Row0", "Row1"], "a": [1, None], "b": [2, 3]})
    with pytest.raises(ToolCallError, match=r"^Row 2 \(RowID Row1\): required parameter 'a' has no value"):
        _run(demo["add"], [batch])


def test_a_timed_out_call_of_an_idempotent_tool_is_retried(flaky: dict[str, MCPTool]) -> None:
    batch = pa.record_batch({"key": ["lookup-once"]})
    out, _ = _run(flaky["lookup"], [batch], timeout=1.0, retry=FAST_RETRIES)
    assert out.column("Result").to_pylist() == ["attempt 2"]
    assert _calls_received(flaky, "lookup-once") == 2


def test_a_tool_that_is_not_idempotent_is_never_retried(flaky: dict[str, MCPTool]) -> None:
    batch = pa.record_batch({"key": ["charge-once"]})
    out, _ = _run(flaky["charge"], [batch], timeout=1.0, retry=FAST_RETRIES, on_error="column")
    assert out.column("Is error").to_pylist() == [True]
    assert "did not answer within 1 s" in out.column("Error").to_pylist()[0]
    assert _calls_received(flaky, "charge-once") == 1


def test_a_timeout_in_fail_mode_raises_a_timeout_error_for_the_row(flaky: dict[str, MCPTool]) -> None:
    with pytest.raises(ToolTimeoutError, match="^Row 1: Tool 'charge' did not answer"):
        _run(flaky["charge"], [pa.record_batch({"key": ["charge-fail"]})], timeout=1.0)


def test_an_unreachable_server_fails_the_run_even_in_error_column_mode(demo: dict[str, MCPTool]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ServerSpec(target=f"http://127.0.0.1:{port}/mcp", timeouts=Timeouts(connect=5.0))
    tool = demo["echo"].with_changes(server=seal_spec(server))
    with pytest.raises(ServerConnectError):
        _run(tool, [pa.record_batch({"text": ["hi"]})], on_error="column")


def test_a_table_without_rows_gives_an_empty_result_batch_and_never_contacts_the_server(
    demo: dict[str, MCPTool],
) -> None:
    # Given a tool whose server is gone (a row would fail to connect: see the test above)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tool = demo["echo"].with_changes(server=seal_spec(ServerSpec(target=f"http://127.0.0.1:{port}/mcp")))
    # When a table without rows is called, as the node hands it over: one empty batch
    out, written = _run(tool, [pa.record_batch({"text": pa.array([], pa.string())})])
    # Then the result is one empty batch with the result columns, and nothing tried to connect
    assert len(written) == 1 and out.num_rows == 0
    assert out.column_names == ["text", *RESULTS]


def test_a_busy_servers_503_is_that_rows_error_and_the_run_goes_on(fake_misbehaving_url: str) -> None:
    url = fault_url(fake_misbehaving_url, "status", code=503, times=1, key="caller-busy", on="tools/call")
    tool = _tools(ServerSpec(target=url))["echo"]
    batch = pa.record_batch({"text": ["first", "second"]})
    out, _ = _run(tool, [batch], concurrency=1, on_error="column", retry=RetryPolicy(attempts=1))
    assert out.column("Is error").to_pylist() == [True, False]
    assert "HTTP 503" in out.column("Error").to_pylist()[0]
    assert out.column("Result").to_pylist()[1] == "second"


def test_a_mapping_to_a_missing_column_fails_before_any_call(demo: dict[str, MCPTool]) -> None:
    with pytest.raises(ConfigError, match="refers to column 'comment'"):
        _run(demo["echo"], [pa.record_batch({"text": ["hi"]})], mapping='{"text": "{comment}"}')


def test_progress_is_reported_after_every_batch(demo: dict[str, MCPTool]) -> None:
    reports: list[tuple[float, str]] = []
    batches = _batches({"text": ["x"] * 30}, 10)
    call_table_sync(demo["echo"], batches, lambda batch: None, total_rows=30, progress=lambda *r: reports.append(r))
    assert reports and reports[-1] == (1.0, "30 of 30 rows called")


def test_all_rows_share_one_server_process_over_stdio(stdio_demo: dict[str, MCPTool]) -> None:
    servers_seen: list[int] = []

    def sink(batch: pa.RecordBatch) -> None:
        servers_seen.append(len(_stdio_servers()))

    batches = _batches({"text": [str(i) for i in range(200)]}, 50)
    call_table_sync(stdio_demo["echo"], batches, sink, options=CallerOptions(concurrency=8))
    assert servers_seen == [1, 1, 1, 1]
    assert _stdio_servers() == []


def test_cancel_mid_run_cancels_the_calls_in_flight_and_leaves_no_server_process(
    stdio_demo: dict[str, MCPTool],
) -> None:
    polls_with_server = 0

    def cancelled() -> bool:
        nonlocal polls_with_server
        polls_with_server += bool(_stdio_servers())
        return polls_with_server > 5

    batches = _batches({"seconds": [600.0] * 40}, 10)
    with pytest.raises(CancelledByUser):
        call_table_sync(stdio_demo["sleep"], batches, lambda batch: None, cancelled=cancelled)
    assert _stdio_servers() == []


def test_the_async_api_takes_an_async_iterable_and_a_shared_pool(demo: dict[str, MCPTool]) -> None:
    async def batches() -> AsyncIterator[pd.DataFrame]:
        for start in range(0, 20, 5):
            yield pd.DataFrame({"text": [f"t{i}" for i in range(start, start + 5)]})

    written: list[pa.RecordBatch] = []

    async def sink(batch: pa.RecordBatch) -> None:
        written.append(batch)

    async def run() -> int:
        async with ClientPool() as pool:
            summary = await call_table(demo["echo"], batches(), sink, pool=pool)
            return summary.rows

    assert anyio.run(run) == 20
    assert pa.Table.from_batches(written).column("Result").to_pylist() == [f"t{i}" for i in range(20)]


def test_the_cli_calls_a_tool_for_1000_rows_of_a_parquet_file(
    demo_http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    texts = [f"row {i}" for i in range(1000)]
    pq.write_table(pa.table({"text": texts}), source, row_group_size=250)
    code = main(["call-table", demo_http_url, "echo", "--input", str(source), "--output", str(target)])
    assert code == 0
    assert capsys.readouterr().out == f"1,000 rows called; wrote {target}\n"
    assert pq.read_table(target).column("Result").to_pylist() == texts


def test_the_cli_reads_csv_and_records_failed_rows_with_on_error_column(
    demo_http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.parquet"
    source.write_text("a,b\n1,2\n3,x\n")
    args = ["call-table", demo_http_url, "add", "--input", str(source), "--output", str(target)]
    assert main([*args, "--on-error", "column"]) == 0
    assert "1 failed" in capsys.readouterr().out
    assert pq.read_table(target).column("Result").to_pylist() == ["3", None]


def test_the_cli_exits_with_a_tool_error_and_writes_no_file_when_a_row_fails(
    demo_http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = tmp_path / "in.csv", tmp_path / "out.parquet"
    source.write_text("message\nboom\n")
    code = main(["call-table", demo_http_url, "fail", "--input", str(source), "--output", str(target)])
    assert code == 4
    message = capsys.readouterr().err
    assert message.startswith("Error: Row 1: tool 'fail' reported an error:") and "boom" in message
    assert list(tmp_path.iterdir()) == [source]


def test_the_cli_refuses_other_input_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["call-table", "http://127.0.0.1:1/mcp", "echo", "--input", "x.json", "--output", "y.parquet"])
    assert code == 2
    assert ".csv or .parquet" in capsys.readouterr().err


def test_a_tool_not_sealed_here_is_refused_before_any_row_unless_all_servers_are_trusted(demo_http_url: str) -> None:
    import dataclasses

    from knime_mcp.caller.table import CallerOptions, call_table_sync
    from knime_mcp.calls.listing import list_server_tools
    from knime_mcp.config import ServerSpec
    from knime_mcp.errors import ConfigError
    from knime_mcp.mcp.sync import run_sync

    echo = next(t for t in run_sync(list_server_tools, ServerSpec(target=demo_http_url)).tools if t.name == "echo")
    edited = dataclasses.replace(echo, server=dataclasses.replace(echo.server, name="renamed in a table"))
    rows = [pd.DataFrame({"text": ["a", "b"]})]
    written: list[Any] = []
    with pytest.raises(ConfigError, match="loopback address"):
        call_table_sync(edited, rows, written.append)
    assert written == []

    call_table_sync(edited, rows, written.append, options=CallerOptions(trust_all_servers=True))
    assert sum(batch.num_rows for batch in written) == 2


def test_a_tool_that_writes_runs_one_call_at_a_time_so_no_created_entity_is_lost(
    memory_stdio_command: list[str], tmp_path: Path
) -> None:
    # Given server-memory, whose create_entities (not read-only) rewrites one graph file per call
    spec = ServerSpec(target=shlex.join(memory_stdio_command), env={"MEMORY_FILE_PATH": str(tmp_path / "graph.jsonl")})
    tools = _tools(spec)
    entities = [json.dumps([{"name": f"entity-{n}", "entityType": "test", "observations": []}]) for n in range(8)]
    # When the Tool Caller creates one entity per row with the default options
    table, _ = _run(tools["create_entities"], _batches({"entities": entities}, 8), trust_all_servers=True)
    # Then every row succeeded and the graph holds every entity
    assert not any(table.column("Is error").to_pylist())
    with SyncMcpClient(spec) as client:
        graph = client.call_tool("read_graph", {}).structured
    assert sorted(entity["name"] for entity in graph["entities"]) == sorted(f"entity-{n}" for n in range(8))


def test_a_tool_that_runs_only_as_a_task_runs_as_tasks_for_many_rows_at_once(everything_http_url: str) -> None:
    # Given server-everything's simulate-research-query, which declares execution.taskSupport "required"
    tool = _tools(ServerSpec(target=everything_http_url))["simulate-research-query"]
    heard: list[str] = []
    # When the Tool Caller calls it for three rows, three at once
    written: list[pa.RecordBatch] = []
    options = CallerOptions(concurrency=3, concurrent_writes=True, trust_all_servers=True)
    topics = ["MCP", "KNIME", "tasks"]

    async def sink(batch: pa.RecordBatch) -> None:
        written.append(batch)

    # every progress report, not only the newest that the blocking call_table_sync forwards
    run = partial(call_table, options=options, progress=lambda _, text: heard.append(text))
    anyio.run(run, tool, _batches({"topic": topics}, 3), sink)
    # Then every row has its report, and all three tasks had started before any reported a second status
    results = pa.Table.from_batches(written).column("Result").to_pylist()
    assert [result.splitlines()[0] for result in results] == [f"# Research Report: {topic}" for topic in topics]
    firsts = [text.endswith(": Gathering sources...") for text in heard]
    assert firsts[:3] == [True, True, True], heard


def test_default_concurrency_applies_to_read_only_tools_and_an_explicit_choice_to_any_tool(
    demo: dict[str, MCPTool],
) -> None:
    options = CallerOptions()
    assert options.concurrency_for(demo["echo"]) == 4
    assert options.concurrency_for(demo["create_order"]) == 1
    assert options.concurrency_for(demo["delete_record"]) == 1
    assert CallerOptions(concurrency=8, concurrent_writes=True).concurrency_for(demo["create_order"]) == 8


def test_the_cli_sends_csv_values_as_written_and_converts_them_only_by_the_parameters_type(
    demo_http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a CSV whose texts look like numbers, for a string parameter and for integer parameters
    echoed, added = tmp_path / "echo.csv", tmp_path / "add.csv"
    echoed.write_text("text\n007\n1e3\ntrue\n")
    added.write_text("a,b\n007,1\n")
    # When the CLI calls echo and add for them
    assert (
        main(["call-table", demo_http_url, "echo", "--input", str(echoed), "--output", str(tmp_path / "e.parquet")])
        == 0
    )
    assert (
        main(["call-table", demo_http_url, "add", "--input", str(added), "--output", str(tmp_path / "a.parquet")]) == 0
    )
    # Then the string parameter gets the text unchanged, and the integer parameters get numbers
    assert pq.read_table(tmp_path / "e.parquet").column("Result").to_pylist() == ["007", "1e3", "true"]
    assert pq.read_table(tmp_path / "a.parquet").column("Result").to_pylist() == ["8"]


def test_the_cli_leaves_out_the_parameter_of_an_empty_csv_cell_and_sends_a_quoted_empty_one(
    demo_http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a CSV of orders whose note is empty in one row and a quoted empty text in the other
    customer = json.dumps({"name": "Ada", "email": "ada@example.com"}).replace('"', '""')
    items = json.dumps([{"sku": "A-1", "quantity": 2}]).replace('"', '""')
    source, target = tmp_path / "orders.csv", tmp_path / "orders.parquet"
    source.write_text(f'customer,items,note\n"{customer}","{items}",\n"{customer}","{items}",""\n')
    # When the CLI creates the orders
    assert main(["call-table", demo_http_url, "create_order", "--input", str(source), "--output", str(target)]) == 0
    # Then the first call had no note at all, and the second an empty one
    results = pq.read_table(target)
    assert results.column("Is error").to_pylist() == [False, False]
    notes = [json.loads(text)["note"] for text in results.column("Structured result").to_pylist()]
    assert notes == [None, ""]
    assert pq.read_table(target).column("note").to_pylist() == [None, ""]


def test_a_result_that_breaks_the_tools_output_schema_is_a_tool_error_that_keeps_the_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a real server whose count_words sends its integer count as text
    command = [sys.executable, str(SERVERS_DIR / "schema_breaking_server.py")]
    tool = _tools(ServerSpec(target=shlex.join(command)))["count_words"]
    # When the Tool Caller calls it in error-column mode
    table, _ = _run(tool, _batches({"text": ["a b c"]}, 1), on_error="column", trust_all_servers=True)
    # Then the row is a tool error that says what did not match, and keeps the result
    assert table.column("Is error").to_pylist() == [True]
    assert table.column("Result").to_pylist() == ["3 words"]
    assert json.loads(table.column("Structured result")[0].as_py()) == {"count": "3"}
    error = table.column("Error")[0].as_py()
    assert error.startswith("The result does not match the tool's output schema: '3' is not of type 'integer'")
    # And the CLI exits with a tool error (4), not a connection error, after printing the result
    assert main(["call", "--", *command, "--", "count_words", "--args", '{"text": "a b c"}']) == 4
    captured = capsys.readouterr()
    assert json.loads(captured.out)["structured"] == {"count": "3"}
    assert "does not match the tool's output schema" in captured.err and "running" not in captured.err


def test_embedded_resources_and_resource_links_reach_the_other_content_column(
    everything_stdio_command: list[str],
) -> None:
    # Given server-everything's tools that answer with an embedded gzip file (a binary resource) and resource links
    import base64
    import gzip

    everything = _tools(ServerSpec(target=shlex.join(everything_stdio_command)))
    hello = "data:text/plain;base64," + base64.b64encode(b"hello knime").decode()
    gzip_rows = pa.table({"name": ["hello.txt.gz"], "data": [hello], "outputType": ["resource"]})
    # When the Tool Caller calls them
    gzipped, _ = _run(everything["gzip-file-as-resource"], [gzip_rows])
    linked, _ = _run(everything["get-resource-links"], [pa.table({"count": [2]})])
    # Then the gzip file is there, whole, as base64 (before, the row was a success with no data at all)
    (resource,) = json.loads(gzipped.column("Other content")[0].as_py())
    assert resource["type"] == "resource" and resource["mime_type"] == "application/gzip"
    assert gzip.decompress(base64.b64decode(resource["blob"])) == b"hello knime"
    # And each resource link keeps its address, name and type, beside the text in Result
    links = json.loads(linked.column("Other content")[0].as_py())
    assert [link["type"] for link in links] == ["resource_link", "resource_link"]
    assert all(link["uri"].startswith("demo://resource/") and link["name"] for link in links)
    assert "2 resource links" in linked.column("Result")[0].as_py()
    assert not any(gzipped.column("Is error").to_pylist() + linked.column("Is error").to_pylist())


@pytest.fixture
def token_echo(monkeypatch: pytest.MonkeyPatch) -> dict[str, MCPTool]:
    """tests/servers/token_echo_server.py over stdio, given its token through the environment."""
    monkeypatch.setenv("KNIME_MCP_TEST_TOKEN", "tok-canary-77e1b3")
    command = shlex.join([sys.executable, str(SERVERS_DIR / "token_echo_server.py")])
    return _tools(ServerSpec(target=command, env={"API_TOKEN": "${KNIME_MCP_TEST_TOKEN}"}))


def test_a_token_a_tool_quotes_is_masked_in_every_column(token_echo: dict[str, MCPTool]) -> None:
    # Given tools that quote their server's token in an error result, a protocol error and a successful result
    rows = pa.table({"resource": ["reports"]})
    # When the Tool Caller calls them, keeping failed rows
    refused, _ = _run(token_echo["check_access"], [rows], on_error="column")
    rejected, _ = _run(token_echo["verify_token"], [pa.table({"row": [1]})], on_error="column")
    answered, _ = _run(token_echo["whoami"], [pa.table({"row": [1]})], on_error="column")
    # Then the rows say what happened, with the token masked in every column
    assert "access to reports denied for token ***" in refused.column("Error")[0].as_py()
    assert "token *** is not valid here" in rejected.column("Error")[0].as_py()
    assert json.loads(answered.column("Structured result")[0].as_py()) == {"user": "knime", "token": "***"}
    for table in (refused, rejected, answered):
        assert "tok-canary-77e1b3" not in json.dumps(table.to_pylist())


def test_a_token_a_tool_quotes_is_masked_in_the_error_that_stops_the_run(token_echo: dict[str, MCPTool]) -> None:
    # Given a tool that rejects every call with a protocol error quoting its server's token
    # When the Tool Caller calls it and stops at the first failure
    with pytest.raises(McpToolError) as failed:
        _run(token_echo["verify_token"], [pa.table({"row": [1]})], on_error="fail")
    # Then the error that stops the run says why, with the token masked
    assert "token *** is not valid here" in str(failed.value)
    assert "tok-canary-77e1b3" not in str(failed.value) + repr(failed.value.args)


def test_numbers_json_cannot_carry_are_row_errors_and_the_other_rows_are_called(demo: dict[str, MCPTool]) -> None:
    # Given temperatures written with Arabic-Indic and fullwidth digits (int() and float() read them as numbers), a
    # NaN double (not a missing cell), and chart values as JSON text beyond the range of a double (Python reads 1e999
    # as an infinity, which the SDK sent as null) or with more digits than Python reads (which stopped the run)
    temperatures = pa.record_batch(
        {
            "value": pa.array(["\u0663", "\uff13", "25"]),
            "nan": pa.array([1.0, 2.0, float("nan")]),
            "from_unit": ["celsius"] * 3,
            "to_unit": ["kelvin"] * 3,
        }
    )
    charts = pa.record_batch({"values": ["[1e999]", "[1, -1e999]", "[" + "9" * 5000 + "]", "[1, 2]"]})
    # When the caller runs with errors to a column
    converted, _ = _run(demo["convert_temperature"], [temperatures], on_error="column")
    nan, _ = _run(demo["convert_temperature"], [temperatures], on_error="column", mapping={"value": "nan"})
    charted, _ = _run(demo["render_chart"], [charts], on_error="column")
    # Then each such row is a row error naming parameter, column and value, never sent; the other rows are called
    assert converted.column("Is error").to_pylist() == [True, True, False]
    assert converted.column("Error").to_pylist()[:2] == [
        f"parameter 'value' from column 'value': expected a number, got '{digit}', written with digits other than 0-9"
        for digit in ("\u0663", "\uff13")
    ]
    assert converted.column("Result").to_pylist()[2] == "298.15"
    assert nan.column("Is error").to_pylist() == [False, False, True]
    assert nan.column("Error").to_pylist()[2].endswith("from column 'nan': expected a finite number, got nan")
    assert charted.column("Is error").to_pylist() == [True, True, True, False]
    errors = charted.column("Error").to_pylist()
    assert "got text with 1e999, a number beyond the range of a double" in errors[0]
    assert "got text with -1e999, a number beyond the range of a double" in errors[1]
    assert "got text with 99999999999999999999... (5,000 characters), a number beyond" in errors[2]
    assert charted.column("Image").to_pylist()[3].startswith(b"\x89PNG")
