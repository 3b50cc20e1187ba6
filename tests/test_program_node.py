"""The Program Tool Provider node, run as KNIME runs it (Given/When/Then), on both hosts, end to end: its tools table
feeds the Agent Prompter (a scripted model endpoint on 127.0.0.1) and the MCP Tool Caller, which run the real program
(small Python scripts run by this interpreter). A failing program is a tool error for the model and a row error for
the caller; an edited or copied row, and a program set by a flow variable, never run; cancel stops the program."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.processes import family_program, noted_pids, surviving_family
from knime_mcp.errors import CancelledByUser
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

ARGV = "import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'canary': os.environ.get('PROGRAM_CANARY')}))"
"""A program that prints what it was given, as JSON: its arguments, and whether a variable of KNIME's reached it."""
FAIL = "import sys; sys.stderr.write('no such word: ' + sys.argv[1]); sys.exit(1)"
"""A program that fails, saying why on stderr."""
REFUSED = "A server command line taken from data was refused"
"""The words every refusal of a program from data starts with, as for a stdio MCP server's command line."""


def _provider(**program: Any) -> Any:
    """A Program Tool Provider with the program settings ``program`` (every one set: KNIME's real API keeps a
    group's values on its class)."""
    from nodes.program_tool_provider import ProgramToolProvider

    node = ProgramToolProvider()
    node.pasted_config = program.pop("pasted_config", "")
    settings = {
        "name": "", "description": "", "command": sys.executable, "arguments": "", "input_schema": "",
        "working_folder": "", "environment": "", "timeout": 60.0, "max_output_mb": 64, "trust_flow_variable": False,
    } | program  # fmt: skip
    return node_host.set_parameters(node, **{f"program__{name}": value for name, value in settings.items()})


def _tools(node: Any, ctx: ExecuteContext | None = None) -> Any:
    (table,) = node_host.execute_node(node, ctx or ExecuteContext())
    return node_host.source_table(table.to_pandas())


def _argv_tools() -> Any:
    return _tools(_provider(name="show_args", description="Shows its arguments.", arguments=f"-c\n{ARGV}\n{{text}}"))


def _caller(**settings: Any) -> Any:
    from nodes.tool_caller import MCPToolCaller

    defaults = {"tool__name": "", "tool__tags": "", "tool__mapping": "", "calls__on_error": "COLUMN"}
    return node_host.set_parameters(MCPToolCaller(), **(defaults | settings))


def _rows(**columns: list[Any]) -> Any:
    return node_host.source_table(pd.DataFrame(columns))


def test_the_provider_lists_a_program_as_one_sealed_row_of_kind_program_in_the_providers_columns(
    demo_http_url: str,
) -> None:
    from agent_runs import provider_tools_table

    # When the provider lists a program typed into its settings
    (table,) = node_host.execute_node(
        _provider(name="show_args", description="Shows its arguments.", arguments=f"-c\n{ARGV}\n{{text}}"),
        ExecuteContext(),
    )
    frame = table.to_pandas()
    # Then it is one row in exactly the MCP Tool Provider's columns, of Kind Program, its schema made of the template
    assert list(frame.columns) == list(provider_tools_table((demo_http_url, "", {})).to_pandas().columns)
    row = frame.iloc[0]
    assert (row["Name"], row["Kind"], row["Description"]) == ("show_args", "Program", "Shows its arguments.")
    assert row["Tool ID"].startswith("program-")
    assert json.loads(row["Input Schema"])["required"] == ["text"]
    assert json.loads(row["MCP Tool"])["seal"]


def test_the_agent_prompter_runs_the_program_the_model_calls_and_a_failing_one_goes_back_to_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a pasted configuration of two programs, one that fails, and a variable of KNIME's a program must not see
    monkeypatch.setenv("PROGRAM_CANARY", "canary-8d2c")
    pasted = json.dumps(
        {
            "programs": {
                "show_args": {"command": sys.executable, "args": ["-c", ARGV, "{text}"], "description": "Shows."},
                "look_up": {"command": sys.executable, "args": ["-c", FAIL, "{word}"], "description": "Looks up."},
            }
        }
    )
    tools = _tools(_provider(pasted_config=pasted))
    text = "two words; $(touch pwned) *"
    script = [
        tool_calls(("c1", "show_args", {"text": text}), ("c2", "look_up", {"word": "zyx"})),
        answer("Done."),
    ]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script) as endpoint:
        # When the Agent Prompter's model calls both
        conversation, log = run_agent_node(agent_node("Go."), ctx, chat_model_port(endpoint.base_url), tools)
    # Then both were offered, the program ran with the argument as one, and without KNIME's variables
    assert {"show_args", "look_up"} <= set(offered_tools(endpoint.requests[0]))
    replies = {m["tool_call_id"]: m["content"] for m in endpoint.requests[1]["messages"] if m.get("tool_call_id")}
    assert json.dumps({"argv": [text], "canary": None}) in replies["c1"]
    # And the failing program went back to the model as a tool error with what it wrote to stderr
    assert "'look_up' exited with status 1" in replies["c2"] and "no such word: zyx" in replies["c2"]
    assert list(log["Kind"]) == ["Program", "Program"] and list(log["Status"]) == ["ok", "tool_error"]
    assert conversation["Content"].iloc[-1] == "Done."


def test_the_tool_caller_runs_the_program_for_every_row_and_a_failing_row_is_that_rows_error() -> None:
    # Given the program's tools table and rows, one of which makes the program fail
    tools = _tools(
        _provider(name="check", arguments="-c\nimport sys; print(sys.argv[1]); sys.exit(sys.argv[1] == 'bad')\n{text}")
    )
    data = _rows(text=["first row", "bad", "it's $HOME"])
    # When the Tool Caller calls it for every row
    (out,) = node_host.execute_node(_caller(), ExecuteContext(), data, tools)
    frame = out.to_pandas()
    # Then each row holds what the program printed, and the failing row its error
    assert (frame["Result"][0].strip(), frame["Result"][2].strip()) == ("first row", "it's $HOME")
    assert list(frame["Is error"]) == [False, True, False]
    assert "'check' exited with status 1" in frame["Error"][1]


