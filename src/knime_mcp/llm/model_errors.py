"""A chat model's failures in knime-mcp's terms, for every provider: a refused key, a rate limit and when to retry, a
model that cannot call tools, an unreachable endpoint.

Layer: wire, below the agent and a server's sampling request. The model clients are foreign code (openai, anthropic,
google-genai, ollama, httpx, each wrapped by its langchain integration), so this reads what they have in common: the
HTTP response somewhere in the exception's chain (:func:`~knime_mcp.llm.retry_after.http_failure`), and the names of
the connection and timeout error classes; no SDK is imported here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from knime_mcp.errors import ChatModelError, McpToolError, scrub
from knime_mcp.llm.retry_after import MAX_RETRY_AFTER_SECONDS, chain, http_failure
from knime_mcp.net.retry_after import retry_after

__all__ = ["model_errors"]

_CANNOT_CALL_TOOLS = re.compile(
    r"(does not|doesn't|do not) support (tools|tool[ _-]?(use|calling|choice)|function[ _-]?calling)"
    r"|function calling is not (enabled|supported)|tools? (is|are) not supported",
    re.IGNORECASE,
)
"""How the providers say a model cannot call tools: Ollama ("... does not support tools"), OpenAI-compatible servers
and Gemini ("Function calling is not enabled for models/...")."""

_TIMEOUT_ERRORS = {"TimeoutError", "TimeoutException", "APITimeoutError", "ModelTimeoutError"}
_CONNECTION_ERRORS = {"ConnectionError", "ConnectError", "APIConnectionError", "ModelConnectionError"}


@contextmanager
def model_errors(model: str, secrets: Iterable[str | None] = ()) -> Iterator[None]:
    """Re-raise what a model call throws as a :class:`ChatModelError` naming ``model`` (:func:`model_label`), with
    ``secrets`` scrubbed.

    The model client is foreign code (any langchain chat model), so this seam catches broadly; knime-mcp's own errors
    and cancellation pass through unchanged.
    """
    try:
        yield
    except McpToolError:
        raise
    except Exception as exc:
        message, hint = _describe(exc, model)
        raise ChatModelError(scrub(message, secrets), server=model, hint=hint and scrub(hint, secrets)) from None


def _describe(exc: Exception, model: str) -> tuple[str, str | None]:
    """What went wrong and what to do."""
    failure = http_failure(exc)
    if failure is None:
        return _without_response(exc)
    status, headers = failure
    detail = _detail(exc)
    match status:
        case 401 | 403:
            return (
                f"The chat model server refused the API key (HTTP {status}).",
                "Check the credential that holds the API key, and that the key may use this model.",
            )
        case 404:
            return (
                f"The chat model server answered HTTP 404: {detail}",
                "Check the model name (for Azure OpenAI the deployment name) and the endpoint (an OpenAI-compatible "
                "server's usually ends in /v1).",
            )
        case 429:
            return _rate_limited(retry_after(headers), detail)
        case 400 if _CANNOT_CALL_TOOLS.search(detail):
            return (
                f"The model {model} cannot call tools: {detail}",
                "Choose a model that supports tool calling (function calling).",
            )
        case 400:
            return (
                f"The chat model server answered HTTP 400: {detail}",
                "If the model does not support tool calling, choose one that does.",
            )
        case _:
            return f"The chat model server answered HTTP {status}: {detail}", None


def _rate_limited(wait: float | None, detail: str) -> tuple[str, str]:
    if wait is None:
        return (
            f"The chat model server is rate limiting requests (HTTP 429): {detail}",
            "Wait a while, or lower the load.",
        )
    longer = f", longer than knime-mcp waits ({MAX_RETRY_AFTER_SECONDS:g} s)" if wait > MAX_RETRY_AFTER_SECONDS else ""
    return (
        f"The chat model server is rate limiting requests (HTTP 429); it asked to retry after {wait:g} s{longer}: "
        f"{detail}",
        "Run again after that time, or lower the load (fewer rows or parallel runs).",
    )


def _without_response(exc: Exception) -> tuple[str, str | None]:
    """Timeouts, unreachable endpoints, and anything else a client raised before or without an HTTP answer."""
    names = {klass.__name__ for error in chain(exc) for klass in type(error).__mro__}
    if names & _TIMEOUT_ERRORS:
        return "The chat model did not answer in time.", "Raise the request timeout of the chat model."
    if names & _CONNECTION_ERRORS:
        return (
            "Could not connect to the chat model server.",
            "Check the endpoint (base URL) and that the server is running.",
        )
    return f"The chat model call failed: {type(exc).__name__}: {exc}", None


def _detail(exc: Exception) -> str:
    """The server's message: the SDK's parsed one where it has it (openai, anthropic), Ollama's ``error``, else the
    exception's text."""
    for attribute in ("message", "error"):
        if isinstance(value := getattr(exc, attribute, None), str) and value:
            return value
    return str(exc)
