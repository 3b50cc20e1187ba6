"""*Granted permissions* (issue 38 §2) in the Agent Prompter and the MCP Tool Caller, run as KNIME runs them
(Given/When/Then), on both hosts: tools listed by the real MCP Tool Provider node from the demo server over stdio and
over Streamable HTTP, and a scripted model endpoint."""

from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
import pytest

import node_host
from agent_runs import API_KEY, agent_node, chat_model_port, offered_tools, provider_tools_table, run_agent_node
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

REFUSAL = (
    "tool 'echo' needs the files and processes permissions, which are not granted; grant them under 'Granted "
    "permissions', or with --permit files --permit processes on the command line"
)


@pytest.fixture(scope="module")
def stdio_and_remote_tools(demo_stdio_command: list[str], demo_http_url: str) -> Any:
    """The demo server's tools over stdio, and again over HTTP with the prefix ``far_``."""
    return provider_tools_table((shlex.join(demo_stdio_command), "", {}), (demo_http_url, "far_", {}))


@pytest.fixture
def caller() -> Any:
    import extension  # noqa: F401  (registers the category)
    from nodes.tool_caller import MCPToolCaller

    return MCPToolCaller()


def test_the_provider_table_shows_each_tools_permissions(stdio_and_remote_tools: Any) -> None:
    frame = stdio_and_remote_tools.to_pandas()
    permissions = {name: list(value) for name, value in zip(frame["Name"], frame["Permissions"], strict=True)}
    assert permissions["echo"] == ["files", "processes"] and permissions["far_echo"] == ["network"]


def test_the_agent_offers_only_granted_tools_and_refuses_one_called_by_name(stdio_and_remote_tools: Any) -> None:
    # Given the demo server's tools over stdio and over HTTP, and an Agent Prompter granting the network alone
    script = [tool_calls(("c1", "echo", {"text": "near"}), ("c2", "far_echo", {"text": "far"})), answer("done")]
    ctx = ExecuteContext({"llm": ("", API_KEY)})
    with FakeOpenAIEndpoint(script) as endpoint:
        # When the model calls the stdio server's echo by its name anyway, and the remote one
        conversation, log = run_agent_node(
            agent_node("Echo twice.", granted_permissions=["NETWORK"]),
            ctx,
            chat_model_port(endpoint.base_url),
            stdio_and_remote_tools,
        )
    # Then only the remote tools were offered, and the node warning names the missing grants
    offered = offered_tools(endpoint.requests[0])
    assert "far_echo" in offered and "echo" not in offered
    assert any(f"Not offered to the model: {REFUSAL}" in warning for warning in ctx.warnings)
    # And the call by name was refused: the log and the model were told which permissions are missing
    statuses = dict(zip(log["Tool"], log["Status"], strict=True))
    assert statuses == {"echo": "blocked", "far_echo": "ok"}
    assert REFUSAL in log.loc[log["Tool"] == "echo", "Error"].iloc[0]
    reply = next(m for m in endpoint.requests[1]["messages"] if m.get("tool_call_id") == "c1")
    assert f"The call was not made: {REFUSAL}" in reply["content"]
    assert conversation["Content"].iloc[-1] == "done"


def test_by_default_the_agent_grants_every_permission(stdio_and_remote_tools: Any) -> None:
    with FakeOpenAIEndpoint([tool_calls(("c1", "echo", {"text": "near"})), answer("done")]) as endpoint:
        _, log = run_agent_node(
            agent_node("Echo."),
            ExecuteContext({"llm": ("", API_KEY)}),
            chat_model_port(endpoint.base_url),
            stdio_and_remote_tools,
        )
    assert {"echo", "far_echo"} <= set(offered_tools(endpoint.requests[0]))
    assert list(log["Status"]) == ["ok"]


def test_the_tool_caller_fails_each_row_naming_the_missing_grant_and_its_setting(
    caller: Any, stdio_and_remote_tools: Any
) -> None:
    # Given the stdio server's echo, and a Tool Caller granting the network alone that records errors
    node_host.set_parameters(
        caller, tool__name="echo", tool__mapping="", calls__on_error="COLUMN", calls__granted_permissions=["NETWORK"]
    )
    data = node_host.source_table(pd.DataFrame({"text": ["a", "b"]}))
    # When it runs
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(caller, ctx, data, stdio_and_remote_tools)
    # Then each row failed, naming the permissions missing and the setting that grants them
    frame = table.to_pandas()
    assert list(frame["Is error"]) == [True, True]
    assert all(error == f"The call was not made: {REFUSAL}." for error in frame["Error"])
    assert "2 of 2 rows failed" in ctx.warnings[0]
    # And with Error handling 'Fail' the node fails with the same words
    caller.calls.on_error = "FAIL"
    with pytest.raises(Exception, match="needs the files and processes permissions, which are not granted"):
        node_host.execute_node(caller, ExecuteContext(), data, stdio_and_remote_tools)


def test_the_tool_caller_calls_a_tool_whose_permissions_are_granted(caller: Any, stdio_and_remote_tools: Any) -> None:
    node_host.set_parameters(
        caller, tool__name="echo", tool__mapping="", calls__on_error="FAIL",
        calls__granted_permissions=["FILES", "PROCESSES"],
    )  # fmt: skip
    data = node_host.source_table(pd.DataFrame({"text": ["hi"]}))
    (table,) = node_host.execute_node(caller, ExecuteContext(), data, stdio_and_remote_tools)
    assert list(table.to_pandas()["Result"]) == ["hi"]
