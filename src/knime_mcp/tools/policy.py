"""Tool policy: which tools a workflow lets a model (or a Tool Caller row) call at all.

A pure layer above :mod:`knime_mcp.tools.tool`: the provider applies it to the tool list, the dispatcher checks it
before every call. A blocked tool is never called; its reason is written for the model, which passes it on to the person
who can change the setting.

    policy = ToolPolicy(deny="^delete_", destructive="block", tags=("github",))
    allowed, notes = policy.apply(tools)
    reason = policy.check(tool)          # None when the tool may be called

The destructive-tool rule follows the MCP specification's defaults for a tool that has annotations (``readOnlyHint``
false, ``destructiveHint`` true). A tool with no behaviour hint at all (most FastMCP and ``mcp`` 1.x servers) counts
as destructive in the specification too, but blocking it would leave such servers without a usable tool; so by
default it is allowed and named in :attr:`ToolOffer.unannotated`, and ``unannotated_destructive=True`` blocks it.

``tags`` selects tools by their tags (:mod:`knime_mcp.tools.tags`): a tool carrying none of them is neither offered
nor called, like one the allow-list leaves out, but without a warning line each: the person chose the tags.

``granted`` is the *Granted permissions* (:mod:`knime_mcp.tools.permissions`): a tool needing any other is neither
offered nor called, and its reason names each permission missing; by default every permission is granted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.tools.names import compile_name_pattern
from knime_mcp.tools.permissions import (
    ALL_PERMISSIONS,
    Permission,
    missing_permissions,
    parse_permissions,
    permission_refusal,
)
from knime_mcp.tools.tags import carries_any, parse_tags, unique_tags
from knime_mcp.tools.tool import MCPTool

__all__ = ["DestructiveMode", "ToolOffer", "ToolPolicy", "unannotated_note"]

DestructiveMode = Literal["allow", "block", "read_only"]
"""``allow``: any tool; ``block``: no tool the annotations call destructive; ``read_only``: only read-only tools."""


@dataclass(frozen=True, kw_only=True)
class ToolPolicy:
    """Allow-list, deny-list and destructive-tool rule; the default blocks destructive tools only.

    Both lists match tool names ignoring case: a server may name its tool ``Delete_File`` as well as
    ``delete_file``, and a deny-list ``delete_.*`` must block both.

    policy = ToolPolicy(allow="get_.*|search", destructive="read_only")
    policy.check(tool)  # "tool 'delete_record' is not annotated read-only and ..."
    """

    allow: str | None = None
    """A regular expression; when set, a tool may be called only if it matches the tool's whole name (ignoring
    case)."""

    deny: str | None = None
    """A regular expression; a tool whose name it matches anywhere (ignoring case) is blocked, even when the
    allow-list admits it."""

    destructive: DestructiveMode = "block"
    """What to do with tools that may change or delete data, judged by their MCP annotations."""

    unannotated_destructive: bool = False
    """Count a tool without any MCP behaviour hint as destructive, as the specification does; by default it is
    allowed (and named in the offer's warning) unless ``destructive`` is ``read_only``."""

    tags: tuple[str, ...] = ()
    """When set, a tool may be called only if it carries any of these tags (ignoring case): its own, or
    ``read-only`` / ``destructive`` from its annotations."""

    granted: tuple[Permission, ...] = ALL_PERMISSIONS
    """The permissions a tool may need (:mod:`knime_mcp.tools.permissions`); any other keeps it from being called."""

    _allow: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _deny: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.destructive not in get_args(DestructiveMode):
            raise ConfigError(
                f"Unknown destructive-tool policy {self.destructive!r}; use one of "
                f"{', '.join(get_args(DestructiveMode))}."
            )
        object.__setattr__(self, "_allow", _ignoring_case(compile_name_pattern(self.allow, "tool allow-list")))
        object.__setattr__(self, "_deny", _ignoring_case(compile_name_pattern(self.deny, "tool deny-list")))
        tags = parse_tags(self.tags) if isinstance(self.tags, str) else unique_tags(self.tags)  # "a, b" too
        object.__setattr__(self, "tags", tags)
        granted = (self.granted,) if isinstance(self.granted, str) else self.granted  # "network, files" too
        object.__setattr__(self, "granted", parse_permissions(granted))

    @classmethod
    def granting(cls, granted: Iterable[str]) -> ToolPolicy:
        """No rule but the *Granted permissions*: the Tool Caller's and the command line's ``call``, which call the
        tool a person picked, whatever its name or annotations."""
        return cls(destructive="allow", granted=tuple(granted))

    def check(self, tool: MCPTool) -> str | None:
        """Why ``tool`` must not be called, in words for the model; ``None`` when it may be called.

        Both the offered name and the server's own name are tested, so a pattern written against either works.
        """
        if (listed := self.check_names(tool.name, tool.tool_name)) is not None:
            return listed
        if missing := self.missing(tool):
            return permission_refusal(f"tool {tool.name!r}", missing)
        if not carries_any(tool, self.tags):
            return (
                f"tool {tool.name!r} carries none of the tags the tool policy selects ({', '.join(self.tags)}); "
                "ask the workflow builder to select its tags too"
            )
        hints = tool.annotations
        if self.destructive == "read_only" and not hints.read_only:
            return (
                f"tool {tool.name!r} is not annotated read-only and the tool policy allows read-only tools only; "
                "ask the workflow builder to allow tools that write"
            )
        if self.destructive == "block" and hints.destructive and hints.annotated:
            return (
                f"tool {tool.name!r} is annotated destructive and the destructive-tool policy blocks it; "
                "ask the workflow builder to allow destructive tools"
            )
        if self.destructive == "block" and hints.destructive and self.unannotated_destructive:
            return (
                f"tool {tool.name!r} has no MCP annotations, which the tool policy counts as destructive; "
                "ask the workflow builder to allow unannotated or destructive tools"
            )
        return None

    def missing(self, tool: MCPTool) -> tuple[Permission, ...]:
        """The permissions ``tool`` needs that the policy does not grant; none when it grants every one."""
        return () if self.granted == ALL_PERMISSIONS else missing_permissions(tool, self.granted)

    def check_names(self, name: str, *aliases: str) -> str | None:
        """Why a tool named ``name`` (or any of its ``aliases``) must not be called by the allow-list and the
        deny-list alone; the whole check for the agent's own read-only tools, which have no annotations to judge."""
        names = (name, *aliases)
        if self._deny is not None and any(self._deny.search(each) for each in names):
            return (
                f"tool {name!r} matches the tool deny-list {self.deny!r}; "
                "ask the workflow builder to change the deny-list"
            )
        if self._allow is not None and not any(self._allow.fullmatch(each) for each in names):
            return (
                f"tool {name!r} is not on the tool allow-list {self.allow!r}; "
                "ask the workflow builder to add it to the allow-list"
            )
        return None

    def apply(self, tools: Iterable[MCPTool]) -> tuple[list[MCPTool], list[str]]:
        """The tools that may be called, in their order, and one note per tool left out (its reason); tools that
        carry none of the selected tags are left out without a note each."""
        allowed, notes, untagged = self._judged(tools, lambda tool, reason: reason)
        return allowed, notes + self._untagged_note(untagged, allowed)

    def offer(self, tools: Iterable[MCPTool]) -> ToolOffer:
        """What a model may be offered: the tools the policy allows that can run here, and why the others are not.
        A reason names the tool's server when tools of several servers share its name, so that each line says
        something of its own."""
        tools = list(tools)
        servers: dict[str, set[ServerSpec]] = {}
        for tool in tools:
            servers.setdefault(tool.name, set()).add(tool.server)

        def said(tool: MCPTool, reason: str) -> str:
            return f"{reason} [server: {tool.server.display_name}]" if len(servers[tool.name]) > 1 else reason

        offered, left_out, untagged = self._judged(tools, said)
        left_out += self._untagged_note(untagged, offered)
        withheld = {
            tool.name: reason
            for tool in tools
            if self.missing(tool) and (reason := self.check(tool)) is not None and carries_any(tool, self.tags)
        }
        return ToolOffer(tools=offered, left_out=left_out, unannotated=self.unannotated(offered), withheld=withheld)

    def _judged(
        self, tools: Iterable[MCPTool], said: Callable[[MCPTool, str], str]
    ) -> tuple[list[MCPTool], list[str], int]:
        """The tools allowed, the reasons ``said`` gives for the others, and how many carry none of the tags."""
        allowed: list[MCPTool] = []
        reasons: list[str] = []
        untagged = 0
        for tool in tools:
            reason = self.check(tool)
            if reason is None:
                allowed.append(tool)
            elif not carries_any(tool, self.tags):
                untagged += 1
            else:
                reasons.append(said(tool, reason))
        return allowed, reasons, untagged

    def _untagged_note(self, untagged: int, allowed: list[MCPTool]) -> list[str]:
        """The one note on the tools the tags left out: only when they left none in, which is likely a mistake."""
        if not untagged or allowed:
            return []
        return [
            f"none of the {untagged} tools carries any of the tags {', '.join(map(repr, self.tags))}; check the tags "
            "in the tools table's Tags column"
        ]

    def unannotated(self, allowed: Iterable[MCPTool]) -> list[str]:
        """The names of allowed tools without any MCP behaviour hint: tools the destructive-tool rule could not
        judge (empty unless the rule is ``block``; with ``unannotated_destructive`` none is allowed)."""
        if self.destructive != "block":
            return []
        return [tool.name for tool in allowed if not tool.annotations.annotated]


def _ignoring_case(pattern: re.Pattern[str] | None) -> re.Pattern[str] | None:
    """``pattern`` matching without regard to case; a policy must not be dodged by a capital letter."""
    return None if pattern is None else re.compile(pattern.pattern, re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class ToolOffer:
    """The tools a model is offered, and what a node warning and the log say about the rest.

    offer = ToolPolicy().offer(tools)
    model.bind_tools(offer.tools); warn(offer.warnings)
    """

    tools: list[MCPTool]
    """The tools that may be called, in their order."""

    left_out: list[str]
    """One reason per tool not offered (blocked by the policy, or runnable only as a task)."""

    unannotated: list[str]
    """Offered tools whose server gave no behaviour hints, so the destructive-tool rule could not judge them."""

    withheld: dict[str, str] = field(default_factory=dict)
    """Why each tool left out for a permission not granted may not be called, by its name: a model that calls
    one by name anyway is told so, rather than that no such tool exists."""

    @property
    def warnings(self) -> list[str]:
        """Lines for a node warning or the CLI's stderr; empty when every tool is offered as judged."""
        lines = [f"Not offered to the model: {reason}" for reason in self.left_out]
        return lines + ([unannotated_note(self.unannotated)] if self.unannotated else [])


def unannotated_note(names: Iterable[str]) -> str:
    """The warning that names tools allowed although their server sent no annotations."""
    listed = ", ".join(map(repr, names))
    return (
        f"Offered without MCP annotations, so not known to be safe: {listed}; switch on 'Treat unannotated tools as "
        "destructive' (CLI: --unannotated-destructive) to block them"
    )
