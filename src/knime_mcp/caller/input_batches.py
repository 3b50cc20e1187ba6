"""The input table of a run that works row by row (the Tool Caller, the Resource Reader, the Prompt node), read
batch by batch without blocking the event loop.

    async for batch in InputBatches(table.to_batches(), threaded=True): ...
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import anyio.to_thread

__all__ = ["InputBatches"]


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
