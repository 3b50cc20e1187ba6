"""Every chat model provider through its own LangChain integration against a scripted endpoint on 127.0.0.1 that
speaks that provider's wire format (a fake: no provider's server runs here), with the agent and the demo server's real
tools: a tool call round trip, images, a refused key, rate limits with Retry-After, a model that cannot call tools, an
unreachable endpoint, and a server's sampling request answered by a non-OpenAI model."""

from __future__ import annotations

import base64
import json
import shlex
import sys

import pytest

from fakes.scripted_providers import ScriptedEndpoint, answer, cut_off, http_error, tool_calls
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import SamplingLimits, ServerRequestPolicy, ServerSpec
from knime_mcp.errors import ChatModelError
from knime_mcp.llm.chat_model import PROVIDERS, ChatModelConfig, Provider, build_chat_model
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.tool import MCPTool

API_KEY = "sk-canary-5c1d7e"
ALL: list[Provider] = ["openai", "azure", "anthropic", "gemini", "ollama"]

KEY_HEADERS = {
    "openai": "authorization",
    "azure": "api-key",
    "anthropic": "authorization",
    "gemini": "x-goog-api-key",
    "ollama": "authorization",
}
"""The header each provider's client sends the key in (anthropic 2's client: ``Authorization: Bearer``, which the
Messages API takes besides ``x-api-key``)."""


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo")).tools


def _config(provider: Provider, endpoint: ScriptedEndpoint, **changes: object) -> ChatModelConfig:
    api_version = "2024-10-21" if provider == "azure" else None
    settings = {"provider": provider, "base_url": endpoint.base_url, "model": "fake-model", "api_version": api_version}
    return ChatModelConfig(**{**settings, **changes})  # type: ignore[arg-type]


def _run(provider: Provider, endpoint: ScriptedEndpoint, tools: list[MCPTool], **kwargs: object):  # noqa: ANN202
    model = build_chat_model(_config(provider, endpoint), API_KEY)
    return run_sync(run_agent, model, tools, "Add 2 and 3.", secrets=[API_KEY], **kwargs)


@pytest.mark.parametrize("provider", ALL)
def test_a_tool_call_round_trips_in_the_providers_own_format(provider: Provider, demo_tools: list[MCPTool]) -> None:
    # Given a model that asks for the demo server's add tool, then answers
    with ScriptedEndpoint(provider, [tool_calls(("c1", "add", {"a": 2, "b": 3})), answer("2 + 3 = 5.")]) as endpoint:
        # When the agent runs with the provider's client
        run = _run(provider, endpoint, demo_tools)
    # Then the tool ran on the real server, its result went back in the provider's format, and the answer came out
    first, second = endpoint.received
    assert [entry.status for entry in run.log] == ["ok"]
    results = endpoint.dialect.tool_results(second.body)
    assert len(results) == 1 and "5" in results[0][1]
    assert results[0][0] in ("c1", "add", "")  # by call id, by tool name (Gemini), by position (Ollama)
    assert endpoint.dialect.tool_results(first.body) == []
    assert run.conversation.new_messages[-1].text == "2 + 3 = 5."
    # And every request carried the key in the provider's header
    assert endpoint.keys() == [(KEY_HEADERS[provider], API_KEY)] * 2


def test_the_azure_request_goes_to_the_deployment_with_the_api_version(demo_tools: list[MCPTool]) -> None:
    with ScriptedEndpoint("azure", [answer("hi")]) as endpoint:
        _run("azure", endpoint, demo_tools)
    (request,) = endpoint.received
    assert request.path == "/openai/deployments/fake-model/chat/completions"
    assert request.query["api-version"] == ["2024-10-21"] and "authorization" not in request.headers


@pytest.mark.parametrize("provider", ALL)
def test_an_image_a_tool_returns_reaches_the_model_in_the_providers_format(
    provider: Provider, demo_tools: list[MCPTool]
) -> None:
    with ScriptedEndpoint(
        provider, [tool_calls(("c1", "render_chart", {"values": [3, 1, 2]})), answer("A chart.")]
    ) as endpoint:
        _run(provider, endpoint, demo_tools)
    ((mime_type, data),) = endpoint.dialect.images(endpoint.received[1].body)  # google-genai's is URL-safe base64
    assert base64.urlsafe_b64decode(data).startswith(b"\x89PNG") and mime_type in ("image/png", "image/?")


@pytest.mark.parametrize("provider", ALL)
def test_a_refused_key_is_a_chat_model_error_that_never_repeats_the_key(
    provider: Provider, demo_tools: list[MCPTool]
) -> None:
    with ScriptedEndpoint(provider, [http_error(401)]) as endpoint:
        with pytest.raises(ChatModelError, match="refused the API key") as caught:
            _run(provider, endpoint, demo_tools)
    assert API_KEY not in str(caught.value)
    assert provider == "openai" or PROVIDERS[provider].label in str(caught.value)
    assert len(endpoint.received) == 1


