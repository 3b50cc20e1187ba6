"""Following the servers' tool lists through an agent run: after ``notifications/tools/list_changed``, or after a
call of a tool of a server that declared its tool list may change, the server's tools are listed again and the agent
offers the new set from its next model call (the loop binds the tools offered now to each model call, in a run and in
a chat alike).

Layer: core, between the agent's toolset (above) and the run's :class:`~knime_mcp.calls.pool.ClientPool` (below), whose
clients count the notifications (:attr:`~knime_mcp.mcp.client.McpClient.tool_list_changes`). Notifications alone
miss changes: an SDK server on the 2026-07-28 protocol drops the ``list_changed`` an ``mcp`` 1.x-style tool sends
during a call, and one sent on another stream may arrive after the call's result; so a server that declared
``tools.listChanged`` is listed again after every model message whose calls reached it. A server whose last listing
gave it a lifetime (``ttlMs``, protocol 2026-07-28) is listed again once that has passed, at the next look: after a
model message's calls, and before each turn of a chat (:meth:`ToolWatch.follow` with nothing called), so a long chat
sees a changed list without a notification; a listing without one (or 0) changes nothing, and no server is listed
again on every turn.

Tools that stay keep the names the tools table gave them; a tool listed again with other annotations (or task
support) takes the new ones and is judged again by the run's :class:`~knime_mcp.tools.policy.ToolPolicy`, and is no
longer offered when the policy blocks it now (a tool that turned destructive). New tools are named as the server's
other tools are (with their prefix, when they share one), carry the tags a person gave all of them (the server's
key, a configuration's and the provider's tags, so that a run offering only tools tagged so offers them too; never
``read-only`` or ``destructive``, which their own annotations give) and are offered only if the policy allows them;
tools the server no longer lists are no longer offered. A tool is new when the server's previous listing lacked it:
the tools table may hold only some of a server's tools (the person chose them in the provider), so every server is
listed as its session opens, before the run's first call reaches it, and the tools the table left out stay out.
Every server: one that never declared ``tools.listChanged`` may notify all the same (``mcp`` 1.x servers declare it
false and notify when a tool adds another), and its new tool must be told from the ones the table left out. Only a
server whose first listing failed gets no new tool from the first listing that works, as none can be told from
those. A listed tool that cannot be a tool (no name) is left out with a warning, and the rest are followed.

    watch = ToolWatch(pool, policy, table)  # lists each server as its session opens
    tools, changes = await watch.follow(tools, called={tool.server})
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.errors import McpToolError
from knime_mcp.tools.names import prefix_tools
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tags import given_tags, tag_tools
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import ServerSpec
    from knime_mcp.mcp.client import McpClient

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

    changed: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per tool listed again with other annotations or task support, its new ones."""

    blocked: dict[str, str] = field(default_factory=dict)
    """Per changed tool that is no longer offered, why: the policy blocks it with its new annotations."""

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, Any]:
        """The tool-call log's note; ``changed`` and ``blocked`` only when there are some."""
        extra = {"changed": self.changed, "blocked": self.blocked}
        return {"added": self.added, "removed": self.removed, **{key: value for key, value in extra.items() if value}}


