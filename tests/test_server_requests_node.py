"""The node settings for what servers ask of the client, run as KNIME runs the nodes (Given/When/Then), on both hosts:
the provider's folders a stdio server may see (roots), the Tool Caller's and Agent Prompter's answer to forms
(elicitation), the Agent Prompter's sampling, and the progress messages of long tool calls.

KNIME's real API keeps a parameter group's values on the class, so every test sets the values it relies on and sets
back what it changed."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import knime.extension as knext
import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, chat_model_port
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext
from nodes.agent_prompter import AgentPrompter
from nodes.tool_caller import MCPToolCaller
from nodes.tool_provider import MCPToolProvider

pytestmark = pytest.mark.knime_node

ASKING = shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")])


@pytest.fixture
def provider() -> Iterator[MCPToolProvider]:
    """A provider with no folders for the server, which it sets back afterwards."""
    import extension  # noqa: F401  (registers the category)

    node = MCPToolProvider()
    node.server.roots = ""
    node.auth.credential = ""
    yield node
    node.server.roots = ""


def _tools(node: MCPToolProvider, server: str) -> Any:
    node.server.server = server
    (table,) = node_host.execute_node(node, ExecuteContext())
    return table


@pytest.fixture
def caller() -> Iterator[MCPToolCaller]:
    node = MCPToolCaller()
    node.calls.on_error = "COLUMN"
    node.calls.elicitation = "DECLINE"
    yield node
    node.calls.on_error = "FAIL"
    node.calls.elicitation = "DECLINE"


def _call(node: MCPToolCaller, tools: Any, tool: str, row: dict[str, Any]) -> tuple[pd.DataFrame, ExecuteContext]:
    node.tool.name = tool
    ctx = ExecuteContext()
    (output,) = node_host.execute_node(node, ctx, node_host.source_table(pd.DataFrame([row])), tools)
    return output.to_pandas(), ctx


# -- MCP Tool Provider: roots ---------------------------------------------------------------------------------------


def test_the_folders_a_stdio_server_may_see_are_its_roots_in_the_tools_table(
    provider: MCPToolProvider, everything_stdio_command: list[str], tmp_path: Path
) -> None:
    # Given a provider that lets server-everything see one folder
    provider.server.roots = f"{tmp_path}\n"
    # When it lists the tools
    tools = tools_from_frame(_tools(provider, shlex.join(everything_stdio_command)).to_pandas())
    # Then the server offers its roots tool, and the table's server knows the folder for the nodes downstream
    assert "get-roots-list" in {tool.name for tool in tools}
    assert {tool.server.roots for tool in tools} == {(str(tmp_path),)}


def test_without_folders_the_server_is_offered_no_roots(
    provider: MCPToolProvider, everything_stdio_command: list[str]
) -> None:
    tools = tools_from_frame(_tools(provider, shlex.join(everything_stdio_command)).to_pandas())
    assert "get-roots-list" not in {tool.name for tool in tools} and {tool.server.roots for tool in tools} == {()}


def test_a_folder_that_is_not_a_full_path_is_an_invalid_setting(provider: MCPToolProvider) -> None:
    provider.server.server = ASKING
    provider.server.roots = "data"
    with pytest.raises(knext.InvalidParametersError, match="'data' is not an absolute path"):
        node_host.configure_node(provider, ConfigureContext())


# -- MCP Tool Caller: forms and progress ----------------------------------------------------------------------------


def test_the_caller_declines_a_form_by_default_and_answers_it_with_its_defaults_when_set(
    provider: MCPToolProvider, caller: MCPToolCaller
) -> None:
    tools = _tools(provider, ASKING)
    declined, ctx = _call(caller, tools, "confirm", {"x": 1})
    assert bool(declined["Is error"].iloc[0]) and "asked for input" in declined["Error"].iloc[0]
    assert ctx.warnings
    caller.calls.elicitation = "DEFAULTS"
    answered, _ = _call(caller, tools, "confirm", {"x": 1})
    assert answered["Result"].iloc[0] == "Confirmed: proceed=True, copies=2." and not answered["Is error"].iloc[0]


def test_a_long_calls_progress_shows_in_the_callers_progress_message(
    provider: MCPToolProvider, caller: MCPToolCaller, everything_http_url: str
) -> None:
    tools = _tools(provider, everything_http_url)
    output, ctx = _call(caller, tools, "trigger-long-running-operation", {"duration": 0.8, "steps": 2})
    assert not output["Is error"].iloc[0]
    assert "0 of 1 rows called; tool trigger-long-running-operation: 1 of 2 (50%)" in [m for _, m in ctx.progress]


# -- Agent Prompter: sampling and forms -----------------------------------------------------------------------------


def agent_node(**settings: Any) -> AgentPrompter:
    node = AgentPrompter()
    node.user_message = "Summarize it."
    values = {
        "sampling": False, "sampling_max_tokens": 1000, "sampling_max_requests": 10,
        "sampling_max_prompt_bytes": 100_000, "elicitation": "DECLINE",
    }  # fmt: skip
    for name, value in {**values, **settings}.items():
        setattr(node, name, value)
    return node


@pytest.mark.parametrize("sampling", [False, True])
def test_the_agent_answers_sampling_with_its_chat_model_only_when_allowed_and_within_the_token_limit(
    provider: MCPToolProvider, sampling: bool
) -> None:
    # Given a model that calls the asking server's summarize tool (which asks the client's model for a summary)
    tools = _tools(provider, ASKING)
    script = [tool_calls(("c1", "summarize", {"text": "a long text"})), answer("tiny"), answer("Done.")]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script if sampling else [script[0], script[2]]) as endpoint:
        node = agent_node(sampling=sampling, sampling_max_tokens=64)
        _, log, _ = node_host.execute_node(node, ctx, chat_model_port(endpoint.base_url), tools, None, [])
    log = log.to_pandas()
    # Then, allowed, the tool got the model's answer, which was held to 64 tokens (the server asked for 5000)
    if sampling:
        assert list(log["Status"]) == ["ok"] and "Summary: tiny" in log["Result"].iloc[0]
        sampled = endpoint.requests[1]
        assert sampled.get("max_completion_tokens", sampled.get("max_tokens")) == 64
        assert sampled["messages"][-1]["content"] == "Summarize: a long text"
    else:
        assert list(log["Status"]) == ["tool_error"] and "declines sampling requests" in log["Error"].iloc[0]


def test_the_agent_declines_a_sampling_prompt_larger_than_its_setting_and_the_tool_hears_why(
    provider: MCPToolProvider,
) -> None:
    # Given sampling allowed, but prompts of at most 20 bytes; summarize's prompt has 36 (system prompt and message)
    tools = _tools(provider, ASKING)
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint([tool_calls(("c1", "summarize", {"text": "a long text"})), answer("Done.")]) as endpoint:
        node = agent_node(sampling=True, sampling_max_prompt_bytes=20)
        _, log, _ = node_host.execute_node(node, ctx, chat_model_port(endpoint.base_url), tools, None, [])
    # Then the model was asked only by the agent, and the call failed saying how large the prompt was
    log = log.to_pandas()
    assert len(endpoint.requests) == 2 and list(log["Status"]) == ["tool_error"]
    assert "prompt of 36 bytes; knime-mcp sends a model at most 20 bytes" in log["Error"].iloc[0]


def test_the_agent_answers_a_form_with_its_defaults_when_set(provider: MCPToolProvider) -> None:
    tools = _tools(provider, ASKING)
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint([tool_calls(("c1", "confirm", {})), answer("Done.")]) as endpoint:
        node = agent_node(elicitation="DEFAULTS")
        _, log, _ = node_host.execute_node(node, ctx, chat_model_port(endpoint.base_url), tools, None, [])
    assert list(log.to_pandas()["Status"]) == ["ok"]


def test_settings_saved_by_0_2_0_load_with_forms_declined_sampling_off_and_no_folders() -> None:
    agent = json.loads(node_host.save_settings(agent_node()))
    sampling = ("sampling", "sampling_max_tokens", "sampling_max_requests", "sampling_max_prompt_bytes")
    for name in ("elicitation", *sampling):
        del agent["model"][name]
    # A parameter without since_version would be missing in settings of 0.2.0 (and loading them keeps the values)
    assert node_host.validate_settings("AgentPrompter", json.dumps(agent), "0.2.0") is None
    loaded = node_host.load_settings("AgentPrompter", json.dumps(agent), "0.2.0")
    assert (loaded.elicitation, loaded.sampling) == ("DECLINE", False)
    provider = json.loads(node_host.save_settings(MCPToolProvider()))
    del provider["model"]["server"]["roots"]
    assert node_host.validate_settings("MCPToolProvider", json.dumps(provider), "0.2.0") is None
    assert node_host.load_settings("MCPToolProvider", json.dumps(provider), "0.2.0").server.roots == ""
