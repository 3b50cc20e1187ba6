"""What every run that works row by row shares (the Tool Caller, the Resource Reader, the Prompt node): its input
table, read batch by batch without blocking the event loop, what a failed row does, and JSON object settings.

    async for batch in InputBatches(table.to_batches(), threaded=True): ...
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Literal, get_args

import anyio.to_thread

from knime_mcp.errors import ConfigError
from knime_mcp.tools.json_text import NotAJsonNumber, strict_json

__all__ = ["InputBatches", "OnError", "check_on_error", "json_object"]

OnError = Literal["fail", "column"]
"""``fail``: the first failed row ends the run. ``column``: a failed row gets its error in a column and the run goes
on."""


def check_on_error(value: str) -> None:
    """A ConfigError unless ``value`` is one of :data:`OnError`."""
    if value not in get_args(OnError):
        raise ConfigError(f"Unknown error handling {value!r}; use one of {', '.join(get_args(OnError))}.")


def json_object(text: str, setting: str, example: str) -> dict[str, Any]:
    """The JSON object a setting holds; otherwise a ConfigError that names the ``setting`` and shows ``example``. A
    number JSON cannot carry (``1e999``, ``NaN``) is refused too, rather than sent as null."""
    try:
        value = strict_json(text)
    except NotAJsonNumber as exc:
        raise ConfigError(
            f"{setting} holds a number JSON cannot carry: {exc}.",
            hint="Write a number a double holds, or the text in quotes.",
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{setting} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            hint=f"Write a JSON object, e.g. {example}.",
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{setting} must be a JSON object.", hint=f"For example {example}.")
    return value


class InputBatches:
    """Input batches as an async iterator; a plain iterable is read in a worker thread when ``threaded``, so
    slow table I/O (KNIME's) never stalls the calls in flight. A class rather than an async generator: leaving it
    early needs no finalisation."""

    def __init__(self, batches: AsyncIterable[Any] | Iterable[Any], *, threaded: bool = False) -> None:
        self._source: AsyncIterator[Any] | Iterator[Any] = (
            aiter(batches) if isinstance(batches, AsyncIterable) else iter(batches)
        )
        self._threaded = threaded

    def __aiter__(self) -> InputBatches:
        return self

    async def __anext__(self) -> Any:
        source = self._source
        if isinstance(source, AsyncIterator):
            return await anext(source)
        batch = await anyio.to_thread.run_sync(next, source, _END) if self._threaded else next(source, _END)
        if batch is _END:
            raise StopAsyncIteration
        return batch


_END = object()
