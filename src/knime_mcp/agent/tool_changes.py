"""Following the servers' tool lists through an agent run: after ``notifications/tools/list_changed``, the server's
tools are listed again and the agent offers the new set from its next model call.

Layer: core, between the agent's toolset (above) and the run's :class:`~knime_mcp.mcp.pool.ClientPool` (below), whose
clients count the notifications (:attr:`~knime_mcp.mcp.client.McpClient.tool_list_changes`). Tools that stay keep the
names the tools table gave them; new tools are named as the server's other tools are (with their prefix, when they
share one) and offered only if the run's :class:`~knime_mcp.tools.policy.ToolPolicy` allows them; tools the server no
longer lists are no longer offered.

    watch = ToolWatch(pool, policy)
    tools, changes = await watch.follow(tools)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knime_mcp.errors import McpToolError
from knime_mcp.tools.dispatch import LocalTool
from knime_mcp.tools.names import prefix_tools
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.pool import ClientPool

__all__ = ["ToolChange", "ToolWatch"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ToolChange:
    """How one server's offered tools changed."""

    server: str
    added: list[str]
    """Names of the tools offered from now on that were not offered before."""

    removed: list[str]
    """Names of the tools no longer offered: the server dropped them."""


class ToolWatch:
    """Re-lists the tools of every server of the run that said its tool list changed since the last look."""

    def __init__(self, pool: ClientPool, policy: ToolPolicy) -> None:
        self._pool = pool
        self._policy = policy
        self._seen: dict[McpClient, int] = {}
        """Per client, the notifications already followed."""

    async def follow(self, tools: Sequence[MCPTool | LocalTool]) -> tuple[list[MCPTool | LocalTool], list[ToolChange]]:
        """The tool set after the changes the servers announced, and what changed; ``tools`` as they are when no
        server announced any."""
        current = list(tools)
        changes: list[ToolChange] = []
        for client in self._pool.clients:
            count = client.tool_list_changes
            if count == self._seen.get(client, 0):
                continue
            self._seen[client] = count
            fresh = await self._listed(client)
            if fresh is None:
                continue
            current, change = self._merged(current, client, fresh)
            if change.added or change.removed:
                changes.append(change)
        return current, changes

    async def _listed(self, client: McpClient) -> list[MCPTool] | None:
        """The server's tools now; None (the tools stay as they were) when listing them fails."""
        try:
            return await client.list_tools()
        except McpToolError as exc:
            logger.warning("%s said its tools changed, but listing them again failed: %s", client.server, exc)
            return None

    def _merged(
        self, tools: list[MCPTool | LocalTool], client: McpClient, fresh: list[MCPTool]
    ) -> tuple[list[MCPTool | LocalTool], ToolChange]:
        listed = {tool.tool_name for tool in fresh}
        mine = [tool for tool in tools if isinstance(tool, MCPTool) and tool.server == client.spec]
        known = {tool.tool_name for tool in mine}
        offer = self._policy.offer(prefix_tools([t for t in fresh if t.tool_name not in known], _prefix(mine)))
        for line in offer.warnings:
            logger.warning("%s", line)
        kept = [t for t in tools if not (isinstance(t, MCPTool) and t.server == client.spec) or t.tool_name in listed]
        removed = [tool.name for tool in mine if tool.tool_name not in listed]
        change = ToolChange(server=client.server, added=[tool.name for tool in offer.tools], removed=removed)
        if change.added or change.removed:
            logger.info("%s: tools added %s, removed %s", client.server, change.added, change.removed)
        return [*kept, *offer.tools], change


def _prefix(tools: Sequence[MCPTool]) -> str | None:
    """The prefix the tools table gave all of a server's tools (``github_`` in ``github_search``), if one did."""
    if any(not tool.name.endswith(tool.tool_name) for tool in tools):
        return None
    prefixes = {tool.name[: len(tool.name) - len(tool.tool_name)] for tool in tools}
    if len(prefixes) != 1:
        return None
    return prefixes.pop() or None
