"""Tool policy: which tools a workflow lets a model (or a Tool Caller row) call at all.

A pure layer above :mod:`knime_mcp.tool`: the provider applies it to the tool list, the dispatcher checks it before
every call. A blocked tool is never called; its reason is written for the model, which passes it on to the person
who can change the setting.

    policy = ToolPolicy(deny="^delete_", destructive="block")
    allowed, notes = policy.apply(tools)
    reason = policy.check(tool)          # None when the tool may be called
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

from knime_mcp.errors import ConfigError
from knime_mcp.tool import MCPTool
from knime_mcp.toolset import compile_name_pattern

__all__ = ["DestructiveMode", "ToolPolicy"]

DestructiveMode = Literal["allow", "block", "read_only"]
"""``allow``: any tool; ``block``: no tool the annotations call destructive; ``read_only``: only read-only tools."""

_ASK = "ask the workflow builder to"


@dataclass(frozen=True, kw_only=True)
class ToolPolicy:
    """Allow-list, deny-list and destructive-tool rule; the default blocks destructive tools only.

    policy = ToolPolicy(allow="get_.*|search", destructive="read_only")
    policy.check(tool)  # "tool 'delete_record' is not annotated read-only and ..."
    """

    allow: str | None = None
    """A regular expression; when set, a tool may be called only if it matches the tool's whole name."""

    deny: str | None = None
    """A regular expression; a tool whose name it matches anywhere is blocked, even when the allow-list admits it."""

    destructive: DestructiveMode = "block"
    """What to do with tools that may change or delete data, judged by their MCP annotations."""

    _allow: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _deny: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.destructive not in get_args(DestructiveMode):
            raise ConfigError(
                f"Unknown destructive-tool policy {self.destructive!r}; use one of "
                f"{', '.join(get_args(DestructiveMode))}."
            )
        object.__setattr__(self, "_allow", compile_name_pattern(self.allow, "tool allow-list"))
        object.__setattr__(self, "_deny", compile_name_pattern(self.deny, "tool deny-list"))

    def check(self, tool: MCPTool) -> str | None:
        """Why ``tool`` must not be called, in words for the model; ``None`` when it may be called.

        Both the offered name and the server's own name are tested, so a pattern written against either works.
        """
        names = (tool.name, tool.tool_name)
        if self._deny is not None and any(self._deny.search(name) for name in names):
            return f"tool {tool.name!r} matches the tool deny-list {self.deny!r}; {_ASK} change the deny-list"
        if self._allow is not None and not any(self._allow.fullmatch(name) for name in names):
            return f"tool {tool.name!r} is not on the tool allow-list {self.allow!r}; {_ASK} add it to the allow-list"
        hints = tool.annotations
        if self.destructive == "read_only" and not hints.read_only:
            return (
                f"tool {tool.name!r} is not annotated read-only and the tool policy allows read-only tools only; "
                f"{_ASK} allow tools that write"
            )
        if self.destructive == "block" and hints.destructive:
            return (
                f"tool {tool.name!r} is annotated destructive (MCP counts a tool without hints as destructive) and "
                f"the destructive-tool policy blocks it; {_ASK} allow destructive tools"
            )
        return None

    def apply(self, tools: Iterable[MCPTool]) -> tuple[list[MCPTool], list[str]]:
        """The tools that may be called, in their order, and one note per tool left out (its reason)."""
        allowed: list[MCPTool] = []
        notes: list[str] = []
        for tool in tools:
            reason = self.check(tool)
            if reason is None:
                allowed.append(tool)
            else:
                notes.append(reason)
        return allowed, notes
