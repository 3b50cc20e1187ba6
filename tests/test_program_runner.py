"""Command-line programs as tools (issue 37 §2), called through the dispatcher every node and command uses: real
programs (small Python scripts run with this interpreter) started without a shell, their output the result, their
processes (and those they started) ended with the call, and a program from data never started."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from fixtures.processes import family_program, noted_pids, surviving_family
from knime_mcp.calls.dispatch import CallOutcome, Dispatcher
from knime_mcp.calls.pool import ClientPool
from knime_mcp.config.program import ProgramSpec
from knime_mcp.errors import MASK, ServerConnectError, ToolCallError, ToolTimeoutError
from knime_mcp.programs import program_tools, run_program, spawn
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.tool_columns import OWN_TIMEOUT_HINT

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True, params=["pidfd", "anyio"])
def started_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test holds whichever way the program is started: awaited through a pidfd (Linux) or anyio's process
    (elsewhere)."""
    if request.param == "anyio":
        monkeypatch.setattr(spawn, "_pidfd_usable", lambda: False)
    return str(request.param)


_ARGV = "import json, sys; print(json.dumps(sys.argv[1:]))"
"""A program that prints the arguments it was given, as JSON."""

_PATIENCE = 60.0
"""Seconds to wait for what a test expects before it fails (a wait for readiness, not a timing)."""


def _python(name: str, code: str, *args: str, **settings: Any) -> ProgramSpec:
    return ProgramSpec(name=name, command=sys.executable, args=("-c", code, *args), **settings)


async def _call(tool: MCPTool, arguments: dict[str, Any], *, check_unsealed: bool = False) -> CallOutcome:
    async with ClientPool(check_unsealed=check_unsealed) as pool:
        return await Dispatcher(pool).call(tool, arguments)


async def test_each_argument_reaches_the_program_as_one_element_whatever_it_holds() -> None:
    (tool,) = program_tools([_python("argv", _ARGV, "--text", "{text}", "x{{literal}}", "{text}-again")])
    text = "two words 'quoted' \"double\" $(touch pwned) `id`; rm -rf * \n second line $HOME"
    outcome = await _call(tool, {"text": text})
    assert outcome.ok, outcome.record.error
    assert json.loads(outcome.result.text) == ["--text", text, "x{literal}", f"{text}-again"]
    assert outcome.result.structured == {"result": ["--text", text, "x{literal}", f"{text}-again"]}
    assert outcome.record.kind == "program"


async def test_values_that_are_not_text_reach_the_program_as_json_numbers_and_words() -> None:
    schema = {"type": "object", "properties": {name: {} for name in "abcd"}, "required": list("abcd")}
    (tool,) = program_tools([_python("argv", _ARGV, "{a}", "{b}", "{c}", "{d}", input_schema=schema)])
    outcome = await _call(tool, {"a": {"k": [1, "é"]}, "b": 2.5, "c": True, "d": [1, 2]})
    assert json.loads(outcome.result.text) == ['{"k": [1, "é"]}', "2.5", "true", "[1, 2]"]


async def test_a_program_that_fails_is_a_tool_error_with_the_end_of_its_stderr() -> None:
    code = "import sys; sys.stdout.write('partial'); sys.stderr.write('x' * 10000 + 'the real reason'); sys.exit(3)"
    (tool,) = program_tools([_python("failing", code)])
    outcome = await _call(tool, {})
    assert outcome.record.status == "tool_error" and outcome.result is not None and outcome.result.is_error
    text = outcome.result.text
    assert text.startswith("Program tool 'failing' exited with status 3.\n") and text.endswith("the real reason")
    assert "partial" not in text and len(text) < 4100  # the tail of stderr only


async def test_a_timeout_ends_the_program_and_the_background_child_holding_its_output(tmp_path: Path) -> None:
    marks = tmp_path / "pids"
    (tool,) = program_tools([_python("stuck", family_program(marks), timeout=1)])
    outcome = await _call(tool, {})
    assert outcome.record.status == "timeout" and isinstance(outcome.error, ToolTimeoutError)
    assert "did not finish within 1 s; it was stopped, with every process it started" in str(outcome.error)
    assert surviving_family(marks) == set()


