"""Retrying a model call the way the openai client does, for the providers whose clients do not (or not safely).

Layer: wire, below :mod:`knime_mcp.llm.providers` and :mod:`knime_mcp.llm.model_errors`. The openai client (OpenAI
and Azure OpenAI) retries a request twice on 408, 409, 429 and 5xx, waiting what ``Retry-After`` asks when that is at
most two minutes and not retrying at all when it asks for longer (so the run fails at once, saying when to come back);
otherwise it backs off exponentially. The anthropic client waits any ``Retry-After`` however long, google-genai and
ollama ignore it: their chat models are built with their own retries off and :class:`RetryAfter` in front, which does
what the openai client does. It reads the HTTP response from the exception's chain (:func:`http_failure`), which every
client keeps: as ``response`` of the error itself (openai, anthropic, google-genai) or of the ``httpx`` error the client
raised it from (ollama).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from itertools import count
from typing import Any

from knime_mcp.net.retry_after import retry_after

__all__ = ["MAX_RETRIES", "MAX_RETRY_AFTER_SECONDS", "RetryAfter", "chain", "http_failure", "retry_delay"]

MAX_RETRIES = 2
MAX_RETRY_AFTER_SECONDS = 120.0
"""The longest ``Retry-After`` waited for, as the openai client: a server asking for longer is not retried."""
_RETRY_STATUSES = frozenset({408, 409, 429})
_INITIAL_DELAY = 0.5
_MAX_DELAY = 8.0


def chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it was raised from or while handling (``raise ... from None`` keeps the latter too)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def http_failure(exc: BaseException) -> tuple[int, Mapping[str, str]] | None:
    """The HTTP status and headers of the response behind ``exc``, if an HTTP answer caused it: an httpx response
    (``status_code``) or an aiohttp one (``status``), which google-genai uses whenever aiohttp is installed."""
    for error in chain(exc):
        response: Any = getattr(error, "response", None)
        status = getattr(response, "status_code", None) or getattr(response, "status", None)
        if isinstance(status, int) and status >= 400:
            return status, response.headers
    return None


def retry_delay(exc: BaseException, attempt: int) -> float | None:
    """How long to wait before retrying after ``exc`` on retry number ``attempt`` (0 for the first), or None when
    the call is not to be retried."""
    failure = http_failure(exc)
    if attempt >= MAX_RETRIES or failure is None:
        return None
    status, headers = failure
    if status not in _RETRY_STATUSES and status < 500:
        return None
    wait = retry_after(headers)
    if wait is not None and wait > MAX_RETRY_AFTER_SECONDS:
        return None
    if wait:
        return wait
    return min(_INITIAL_DELAY * 2.0**attempt, _MAX_DELAY) * (1 - 0.25 * random.random())


class RetryAfter:
    """Put before a langchain chat model class: its asynchronous calls are retried as the openai client does.

    Only the asynchronous path is covered: the agent and a server's sampling request call ``ainvoke``.
    """

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        import anyio

        for attempt in count():
            try:
                return await super()._agenerate(*args, **kwargs)  # type: ignore[misc]
            except Exception as exc:
                wait = retry_delay(exc, attempt)
                if wait is None:
                    raise
            await anyio.sleep(wait)
