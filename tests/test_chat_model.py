"""The OpenAI-compatible chat model: its secret-free config, the API key's sources, and real runs through
langchain-openai against a scripted endpoint on 127.0.0.1 (a fake: a real model cannot be scripted)."""

from __future__ import annotations

import json

import pytest

from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, http_error, tool_calls
from knime_mcp.agent.loop import AgentConfig, run_agent
from knime_mcp.calls.listing import list_server_tools
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ChatModelError, ConfigError
from knime_mcp.llm.chat_model import ChatModelConfig, build_chat_model, resolve_api_key
from knime_mcp.mcp.sync import run_sync
from knime_mcp.tools.tool import MCPTool

API_KEY = "sk-canary-77e1a0"


@pytest.fixture(scope="module")
def demo_tools(demo_http_url: str) -> list[MCPTool]:
    return run_sync(list_server_tools, ServerSpec(target=demo_http_url, name="demo")).tools


def test_the_config_round_trips_through_json_and_holds_only_the_credential_name() -> None:
    config = ChatModelConfig(base_url="https://api.example.com/v1", model="gpt-x", credential="openai", temperature=0.2)
    assert ChatModelConfig.from_json(config.to_json()) == config
    assert json.loads(config.to_json())["credential"] == "openai"
    assert config.display_name == "gpt-x @ api.example.com/v1"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"base_url": "localhost:11434"}, "not an http\\(s\\) URL"),
        ({"base_url": "https://user:pw@api.example.com/v1"}, "contains a password"),
        ({"model": " "}, "No chat model name"),
        ({"credential": "openai", "api_key_env": "OPENAI_API_KEY"}, "not both"),
        ({"temperature": 3.0}, "between 0 and 2"),
        ({"max_tokens": 0}, "must be positive"),
        ({"timeout": 0}, "positive number of seconds"),
    ],
)
def test_settings_that_cannot_work_are_config_errors(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ChatModelConfig(**{"model": "m", **changes})  # type: ignore[arg-type]


def test_the_api_key_comes_from_the_credential_at_run_time() -> None:
    config = ChatModelConfig(model="m", credential="openai")
    assert resolve_api_key(config, lambda name: ("user", API_KEY) if name == "openai" else ("", "")) == API_KEY


def test_a_missing_credential_is_a_config_error_naming_it() -> None:
    def lookup(name: str) -> tuple[str, str]:
        raise KeyError(name)

    with pytest.raises(ConfigError, match="Credential 'openai' is not available"):
        resolve_api_key(ChatModelConfig(model="m", credential="openai"), lookup)


def test_the_api_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", API_KEY)
    assert resolve_api_key(ChatModelConfig(model="m", api_key_env="MY_LLM_KEY")) == API_KEY
    monkeypatch.delenv("MY_LLM_KEY")
    with pytest.raises(ConfigError, match="MY_LLM_KEY is not set"):
        resolve_api_key(ChatModelConfig(model="m", api_key_env="MY_LLM_KEY"))


def test_without_a_key_source_no_key_is_sent_not_even_openai_api_key(
    monkeypatch: pytest.MonkeyPatch, demo_tools: list[MCPTool]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FakeOpenAIEndpoint([answer("hi")]) as endpoint:
        config = ChatModelConfig(base_url=endpoint.base_url, model="local")
        run_sync(run_agent, build_chat_model(config, resolve_api_key(config)), demo_tools, "Hello")
    assert endpoint.authorizations == ["Bearer no-key"]


def test_the_request_carries_the_tool_schemas_and_the_tool_calls_in_replies_are_executed(
    demo_tools: list[MCPTool],
) -> None:
    replies = [
        tool_calls(("c1", "add", {"a": 2, "b": 3}), ("c2", "fail", {"message": "nope"})),
        answer("2 + 3 = 5."),
    ]
    with FakeOpenAIEndpoint(replies) as endpoint:
        config = ChatModelConfig(base_url=endpoint.base_url, model="fake-gpt", temperature=0.0, max_tokens=256)
        result = run_sync(run_agent, build_chat_model(config, API_KEY), demo_tools, "Add 2 and 3.")

    first, second = endpoint.requests
    offered = {tool["function"]["name"]: tool["function"]["parameters"] for tool in first["tools"]}
    assert offered["add"] == next(tool.parameter_schema for tool in demo_tools if tool.name == "add")
    assert first["model"] == "fake-gpt" and first["temperature"] == 0.0
    replies_sent = [message for message in second["messages"] if message["role"] == "tool"]
    assert [message["tool_call_id"] for message in replies_sent] == ["c1", "c2"]
    assert "5" in replies_sent[0]["content"] and "nope" in replies_sent[1]["content"]
    assert [entry.status for entry in result.log] == ["ok", "tool_error"]
    assert result.conversation.new_messages[-1].text == "2 + 3 = 5."
    assert endpoint.authorizations == [f"Bearer {API_KEY}"] * 2


def test_a_refused_key_is_a_chat_model_error_that_never_repeats_the_key(demo_tools: list[MCPTool]) -> None:
    with FakeOpenAIEndpoint([http_error(401)]) as endpoint:
        model = build_chat_model(ChatModelConfig(base_url=endpoint.base_url, model="fake"), API_KEY)
        with pytest.raises(ChatModelError, match="refused the API key") as caught:
            run_sync(run_agent, model, demo_tools, "Hello", secrets=[API_KEY])
    assert API_KEY not in str(caught.value)


def test_a_server_error_quoting_the_key_is_scrubbed_in_the_error_column(demo_tools: list[MCPTool]) -> None:
    with FakeOpenAIEndpoint([http_error(400)]) as endpoint:
        model = build_chat_model(ChatModelConfig(base_url=endpoint.base_url, model="fake"), API_KEY)
        result = run_sync(
            run_agent, model, demo_tools, "Hello", config=AgentConfig(errors="column"), secrets=[API_KEY]
        )
    assert result.conversation.error is not None and "HTTP 400" in result.conversation.error
    assert "Request refused for key ***" in result.conversation.error
    assert API_KEY not in json.dumps(result.conversation.rows(error_column=True))


def test_an_unreachable_server_is_a_chat_model_error_with_a_hint(demo_tools: list[MCPTool]) -> None:
    config = ChatModelConfig(base_url="http://127.0.0.1:9/v1", model="fake", timeout=5)
    with pytest.raises(ChatModelError, match="Could not connect") as caught:
        run_sync(run_agent, build_chat_model(config, None), demo_tools, "Hello")
    assert caught.value.hint is not None and "base URL" in caught.value.hint


def test_a_reply_cut_off_at_the_token_limit_says_to_raise_the_limit(demo_tools: list[MCPTool]) -> None:
    with FakeOpenAIEndpoint([answer("", finish_reason="length")]) as endpoint:
        model = build_chat_model(ChatModelConfig(base_url=endpoint.base_url, model="fake", max_tokens=5), None)
        with pytest.raises(ChatModelError, match="cut off") as caught:
            run_sync(run_agent, model, demo_tools, "Hello")
    assert caught.value.hint is not None and "maximum number of tokens" in caught.value.hint
