"""The ``call-table`` progress bar: drawn on a terminal, never on a pipe."""

from __future__ import annotations

import io
import os
import pty
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knime_mcp.cli.main import main
from knime_mcp.cli.progress_bar import ProgressBar, progress_bar


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal's other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode()


def test_call_table_on_a_terminal_shows_rows_of_total_rate_and_failures(demo_http_url: str, tmp_path: Path) -> None:
    # Given a Parquet file of 40 rows, 10 of which make the add tool fail
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"a": [1] * 30 + [None] * 10, "b": [2] * 40}), source, row_group_size=10)
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        # When call-table runs with stderr on a pseudo-terminal
        argv = ["call-table", demo_http_url, "add", "--input", str(source), "--output", str(target)]
        code = main([*argv, "--on-error", "column"], out=io.StringIO(), err=terminal)
    shown = _read_all(master).replace("\r\n", "\n")
    os.close(master)
    # Then the bar redrew in place and its last state has every count, ending the line
    assert code == 0
    assert shown.startswith("\r") and shown.endswith("\n")
    # (a line shorter than the one before is padded with spaces over it, e.g. when the rate went from 100 to 99)
    last = shown.rstrip("\n").split("\r")[-1].rstrip(" ")
    assert last.startswith("[####################] 40 of 40 rows  ")
    assert "rows/s" in last and last.endswith("10 failed")


def test_call_table_into_a_pipe_prints_no_progress(
    demo_http_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"text": [f"r{i}" for i in range(40)]}), source, row_group_size=10)
    read, write = os.pipe()
    with os.fdopen(write, "w") as pipe:
        code = main(["call-table", demo_http_url, "echo", "--input", str(source), "--output", str(target)], err=pipe)
    with os.fdopen(read) as piped:
        assert code == 0
        assert piped.read() == ""
    assert capsys.readouterr().out == f"40 rows called; wrote {target}\n"


def test_the_bar_redraws_at_most_ten_times_a_second() -> None:
    now = [0.0]
    stream = io.StringIO()
    bar = ProgressBar(stream, 1000, clock=lambda: now[0])
    for _ in range(100):  # 100 batches within half a second
        now[0] += 0.005
        bar.advance(rows=10)
    bar.close()
    drawn = stream.getvalue()
    assert 2 <= drawn.count("\r") <= 7
    assert drawn.endswith("1,000 of 1,000 rows  2,000 rows/s\n")


def test_a_bar_of_unknown_total_counts_rows_without_a_bar() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, None, clock=iter([0.0, 1.0, 2.0]).__next__)
    bar.advance(rows=5, errors=2)
    bar.close()
    assert stream.getvalue().split("\r")[-1] == "5 rows  2 rows/s  2 failed\n"


def test_no_bar_is_made_for_a_stream_that_is_not_a_terminal() -> None:
    assert progress_bar(io.StringIO(), 10) is None


def test_a_line_shorter_than_the_one_before_is_padded_over_it() -> None:
    # 1,000 rows/s after one second, then 999 rows in ten seconds: "100 rows/s" is one character shorter
    stream = io.StringIO()
    bar = ProgressBar(stream, None, clock=iter([0.0, 1.0, 10.0, 10.0]).__next__)
    bar.advance(rows=1000)
    bar.advance(rows=0)
    bar.close()
    first, second, last = stream.getvalue().split("\r")[1:]
    assert first == "1,000 rows  1,000 rows/s"
    assert second == "1,000 rows  100 rows/s  "
    assert last == "1,000 rows  100 rows/s\n"
