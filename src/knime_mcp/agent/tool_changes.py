"""Following the servers' tool lists through an agent run: when a server may have changed its tools, they are listed
again and the agent offers the new set from its next model call (the loop binds the tools offered now to each model
call, in a run and in a chat alike).

Layer: core, between the agent's toolset (above) and the run's :class:`~knime_mcp.calls.pool.ClientPool` (below), whose
clients count the notifications (:attr:`~knime_mcp.mcp.client.McpClient.tool_list_changes`). A server's tools are
listed again, at the next look (after a model message's calls, and before each turn of a chat, :meth:`ToolWatch.follow`
with nothing called), when one of these holds:

- it said so: a ``notifications/tools/list_changed`` arrived since the last look;
- its last listing outlived the lifetime it gave (``ttlMs``, protocol 2026-07-28; a listing without one, or 0, never
  goes stale here), so a long chat sees a changed list without a notification;
- a call may have changed the tools without telling. Notifications alone miss changes: an SDK server on the
  2026-07-28 protocol drops the ``list_changed`` an ``mcp`` 1.x-style tool sends during a call, and one sent on another
  stream may arrive after the call's result. So for a server that declared ``tools.listChanged``, the first call of
  each of its tools is followed by one listing; a tool whose call changed the list while no notification was counted
  is remembered as one that changes tools silently, and every later call of it is followed by a listing too; any other
  tool is not followed again (its later changes need a notification or a lifetime): few tools change the list, one
  that did so unannounced will likely do so again, and a listing after every turn cost about a fifth of each turn's
  CPU time (benchmark figure 12b). A turn that calls a tool the run called before costs no listing, and a server that
  never declared ``tools.listChanged`` is listed again only when it says so or its lifetime ran out.

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
    tools, changes = await watch.follow(tools, called=[tool])  # the MCP tools the model message's calls reached
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
    """Re-lists the tools of every server of the run that said its tool list changed since the last look, whose
    listing went stale, or whose called tools may have changed it without telling (the module's rule)."""

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
        self._followed: dict[McpClient, set[str]] = {}
        """Per client, the tools (server's names) whose call was followed by a listing once."""
        self._silent: dict[McpClient, set[str]] = {}
        """Per client, the tools whose call changed the tool list with no notification: followed at every call."""
        pool.on_open(self._list_first)

    async def _list_first(self, client: McpClient) -> None:
        """The tools a server has before the run calls it, whether or not it declared that they may change."""
        if (fresh := await self._listed(client)) is not None:
            self._listed_names[client] = {tool.tool_name for tool in fresh}

    async def follow(
        self, tools: Sequence[MCPTool | LocalTool], called: Collection[MCPTool] = ()
    ) -> tuple[list[MCPTool | LocalTool], list[ToolChange]]:
        """The tool set after the changes the servers announced, or that the ``called`` tools may have made without
        telling, or that their listings' lifetimes allow; what changed; ``tools`` as they are when nothing changed."""
        current = list(tools)
        changes: list[ToolChange] = []
        for client in self._pool.clients:
            count = client.tool_list_changes
            announced = count != self._seen.get(client, 0)
            suspects = self._suspects(client, called)
            if not announced and not suspects and not client.tools_stale:
                continue
            self._seen[client] = count
            fresh = await self._listed(client)
            if fresh is None:
                continue
            self._followed.setdefault(client, set()).update(suspects)
            current, change = self._merged(current, client, fresh)
            if not change:
                continue
            changes.append(change)
            if not announced and client.tool_list_changes == count:
                self._silent.setdefault(client, set()).update(suspects)
        return current, changes

    def _suspects(self, client: McpClient, called: Collection[MCPTool]) -> set[str]:
        """The ``called`` tools of the client's server that may have changed its tools without telling: a tool
        called for the first time, or one known to change them silently; none when the server never declared that
        its tools may change."""
        names = {tool.tool_name for tool in called if tool.server == client.spec}
        if not names or not client.tools_may_change:
            return set()
        return (names - self._followed.get(client, set())) | (names & self._silent.get(client, set()))

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
