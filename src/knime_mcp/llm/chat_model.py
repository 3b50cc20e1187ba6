"""A chat model of one of the providers people use: a secret-free description, the langchain model built from it, and
its name and label for errors.

Layer: wire, to the model provider; used by the agent and by a server's sampling request
(:mod:`knime_mcp.mcp.server_requests`). :class:`ChatModelConfig` is what the Chat Model Connector's port carries and
what the CLI's flags describe: the provider, its endpoint (None for the provider's own), the model (for Azure OpenAI
the deployment), and where the API key comes from (a KNIME credential or an environment variable); it never holds the
key. :func:`build_chat_model` makes the provider's maintained LangChain chat model at run time
(:mod:`knime_mcp.llm.providers`; each integration is imported only then). A base URL that came from data (a flow
variable) is a server from data: the config says so with an ``untrusted_hint``, and the model is built only without a
key, for an endpoint the SSRF guard finds public, and talks to the address it checked (:mod:`knime_mcp.llm.pinned`).
:func:`model_errors`
(:mod:`knime_mcp.llm.model_errors`) is the one seam where a model client's exceptions become
:class:`~knime_mcp.errors.ChatModelError`, with every secret scrubbed from the message.

    config = ChatModelConfig(provider="ollama", model="llama3.1")
    model = build_chat_model(config, resolve_api_key(config))
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from knime_mcp.config import CredentialLookup
from knime_mcp.errors import ConfigError
from knime_mcp.llm.model_errors import model_errors

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_REQUEST_TIMEOUT",
    "PROVIDERS",
    "ChatModelConfig",
    "Provider",
    "ProviderInfo",
    "build_chat_model",
    "model_errors",
    "model_label",
    "model_name",
    "resolve_api_key",
]

Provider = Literal["openai", "azure", "anthropic", "gemini", "ollama"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_REQUEST_TIMEOUT = 120.0


@dataclass(frozen=True, kw_only=True)
class ProviderInfo:
    """What the settings of a provider need: its name, its own endpoint, and what else it asks for."""

    label: str
    default_base_url: str | None
    """None where each customer has an endpoint of their own (Azure OpenAI)."""
    example_base_url: str
    needs_api_version: bool = False
    needs_key: bool = True
    """False where a local server takes requests without a key (OpenAI-compatible servers, Ollama)."""
    max_temperature: float = 2.0
    package: str
    """The LangChain integration that talks to it."""
    langchain_class: str


PROVIDERS: Mapping[Provider, ProviderInfo] = MappingProxyType(
    {
        "openai": ProviderInfo(
            label="OpenAI",
            default_base_url=DEFAULT_BASE_URL,
            example_base_url="https://api.openai.com/v1 or http://localhost:11434/v1",
            needs_key=False,
            package="langchain-openai",
            langchain_class="ChatOpenAI",
        ),
        "azure": ProviderInfo(
            label="Azure OpenAI",
            default_base_url=None,
            example_base_url="https://NAME.openai.azure.com",
            needs_api_version=True,
            package="langchain-openai",
            langchain_class="AzureChatOpenAI",
        ),
        "anthropic": ProviderInfo(
            label="Anthropic",
            default_base_url="https://api.anthropic.com",
            example_base_url="https://api.anthropic.com",
            max_temperature=1.0,
            package="langchain-anthropic",
            langchain_class="ChatAnthropic",
        ),
        "gemini": ProviderInfo(
            label="Google Gemini",
            default_base_url="https://generativelanguage.googleapis.com",
            example_base_url="https://generativelanguage.googleapis.com",
            package="langchain-google-genai",
            langchain_class="ChatGoogleGenerativeAI",
        ),
        "ollama": ProviderInfo(
            label="Ollama",
            default_base_url="http://localhost:11434",
            example_base_url="http://localhost:11434",
            needs_key=False,
            package="langchain-ollama",
            langchain_class="ChatOllama",
        ),
    }
)
assert set(PROVIDERS) == set(get_args(Provider))


@dataclass(frozen=True, kw_only=True)
class ChatModelConfig:
    """Which provider, endpoint and model to use, and where its API key comes from.

    A dict written before providers existed (a base URL, no provider) loads as the same OpenAI-compatible config.

    config = ChatModelConfig(provider="anthropic", model="claude-sonnet-4-5", credential="anthropic")
    ChatModelConfig.from_json(config.to_json()) == config
    """

    provider: Provider = "openai"

    base_url: str | None = None
    """The API root; None or "" for the provider's own (:attr:`endpoint`). Azure OpenAI's is the resource's,
    ``https://NAME.openai.azure.com``; an OpenAI-compatible server's ends in ``/v1`` (``http://localhost:11434/v1``)."""

    model: str
    """The model name the server knows, e.g. ``gpt-4o-mini``; for Azure OpenAI the deployment name."""

    api_version: str | None = None
    """Azure OpenAI's API version, e.g. ``2024-10-21``; the other providers have none."""

    credential: str | None = None
    """Name of a KNIME credential whose password is the API key."""

    api_key_env: str | None = None
    """Name of an environment variable holding the API key, as an alternative to a credential (the CLI's way)."""

    temperature: float | None = None
    """Sampling temperature; None leaves it to the server (some reasoning models accept no other)."""

    max_tokens: int | None = None
    """Upper bound on the tokens of one reply; None leaves it to the server (Anthropic: the model's default)."""

    timeout: float = DEFAULT_REQUEST_TIMEOUT
    """Seconds to wait for one model reply."""

    untrusted_hint: str | None = None
    """Set when the base URL came from data (a flow variable, not a person's settings): how to trust it. Then no API
    key is sent, the SSRF guard checks the endpoint, and every request goes to the address it checked."""

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ConfigError(
                f"Unknown chat model provider {self.provider!r}.",
                hint=f"Choose one of: {', '.join(PROVIDERS)}.",
            )
        info = PROVIDERS[self.provider]
        if not (self.base_url or info.default_base_url):
            raise ConfigError(
                f"{info.label} needs the endpoint of your resource.",
                hint=f"Enter it, e.g. {info.example_base_url}.",
            )
        parts = urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"The {info.label} endpoint {self.endpoint!r} is not an http(s) URL.",
                hint=f"Enter the API root, e.g. {info.example_base_url}.",
            )
        if parts.password:
            raise ConfigError(
                f"The {info.label} endpoint contains a password.",
                hint="Remove it from the URL and put the API key into a KNIME credential.",
            )
        if info.needs_api_version and not (self.api_version or "").strip():
            raise ConfigError(
                f"{info.label} needs an API version.",
                hint="Enter the API version your deployment supports, e.g. 2024-10-21.",
            )
        if not self.model.strip():
            what = "deployment" if self.provider == "azure" else "model's"
            raise ConfigError(f"No chat model name given for {info.label}.", hint=f"Enter the {what} name.")
        if self.credential and self.api_key_env:
            raise ConfigError("Give the API key either as a credential or as an environment variable, not both.")
        if self.temperature is not None and not 0 <= self.temperature <= info.max_temperature:
            raise ConfigError(
                f"The temperature must be between 0 and {info.max_temperature:g} for {info.label}, "
                f"not {self.temperature:g}."
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"The maximum number of tokens must be positive, not {self.max_tokens}.")
        if self.timeout <= 0:
            raise ConfigError("The request timeout must be a positive number of seconds.")

    @property
    def endpoint(self) -> str:
        """The URL requests go to: the base URL, else the provider's own."""
        return self.base_url or PROVIDERS[self.provider].default_base_url or ""

    @property
    def display_name(self) -> str:
        """``model @ host[:port]/path``, never with credentials."""
        return _at(self.model, self.endpoint)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatModelConfig:
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> ChatModelConfig:
        return cls.from_dict(json.loads(text))


