"""The knime-mcp command line, run in-process; exit codes tell usage, connection and tool errors apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import run_cli
from fixtures.python_servers import FAKES_DIR

TOKEN_ECHO_SERVER = Path(__file__).parent / "servers" / "token_echo_server.py"


def test_tools_without_a_server_lists_the_bundled_demo_servers_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "tools")
    assert code == 0
    assert "echo" in out and "create_order" in out and out.rstrip().endswith("tools")


def test_tools_as_json_carry_schemas_and_annotations(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, _ = run_cli(capsys, "tools", demo_http_url, "--format", "json", "--include", "^add$")
    tools = json.loads(out)
    assert code == 0 and [tool["name"] for tool in tools] == ["add"]
    assert tools[0]["annotations"]["read_only"] is True and "a" in tools[0]["input_schema"]["properties"]


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_tools_write_arrow_and_parquet_files(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path, fmt: str
) -> None:
    from knime_mcp.tools.arrow import tools_from_arrow

    path = tmp_path / f"tools.{fmt}"
    code, _, _ = run_cli(capsys, "tools", demo_http_url, "--format", fmt, "--output", str(path))
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    else:
        import pyarrow as pa

        table = pa.ipc.open_file(path).read_all()
    assert code == 0 and "echo" in {tool.name for tool in tools_from_arrow(table)}


def test_tools_of_a_stdio_server_given_after_a_double_dash(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str]
) -> None:
    code, out, _ = run_cli(capsys, "tools", "--", *everything_stdio_command)
    assert code == 0 and "get-sum" in out


def test_call_prints_the_normalised_result(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, _ = run_cli(capsys, "call", demo_http_url, "add", "--args", '{"a": 1, "b": 2}')
    assert code == 0 and json.loads(out)["structured"] == {"result": 3}


def test_call_of_a_stdio_server_takes_the_tool_after_the_command(
    capsys: pytest.CaptureFixture[str], demo_stdio_command: list[str]
) -> None:
    code, out, _ = run_cli(capsys, "call", "--", *demo_stdio_command, "--", "echo", "--args", '{"text": "hi"}')
    assert code == 0 and json.loads(out)["content"][0]["text"] == "hi"


def test_a_tool_error_exits_with_code_4(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, err = run_cli(capsys, "call", demo_http_url, "fail", "--args", '{"message": "nope"}')
    assert code == 4 and json.loads(out)["is_error"] is True and err.startswith("Error:")


def test_a_connection_error_exits_with_code_3_and_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "tools", "http://nonexistent.invalid/mcp")
    assert code == 3 and "Hint:" in err


@pytest.mark.parametrize(
    "argv",
    [["call", "http://127.0.0.1:1/mcp", "echo", "--args", "{not json"], ["tools", "--format", "xml"], ["frobnicate"]],
)
def test_usage_errors_exit_with_code_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith("Error:")


def test_the_console_script_runs_as_a_fresh_process(demo_http_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "knime_mcp", "tools", demo_http_url, "--include", "^echo$"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "echo" in done.stdout


@pytest.mark.parametrize("argv", [["--help"], ["tools"]])
def test_help_and_the_text_table_do_not_import_pyarrow_or_pandas(argv: list[str]) -> None:
    code = f"import sys; from knime_mcp.cli.main import main\ntry: main({argv!r})\nexcept SystemExit: pass\n"
    code += "print(sorted(m for m in ('pyarrow', 'pandas', 'langchain_core') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_tools_can_leave_out_everything_but_read_only_tools(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    code, out, err = run_cli(capsys, "tools", demo_http_url, "--destructive", "read-only", "--format", "json")
    names = {tool["name"] for tool in json.loads(out)}
    assert code == 0 and "echo" in names and "delete_record" not in names and "delete_record" in err


_UNREACHABLE = "http://127.0.0.1:1/mcp"
"""Nothing listens on port 1: a command that reaches the network fails with exit code 3, not 2."""


def _banner_server(python: str = sys.executable) -> list[str]:
    """The demo server over stdio, behind one banner line on stdout that the SDK cannot parse and logs."""
    return ["sh", "-c", f"echo 'demo server ready'; exec {python} -m knime_mcp.demo_server"]


@pytest.mark.parametrize("verbose", [False, True])
def test_sdk_log_records_are_one_line_each_unless_verbose(verbose: bool) -> None:
    argv = [
        "call",
        *(["--verbose"] if verbose else []),
        "--",
        *_banner_server(),
        "--",
        "echo",
        "--args",
        '{"text": "hi"}',
    ]
    done = subprocess.run([sys.executable, "-m", "knime_mcp", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["content"][0]["text"] == "hi"
    if verbose:
        assert "Traceback" in done.stderr
    else:
        assert "Traceback" not in done.stderr
        assert done.stderr.splitlines() == [
            "Warning: Failed to parse JSONRPC message from server "
            "(mcp.client.stdio: ValidationError; --verbose shows the details)"
        ]


@pytest.mark.parametrize("command", ["call", "call-table"])
def test_a_server_url_without_a_tool_name_is_a_usage_error(capsys: pytest.CaptureFixture[str], command: str) -> None:
    extra = ["--input", "in.csv", "--output", "out.parquet"] if command == "call-table" else []
    code, _, err = run_cli(capsys, command, "http://localhost:8000/mcp", *extra)
    assert code == 2 and "needs the name of the tool" in err and "knime-mcp tools http://localhost:8000/mcp" in err


@pytest.mark.parametrize("argv", [["call", "localhost:8000/mcp", "echo"], ["tools", "localhost:8000/mcp"]])
def test_a_url_without_its_scheme_is_a_usage_error_not_a_command(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "Did you mean 'http://localhost:8000/mcp'?" in err


def test_a_server_word_that_is_not_a_url_asks_for_the_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "tools", "my-server")
    assert code == 2 and "knime-mcp tools -- my-server" in err


def test_call_table_of_a_stdio_server_needs_the_second_double_dash(
    capsys: pytest.CaptureFixture[str], demo_stdio_command: list[str]
) -> None:
    code, _, err = run_cli(
        capsys, "call-table", "--", *demo_stdio_command, "echo", "--input", "a.csv", "--output", "b.parquet"
    )
    assert code == 2 and "second '--'" in err


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out == f"knime-mcp {version('knime-mcp')}\n"


def test_call_reads_arguments_larger_than_a_command_line_word_from_a_file(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path
) -> None:
    text = "x" * 200_000  # past Linux's 128 KB limit for one argv word
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"text": text}), encoding="utf-8")
    code, out, _ = run_cli(capsys, "call", demo_http_url, "echo", "--args", f"@{path}")
    assert code == 0 and json.loads(out)["content"][0]["text"] == text


def test_call_reads_arguments_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, demo_http_url: str
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO('{"a": 2, "b": 3}'))
    code, out, _ = run_cli(capsys, "call", demo_http_url, "add", "--args", "-")
    assert code == 0 and json.loads(out)["structured"] == {"result": 5}


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", _UNREACHABLE, "--include", "("],
        ["tools", _UNREACHABLE, "--deny", "[a-"],
        ["agent", _UNREACHABLE, "--model", "m", "--prompt", "p", "--allow", "("],
        ["tools", _UNREACHABLE, "--format", "parquet"],
        ["tools", _UNREACHABLE, "--output", "tools.txt"],
        ["call", _UNREACHABLE, "echo", "--args", "@/nonexistent/args.json"],
        ["call", _UNREACHABLE, "echo", "--header", "Authorization: Bearer sk-literal"],
        ["tools", _UNREACHABLE, "--header", "X-API-Key: sk-literal"],
    ],
)
def test_usage_errors_are_found_before_connecting(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith("Error:") and "sk-literal" not in err


@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity"])
def test_a_number_json_cannot_carry_in_args_is_refused_not_sent_as_null(
    capsys: pytest.CaptureFixture[str], number: str
) -> None:
    # Python reads 1e999 as infinity and the SDK would send it as null: refused before connecting
    code, _, err = run_cli(capsys, "call", _UNREACHABLE, "add", "--args", f'{{"a": {number}, "b": 1}}')
    assert code == 2 and err.startswith(f"Error: --args has {number}"), err


def test_a_header_secret_given_as_an_env_reference_is_accepted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, demo_http_url: str
) -> None:
    monkeypatch.setenv("KNIME_MCP_TEST_HEADER", "sk-test")
    code, _, _ = run_cli(capsys, "tools", demo_http_url, "--header", "Authorization: Bearer ${KNIME_MCP_TEST_HEADER}")
    assert code == 0


@pytest.mark.parametrize(
    ("output", "message"), [("missing-folder/out.parquet", "does not exist"), ("out.csv", "must be a .parquet file")]
)
def test_call_table_checks_its_output_before_the_first_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, output: str, message: str
) -> None:
    source = tmp_path / "in.csv"
    source.write_text("text\nhi\n", encoding="utf-8")
    argv = ["call-table", _UNREACHABLE, "echo", "--input", str(source), "--output", str(tmp_path / output)]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and message in err


def test_call_checks_the_arguments_against_the_schema_and_does_not_call(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    code, out, err = run_cli(capsys, "call", demo_http_url, "add", "--args", '{"a": "one", "b": 2}')
    # out is empty: no result, the dispatcher refused the call before sending it
    assert code == 4 and out == "" and "Invalid arguments for tool 'add'" in err and "'one'" in err


@pytest.mark.parametrize("command", ["call", "call-table"])
def test_an_unknown_tool_exits_with_code_4_in_call_and_call_table(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path, command: str
) -> None:
    source = tmp_path / "in.csv"
    source.write_text("text\nhi\n", encoding="utf-8")
    extra = ["--input", str(source), "--output", str(tmp_path / "out.parquet")] if command == "call-table" else []
    code, _, err = run_cli(capsys, command, demo_http_url, "no_such_tool", *extra)
    assert code == 4 and "no tool 'no_such_tool'" in err and "echo" in err


def test_hints_name_the_cli_flags(capsys: pytest.CaptureFixture[str], fake_hang_url: str) -> None:
    code, _, err = run_cli(capsys, "tools", fake_hang_url, "--connect-timeout", "0.5")
    assert code == 3 and "--connect-timeout" in err and "connect timeout." not in err


def test_demo_server_says_on_stderr_where_it_listens() -> None:
    command = [sys.executable, "-m", "knime_mcp", "demo-server", "--transport", "streamable-http"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        assert "listening on http://127.0.0.1:" in process.stderr.readline()
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
    assert out == ""


def test_demo_server_names_a_port_in_use() -> None:
    from knime_mcp.demo_server import listening_socket

    with listening_socket() as taken:
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "knime_mcp", "demo-server", "--transport", "sse", "--port", str(port)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and f"Port {port} on 127.0.0.1 is already in use" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_loads_neither_the_sdk_nor_its_http_stack() -> None:
    code = "import sys; from knime_mcp.cli.main import main\nmain(['--help'])\n"
    code += "print(sorted(m for m in ('mcp', 'httpx2', 'anyio', 'pydantic', 'pyarrow') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_agent_help_states_the_agents_own_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    from knime_mcp.agent.loop import DEFAULT_ITERATION_LIMIT, DEFAULT_MAX_CONCURRENCY

    code, out, _ = run_cli(capsys, "agent", "--help")
    help_text = " ".join(out.split())
    assert code == 0
    assert f"model calls per run (default: {DEFAULT_ITERATION_LIMIT})" in help_text
    assert f"tool calls at once (default: {DEFAULT_MAX_CONCURRENCY})" in help_text


def test_every_knime_hint_the_cli_rewrites_still_stands_in_the_core() -> None:
    # The CLI turns hints that name KNIME settings into hints that name flags, by their wording: a hint reworded in
    # the core would silently keep naming a KNIME setting on the command line
    from pathlib import Path

    import knime_mcp
    from knime_mcp.cli.wording import CLI_WORDS

    core = Path(knime_mcp.__file__).parent
    sources = " ".join(
        " ".join(path.read_text().split()) for path in core.rglob("*.py") if path.parent.name != "cli"
    ).replace('" "', "")
    missing = [setting for setting, _ in CLI_WORDS if setting not in sources]
    assert not missing, f"hints the CLI rewrites but the core no longer gives: {missing}"


def test_call_masks_a_token_the_server_quotes_in_its_answer_or_its_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stdio server given a token through --env, whose tools quote it in a result and in a protocol error
    monkeypatch.setenv("KNIME_MCP_TEST_TOKEN", "tok-canary-77e1b3")
    server = ["--env", "API_TOKEN=${KNIME_MCP_TEST_TOKEN}", "--", sys.executable, str(TOKEN_ECHO_SERVER), "--"]
    # When the CLI calls them
    answered, out, _ = run_cli(capsys, "call", *server, "whoami")
    rejected, _, err = run_cli(capsys, "call", *server, "verify_token")
    # Then both say what the server said, with the token masked
    assert answered == 0 and json.loads(out)["structured"] == {"user": "knime", "token": "***"}
    assert rejected != 0 and "token *** is not valid here" in err
    assert "tok-canary-77e1b3" not in out + err


def test_call_table_reads_a_long_csv_file_a_few_thousand_rows_at_a_time(tmp_path: Path) -> None:
    # Results are written and progress shown a batch at a time, and memory holds a few batches: pyarrow's default
    # block would make batches of tens of thousands of rows
    import pyarrow as pa
    import pyarrow.csv

    from knime_mcp.cli.call_table import _open_csv_as_text

    path = tmp_path / "rows.csv"
    pyarrow.csv.write_csv(pa.table({"text": [f"row {i:08d} of a long table" for i in range(60_000)]}), path)
    batches = list(_open_csv_as_text(str(path)))
    assert sum(batch.num_rows for batch in batches) == 60_000
    assert len(batches) >= 10 and max(batch.num_rows for batch in batches) <= 10_000


@pytest.mark.parametrize("verbose", [[], ["--verbose"]], ids=["quiet", "verbose"])
def test_a_line_feed_a_server_sends_cannot_forge_a_line_on_stderr(
    capsys: pytest.CaptureFixture[str], verbose: list[str]
) -> None:
    # Given a server whose log message, progress message and error each hold a line feed and a forged line
    server = [sys.executable, str(FAKES_DIR / "fake_forging_server.py")]
    # When the CLI calls its tool, which logs, reports progress and fails
    code, _, err = run_cli(capsys, "call", *verbose, "--", *server, "--", "forge")
    # Then each text stays on its own line, the line feed escaped as JSON writes it
    assert code == 4
    assert not [line for line in err.splitlines() if line.startswith("Error: forged")], err
    for what in ("log", "progress", "error"):
        assert f"\\u000aError: forged {what} line" in err


def test_a_result_of_several_lines_stays_valid_json(capsys: pytest.CaptureFixture[str]) -> None:
    server = [sys.executable, str(FAKES_DIR / "fake_forging_server.py")]
    code, out, _ = run_cli(capsys, "call", "--", *server, "--", "lines")
    assert code == 0 and json.loads(out)["content"][0]["text"] == "one\ntwo\nError: forged result line"
