"""A server's lists (tools, resources, templates, prompts) a page at a time, walked to the end.

Layer: wire, used by the listings of :class:`~knime_mcp.mcp.client.McpClient`; sends through its
:class:`~knime_mcp.mcp.request_sender.RequestSender`, so a listing is resent after a lost session like any read. A
server decides the cursors, so the walk must end even when they do not: a cursor seen before ends it, and so does a
page limit.

    tools = await list_all(sender, mcp.Client.list_tools, lambda page: page.tools, "tools")
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Protocol, TypeVar

from knime_mcp.errors import ServerConnectError
from knime_mcp.mcp.request_sender import RequestSender
from knime_mcp.mcp.session_keeper import LiveSession

__all__ = ["list_all"]

T = TypeVar("T")


class _Page(Protocol):
    """One page of a list the server hands out a page at a time."""

    next_cursor: str | None


_PageT = TypeVar("_PageT", bound=_Page)

_MAX_PAGES = 1000


async def list_all(
    sender: RequestSender,
    list_page: Callable[..., Awaitable[_PageT]],
    items: Callable[[_PageT], Iterable[T]],
    what: str,
) -> list[T]:
    """The items of every page of one of the server's lists; a cursor seen before ends the walk, so a server that
    hands out cursors in a circle cannot hold the client."""

    async def walk(session: LiveSession) -> list[T]:
        found: list[T] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            fetch = partial(list_page, session.client, cursor=cursor)
            page = await sender.ask(session, fetch, timed_out=sender.late(f"list its {what}", ServerConnectError))
            found.extend(items(page))
            cursor = page.next_cursor
            if cursor is None or cursor in seen:
                return found
            seen.add(cursor)
        raise ServerConnectError(f"The list of {what} did not end after {_MAX_PAGES} pages.", server=sender.server)

    return await sender.read(walk, what=f"listing the {what}")
