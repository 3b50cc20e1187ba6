"""The MCP Apps of a run's tool calls, each read once: the tool-call log keeps an app's URI and size, so that a chat
opened later on the conversation can show the app again.

Layer: core (agent), below :mod:`knime_mcp.agent.toolset`, whose post-call path asks :meth:`AppReads.app` after a
successful call of a tool that has an app (a tool without one costs nothing). Apps are kept by server and URI: the
calls of one tool, and the tools that share an app, read it once per run or chat. A read that fails is kept as
failed (its calls log no size) and said in :attr:`AppReads.warnings`; it never fails the call.

    reads = AppReads(dispatcher.read_app)
    app = await reads.app(tool)          # after the tool's first successful call (None if it cannot be read)
    reads.known(tool)                    # for its later calls: what was read, without reading
    app = await reads.read(tool)         # for the chat's view: the app, or the read's error
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from knime_mcp.errors import McpToolError

if TYPE_CHECKING:
    from knime_mcp.config import ServerSpec
    from knime_mcp.mcp.app_resource import AppResource
    from knime_mcp.tools.tool import MCPTool

__all__ = ["AppReads"]

logger = logging.getLogger(__name__)

_Key = tuple["ServerSpec", str]


class AppReads:
    """The apps read in one run, by server and URI (None for one whose read failed), and a warning per failure."""

    def __init__(self, read: Callable[[MCPTool], Awaitable[AppResource]]) -> None:
        self._read = read
        self._apps: dict[_Key, AppResource | None] = {}
        self._locks: dict[_Key, anyio.Lock] = {}
        self.warnings: list[str] = []
        """One line per app that could not be read, for a node warning."""

    def known(self, tool: MCPTool) -> AppResource | None:
        """The app of ``tool`` if it was read already; nothing is read."""
        return self._apps.get(_key(tool))

    async def read(self, tool: MCPTool) -> AppResource:
        """The app of ``tool``, read on the first ask (concurrent asks wait for that read) and kept: what the chat's
        view shows. A read that fails raises its error (the view says it) and is tried again on the next ask."""
        key = _key(tool)
        async with self._locks.setdefault(key, anyio.Lock()):
            if (app := self._apps.get(key)) is None:
                app = self._apps[key] = await self._read(tool)
        return app

    async def app(self, tool: MCPTool) -> AppResource | None:
        """The app of ``tool`` for the log, read on the first ask; None when it could not be read, which is said once
        in :attr:`warnings` and not tried again for the log."""
        key = _key(tool)
        if key in self._apps:
            return self._apps[key]
        try:
            return await self.read(tool)
        except McpToolError as exc:
            warning = (
                f"The app of tool {tool.name!r} ({tool.app_uri} on {tool.server.display_name}) could not be read, so "
                f"the tool-call log has no App bytes for it; the calls themselves are unaffected: {exc}"
            )
            logger.warning("%s", warning)
            self.warnings.append(warning)
            return self._apps.setdefault(key, None)


def _key(tool: MCPTool) -> _Key:
    assert tool.app_uri is not None
    return (tool.server, tool.app_uri)
