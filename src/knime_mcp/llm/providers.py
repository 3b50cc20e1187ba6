"""Each provider's chat model, made with its maintained LangChain integration, imported only when one is built.

Layer: wire, below :mod:`knime_mcp.llm.chat_model`, whose :func:`~knime_mcp.llm.chat_model.build_chat_model` picks
the builder. Every builder passes the endpoint, the key and the timeout explicitly, so no environment variable of the
integration (``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``, ``GOOGLE_API_KEY``, ``OLLAMA_HOST``...) sneaks in; the one
exception is ``OLLAMA_API_KEY``, which the ollama client sends when no key is configured. The key goes in the
provider's own header: ``Authorization: Bearer`` (OpenAI, Ollama, and Anthropic, whose client 2.x sends a key so
rather than as ``x-api-key``), ``api-key`` (Azure OpenAI), ``x-goog-api-key`` (Gemini). The openai client retries
as knime-mcp wants; the others are built with their retries off and :class:`~knime_mcp.llm.retry_after.RetryAfter`
in front. A model whose endpoint came from data is built only for OpenAI's API and Ollama (the others need a key,
which never goes to such an endpoint), over the clients of :mod:`knime_mcp.llm.pinned`. Every OpenAI, Azure OpenAI
and Anthropic model gets an HTTP client of its own (:func:`_own_async_client`), never the one its integration shares
across the process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache, cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from knime_mcp.llm.retry_after import MAX_RETRIES, RetryAfter

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from knime_mcp.net.urlguard import PinnedHost

__all__ = ["BUILDERS", "PINNED_BUILDERS"]

_NO_KEY = "no-key"
"""Sent by the openai client when no key is configured: local servers ignore it, and the client never falls back to
OPENAI_API_KEY."""


class ChatModelConfig(Protocol):
    """What a builder reads of :class:`knime_mcp.llm.chat_model.ChatModelConfig` (which imports this module)."""

    @property
    def endpoint(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def api_version(self) -> str | None: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def timeout(self) -> float: ...


def _own_async_client(sdk: str) -> Any:
    """A new HTTP client for a model's asynchronous calls, from the provider's SDK (``openai``, ``anthropic``).

    Their LangChain integrations otherwise share one per endpoint across the process, and a connection it keeps
    alive belongs to the event loop that opened it: every node execution and command runs on a loop of its own, so
    the next run with the same endpoint failed with "Event loop is closed", and a shared client that was dropped
    closed itself on whatever loop ran then (a later, unrelated run), failing there. Models are built per run."""
    return importlib.import_module(sdk).DefaultAsyncHttpxClient()


class _OwnAsyncClient:
    """ChatAnthropic with :func:`_own_async_client`, which it takes no setting for."""

    @cached_property
    def _async_client(self) -> Any:
        import anthropic

        params: dict[str, Any] = self._client_params  # type: ignore[attr-defined]
        return anthropic.AsyncClient(**params, http_client=_own_async_client("anthropic"))


def _openai(config: ChatModelConfig, api_key: str | None, pin: PinnedHost | None = None) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    if pin is None:
        clients = {"http_async_client": _own_async_client("openai")}
    else:
        from knime_mcp.llm.pinned import pinned_clients

        sync, asynchronous = pinned_clients(pin, config.timeout)
        clients = {"http_client": sync, "http_async_client": asynchronous}
    return ChatOpenAI(
        model=config.model,
        base_url=config.endpoint,
        api_key=api_key or _NO_KEY,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.timeout,
        max_retries=MAX_RETRIES,
        **clients,
    )


def _azure(config: ChatModelConfig, api_key: str | None) -> BaseChatModel:
    from langchain_openai import AzureChatOpenAI

    return AzureChatOpenAI(
        azure_endpoint=config.endpoint,
        azure_deployment=config.model,
        model=config.model,
        api_version=config.api_version,
        api_key=api_key,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.timeout,
        max_retries=MAX_RETRIES,
        http_async_client=_own_async_client("openai"),
    )


def _anthropic(config: ChatModelConfig, api_key: str | None) -> BaseChatModel:
    from langchain_anthropic import ChatAnthropic

    limit = {} if config.max_tokens is None else {"max_tokens": config.max_tokens}
    return _retrying(ChatAnthropic, _OwnAsyncClient)(
        model=config.model,
        base_url=config.endpoint,
        api_key=api_key,
        temperature=config.temperature,
        timeout=config.timeout,
        max_retries=0,
        **limit,
    )


def _gemini(config: ChatModelConfig, api_key: str | None) -> BaseChatModel:
    from langchain_google_genai import ChatGoogleGenerativeAI

    return _retrying(ChatGoogleGenerativeAI)(
        model=config.model,
        base_url=config.endpoint,
        google_api_key=api_key,
        vertexai=False,
        temperature=config.temperature,
        max_output_tokens=config.max_tokens,
        timeout=config.timeout,
        max_retries=1,  # google-genai's count includes the first attempt: 1 is no retry
    )


def _ollama(config: ChatModelConfig, api_key: str | None, pin: PinnedHost | None = None) -> BaseChatModel:
    from langchain_ollama import ChatOllama

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    transports = {}
    if pin is not None:  # the ollama client makes its httpx clients itself
        from knime_mcp.llm.pinned import pinned_transports

        sync, asynchronous = pinned_transports(pin)
        transports = {"sync_client_kwargs": {"transport": sync}, "async_client_kwargs": {"transport": asynchronous}}
    return _retrying(ChatOllama)(
        model=config.model,
        base_url=config.endpoint,
        temperature=config.temperature,
        num_predict=config.max_tokens,
        client_kwargs={"timeout": config.timeout, "headers": headers},
        **transports,
    )


_MAX_TOKENS_FIELDS = {"ChatGoogleGenerativeAI": "max_output_tokens", "ChatOllama": "num_predict"}
"""The field that limits a reply's tokens, where an integration takes no ``max_tokens`` call argument."""


class _MaxTokens:
    """Takes the ``max_tokens`` call argument (a server's sampling request binds it, see
    :mod:`knime_mcp.mcp.server_requests`) for a model whose integration names the limit otherwise."""

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        model: Any = self
        if (limit := kwargs.pop("max_tokens", None)) is not None:
            model = model.model_copy(update={_MAX_TOKENS_FIELDS[type(self).__name__]: limit})
        return await super(_MaxTokens, model)._agenerate(*args, **kwargs)  # type: ignore[misc]


@cache
def _retrying(chat_model: type[Any], *mixins: type[Any]) -> type[Any]:
    """``chat_model`` with :class:`RetryAfter` in front (and :class:`_MaxTokens` where needed, then ``mixins``), made
    once per class and named as it."""
    limit = (_MaxTokens,) if chat_model.__name__ in _MAX_TOKENS_FIELDS else ()
    return type(chat_model.__name__, (RetryAfter, *limit, *mixins, chat_model), {"__module__": __name__})


BUILDERS: Mapping[str, Callable[[ChatModelConfig, str | None], BaseChatModel]] = MappingProxyType(
    {"openai": _openai, "azure": _azure, "anthropic": _anthropic, "gemini": _gemini, "ollama": _ollama}
)

PINNED_BUILDERS: Mapping[str, Callable[[ChatModelConfig, None, PinnedHost], BaseChatModel]] = MappingProxyType(
    {"openai": _openai, "ollama": _ollama}
)
"""The providers that work without a key, built for an endpoint from data: every request goes to the address the
SSRF guard checked, and carries no key (:mod:`knime_mcp.llm.pinned`)."""