class ToolWatch:
    """Re-lists the tools of every server of the run that said its tool list changed since the last look, or that
    may change it and was called."""

    def __init__(self, pool: ClientPool, policy: ToolPolicy, table: Sequence[MCPTool]) -> None:
        """``table``: the tools the run was given, before the policy chose among them, whose tags a server's new
        tools take."""
        self._pool = pool
        self._policy = policy
        by_server: dict[ServerSpec, list[MCPTool]] = {}
        for tool in table:
            by_server.setdefault(tool.server, []).append(tool)
        self._given = {server: given_tags(tools) for server, tools in by_server.items()}
        """Per server, the tags a person gave all its tools in the table: worked out once, not at every listing."""
        self._seen: dict[McpClient, int] = {}
        """Per client, the notifications already followed."""
        self._listed_names: dict[McpClient, set[str]] = {}
        """Per client, the names of the tools its server listed last."""
        pool.on_open(self._list_first)

    async def _list_first(self, client: McpClient) -> None:
        """The tools a server has before the run calls it, whether or not it declared that they may change."""
        if (fresh := await self._listed(client)) is not None:
            self._listed_names[client] = {tool.tool_name for tool in fresh}

    async def follow(
        self, tools: Sequence[MCPTool | LocalTool], called: Collection[ServerSpec] = ()
    ) -> tuple[list[MCPTool | LocalTool], list[ToolChange]]:
        """The tool set after the changes the servers announced, or made during a call to one of the ``called``
        servers, or that their listings' lifetimes allow; what changed; ``tools`` as they are when nothing changed."""
        current = list(tools)
        changes: list[ToolChange] = []
        for client in self._pool.clients:
            count = client.tool_list_changes
            announced = count != self._seen.get(client, 0)
            if not announced and not client.tools_stale and not (client.tools_may_change and client.spec in called):
                continue
            self._seen[client] = count
            fresh = await self._listed(client)
            if fresh is None:
                continue
            current, change = self._merged(current, client, fresh)
            if change:
                changes.append(change)
        return current, changes

    async def _listed(self, client: McpClient) -> list[MCPTool] | None:
        """The server's tools now; None (the tools stay as they were) when listing them fails."""
        try:
            listing = await client.tool_listing()
        except McpToolError as exc:
            logger.warning("%s: listing its tools to follow changes failed: %s", client.server, exc)
            return None
        for note in listing.left_out:
            logger.warning("%s", note)
        return listing.tools

    def _merged(
        self, tools: list[MCPTool | LocalTool], client: McpClient, fresh: list[MCPTool]
    ) -> tuple[list[MCPTool | LocalTool], ToolChange]:
        listed = {tool.tool_name: tool for tool in fresh}
        mine = [tool for tool in tools if isinstance(tool, MCPTool) and tool.server == client.spec]
        # Without a listing from before (that listing failed), nothing tells a new tool from one the tools table left
        # out: this listing is only the start
        known = self._listed_names.get(client, set(listed)) | {tool.tool_name for tool in mine}
        self._listed_names[client] = set(listed)
        given = self._given.get(client.spec, ())
        new = tag_tools(prefix_tools([t for t in fresh if t.tool_name not in known], _prefix(mine)), given)
        offer = self._policy.offer(new)
        for line in offer.warnings:
            logger.warning("%s", line)
        kept: list[MCPTool | LocalTool] = []
        changed: dict[str, dict[str, Any]] = {}
        blocked: dict[str, str] = {}
        for tool in tools:
            if isinstance(tool, MCPTool) and tool.server == client.spec:
                if (now := listed.get(tool.tool_name)) is None:
                    continue
                if _facts(now) != _facts(tool):
                    tool = tool.with_changes(annotations=now.annotations, task_support=now.task_support)
                    changed[tool.name] = {**asdict(tool.annotations), "task_support": tool.task_support}
                    if (reason := self._policy.check(tool)) is not None:
                        blocked[tool.name] = reason
                        logger.warning("%s: no longer offered to the model: %s", client.server, reason)
                        continue
            kept.append(tool)
        removed = [tool.name for tool in mine if tool.tool_name not in listed]
        change = ToolChange(
            server=client.server, added=[t.name for t in offer.tools], removed=removed, changed=changed, blocked=blocked
        )
        if change:
            logger.info("%s: tools changed: %s", client.server, change.to_dict())
        return [*kept, *offer.tools], change


def _facts(tool: MCPTool) -> tuple[object, ...]:
    """What the policy and the task check judge a tool by, besides its name."""
    return tool.annotations, tool.task_support


def _prefix(tools: Sequence[MCPTool]) -> str | None:
    """The prefix the tools table gave all of a server's tools (``github_`` in ``github_search``), if one did."""
    if any(not tool.name.endswith(tool.tool_name) for tool in tools):
        return None
    prefixes = {tool.name[: len(tool.name) - len(tool.tool_name)] for tool in tools}
    if len(prefixes) != 1:
        return None
    return prefixes.pop() or None
