"""The agent's resource tools against real servers: npm server-everything (every transport), the bundled demo server
(an image resource) and server-sequential-thinking (no resources), driven by a scripted chat model."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from cli_runs import run_cli
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.agent.loop import AgentConfig, AgentRun, run_agent
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.truncate import MIN_LIMIT_BYTES
from scripted_model import ScriptedChatModel, calls, scripted

FEATURES = "demo://resource/static/document/features.md"
RESOURCES = AgentConfig(resources=True)


def _tools(spec: ServerSpec) -> list[MCPTool]:
    return run_sync(list_server_tools, spec).tools


def _run(model: ScriptedChatModel, tools: list[MCPTool], config: AgentConfig = RESOURCES) -> AgentRun:
    return run_sync(run_agent, model, tools, "Read the docs.", config=config)


def _offered(model: ScriptedChatModel) -> list[str]:
    return [spec["function"]["name"] for spec in model.requests[0][1] or []]


def _unfenced(text: str) -> str:
    """Tool output without the fence tags around it."""
    return text.split("\n", 1)[1].rsplit("\n", 1)[0]


def _replies(result: AgentRun) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in result.conversation.new_messages if isinstance(m, ToolMessage)}


@pytest.fixture(scope="module")
def everything_tools(everything_stdio_command: list[str]) -> list[MCPTool]:
    return _tools(ServerSpec(target=shlex.join(everything_stdio_command), name="everything"))


def test_the_model_lists_the_resources_reads_one_and_sees_its_text_in_its_next_turn(
    everything_spec: ServerSpec,
) -> None:
    tools = _tools(everything_spec)
    server = tools[0].server.display_name
    model = scripted(
        calls(("c1", "list_resources", {})),
        calls(("c2", "read_resource", {"server": server, "uri": FEATURES})),
        AIMessage("The server has many features."),
    )

    result = _run(model, tools)

    assert {"list_resources", "read_resource"} <= set(_offered(model))
    assert [(entry.tool, entry.kind, entry.status) for entry in result.log] == [
        ("list_resources", "resource", "ok"),
        ("read_resource", "resource", "ok"),
    ]
    listing = _replies(result)["c1"].text
    assert f'"server": "{server}"' in listing and FEATURES in listing and '"mime_type": "text/markdown"' in listing
    assert "demo://resource/dynamic/text/{resourceId}" in listing  # the templates too
    third_request = model.requests[2][0]
    read = next(m for m in third_request if isinstance(m, ToolMessage) and m.tool_call_id == "c2")
    assert "# Everything Server - Features" in read.text


def test_an_unknown_uri_or_server_goes_back_to_the_model_as_a_tool_error_and_the_run_goes_on(
    everything_spec: ServerSpec,
) -> None:
    everything_tools = _tools(replace(everything_spec, name="everything"))
    model = scripted(
        calls(
            ("c1", "read_resource", {"server": "everything", "uri": "demo://no/such/thing"}),
            ("c2", "read_resource", {"server": "elsewhere", "uri": FEATURES}),
        ),
        calls(("c3", "read_resource", {"uri": FEATURES})),
        AIMessage("Found it on the second try."),
    )

    result = _run(model, everything_tools)

    assert [entry.status for entry in result.log] == ["tool_error", "invalid_arguments", "ok"]
    replies = _replies(result)
    assert replies["c1"].status == "error" and "has no resource at 'demo://no/such/thing'" in replies["c1"].text
    assert "List the server's resources" in replies["c1"].text
    assert replies["c2"].status == "error" and "'elsewhere'" in replies["c2"].text
    assert "# Everything Server" in replies["c3"].text  # one server: it may be left out
    assert result.conversation.new_messages[-1].text == "Found it on the second try."


def test_the_tool_output_cap_cuts_a_long_resource_and_the_log_keeps_it_whole(everything_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "read_resource", {"uri": FEATURES})), AIMessage("ok"))

    result = _run(model, everything_tools, AgentConfig(resources=True, output_cap=MIN_LIMIT_BYTES))

    seen = _replies(result)["c1"].text
    assert len(seen.encode()) < 2 * MIN_LIMIT_BYTES and "# Everything Server - Features" in seen
    assert "[Output truncated: showing the first" in seen
    assert len(result.log[0].result or "") > 9_000


def test_a_binary_resource_is_described_not_dumped(everything_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "read_resource", {"uri": "demo://resource/dynamic/blob/8"})), AIMessage("ok"))
    reply = _replies(_run(model, everything_tools))["c1"].text
    # server-everything's blob holds the time of day, so its size moves with the hour (55 bytes before 10 o'clock)
    size = re.search(
        r"Binary contents of <demo://resource/dynamic/blob/8> \(text/plain, (\d+) bytes\) not shown", reply
    )
    assert size and 50 <= int(size[1]) <= 60, reply
    assert "This is a base64 blob" not in reply


def test_an_image_resource_of_the_demo_server_reaches_the_model_as_an_image(demo_stdio_command: list[str]) -> None:
    tools = _tools(ServerSpec(target=shlex.join(demo_stdio_command), name="demo"))
    model = scripted(
        calls(("c1", "list_resources", {"server": "demo"})),
        calls(("c2", "read_resource", {"uri": "demo://chart/3%2C1%2C2"})),
        AIMessage("Three bars."),
    )

    result = _run(model, tools)

    assert '"uri_template": "demo://chart/{+values}"' in _replies(result)["c1"].text
    assert "[Image 1 (image/png) follows in the next message.]" in _replies(result)["c2"].text
    images: Any = next(m for m in model.requests[2][0] if isinstance(m, HumanMessage) and isinstance(m.content, list))
    assert images.content[-1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_server_without_resources_is_noted_in_the_listing_while_the_others_are_listed(
    everything_tools: list[MCPTool], sequential_thinking_stdio_command: list[str]
) -> None:
    thinking = _tools(ServerSpec(target=shlex.join(sequential_thinking_stdio_command), name="thinking"))
    model = scripted(calls(("c1", "list_resources", {})), AIMessage("ok"))

    reply = _replies(_run(model, [*everything_tools, *thinking]))["c1"].text

    by_server = {entry["server"]: entry for entry in json.loads(_unfenced(reply))}
    assert "declares no resources capability" in by_server["thinking"]["note"]
    assert len(by_server["everything"]["resources"]) == 7


def test_the_deny_list_removes_the_resource_tools_and_the_warning_says_so(everything_tools: list[MCPTool]) -> None:
    model = scripted(AIMessage("nothing"))
    result = _run(model, everything_tools, AgentConfig(resources=True, policy=ToolPolicy(deny="_resource")))
    offered = _offered(model)
    assert "list_resources" not in offered and "read_resource" not in offered and "echo" in offered
    assert any("tool 'read_resource' matches the tool deny-list '_resource'" in line for line in result.warnings)


def test_the_resource_tools_are_not_offered_by_default(everything_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "list_resources", {})), AIMessage("ok"))
    result = run_sync(run_agent, model, everything_tools, "Hi.")
    assert "list_resources" not in _offered(model) and "echo" in _offered(model)
    assert [entry.status for entry in result.log] == ["unknown_tool"]


def test_fail_fast_stops_the_run_at_an_unknown_uri(everything_tools: list[MCPTool]) -> None:
    model = scripted(calls(("c1", "read_resource", {"uri": "demo://no/such/thing"})), AIMessage("never"))
    config = AgentConfig(resources=True, tool_errors="fail", errors="column")
    result = _run(model, everything_tools, config)
    assert result.failure is not None and "has no resource at" in str(result.failure)


def test_a_server_from_data_is_checked_before_its_resources_are_listed_or_read(everything_http_url: str) -> None:
    # Given tools whose loopback server carries no seal of this machine (a table from elsewhere)
    tools = [
        replace(tool, server=replace(tool.server, seal=None)) for tool in _tools(ServerSpec(target=everything_http_url))
    ]
    model = scripted(
        calls(("c1", "list_resources", {}), ("c2", "read_resource", {"uri": FEATURES})), AIMessage("Refused.")
    )
    # When the model asks for its resources
    result = _run(model, tools)
    # Then neither reaches the server: the pool refuses the loopback address, as it does for the tools
    replies = _replies(result)
    (entry,) = json.loads(_unfenced(replies["c1"].text))
    assert "not listed by an MCP Tool Provider on this machine" in entry["error"] and "resources" not in entry
    assert replies["c2"].status == "error" and "not listed by an MCP Tool Provider" in replies["c2"].text
    assert "# Everything Server" not in replies["c2"].text


def test_the_cli_agent_offers_the_resource_tools_with_the_resources_flag_only(
    capsys: pytest.CaptureFixture[str], everything_stdio_command: list[str]
) -> None:
    script = [tool_calls(("c1", "read_resource", {"uri": FEATURES})), answer("Read it."), answer("No tools.")]
    server = shlex.join(everything_stdio_command)
    with FakeOpenAIEndpoint(script) as endpoint:
        agent = ("agent", "--base-url", endpoint.base_url, "--model", "fake", server, "--prompt", "Read.")
        with_flag = run_cli(capsys, *agent, "--resources")
        without = run_cli(capsys, *agent)
    code, out, err = with_flag
    assert code == 0, err
    assert re.search(r"^1\s+c1\s+read_resource\s+resource\s+.*\bok\b", out, re.M) and "[assistant] Read it." in out
    assert "# Everything Server - Features" in endpoint.requests[1]["messages"][-1]["content"]
    assert without[0] == 0 and "read_resource" not in [t["function"]["name"] for t in endpoint.requests[2]["tools"]]