@pytest.mark.parametrize("provider", ALL)
def test_a_short_retry_after_is_waited_for_and_the_call_retried(provider: Provider, demo_tools: list[MCPTool]) -> None:
    with ScriptedEndpoint(provider, [http_error(429, retry_after="0.2"), answer("Done.")]) as endpoint:
        run = _run(provider, endpoint, demo_tools)
    assert run.conversation.new_messages[-1].text == "Done." and len(endpoint.received) == 2


@pytest.mark.parametrize("provider", ALL)
def test_a_long_retry_after_fails_at_once_saying_when_to_retry(provider: Provider, demo_tools: list[MCPTool]) -> None:
    with ScriptedEndpoint(provider, [http_error(429, retry_after="3600")]) as endpoint:
        with pytest.raises(ChatModelError, match="rate limiting") as caught:
            _run(provider, endpoint, demo_tools)
    assert "retry after 3600 s" in str(caught.value) and API_KEY not in str(caught.value)
    assert len(endpoint.received) == 1


@pytest.mark.parametrize("provider", ALL)
def test_a_model_that_cannot_call_tools_is_refused_naming_the_model(
    provider: Provider, demo_tools: list[MCPTool]
) -> None:
    refusal = http_error(400, message="registry.ollama.ai/library/fake-model does not support tools")
    with ScriptedEndpoint(provider, [refusal]) as endpoint:
        with pytest.raises(ChatModelError, match="fake-model.* cannot call tools") as caught:
            _run(provider, endpoint, demo_tools)
    assert caught.value.hint is not None and "supports tool calling" in caught.value.hint


@pytest.mark.parametrize("provider", ALL)
def test_an_unreachable_endpoint_is_a_chat_model_error_with_a_hint(
    provider: Provider, demo_tools: list[MCPTool]
) -> None:
    api_version = "2024-10-21" if provider == "azure" else None
    config = ChatModelConfig(
        provider=provider, base_url="http://127.0.0.1:9", model="m", api_version=api_version, timeout=5
    )
    with pytest.raises(ChatModelError, match="Could not connect") as caught:
        run_sync(run_agent, build_chat_model(config, API_KEY), demo_tools, "Hello")
    assert caught.value.hint is not None and "endpoint" in caught.value.hint


@pytest.mark.parametrize("provider", ["anthropic", "gemini", "ollama"])
def test_a_servers_sampling_request_is_answered_by_the_providers_model(provider: Provider) -> None:
    # Given a server whose summarize tool asks the client's model, and sampling allowed
    spec = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")]), name="asking")
    tools = run_sync(list_server_tools, spec).tools
    replies = [tool_calls(("c1", "summarize", {"text": "a long text"})), answer("tiny"), answer("Done.")]
    config = AgentConfig(server_requests=ServerRequestPolicy(sampling=SamplingLimits()))
    # When the agent runs
    with ScriptedEndpoint(provider, replies) as endpoint:
        run = _run(provider, endpoint, tools, config=config)
    # Then the server's prompt reached the provider in its format, and the tool got the model's answer
    assert "Summarize: a long text" in json.dumps(endpoint.received[1].body)
    assert run.log[0].status == "ok" and run.conversation.new_messages[-1].text == "Done."
    assert "Summary: tiny" in endpoint.dialect.tool_results(endpoint.received[2].body)[0][1]


@pytest.mark.parametrize("provider", ALL)
def test_an_empty_reply_cut_off_at_the_token_limit_says_so_on_every_provider(
    provider: Provider, demo_tools: list[MCPTool]
) -> None:
    # Given a model whose reply stops at the token limit before any text, in the provider's own words
    with ScriptedEndpoint(provider, [cut_off()]) as endpoint:
        # When the agent runs, then the error says what happened and what to change
        with pytest.raises(ChatModelError, match="cut off at the token limit") as caught:
            _run(provider, endpoint, demo_tools)
    assert caught.value.hint is not None and "maximum number of tokens" in caught.value.hint


@pytest.mark.parametrize("provider", ["anthropic", "gemini", "ollama"])
def test_a_sampling_answer_cut_off_at_the_token_limit_tells_the_server_so(provider: Provider) -> None:
    spec = ServerSpec(target=shlex.join([sys.executable, str(SERVERS_DIR / "asking_server.py")]), name="asking")
    tools = run_sync(list_server_tools, spec).tools
    replies = [tool_calls(("c1", "summarize", {"text": "a long text"})), cut_off("tin"), answer("Done.")]
    config = AgentConfig(server_requests=ServerRequestPolicy(sampling=SamplingLimits()))
    with ScriptedEndpoint(provider, replies) as endpoint:
        _run(provider, endpoint, tools, config=config)
    # The server got stopReason maxTokens, which its tool shows
    assert "Summary: tin (cut off)" in endpoint.dialect.tool_results(endpoint.received[2].body)[0][1]