def test_an_edited_program_row_and_a_row_from_another_table_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    code = f"from pathlib import Path; Path({str(marker)!r}).write_text('ran')"
    frame = _tools(_provider(name="touch", arguments=f"-c\n{code}")).to_pandas()
    # Given the provider's row with its program's arguments edited in the table
    cell = json.loads(frame["MCP Tool"][0])
    cell["program"]["args"] = ["-c", code, "--edited"]
    edited = frame.assign(**{"MCP Tool": [json.dumps(cell)]})
    # And one without its seal, as a table written elsewhere has
    cell.pop("seal")
    unsealed = frame.assign(**{"MCP Tool": [json.dumps(cell)]})
    for table in (edited, unsealed):
        # When the Tool Caller calls it
        (out,) = node_host.execute_node(_caller(), ExecuteContext(), _rows(x=[1]), node_host.source_table(table))
        # Then the row is refused as a program from data, and the program never ran
        assert REFUSED in out.to_pandas()["Error"][0]
    # And an Agent Prompter whose model calls the edited one refuses it too, and tells the model
    script = [tool_calls(("c1", "touch", {})), answer("Refused.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        _, log = run_agent_node(
            agent_node("Go."), ExecuteContext({"llm": ("", API_KEY)}), chat_model_port(endpoint.base_url),
            node_host.source_table(edited),
        )  # fmt: skip
    assert list(log["Status"]) == ["failed"] and REFUSED in log["Error"][0]
    assert REFUSED in next(m["content"] for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert not marker.exists()


def test_a_program_set_by_a_flow_variable_is_refused_unless_the_flow_variable_is_trusted() -> None:
    # Given the command from a flow variable (which may come from data)
    ctx = ExecuteContext()
    ctx.flow_variables["program"] = sys.executable
    node = _provider(name="show_args", arguments=f"-c\n{ARGV}\n{{text}}")
    # When the provider runs, Then it refuses, naming the flow variable and the setting that trusts it
    with pytest.raises(knext.InvalidParametersError, match="A program taken from data was refused") as refused:
        node_host.execute_node(node, ctx)
    assert "flow variable 'program'" in str(refused.value) and "Trust a program from a flow variable" in str(
        refused.value
    )
    # Unless the person trusts the flow variable
    (table,) = node_host.execute_node(
        _provider(name="show_args", arguments=f"-c\n{ARGV}\n{{text}}", trust_flow_variable=True), ctx
    )
    assert list(table.to_pandas()["Name"]) == ["show_args"]


def test_settings_that_cannot_work_are_invalid_settings_named_in_knimes_words() -> None:
    with pytest.raises(knext.InvalidParametersError, match="No program given"):
        node_host.configure_node(_provider(command=""), _configure())
    with pytest.raises(knext.InvalidParametersError, match="The program has no Name"):
        node_host.configure_node(_provider(), _configure())
    with pytest.raises(knext.InvalidParametersError, match="'Input schema' is not valid JSON"):
        node_host.configure_node(_provider(name="x", input_schema="{"), _configure())
    with pytest.raises(knext.InvalidParametersError, match="Line 1 of 'Environment'"):
        node_host.configure_node(_provider(name="x", environment="NO_EQUALS"), _configure())
    secret = "programs: {x: {command: wc, env: {API_KEY: sk-abcdefabcdef1234567890}}}"
    with pytest.raises(knext.InvalidParametersError, match="'API_KEY' holds a literal secret") as refused:
        node_host.configure_node(_provider(pasted_config=secret), _configure())
    assert "sk-abcdef" not in str(refused.value)


def test_a_programs_configuration_set_by_a_flow_variable_is_refused_before_anything_is_listed() -> None:
    pasted = json.dumps({"programs": {"show_args": {"command": sys.executable, "args": ["-c", ARGV]}}})
    ctx = ExecuteContext()
    ctx.flow_variables["config"] = pasted
    with pytest.raises(knext.InvalidParametersError, match="A program taken from data was refused"):
        node_host.execute_node(_provider(pasted_config=pasted), ctx)


def _configure() -> Any:
    from node_contexts import ConfigureContext

    return ConfigureContext()


def test_a_program_writing_more_than_the_largest_output_is_a_row_error() -> None:
    code = "import sys; sys.stdout.write('x' * (2 * 1024 * 1024))"
    tools = _tools(_provider(name="flood", arguments=f"-c\n{code}", max_output_mb=1))
    (out,) = node_host.execute_node(_caller(), ExecuteContext(), _rows(x=[1]), tools)
    assert "wrote more than the largest output" in out.to_pandas()["Error"][0]


def test_cancel_stops_the_program_and_every_process_it_started(tmp_path: Path) -> None:
    # Given a program that starts a child, writes both process ids, and sleeps ten minutes
    pids = tmp_path / "pids"
    tools = _tools(_provider(name="slow", arguments=f"-c\n{family_program(pids)}", timeout=600.0))
    # When the person cancels once the program runs
    ctx = ExecuteContext(cancel_when=lambda: bool(noted_pids(pids)))
    with pytest.raises((CancelledByUser, node_host.NodeCanceled)):
        node_host.execute_node(_caller(), ctx, _rows(x=[1]), tools)
    # Then the program and its child are gone (a zombie its new parent has not reaped yet counts as gone)
    assert surviving_family(pids) == set()
