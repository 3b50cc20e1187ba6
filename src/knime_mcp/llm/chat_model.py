"""An OpenAI-compatible chat model: a secret-free description, the langchain model built from it, and its errors.

Layer: wire, to the model provider; used by the agent and by a server's sampling request
(:mod:`knime_mcp.mcp.server_requests`). :class:`ChatModelConfig` is what the Chat Model Connector's port carries and
what the CLI's flags describe; it names where the API key comes from (a KNIME credential or an environment variable) and
never holds the key. :func:`build_chat_model` makes a ``langchain_openai.ChatOpenAI`` at run time; langchain-openai
is imported only then. :func:`model_errors` is the one seam where the model client's exceptions become
:class:`ChatModelError`, with every secret scrubbed from the message.

    config = ChatModelConfig(base_url="http://localhost:11434/v1", model="llama3.1")
    model = build_chat_model(config, resolve_api_key(config))
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from knime_mcp.config import CredentialLookup
from knime_mcp.errors import ChatModelError, ConfigError, McpToolError, scrub

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_REQUEST_TIMEOUT",
    "ChatModelConfig",
    "build_chat_model",
    "model_errors",
    "model_label",
    "model_name",
    "resolve_api_key",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_REQUEST_TIMEOUT = 120.0
_NO_KEY = "no-key"
"""Sent when no key is configured: local servers ignore it, and the client never falls back to OPENAI_API_KEY."""
_MAX_RETRIES = 2


@dataclass(frozen=True, kw_only=True)
class ChatModelConfig:
    """Which OpenAI-compatible endpoint and model to use, and where its API key comes from.

    config = ChatModelConfig(base_url=DEFAULT_BASE_URL, model="gpt-4o-mini", credential="openai")
    ChatModelConfig.from_json(config.to_json()) == config
    """

    base_url: str = DEFAULT_BASE_URL
    """The API root, e.g. ``https://api.openai.com/v1`` or ``http://localhost:11434/v1`` (Ollama)."""

    model: str
    """The model name the server knows, e.g. ``gpt-4o-mini``."""

    credential: str | None = None
    """Name of a KNIME credential whose password is the API key."""

    api_key_env: str | None = None
    """Name of an environment variable holding the API key, as an alternative to a credential (the CLI's way)."""

    temperature: float | None = None
    """Sampling temperature; None leaves it to the server (some reasoning models accept no other)."""

    max_tokens: int | None = None
    """Upper bound on the tokens of one reply; None leaves it to the server."""

    timeout: float = DEFAULT_REQUEST_TIMEOUT
    """Seconds to wait for one model reply."""

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"The chat model base URL {self.base_url!r} is not an http(s) URL.",
                hint="Enter the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1.",
            )
        if parts.password:
            raise ConfigError(
                "The chat model base URL contains a password.",
                hint="Remove it from the URL and put the API key into a KNIME credential.",
            )
        if not self.model.strip():
            raise ConfigError("No chat model name given.", hint="Enter the model's name as the server knows it.")
        if self.credential and self.api_key_env:
            raise ConfigError("Give the API key either as a credential or as an environment variable, not both.")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ConfigError(f"The temperature must be between 0 and 2, not {self.temperature:g}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"The maximum number of tokens must be positive, not {self.max_tokens}.")
        if self.timeout <= 0:
            raise ConfigError("The request timeout must be a positive number of seconds.")

    @property
    def display_name(self) -> str:
        """``model @ host[:port]/path``, never with credentials."""
        return _at(self.model, self.base_url)

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


def build_chat_model(config: ChatModelConfig, api_key: str | None) -> ChatOpenAI:
    """The langchain chat model for ``config``; the key is passed explicitly so no environment default sneaks in."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=config.model,
        base_url=config.base_url,
        api_key=api_key or _NO_KEY,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.timeout,
        max_retries=_MAX_RETRIES,
    )


def _at(model: str, base_url: str) -> str:
    """``model @ host[:port]/path``: where the model's requests go, never with credentials."""
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    return f"{model} @ {parts.hostname}{port}{parts.path.rstrip('/')}"


def model_name(model: Any) -> str:
    """A langchain chat model's name, else its class's."""
    return getattr(model, "model_name", None) or type(model).__name__


def model_label(model: Any) -> str:
    """What a model's errors name as their server: the model at its base URL when it has one (a connection error is
    about the address, not the name), else its name or class."""
    base_url = getattr(model, "openai_api_base", None)
    return _at(model_name(model), base_url) if isinstance(base_url, str) and base_url else model_name(model)


@contextmanager
def model_errors(model: str, secrets: Iterable[str | None] = ()) -> Iterator[None]:
    """Re-raise what a model call throws as a :class:`ChatModelError` naming ``model`` (:func:`model_label`), with
    ``secrets`` scrubbed.

    The model client is foreign code (openai, httpx, or any langchain chat model), so this seam catches broadly;
    knime-mcp's own errors and cancellation pass through unchanged.
    """
    try:
        yield
    except McpToolError:
        raise
    except Exception as exc:
        message, hint = _describe(exc)
        raise ChatModelError(scrub(message, secrets), server=model, hint=hint) from None


def _describe(exc: Exception) -> tuple[str, str | None]:
    """What went wrong and what to do, by the openai client's error classes (langchain-openai raises them as is)."""
    import openai

    detail = exc.message if isinstance(exc, openai.APIError) else str(exc)
    match exc:
        case openai.AuthenticationError() | openai.PermissionDeniedError():
            return (
                f"The chat model server refused the API key (HTTP {exc.status_code}).",
                "Check the credential that holds the API key, and that the key may use this model.",
            )
        case openai.NotFoundError():
            return (
                f"The chat model server answered HTTP 404: {detail}",
                "Check the model name and the base URL (it usually ends in /v1).",
            )
        case openai.RateLimitError():
            return f"The chat model server is rate limiting requests: {detail}", "Wait a while, or lower the load."
        case openai.APITimeoutError():
            return "The chat model did not answer in time.", "Raise the request timeout of the chat model."
        case openai.APIConnectionError():
            return "Could not connect to the chat model server.", "Check the base URL and that the server is running."
        case openai.BadRequestError():
            return (
                f"The chat model server answered HTTP 400: {detail}",
                "If the model does not support tool calling, choose one that does.",
            )
        case openai.APIStatusError():
            return f"The chat model server answered HTTP {exc.status_code}: {detail}", None
        case _:
            return f"The chat model call failed: {type(exc).__name__}: {exc}", None


