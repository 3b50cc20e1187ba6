"""Command-line programs as tools on the command line: `program-tools FILE` lists them, `--programs FILE` is a tool
source of `call`, `call-table` and `agent`, and Ctrl-C in `call` ends the program with every process it started."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cli_runs import press_ctrl_c, run_cli, start_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.processes import family_program, noted_pids, surviving_family

_PATIENCE = 60.0
"""Seconds to wait for what a test expects before it fails (a wait for readiness, not a timing)."""


def _programs_file(tmp_path: Path) -> Path:
    """A person's programs file: `shout` upper-cases its text (read-only), `slow` notes its id and its background
    child's in ``tmp_path / "pids"`` and sleeps."""
    programs = {
        "shout": {
            "command": sys.executable,
            "args": ["-c", "import sys; print(sys.argv[1].upper())", "{text}"],
            "description": "Upper-case a text",
            "annotations": {"readOnlyHint": True},
        },
        "slow": {"command": sys.executable, "args": ["-c", family_program(tmp_path / "pids")], "timeout": 600},
    }
    path = tmp_path / "programs.json"
    path.write_text(json.dumps({"programs": programs}), encoding="utf-8")
    return path


def test_program_tools_lists_a_programs_file_as_a_tools_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    programs = _programs_file(tmp_path)
    code, out, err = run_cli(capsys, "program-tools", str(programs))
    assert code == 0, err
    assert "shout" in out and "Upper-case a text" in out
    code, out, err = run_cli(capsys, "program-tools", str(programs), "--format", "json", "--include", "shout")
    (row,) = json.loads(out)
    assert row["name"] == "shout" and row["program"]["args"][-1] == "{text}" and row["seal"]


def test_call_runs_a_program_of_a_programs_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["call", "--programs", str(_programs_file(tmp_path)), "shout", "--args", '{"text": "hi there; $(id)"}']
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert json.loads(out)["content"][0]["text"] == "HI THERE; $(ID)\n"


def test_a_tools_file_written_by_program_tools_runs_here_and_is_refused_once_edited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a tools file program-tools wrote on this machine
    tools = tmp_path / "tools.json"
    listing = ["program-tools", str(_programs_file(tmp_path)), "--format", "json", "--output", str(tools)]
    assert run_cli(capsys, *listing)[0] == 0
    argv = ["call", "--tools", str(tools), "shout", "--args", '{"text": "ok"}']
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and json.loads(out)["content"][0]["text"] == "OK\n", err
    # When its program's arguments are edited, the program is not run
    rows = json.loads(tools.read_text(encoding="utf-8"))
    rows[0]["program"]["args"][1] = "import os; os.remove('important')"
    tools.write_text(json.dumps(rows), encoding="utf-8")
    code, out, err = run_cli(capsys, *argv)
    assert code == 3 and out == ""
    assert "A server command line taken from data was refused: it would start a program on this machine" in err


def test_call_table_runs_a_program_for_every_row(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "texts.csv"
    source.write_text("text\nfirst one\nsecond\n", encoding="utf-8")
    output = tmp_path / "out.parquet"
    argv = ["call-table", "--programs", str(_programs_file(tmp_path)), "shout", "--input", str(source)]
    code, out, err = run_cli(capsys, *argv, "--output", str(output))
    assert code == 0, err
    assert "2 rows called" in out
    assert pq.read_table(output).column("Result").to_pylist() == ["FIRST ONE\n", "SECOND\n"]


def test_agent_calls_a_program_of_a_programs_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = [tool_calls(("c1", "shout", {"text": "quiet"})), answer("It says QUIET.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        argv = [
            "agent",
            "--base-url",
            endpoint.base_url,
            "--model",
            "fake",
            "--programs",
            str(_programs_file(tmp_path)),
        ]
        code, out, err = run_cli(capsys, *argv, "--prompt", "Shout quiet", "--format", "json")
    assert code == 0, err
    offered = {spec["function"]["name"] for spec in endpoint.requests[0]["tools"]}
    assert "shout" in offered and "echo" not in offered  # the programs only, not the demo server's tools
    (call,) = json.loads(out)["tool_calls"]
    assert (call["tool"], call["kind"], call["status"]) == ("shout", "Program", "ok") and "QUIET" in call["result"]


def test_a_programs_file_that_does_not_exist_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli(capsys, "call", "--programs", str(tmp_path / "none.json"), "shout")
    assert code == 2 and "The --programs file" in err and "does not exist" in err


def test_ctrl_c_in_call_ends_the_program_and_its_background_child(tmp_path: Path) -> None:
    marks = tmp_path / "pids"
    child = start_cli("call", "--programs", str(_programs_file(tmp_path)), "slow")
    try:
        deadline = time.monotonic() + _PATIENCE
        while not noted_pids(marks):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the program never started"
            time.sleep(0.02)
        press_ctrl_c(child)
        out, err = child.communicate(timeout=_PATIENCE)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert surviving_family(marks) == set()
