"""Permissions (issue 38 §2): what each kind of tool needs, worked out from real listings (a stdio server, the demo
HTTP server, an OpenAPI API and a webhook, command-line programs), shown in the tools table and the CLI's listing,
and the *Granted permissions* of the agent (a scripted model) and of the Tool Caller, in the core and on the command
line. The CLI runs in-process against real servers on 127.0.0.1."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from langchain_core.messages import AIMessage, ToolMessage

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.calls.listing import list_http_tools, list_program_tools, list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.config.program import ProgramSpec
from knime_mcp.errors import ConfigError, ToolCallError
from knime_mcp.http.webhooks import WebhookRow
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.arrow import tools_to_table
from knime_mcp.tools.permissions import ALL_PERMISSIONS, needed_permissions, parse_permissions
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool
from scripted_model import calls, offered, scripted

ENV_ECHO_SERVER = SERVERS_DIR / "env_echo_server.py"


@pytest.fixture(scope="module")
def stdio_tools(demo_stdio_command: list[str]) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=shlex.join(demo_stdio_command), name="demo-stdio")).tools


@pytest.fixture(scope="module")
def http_tools(demo_http_url: str) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo-http")).tools


def _named(tools: list[MCPTool], name: str) -> MCPTool:
    return next(tool for tool in tools if tool.name == name)


# -- what each kind of tool needs ------------------------------------------------------------------------------------


def test_a_stdio_servers_tools_need_files_and_processes(stdio_tools: list[MCPTool]) -> None:
    # The demo server annotates every tool openWorldHint false, and passes no environment variables
    assert {needed_permissions(tool) for tool in stdio_tools} == {("files", "processes")}


def test_a_remote_servers_tools_need_the_network_even_when_annotated_closed_world(http_tools: list[MCPTool]) -> None:
    assert all(not tool.annotations.open_world for tool in http_tools)
    assert {needed_permissions(tool) for tool in http_tools} == {("network",)}


def test_a_stdio_server_given_environment_variables_needs_environment_and_its_open_world_tool_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a stdio server whose setup passes a variable, and whose tool's annotations leave openWorldHint out
    monkeypatch.setenv("KNIME_MCP_PERMISSION_TOKEN", "tok-perm-1")
    spec = ServerSpec(
        target=shlex.join([sys.executable, str(ENV_ECHO_SERVER)]), env={"API_TOKEN": "${KNIME_MCP_PERMISSION_TOKEN}"}
    )
    (tool,) = run_sync(list_server_tools, spec).tools
    # Then it needs all four: open-world by the specification's default for an annotated tool
    assert tool.annotations.annotated and tool.annotations.open_world
    assert needed_permissions(tool) == ("network", "files", "processes", "environment")


def test_an_openapi_operation_and_a_webhook_need_the_network(http_api_url: str, webhook_receiver_url: str) -> None:
    listing = run_sync(
        list_http_tools,
        f"{http_api_url}/openapi.json",
        webhooks=[WebhookRow(name="notify", url=f"{webhook_receiver_url}/hook")],
    )
    kinds = {tool.kind for tool in listing.tools}
    assert kinds == {"http"} and len(listing.tools) > 1
    assert {needed_permissions(tool) for tool in listing.tools} == {("network",)}


def test_a_program_needs_files_and_processes_and_environment_when_given_variables() -> None:
    plain = ProgramSpec(name="count_words", command="wc", args=("-w", "{path}"))
    with_env = ProgramSpec(name="count_lines", command="wc", args=("-l", "{path}"), env={"LANG": "C"})
    declared = ProgramSpec(name="fetch", command="curl", args=("{url}",), annotations={"openWorldHint": True})
    tools = list_program_tools([plain, with_env, declared]).tools
    assert {tool.kind_label for tool in tools} == {"Program"}
    assert [needed_permissions(tool) for tool in tools] == [
        ("files", "processes"),
        ("files", "processes", "environment"),
        ("network", "files", "processes"),
    ]


def test_the_tools_table_has_a_permissions_column_of_lists(
    stdio_tools: list[MCPTool], http_tools: list[MCPTool]
) -> None:
    table = tools_to_table([stdio_tools[0], http_tools[0]])
    assert table.schema.field("Permissions").type == pa.list_(pa.string())
    assert table.column("Permissions").to_pylist() == [["files", "processes"], ["network"]]


# -- the words of the grants -----------------------------------------------------------------------------------------


def test_grants_are_read_in_any_case_and_order_and_none_grants_nothing() -> None:
    assert parse_permissions(["Processes, network", "FILES"]) == ("network", "files", "processes")
    assert parse_permissions(["none"]) == ()
    with pytest.raises(ConfigError, match="Unknown permission 'shell'; use network, files, processes, environment"):
        parse_permissions(["shell"])
    with pytest.raises(ConfigError, match="'none' grants no permission, so it goes alone"):
        parse_permissions(["none", "network"])


def test_by_default_every_permission_is_granted_and_the_policy_judges_as_before(
    stdio_tools: list[MCPTool], http_tools: list[MCPTool]
) -> None:
    tools = [*stdio_tools, *http_tools]
    assert ToolPolicy().granted == ALL_PERMISSIONS
    assert ToolPolicy().offer(tools) == ToolPolicy(granted=ALL_PERMISSIONS).offer(tools)
    assert [tool.name for tool in ToolPolicy().offer(tools).tools] == [
        tool.name for tool in tools if tool.tool_name != "delete_record"
    ]


# -- the agent --------------------------------------------------------------------------------------------------------


def test_the_agent_offers_no_tool_needing_a_permission_not_granted_and_refuses_it_by_name(
    stdio_tools: list[MCPTool], http_tools: list[MCPTool]
) -> None:
    # Given the tools of a stdio server and of a remote one, and only the network granted
    model = scripted(calls(("c1", "echo_2", {"text": "hi"}), ("c2", "echo", {"text": "there"})), AIMessage("done"))
    remote = [tool.with_changes(name=f"{tool.name}_2") for tool in http_tools]
    config = AgentConfig(policy=ToolPolicy(granted=("network",)))
    # When the model calls the stdio server's tool by its name anyway, and the remote one
    result = run_sync(run_agent, model, [*stdio_tools, *remote], "Go.", config=config)
    # Then only the remote server's tools were offered, and the warnings name the missing grants
    assert "echo_2" in offered(model, 0) and "echo" not in offered(model, 0)
    assert (
        "Not offered to the model: tool 'echo' needs the files and processes permissions, which are not granted; "
        "grant them under 'Granted permissions', or with --permit files --permit processes on the command line"
    ) in result.warnings
    # And the call by name was refused, the log and the model told which permissions are missing
    log = {entry.tool: entry for entry in result.log}
    assert log["echo_2"].status == "ok"
    assert log["echo"].status == "blocked" and "needs the files and processes permissions" in (log["echo"].error or "")
    reply = next(m for m in result.conversation.new_messages if isinstance(m, ToolMessage) and m.tool_call_id == "c2")
    assert "The call was not made: tool 'echo' needs the files and processes permissions" in reply.text


# -- the Tool Caller ------------------------------------------------------------------------------------------------


def test_the_tool_caller_fails_each_row_naming_the_missing_grant_and_never_starts_the_server(tmp_path: Path) -> None:
    # Given a tool whose "server" is a command that leaves a file when it starts: a stand-in, since that a server is
    # never started is what no real server can show
    marker = tmp_path / "started"
    starts = ServerSpec(target=shlex.join([sys.executable, "-c", f"open({str(marker)!r}, 'w')"]), name="never")
    tool = MCPTool(name="echo", tool_name="echo", server=starts)
    rows: list[pa.RecordBatch] = []
    # When the Tool Caller calls it for two rows with only the network granted
    summary = call_table_sync(
        tool,
        [pa.record_batch({"text": ["a", "b"]})],
        rows.append,
        options=CallerOptions(on_error="column", granted=("network",)),
    )
    # Then both rows failed, naming the missing grants, and nothing was started
    assert (summary.rows, summary.errors) == (2, 2)
    errors = pa.Table.from_batches(rows).column("Error").to_pylist()
    refusal = (
        "The call was not made: tool 'echo' needs the files and processes permissions, which are not granted; grant "
        "them under 'Granted permissions', or with --permit files --permit processes on the command line."
    )
    assert errors == [refusal, refusal]
    assert not marker.exists()
    # And in fail mode the first row's error fails the run
    with pytest.raises(ToolCallError, match="needs the files and processes permissions"):
        call_table_sync(tool, [pa.record_batch({"text": ["a"]})], rows.append, options=CallerOptions(granted=()))


def test_the_tool_caller_calls_as_before_when_its_permissions_are_granted(stdio_tools: list[MCPTool]) -> None:
    rows: list[pa.RecordBatch] = []
    options = CallerOptions(granted=("files", "processes"))
    summary = call_table_sync(
        _named(stdio_tools, "echo"), [pa.record_batch({"text": ["hi"]})], rows.append, options=options
    )
    assert summary.errors == 0 and pa.Table.from_batches(rows).column("Result").to_pylist() == ["hi"]


# -- the command line -----------------------------------------------------------------------------------------------


def test_tools_shows_each_tools_permissions_in_json_and_text(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    code, out, _ = run_cli(capsys, "tools", demo_http_url, "--format", "json")
    assert code == 0 and {tuple(row["permissions"]) for row in json.loads(out)} == {("network",)}
    code, out, _ = run_cli(capsys, "tools", demo_http_url)
    header, first = out.splitlines()[:2]
    assert "PERMISSIONS" in header.split() and "network" in first.split()


def test_call_table_refuses_a_server_whose_transport_is_not_granted_before_starting_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_stdio_command: list[str]
) -> None:
    source = tmp_path / "in.csv"
    source.write_text("text\nhi\n")
    output = tmp_path / "out.parquet"
    code, _, err = run_cli(
        capsys, "call-table", "--permit", "network", "--input", str(source), "--output", str(output),
        "--", *demo_stdio_command, "--", "echo",
    )  # fmt: skip
    assert code == 2 and not output.exists()
    assert f"The server {shlex.join(demo_stdio_command)!r} needs the files and processes permissions" in err
    assert "grant them with --permit files --permit processes on the command line" in err


def test_call_table_of_a_tools_file_fails_each_row_naming_the_missing_grant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_stdio_command: list[str]
) -> None:
    # Given a tools file of the stdio demo server, written by 'tools' on this machine
    tools_file = tmp_path / "tools.json"
    listed, _, _ = run_cli(capsys, "tools", "--format", "json", "--output", str(tools_file), "--", *demo_stdio_command)
    source = tmp_path / "in.csv"
    source.write_text("text\nhi\nho\n")
    output = tmp_path / "out.parquet"
    # When call-table calls its echo tool granting the network alone, recording errors
    code, out, _ = run_cli(
        capsys, "call-table", "--tools", str(tools_file), "echo", "--permit", "network", "--on-error", "column",
        "--input", str(source), "--output", str(output),
    )  # fmt: skip
    # Then every row failed, naming the missing grants
    assert (listed, code) == (0, 0) and "2 rows called, 2 failed" in out
    errors = pq.read_table(output).column("Error").to_pylist()
    assert all("needs the files and processes permissions, which are not granted" in error for error in errors)
    # And granting them calls the tool
    code, out, _ = run_cli(
        capsys, "call-table", "--tools", str(tools_file), "echo", "--permit", "files,processes",
        "--input", str(source), "--output", str(output),
    )  # fmt: skip
    assert code == 0 and pq.read_table(output).column("Result").to_pylist() == ["hi", "ho"]


def test_call_takes_permit_none_and_refuses_an_unknown_permission(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    code, _, err = run_cli(capsys, "call", "--permit", "none", demo_http_url, "echo", "--args", '{"text": "x"}')
    assert code == 2 and f"The server '{demo_http_url}' needs the network permission" in err
    code, _, err = run_cli(capsys, "call", "--permit", "shell", demo_http_url, "echo")
    assert code == 2 and "--permit: Unknown permission 'shell'" in err
    code, out, _ = run_cli(capsys, "call", "--permit", "network", demo_http_url, "echo", "--args", '{"text": "x"}')
    assert code == 0 and json.loads(out)["content"][0]["text"] == "x"


def test_the_agent_command_leaves_out_a_server_not_granted_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, demo_http_url: str,
    demo_stdio_command: list[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("KNIME_MCP_TEST_LLM_KEY", "sk-perm-canary")
    with FakeOpenAIEndpoint([tool_calls(("c1", "echo", {"text": "far"})), answer("done")]) as endpoint:
        code, out, err = run_cli(
            capsys, "agent", demo_http_url, shlex.join(demo_stdio_command), "--permit", "network",
            "--base-url", endpoint.base_url, "--model", "fake-gpt", "--api-key-env", "KNIME_MCP_TEST_LLM_KEY",
            "--prompt", "Echo far.", "--format", "json",
        )  # fmt: skip
        requests: list[dict[str, Any]] = endpoint.requests
    assert code == 0
    assert "Not listed: The server" in err
    assert "needs the files and processes permissions, which are not granted; grant them with --permit files" in err
    offered_names = [tool["function"]["name"] for tool in requests[0]["tools"]]
    assert "echo" in offered_names and not any(name.endswith("_2") for name in offered_names)
    assert [call["status"] for call in json.loads(out)["tool_calls"]] == ["ok"]
