"""The chat model settings of every provider: their defaults and checks, a config saved before providers existed, the
LangChain class each builds (imported only then), and what the provider's environment variables cannot change."""

from __future__ import annotations

import subprocess
import sys
from email.utils import formatdate
from time import time

import pytest

from knime_mcp.errors import ConfigError
from knime_mcp.llm.chat_model import (
    DEFAULT_BASE_URL,
    PROVIDERS,
    ChatModelConfig,
    Provider,
    build_chat_model,
    model_label,
    model_name,
)
from knime_mcp.net.retry_after import retry_after

API_KEY = "sk-canary-0b9f44"
ENDPOINTS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "ollama": "http://localhost:11434",
}
CLASSES = {
    "openai": "ChatOpenAI",
    "azure": "AzureChatOpenAI",
    "anthropic": "ChatAnthropic",
    "gemini": "ChatGoogleGenerativeAI",
    "ollama": "ChatOllama",
}


def _azure(**changes: object) -> ChatModelConfig:
    settings = {"provider": "azure", "base_url": "https://acme.openai.azure.com", "model": "gpt4o-prod"}
    return ChatModelConfig(**{**settings, "api_version": "2024-10-21", **changes})  # type: ignore[arg-type]


def test_a_config_saved_before_providers_existed_loads_as_the_same_openai_config() -> None:
    # Given the dict the previous version wrote (a base URL, no provider, no API version)
    saved = {
        "base_url": "http://localhost:11434/v1",
        "model": "llama3.1",
        "credential": None,
        "api_key_env": "LLM_KEY",
        "temperature": 0.2,
        "max_tokens": 100,
        "timeout": 60.0,
    }
    config = ChatModelConfig.from_dict(saved)
    assert config.provider == "openai" and config.endpoint == "http://localhost:11434/v1"
    assert config == ChatModelConfig(
        base_url="http://localhost:11434/v1", model="llama3.1", api_key_env="LLM_KEY", temperature=0.2,
        max_tokens=100, timeout=60.0,
    )  # fmt: skip
    assert DEFAULT_BASE_URL == ENDPOINTS["openai"]


@pytest.mark.parametrize("provider", list(ENDPOINTS))
@pytest.mark.parametrize("base_url", [None, ""])
def test_no_base_url_means_the_providers_own_endpoint(provider: Provider, base_url: str | None) -> None:
    config = ChatModelConfig(provider=provider, base_url=base_url, model="m")
    assert config.endpoint == ENDPOINTS[provider] == PROVIDERS[provider].default_base_url
    assert ChatModelConfig.from_json(config.to_json()) == config


def test_only_azure_has_no_endpoint_of_its_own_and_needs_an_api_version() -> None:
    assert [p for p, info in PROVIDERS.items() if info.default_base_url is None] == ["azure"]
    assert [p for p, info in PROVIDERS.items() if info.needs_api_version] == ["azure"]
    assert {info.label for info in PROVIDERS.values()} >= {"OpenAI", "Azure OpenAI", "Anthropic", "Ollama"}


@pytest.mark.parametrize(
    ("config", "message", "hint"),
    [
        (lambda: _azure(base_url=None), "Azure OpenAI needs the endpoint", "https://NAME.openai.azure.com"),
        (lambda: _azure(api_version=" "), "Azure OpenAI needs an API version", "2024-10-21"),
        (lambda: _azure(model=""), "No chat model name given for Azure OpenAI", "deployment name"),
        (lambda: _azure(base_url="acme.openai.azure.com"), "Azure OpenAI endpoint .* not an http", "NAME.openai"),
        (
            lambda: ChatModelConfig(provider="anthropic", model="claude", temperature=1.5),
            "between 0 and 1 for Anthropic",
            None,
        ),
        (lambda: ChatModelConfig(provider="mistral", model="m"), "Unknown chat model provider 'mistral'", "ollama"),  # type: ignore[arg-type]
    ],
)
def test_settings_a_provider_cannot_work_with_are_config_errors_naming_it(
    config: object, message: str, hint: str | None
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        config()  # type: ignore[operator]
    assert hint is None or hint in (caught.value.hint or "")


@pytest.mark.parametrize("provider", ["azure", "anthropic", "gemini"])
def test_a_cloud_provider_without_a_key_is_refused_before_any_request(provider: Provider) -> None:
    config = _azure() if provider == "azure" else ChatModelConfig(provider=provider, model="m")
    with pytest.raises(ConfigError, match=f"{PROVIDERS[provider].label} needs an API key"):
        build_chat_model(config, None)


@pytest.mark.parametrize("provider", list(CLASSES))
def test_each_provider_is_built_with_its_langchain_integration_and_named_in_errors(provider: Provider) -> None:
    config = _azure() if provider == "azure" else ChatModelConfig(provider=provider, model="m-1")
    model = build_chat_model(config, API_KEY)
    assert CLASSES[provider] in {klass.__name__ for klass in type(model).__mro__}
    assert model_name(model) == config.model.removeprefix("models/")
    label = model_label(model)
    assert label.startswith(f"{config.model} @ ") and API_KEY not in label
    assert provider == "openai" or label.endswith(f"({PROVIDERS[provider].label})")
    assert API_KEY not in config.to_json()


def test_the_integrations_are_imported_only_when_a_model_is_built() -> None:
    code = (
        "import sys; import knime_mcp.llm.chat_model; "
        "print([m for m in ('langchain_openai', 'langchain_anthropic', 'langchain_google_genai', 'langchain_ollama') "
        "if m in sys.modules])"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.parametrize(
    ("provider", "variable", "attribute"),
    [
        ("openai", "OPENAI_BASE_URL", "openai_api_base"),
        ("anthropic", "ANTHROPIC_BASE_URL", "anthropic_api_url"),
        ("ollama", "OLLAMA_HOST", "base_url"),
    ],
)
def test_the_providers_environment_variables_do_not_move_the_endpoint(
    provider: Provider, variable: str, attribute: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, "http://127.0.0.1:9")
    model = build_chat_model(ChatModelConfig(provider=provider, model="m"), API_KEY)
    assert getattr(model, attribute) == ENDPOINTS[provider]


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_seconds_or_milliseconds(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(headers) == seconds


def test_retry_after_as_an_http_date_is_the_time_until_then() -> None:
    wait = retry_after({"retry-after": formatdate(time() + 600, usegmt=True)})
    assert wait is not None and 500 < wait <= 600
