"""The knime-mcp command line, run in-process; exit codes tell usage, connection and tool errors apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knime_mcp.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tools_without_a_server_lists_the_bundled_demo_servers_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "tools")
    assert code == 0
    assert "echo" in out and "create_order" in out and out.rstrip().endswith("tools")


def test_tools_as_json_carry_schemas_and_annotations(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, _ = _run(capsys, "tools", demo_http_url, "--format", "json", "--include", "^add$")
    tools = json.loads(out)
    assert code == 0 and [tool["name"] for tool in tools] == ["add"]
    assert tools[0]["annotations"]["read_only"] is True and "a" in tools[0]["input_schema"]["properties"]


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_tools_write_arrow_and_parquet_files(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path, fmt: str
) -> None:
    from knime_mcp.arrow import tools_from_arrow

    path = tmp_path / f"tools.{fmt}"
    code, _, _ = _run(capsys, "tools", demo_http_url, "--format", fmt, "--output", str(path))
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
    code, out, _ = _run(capsys, "tools", "--", *everything_stdio_command)
    assert code == 0 and "get-sum" in out


def test_call_prints_the_normalised_result(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, _ = _run(capsys, "call", demo_http_url, "add", "--args", '{"a": 1, "b": 2}')
    assert code == 0 and json.loads(out)["structured"] == {"result": 3}


def test_call_of_a_stdio_server_takes_the_tool_after_the_command(
    capsys: pytest.CaptureFixture[str], demo_stdio_command: list[str]
) -> None:
    code, out, _ = _run(capsys, "call", "--", *demo_stdio_command, "--", "echo", "--args", '{"text": "hi"}')
    assert code == 0 and json.loads(out)["content"][0]["text"] == "hi"


def test_a_tool_error_exits_with_code_4(capsys: pytest.CaptureFixture[str], demo_http_url: str) -> None:
    code, out, err = _run(capsys, "call", demo_http_url, "fail", "--args", '{"message": "nope"}')
    assert code == 4 and json.loads(out)["is_error"] is True and err.startswith("Error:")


def test_a_connection_error_exits_with_code_3_and_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "tools", "http://nonexistent.invalid/mcp")
    assert code == 3 and "Hint:" in err


@pytest.mark.parametrize(
    "argv",
    [["call", "http://127.0.0.1:1/mcp", "echo", "--args", "{not json"], ["tools", "--format", "xml"], ["frobnicate"]],
)
def test_usage_errors_exit_with_code_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = _run(capsys, *argv)
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
    code = f"import sys; from knime_mcp.cli import main\ntry: main({argv!r})\nexcept SystemExit: pass\n"
    code += "print(sorted(m for m in ('pyarrow', 'pandas', 'langchain_core') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_tools_can_leave_out_everything_but_read_only_tools(
    capsys: pytest.CaptureFixture[str], demo_http_url: str
) -> None:
    code, out, err = _run(capsys, "tools", demo_http_url, "--destructive", "read-only", "--format", "json")
    names = {tool["name"] for tool in json.loads(out)}
    assert code == 0 and "echo" in names and "delete_record" not in names and "delete_record" in err
