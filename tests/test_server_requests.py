"""What MCP servers ask of the client (progress, log messages, sampling, forms, roots, tool list changes), against
npm's server-everything (the older protocol: requests to the client during a call) and tests/servers/asking_server.py
(the 2026-07-28 protocol: input-required rounds of the call)."""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from langchain_core.messages import AIMessage, BaseMessage

from fixtures.python_servers import SERVERS_DIR
from knime_mcp.config import SamplingLimits, ServerRequestPolicy, ServerSpec
from knime_mcp.errors import ConfigError, ToolCallError
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.server_requests import ServerRequests, progress_text
from knime_mcp.seal import is_sealed_here, seal_spec
from knime_mcp.tools.results import ToolResult
from scripted_model import ScriptedChatModel

ASKING = shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")])
T = TypeVar("T")


class RecordingModel(ScriptedChatModel):
    """Also records the keyword arguments of each call (the token limit a sampling answer gets)."""

    options: list[dict[str, Any]] = []

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.options.append(kwargs)
        return super()._generate(messages, stop, run_manager, **kwargs)


def _with_client(
    spec: ServerSpec, use: Callable[[McpClient], Awaitable[T]], requests: ServerRequests | None = None
) -> T:
    async def run() -> T:
        async with McpClient(spec, requests=requests) as client:
            return await use(client)

    return anyio.run(run)


def _call(spec: ServerSpec, tool: str, arguments: dict[str, Any], requests: ServerRequests | None = None) -> ToolResult:
    return _with_client(spec, lambda client: client.call_tool(tool, arguments), requests)


@pytest.fixture(params=["stdio", "streamable-http", "sse"])
def everything(request: pytest.FixtureRequest) -> ServerSpec:
    """server-everything over each transport."""
    if request.param == "stdio":
        return ServerSpec(target=shlex.join(request.getfixturevalue("everything_stdio_command")))
    fixture = {"streamable-http": "everything_http_url", "sse": "everything_sse_url"}[request.param]
    return ServerSpec(target=request.getfixturevalue(fixture))


def _defaults() -> ServerRequests:
    return ServerRequests(ServerRequestPolicy(elicitation="defaults"))


# -- progress and log messages --------------------------------------------------------------------------------------


def test_a_long_running_operation_reports_its_progress_to_the_caller(everything: ServerSpec) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def use(client: McpClient) -> ToolResult:
        arguments = {"duration": 0.3, "steps": 3}
        return await client.call_tool("trigger-long-running-operation", arguments, progress=lambda *p: seen.append(p))

    result = _with_client(everything, use)
    assert not result.is_error and [done for done, _, _ in seen] == [1, 2, 3] and seen[-1][1] == 3


def test_progress_reads_as_a_short_line() -> None:
    assert progress_text(2, 5, "copying") == "2 of 5 (40%): copying"
    assert progress_text(7, None, None) == "7"


def test_the_servers_log_messages_go_to_python_logging(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="knime_mcp.server_log"):
        _call(ServerSpec(target=ASKING, name="asking"), "slow", {})
    assert [r.getMessage() for r in caplog.records if r.name == "knime_mcp.server_log"] == [
        f"asking: step {step} of 3" for step in (1, 2, 3)
    ]


# -- forms (elicitation) --------------------------------------------------------------------------------------------


def test_a_declined_form_makes_the_call_a_tool_error_not_a_success(everything: ServerSpec) -> None:
    # server-everything answers a decline with a successful result ("User declined ..."), which must not pass
    with pytest.raises(ToolCallError, match="asked for input, which knime-mcp declined") as failure:
        _call(everything, "trigger-elicitation-request", {})
    assert "answering with defaults is off" in str(failure.value)


def test_a_form_with_fields_without_defaults_is_declined_even_when_defaults_may_answer(everything: ServerSpec) -> None:
    with pytest.raises(ToolCallError, match="these fields have no default: name, check, email"):
        _call(everything, "trigger-elicitation-request", {}, _defaults())


def test_a_web_page_to_open_is_always_declined(everything: ServerSpec) -> None:
    with pytest.raises(ToolCallError, match="asks a person to open a web page"):
        _call(everything, "trigger-url-elicitation", {"url": "https://example.com/approve"}, _defaults())


def test_an_input_required_form_whose_fields_all_have_defaults_is_answered_with_them() -> None:
    result = _call(ServerSpec(target=ASKING), "confirm", {}, _defaults())
    assert not result.is_error and result.text == "Confirmed: proceed=True, copies=2."