def resolve_api_key(config: ChatModelConfig, credentials: CredentialLookup | None = None) -> str | None:
    """The API key, read now from the credential or the environment; None when the config names no source."""
    if config.api_key_env:
        if not os.environ.get(config.api_key_env):
            raise ConfigError(
                f"Environment variable {config.api_key_env} is not set.",
                hint=f"Set {config.api_key_env} to the API key, or leave the key out for a local server.",
            )
        return os.environ[config.api_key_env]
    if not config.credential:
        return None
    if credentials is None:
        raise ConfigError(f"Credential {config.credential!r} cannot be read here.")
    try:
        _, password = credentials(config.credential)
    except (KeyError, RuntimeError) as exc:
        raise ConfigError(
            f"Credential {config.credential!r} is not available.",
            hint="Connect the credentials flow variable that holds the API key to this node.",
        ) from exc
    if not password:
        raise ConfigError(f"Credential {config.credential!r} has an empty password; it should hold the API key.")
    return password


def build_chat_model(config: ChatModelConfig, api_key: str | None) -> BaseChatModel:
    """The provider's langchain chat model for ``config``; the key is passed explicitly so no environment default
    sneaks in, and a provider that needs one refuses to start without it. For a base URL from data
    (:attr:`ChatModelConfig.untrusted_hint`) a key is refused, and the SSRF guard checks the endpoint now."""
    from knime_mcp.llm.providers import BUILDERS, PINNED_BUILDERS

    info = PROVIDERS[config.provider]
    if config.untrusted_hint is not None:
        if api_key or info.needs_key:
            raise ConfigError(
                f"The {info.label} base URL was taken from data, and an API key is sent only to a base URL a person "
                "entered.",
                hint=config.untrusted_hint,
            )
        from knime_mcp.llm.pinned import checked_endpoint

        return PINNED_BUILDERS[config.provider](config, None, checked_endpoint(config.endpoint, config.untrusted_hint))
    if info.needs_key and not api_key:
        raise ConfigError(
            f"{info.label} needs an API key.",
            hint="Select the KNIME credential whose password is the API key (or, in the CLI, name its environment "
            "variable).",
        )
    return BUILDERS[config.provider](config, api_key)


def _at(model: str, base_url: str) -> str:
    """``model @ host[:port]/path``: where the model's requests go, never with credentials."""
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    return f"{model} @ {parts.hostname}{port}{parts.path.rstrip('/')}"


_ENDPOINT_FIELDS = ("azure_endpoint", "openai_api_base", "anthropic_api_url", "base_url")
"""Where each integration keeps its endpoint: AzureChatOpenAI, ChatOpenAI, ChatAnthropic, ChatGoogleGenerativeAI and
ChatOllama."""


def model_name(model: Any) -> str:
    """A langchain chat model's name, else its class's."""
    return getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__


def model_label(model: Any) -> str:
    """What a model's errors name as their server: the model at its endpoint when it has one (a connection error is
    about the address, not the name), with the provider unless it is OpenAI('s API), else its name or class."""
    base_url = next(
        (url for name in _ENDPOINT_FIELDS if isinstance(url := getattr(model, name, None), str) and url), ""
    )
    label = _at(model_name(model), base_url) if base_url else model_name(model)
    classes = {klass.__name__ for klass in type(model).__mro__}
    provider = next(
        (info.label for key, info in PROVIDERS.items() if key != "openai" and info.langchain_class in classes), None
    )
    return f"{label} ({provider})" if provider else label
