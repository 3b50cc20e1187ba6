"""`knime-mcp agent --provider`: the chat model each provider's flags describe, and agent runs through the scripted
endpoints that speak the providers' wire formats on 127.0.0.1 (a real model cannot be scripted)."""

from __future__ import annotations

import argparse
import json

import pytest

from cli_runs import run_cli
from fakes import scripted_providers as scripted
from fakes.fake_openai_endpoint import FakeOpenAIEndpoint, answer, tool_calls
from knime_mcp.cli.agent import add_agent_options, chat_model_config
from knime_mcp.llm.chat_model import PROVIDERS, ChatModelConfig

API_KEY = "sk-cli-provider-canary-71c4"
AZURE_ENDPOINT = "https://example-resource.openai.azure.com"


def _config(*flags: str) -> ChatModelConfig:
    """The chat model ``knime-mcp agent FLAGS… --prompt Hi`` describes."""
    parser = argparse.ArgumentParser()
    add_agent_options(parser)
    return chat_model_config(parser.parse_args([*flags, "--prompt", "Hi"]))


def test_without_provider_the_agent_uses_openai_at_openais_endpoint() -> None:
    config = _config("--model", "gpt-4o-mini", "--api-key-env", "OPENAI_API_KEY")
    assert (config.provider, config.model, config.api_key_env) == ("openai", "gpt-4o-mini", "OPENAI_API_KEY")
    assert config.endpoint == PROVIDERS["openai"].default_base_url


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "ollama"])
def test_each_provider_without_base_url_uses_its_own_endpoint(provider: str) -> None:
    config = _config("--provider", provider, "--model", "some-model", "--temperature", "0.5", "--max-tokens", "99")
    assert config.provider == provider and config.endpoint == PROVIDERS[provider].default_base_url
    assert (config.model, config.temperature, config.max_tokens) == ("some-model", 0.5, 99)


def test_a_base_url_given_is_the_providers_endpoint() -> None:
    config = _config("--provider", "ollama", "--base-url", "http://gpu-host:11434", "--model", "llama3.2")
    assert config.provider == "ollama" and config.endpoint == "http://gpu-host:11434"


def test_azure_takes_the_resource_endpoint_the_deployment_and_the_api_version() -> None:
    config = _config(
        "--provider", "azure", "--base-url", AZURE_ENDPOINT, "--model", "my-deployment", "--api-version", "2024-10-21",
        "--api-key-env", "AZURE_OPENAI_API_KEY", "--request-timeout", "30",
    )  # fmt: skip
    assert (config.provider, config.endpoint, config.model) == ("azure", AZURE_ENDPOINT, "my-deployment")
    assert (config.api_version, config.api_key_env, config.timeout) == ("2024-10-21", "AZURE_OPENAI_API_KEY", 30.0)


def test_an_unknown_provider_is_a_usage_error_listing_the_providers(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "agent", "--provider", "bedrock", "--model", "m", "--prompt", "Hi")
    assert code == 2 and "'bedrock'" in err and "'openai', 'azure', 'anthropic', 'gemini', 'ollama'" in err


def test_an_api_version_for_another_provider_than_azure_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "agent", "--model", "m", "--api-version", "2024-10-21", "--prompt", "Hi")
    assert code == 2 and "--api-version is not used by --provider openai" in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [(["--api-version", "2024-10-21"], "--base-url"), (["--base-url", AZURE_ENDPOINT], "--api-version")],
)
def test_azure_without_its_endpoint_or_api_version_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    code, out, err = run_cli(capsys, "agent", "--provider", "azure", "--model", "dep", *flags, "--prompt", "Hi")
    assert code == 2 and out == "" and f"--provider azure needs {named}" in err


def test_agent_help_names_the_providers_and_their_default_endpoints(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "agent", "--help")
    help_text = " ".join(out.split())
    assert code == 0 and "{openai,azure,anthropic,gemini,ollama}" in help_text
    assert "default: the provider's own" in help_text and "--api-version" in help_text


def test_the_agent_runs_a_tool_round_trip_through_the_openai_provider(
    capsys: pytest.CaptureFixture[str], demo_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an OpenAI-compatible endpoint that asks for a tool call and then answers, and the key in a variable
    monkeypatch.setenv("FAKE_LLM_KEY", API_KEY)
    script = [tool_calls(("c1", "add", {"a": 2, "b": 3})), answer("2 + 3 = 5.")]
    with FakeOpenAIEndpoint(script) as endpoint:
        code, out, err = run_cli(
            capsys, "agent", "--provider", "openai", "--base-url", endpoint.base_url, "--model", "fake",
            "--api-key-env", "FAKE_LLM_KEY", demo_http_url, "--prompt", "Add 2 and 3.",
        )  # fmt: skip
    # Then the tool's result went back to the model, the answer is printed, and the key only in the header
    assert code == 0, err
    assert "[assistant] -> add" in out and "[assistant] 2 + 3 = 5." in out
    assert endpoint.requests[1]["messages"][-1]["role"] == "tool"
    assert endpoint.requests[1]["messages"][-1]["content"].splitlines()[1] == "5"
    assert endpoint.authorizations == [f"Bearer {API_KEY}"] * 2 and API_KEY not in out + err


@pytest.mark.parametrize(
    ("provider", "flags", "takes_key"),
    [
        ("anthropic", [], True),
        ("gemini", [], True),
        ("azure", ["--api-version", "2024-10-21"], True),
        ("ollama", [], False),
    ],
)
def test_the_agent_runs_a_tool_round_trip_in_each_providers_own_wire_format(
    capsys: pytest.CaptureFixture[str],
    demo_http_url: str,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    flags: list[str],
    takes_key: bool,
) -> None:
    # Given the provider's scripted endpoint asking for a tool call and then answering, and the key (if the provider
    # takes one) in a variable; Ollama's client would otherwise send OLLAMA_API_KEY
    monkeypatch.setenv("FAKE_LLM_KEY", API_KEY)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    key = ["--api-key-env", "FAKE_LLM_KEY"] if takes_key else []
    script = [scripted.tool_calls(("c1", "add", {"a": 2, "b": 3})), scripted.answer("2 + 3 = 5.")]
    with scripted.ScriptedEndpoint(provider, script) as endpoint:
        code, out, err = run_cli(
            capsys, "agent", "--provider", provider, "--base-url", endpoint.base_url, "--model", "model-7", *flags,
            *key, demo_http_url, "--prompt", "Add 2 and 3.",
        )  # fmt: skip
    # Then the tool's result went back in the provider's format, the answer is printed, and the key went only in the
    # provider's own header
    assert code == 0, err
    assert "[assistant] -> add" in out and "[assistant] 2 + 3 = 5." in out
    (result,) = endpoint.dialect.tool_results(endpoint.received[1].body)
    assert '<tool-output tool="add"' in _output(result[1]) and "\n5\n" in _output(result[1])
    sent = [key and key[1] for key in endpoint.keys()]
    assert sent == [API_KEY if takes_key else None] * 2 and API_KEY not in out + err


def _output(text: str) -> str:
    """A tool result's text as the model reads it: Gemini's function response holds it as ``{"output": …}``."""
    return str(json.loads(text)["output"]) if text.startswith("{") else text