def test_an_input_required_form_is_declined_by_default_and_the_call_fails() -> None:
    with pytest.raises(ToolCallError, match=r"Proceed with the copies\?"):
        _call(ServerSpec(target=ASKING), "confirm", {})
    with pytest.raises(ToolCallError, match="this field has no default: name"):
        _call(ServerSpec(target=ASKING), "ask_name", {}, _defaults())


# -- sampling -------------------------------------------------------------------------------------------------------


def test_sampling_is_declined_with_a_reason_where_no_model_may_answer(everything: ServerSpec) -> None:
    result = _call(everything, "trigger-sampling-request", {"prompt": "Say hi"})
    assert result.is_error and "only the Agent Prompter answers them" in result.text
    with pytest.raises(ToolCallError, match="declines sampling requests here"):
        _call(ServerSpec(target=ASKING), "summarize", {"text": "a long text"})


def test_sampling_is_answered_by_the_model_within_the_token_and_request_limits(everything: ServerSpec) -> None:
    model = RecordingModel(messages=iter([AIMessage("Hi there!")]), options=[])
    limits = SamplingLimits(max_tokens=50, max_requests=1)
    requests = ServerRequests(ServerRequestPolicy(sampling=limits), model=model)

    async def use(client: McpClient) -> tuple[ToolResult, ToolResult]:
        first = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 500})
        return first, await client.call_tool("trigger-sampling-request", {"prompt": "Again"})

    first, second = _with_client(everything, use, requests)
    assert not first.is_error and "Hi there!" in first.text
    # The server asked for 500 tokens: the model was held to 50, and saw the server's prompt
    assert model.options[0]["max_tokens"] == 50
    assert (
        "Say hi" in model.requests[0][0][-1].text and model.requests[0][0][0].text == "You are a helpful test server."
    )
    assert second.is_error and "at most 1 sampling requests per run" in second.text


def test_input_required_sampling_is_answered_by_the_model() -> None:
    model = RecordingModel(messages=iter([AIMessage("short")]), options=[])
    requests = ServerRequests(ServerRequestPolicy(sampling=SamplingLimits()), model=model)
    result = _call(ServerSpec(target=ASKING), "summarize", {"text": "a long text"}, requests)
    assert result.text == "Summary: short" and model.options[0]["max_tokens"] == SamplingLimits().max_tokens


# -- roots ----------------------------------------------------------------------------------------------------------


def test_a_stdio_server_sees_the_roots_of_its_spec_as_file_uris(
    everything_stdio_command: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = ServerSpec(target=shlex.join(everything_stdio_command), roots=(str(tmp_path),))
    with caplog.at_level(logging.INFO, logger="knime_mcp.server_log"):
        result = _call(spec, "get-roots-list", {})
    assert "Current MCP Roots (1 total)" in result.text and tmp_path.as_uri() in result.text
    assert any("Roots updated: 1 root(s) received from client" in r.getMessage() for r in caplog.records)


def test_without_roots_the_client_offers_none(everything_stdio_command: list[str]) -> None:
    tools = _with_client(ServerSpec(target=shlex.join(everything_stdio_command)), McpClient.list_tools)
    names = {tool.name for tool in tools}
    assert "get-roots-list" not in names and {"trigger-sampling-request", "trigger-elicitation-request"} <= names


def test_roots_must_be_absolute_folders_of_a_stdio_server() -> None:
    with pytest.raises(ConfigError, match="only a stdio server can see"):
        ServerSpec(target="http://127.0.0.1:1/mcp", roots=("/data",))
    with pytest.raises(ConfigError, match="'data' is not an absolute path"):
        ServerSpec(target="python server.py", roots=("data",))


def test_roots_round_trip_through_json_and_specs_without_roots_keep_their_json_and_seal() -> None:
    spec = ServerSpec(target="python server.py", roots=("/data", "/tmp/out"))
    assert ServerSpec.from_json(spec.to_json()) == spec and spec.roots == ("/data", "/tmp/out")
    plain = seal_spec(ServerSpec(target="python server.py"))
    assert "roots" not in plain.to_json() and is_sealed_here(ServerSpec.from_json(plain.to_json()))
    # Roots added to a sealed spec (an edited table) break its seal: they decide what the server may see
    assert not is_sealed_here(ServerSpec.from_dict({**plain.to_dict(), "roots": ["/"]}))


# -- tool list changes ----------------------------------------------------------------------------------------------


def test_the_client_counts_the_servers_tool_list_changes() -> None:
    async def use(client: McpClient) -> tuple[int, int, list[str]]:
        before = client.tool_list_changes
        await client.call_tool("unlock", {})
        await anyio.sleep(0.2)
        return before, client.tool_list_changes, [tool.name for tool in await client.list_tools()]

    before, after, names = _with_client(ServerSpec(target=ASKING), use)
    assert (before, after) == (0, 1) and "unlocked" in names
