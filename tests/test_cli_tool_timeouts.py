"""The *Timeout (s)* column of a tools file (`--tools FILE`): `call` and `call-table` give each tool the call timeout
of its row, as the nodes give it from a tools table, against the real demo server's `sleep` tool; a bad value is the
same error as in KNIME, naming the column and the row."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli_runs import run_cli
from knime_mcp.tools.tool_columns import TIMEOUT_COLUMN


def _tools_file(capsys: pytest.CaptureFixture[str], demo_http_url: str, path: Path, sleep_timeout: object) -> Path:
    """The demo server's tools file as `tools --output` writes it, with a *Timeout (s)* column a person added:
    ``sleep_timeout`` for the `sleep` tool's row, missing for the others."""
    fmt = path.suffix.lstrip(".")
    code, _, err = run_cli(capsys, "tools", demo_http_url, "--format", fmt, "--output", str(path))
    assert code == 0, err
    if fmt == "json":
        rows = json.loads(path.read_text(encoding="utf-8"))
        for row in rows:
            row[TIMEOUT_COLUMN] = sleep_timeout if row["name"] == "sleep" else None
        path.write_text(json.dumps(rows), encoding="utf-8")
        return path
    table = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(path.read_bytes()).read_all()
    names = [json.loads(cell)["name"] if isinstance(cell, str) else cell["name"] for cell in _tool_cells(table)]
    cells = pa.array([sleep_timeout if name == "sleep" else None for name in names], pa.float64())
    table = table.append_column(TIMEOUT_COLUMN, cells)
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return path


def _tool_cells(table: pa.Table) -> list[object]:
    column = table.column(0)
    storage = pa.chunked_array([chunk.storage if hasattr(chunk, "storage") else chunk for chunk in column.chunks])
    return storage.to_pylist()


@pytest.mark.parametrize("fmt", ["json", "parquet", "arrow"])
def test_a_tools_files_timeout_column_cuts_a_slow_call_short_of_the_runs_call_timeout(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path, fmt: str
) -> None:
    tools = _tools_file(capsys, demo_http_url, tmp_path / f"tools.{fmt}", 0.5)
    argv = ["call", "--tools", str(tools), "sleep", "--args", '{"seconds": 30}', "--call-timeout", "120"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 4 and "did not answer within 0.5 s" in err, err
    assert "Raise the tool's 'Timeout (s)' in its tools table" in err and "--call-timeout" not in err, err


def test_a_tools_files_timeout_column_lets_a_call_run_past_the_runs_call_timeout(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path
) -> None:
    tools = _tools_file(capsys, demo_http_url, tmp_path / "tools.parquet", 60)
    argv = ["call", "--tools", str(tools), "sleep", "--args", '{"seconds": 1}', "--call-timeout", "0.2"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert json.loads(out)["content"][0]["text"] == "Slept 1 s."
    add = ["call", "--tools", str(tools), "add", "--args", '{"a": 1, "b": 2}', "--call-timeout", "0.2"]
    assert run_cli(capsys, *add)[0] == 0  # a missing cell leaves --call-timeout, which a quick call keeps within


def test_call_table_gives_each_row_the_timeout_of_its_tool_in_the_tools_file(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path
) -> None:
    tools = _tools_file(capsys, demo_http_url, tmp_path / "tools.arrow", 0.5)
    source, output = tmp_path / "in.csv", tmp_path / "out.parquet"
    source.write_text("seconds\n30\n", encoding="utf-8")
    argv = ["call-table", "--tools", str(tools), "sleep", "--input", str(source), "--output", str(output)]
    code, _, err = run_cli(capsys, *argv, "--call-timeout", "120", "--on-error", "column")
    assert code == 0, err
    (row,) = pq.read_table(output).to_pylist()
    assert "did not answer within 0.5 s" in row["Error"], row


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_a_bad_timeout_in_a_tools_file_is_an_error_naming_the_column_and_row(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, tmp_path: Path, fmt: str
) -> None:
    tools = _tools_file(capsys, demo_http_url, tmp_path / f"tools.{fmt}", -5)
    code, out, err = run_cli(capsys, "call", "--tools", str(tools), "add", "--args", '{"a": 1, "b": 2}')
    assert code != 0 and out == ""
    assert f"Column {TIMEOUT_COLUMN!r}, row " in err and "-5" in err and "is not a timeout in seconds" in err, err
    assert "leave the cell missing for --call-timeout" in err, err  # the command line's words, not the node's