async def test_a_program_that_exits_leaving_a_background_child_returns_its_output_and_the_child_ends(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "pids"
    (tool,) = program_tools([_python("leaves_a_child", family_program(marks, "sys.exit(0)"), timeout=600)])
    outcome = await _call(tool, {})
    assert outcome.ok and outcome.result.text == "started\n"
    assert surviving_family(marks) == set()


async def test_output_past_the_largest_output_is_a_clean_tool_error_and_the_program_is_stopped() -> None:
    code = "import sys, time\nfor _ in range(100): sys.stdout.write('x' * 65536)\nsys.stdout.flush(); time.sleep(600)"
    (tool,) = program_tools([_python("chatty", code, max_output_bytes=1024 * 1024, timeout=600)])
    outcome = await _call(tool, {})
    assert outcome.record.status == "tool_error" and isinstance(outcome.error, ToolCallError)
    assert "wrote more than the largest output knime-mcp reads for it (1 MB); it was stopped" in str(outcome.error)
    assert "maxOutputMb" in (outcome.error.hint or "")


async def test_the_program_gets_only_the_allowed_environment_and_its_own_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOST_SECRET", "host-only-value")
    monkeypatch.setenv("MY_TOKEN", "token-value-42")
    code = "import json, os; print(json.dumps({'names': sorted(os.environ), 'token': os.environ['TOKEN']}))"
    env = {"TOKEN": "${MY_TOKEN}", "LANG": "C"}
    (tool,) = program_tools([_python("environment", code, env=env)])
    outcome = await _call(tool, {})
    seen = json.loads(outcome.result.text)
    assert "HOST_SECRET" not in seen["names"] and {"TOKEN", "LANG", "PATH"} <= set(seen["names"])
    assert set(seen["names"]) <= {
        "TOKEN",
        "LANG",
        "PATH",
        "HOME",
        "LC_ALL",
        "TMPDIR",
        "LC_CTYPE",
        "__CF_USER_TEXT_ENCODING",
    }
    # The secret the reference resolved reached the program, and is masked in what it wrote back
    assert seen["token"] == MASK and "token-value-42" not in outcome.result.to_json()


async def test_a_program_row_from_data_is_refused_with_the_words_for_a_command_from_data(tmp_path: Path) -> None:
    marks = tmp_path / "ran"
    (sealed,) = program_tools([_python("touch", f"open({str(marks)!r}, 'w')")])
    unsealed = MCPTool.from_dict({**sealed.to_dict(), "seal": None})
    outcome = await _call(unsealed, {}, check_unsealed=True)
    assert outcome.record.status == "failed" and not marks.exists()
    assert "A server command line taken from data was refused: it would start a program on this machine" in str(
        outcome.error
    )
    assert (await _call(sealed, {}, check_unsealed=True)).ok and marks.exists()


async def test_an_edited_sealed_program_row_is_refused(tmp_path: Path) -> None:
    marks = tmp_path / "ran"
    (sealed,) = program_tools([_python("touch", "print('harmless')")])
    edited = sealed.to_dict()
    edited["program"]["args"][1] = f"open({str(marks)!r}, 'w')"
    outcome = await _call(MCPTool.from_dict(edited), {}, check_unsealed=True)
    assert outcome.record.status == "failed" and not marks.exists()
    assert "taken from data was refused" in str(outcome.error)


async def test_a_program_not_on_path_is_named_with_what_to_do() -> None:
    with pytest.raises(ServerConnectError) as caught:
        await run_program(ProgramSpec(name="tool", command="no-such-program-knime-mcp"), {})
    assert "runs 'no-such-program-knime-mcp', which is not installed here: it is not on PATH" in str(caught.value)
    assert "full path" in (caught.value.hint or "")


async def test_a_placeholder_without_an_argument_is_a_tool_error_naming_it() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}  # optional, but the template needs it
    (tool,) = program_tools([_python("argv", _ARGV, "{path}", input_schema=schema)])
    outcome = await _call(tool, {})
    assert outcome.record.status == "tool_error"
    assert "needs the argument 'path', which the call did not give" in str(outcome.error)


async def test_arguments_are_checked_against_the_schema_before_the_program_runs() -> None:
    (tool,) = program_tools([_python("argv", _ARGV, "{path}")])
    outcome = await _call(tool, {"other": "x"})
    assert outcome.record.status == "invalid_arguments"


async def test_a_cancelled_call_ends_the_program_and_its_children(tmp_path: Path) -> None:
    marks = tmp_path / "pids"
    program = _python("slow", family_program(marks), timeout=600)
    async with anyio.create_task_group() as group:
        group.start_soon(run_program, program, {})
        with anyio.fail_after(_PATIENCE):
            while not noted_pids(marks):
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert surviving_family(marks) == set()


def test_the_working_folder_is_the_programs_own(tmp_path: Path) -> None:
    program = _python("where", "import os; print(os.getcwd())", cwd=str(tmp_path))
    result = anyio.run(run_program, program, {})
    assert os.path.samefile(result.text.strip(), tmp_path)


async def test_a_tools_tables_timeout_column_bounds_the_program_and_says_where_it_is_set() -> None:
    (tool,) = program_tools([_python("sleepy", "import time; time.sleep(600)", timeout=600)])
    outcome = await _call(tool.with_changes(timeout=0.5), {})
    assert outcome.record.status == "timeout" and "did not finish within 0.5 s" in str(outcome.error)
    assert outcome.error.hint == OWN_TIMEOUT_HINT


def test_on_linux_a_program_is_awaited_through_a_pidfd_not_a_thread_of_its_own(started_by: str) -> None:
    assert spawn._pidfd_usable() is (started_by == "pidfd" and sys.platform == "linux")
