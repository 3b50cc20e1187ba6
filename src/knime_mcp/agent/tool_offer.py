"""What the model is offered of the agent's tools: all of them when they fit the tool budget, else a tool search.

Layer: core (agent), below :mod:`knime_mcp.agent.toolset`, which asks :class:`ToolOffer` for the specs to bind and
the tool behind a name the model calls. Every tool of the table has one model-facing name (a
:class:`~knime_mcp.tools.names.ToolNameMap` over the whole table, so a name never depends on what was offered).

- All tools fit the :class:`~knime_mcp.agent.config.ToolBudget` (count and UTF-8 bytes of specs): every tool is
  offered, in table order, exactly as before the budget existed; there is no search tool.
- They do not fit: the model is offered the pinned tools (whose name the budget's ``pinned`` pattern finds), the
  agent's own resource tools, and :data:`SEARCH_TOOL`, which finds tools by what the model wants to do
  (:class:`~knime_mcp.agent.tool_search.ToolIndex`). A found tool is offered under its own name and schema from the
  next model call on, for the rest of the run or chat. Found tools accumulate; when they would overflow the budget,
  the least recently found (or called) are offered no more, except the latest search's, which the model just asked
  for. A search itself is never asked about under approval: it reaches no server. A tool of the table called by its
  exact name before it was found runs (the model guessed it right, and every check applies as to an offered tool)
  and is offered from then on; a name no tool has is answered with a hint to search.

A tool only its MCP App may call (:attr:`~knime_mcp.tools.tool.MCPTool.app_only`) is never offered, found or
called here, whatever the budget: to the model it does not exist (its app reaches it through the chat's app
requests).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from knime_mcp.agent.config import ToolBudget
from knime_mcp.agent.resource_tools import RESOURCE_KIND
from knime_mcp.agent.skill_tools import SKILL_KIND
from knime_mcp.agent.tool_search import DEFAULT_RESULTS, ToolIndex
from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.errors import ToolCallError
from knime_mcp.tools.fences import between_fences
from knime_mcp.tools.names import ToolNameMap, compile_name_pattern
from knime_mcp.tools.results import TextPart, ToolResult
from knime_mcp.tools.tool import MCPTool

__all__ = ["SEARCH_KIND", "SEARCH_TOOL", "ToolOffer", "spec_bytes", "tool_spec"]

logger = logging.getLogger(__name__)

SEARCH_TOOL = "search_tools"
"""The search tool's name (a tool of the table with this name keeps it; the search tool then gets a suffix)."""

SEARCH_KIND = "search"
"""The search tool's :attr:`LocalTool.kind`, its *Kind* in the tool-call log."""

_SUMMARY_CHARS = 150
_LISTED_LEFT_OUT = 20
"""Pinned tools named in the warning about pinned tools over the budget; the KNIME log names them all."""

Tool = MCPTool | LocalTool


def tool_spec(name: str, tool: Tool, fence: str, *, hints: bool = False) -> dict[str, Any]:
    """A tool in OpenAI function format: its parameter schema, and its description fenced as tool output is; with
    ``hints``, a person's hints for the tool (:meth:`~knime_mcp.tools.tool_columns.ToolHints.sentence`) end it."""
    description = tool.description
    if isinstance(tool, MCPTool):
        source = {"mcp": "MCP server", "http": "HTTP API", "program": "program"}[tool.kind]
        origin = f"(Tool {tool.tool_name!r} of {source} {tool.server.display_name!r}.)"
        if hints and tool.hints is not None:
            origin = f"{origin}\n{tool.hints.sentence()}"
        description = f"{description}\n{origin}" if description else origin
    description = between_fences("tool-description", description, fence, tool=name) if description else ""
    schema = tool.parameter_schema or {}
    parameters = schema if schema.get("type") == "object" else {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def spec_bytes(spec: dict[str, Any]) -> int:
    """What a spec weighs in every model request: its UTF-8 bytes as JSON."""
    return len(json.dumps(spec, ensure_ascii=False).encode("utf-8", errors="surrogatepass"))


class ToolOffer:
    """The tools of a run under model-facing names, and the ones offered to the model now (see the module
    docstring)."""

    def __init__(self, tools: Sequence[Tool], fence: str, budget: ToolBudget, *, hints: bool = False) -> None:
        """``hints``: tell the model each tool's hints in its description (:func:`tool_spec`)."""
        self._fence = fence
        self._hints = hints
        self._budget = budget
        self._pinned = compile_name_pattern(budget.pinned, "pattern of the tools always offered")
        self._specs: dict[str, dict[str, Any]] = {}
        self._sizes: dict[str, int] = {}
        """Each spec's :func:`spec_bytes`, by name, as far as measured."""
        self._index: ToolIndex | None = None
        self._search: str | None = None
        """The search tool's model-facing name; None when every tool is offered."""
        self._always: list[str] = []
        self._found: list[str] = []
        """Found tools, least recently found first."""
        self._latest: set[str] = set()
        self.warnings: list[str] = []
        self.update(tools)

    @property
    def specs(self) -> list[dict[str, Any]]:
        return [self._spec(name) for name in self.offered]

    @property
    def offered(self) -> list[str]:
        """The names offered now: every tool, or the pinned and own tools, the search tool and the found tools."""
        if self._search is None:
            return self._names.names
        return [*self._always, self._search, *self._found]

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def resolve(self, name: str) -> Tool:
        """The tool behind a name the model called; a name no tool has is a tool error saying how to find tools."""
        if name in self._names or self._search is None:
            return self._names.resolve(name)
        raise ToolCallError(
            f"There is no tool named {name!r}.",
            hint=f"Find the tool for what you want to do with {self._search}; call it by the name it returns.",
        )

    def called(self, names: Sequence[str]) -> None:
        """Tools the model called by name: those not offered yet are from now on, as if found."""
        if self._search is not None:
            self._find([name for name in names if name in self._names and name not in self.offered])

    def update(self, tools: Sequence[Tool]) -> None:
        """Offer ``tools`` (at the start, and after a server changed its tools): the found tools that are gone are
        dropped; :attr:`warnings` says what the budget did. App-only tools are left out."""
        offered = [(tool.name, tool) for tool in tools if not (isinstance(tool, MCPTool) and tool.app_only)]
        named = ToolNameMap(offered).items()
        self._specs, self._sizes = {}, {}
        if self._fits([name for name, _ in named], named):
            self._names: ToolNameMap[Tool] = ToolNameMap(named)
            self._search, self._index, self._always, self._found, self.warnings = None, None, [], [], []
            return
        search = LocalTool(
            name=SEARCH_TOOL, description=_SEARCH_DESCRIPTION, input_schema=_SEARCH_SCHEMA, run=self._run_search,
            kind=SEARCH_KIND,
        )  # fmt: skip
        self._names = ToolNameMap([*named, (SEARCH_TOOL, search)])
        self._search = self._names.names[-1]
        self._always, self.warnings = self._always_offered(named)
        self._found = [name for name in self._found if name in self._names and name not in self._always]
        self._latest &= set(self._found)
        self._index_tools(named)

    def _index_tools(self, named: list[tuple[str, Tool]]) -> None:
        if self._index is None:
            self._index = ToolIndex(named)
        else:
            self._index.update(named)

    def _fits(self, names: Sequence[str], named: Sequence[tuple[str, Tool]] = ()) -> bool:
        """Whether the specs of ``names`` fit the budget; ``named``: the tools, before :attr:`_names` knows them."""
        if len(names) > self._budget.tools:
            return False
        lookup = dict(named)
        total = 0
        for name in names:
            if (size := self._sizes.get(name)) is None:
                size = self._sizes[name] = spec_bytes(self._spec(name, lookup.get(name)))
            total += size
            if total > self._budget.spec_bytes:
                return False
        return True

    def _always_offered(self, named: list[tuple[str, Tool]]) -> tuple[list[str], list[str]]:
        """The pinned tools and the agent's resource and skill tools, in table order, as many as fit the budget beside
        the search tool; a warning names those left to the search."""
        wanted = [
            name
            for name, tool in named
            if (self._pinned is not None and self._pinned.search(name))
            or (isinstance(tool, LocalTool) and tool.kind in (RESOURCE_KIND, SKILL_KIND))
        ]
        assert self._search is not None
        kept: list[str] = []
        for name in wanted:
            if not self._fits([*kept, name, self._search]):
                break
            kept.append(name)
        summary = (
            f"{len(named):,} tools are more than the tool budget of {self._budget.tools:,} tools and "
            f"{self._budget.spec_bytes:,} bytes of specs: the model searches them with {self._search} "
            f"(and is offered {len(kept):,} pinned or own tools)"
        )
        logger.info("%s.", summary)
        left_out = wanted[len(kept) :]
        if not left_out:
            return kept, []
        logger.info("Pinned tools over the tool budget, found by search only: %s", ", ".join(left_out))
        listed = ", ".join(map(repr, left_out[:_LISTED_LEFT_OUT]))
        more = f" and {len(left_out) - _LISTED_LEFT_OUT:,} more" if len(left_out) > _LISTED_LEFT_OUT else ""
        return kept, [
            f"Not always offered to the model: {len(left_out):,} pinned tools over the tool budget ({listed}{more}); "
            "the model can find them by search. Pin fewer tools, or raise the tool budget"
        ]

    def _spec(self, name: str, tool: Tool | None = None) -> dict[str, Any]:
        if (spec := self._specs.get(name)) is None:
            spec = self._specs[name] = tool_spec(
                name, tool or self._names.resolve(name), self._fence, hints=self._hints
            )
        return spec

    def _find(self, names: Sequence[str]) -> None:
        """Offer ``names`` (not pinned) from the next model call on, as the most recently found; the least recently
        found make room while the offer is over the budget, but never the latest ones."""
        fresh = [name for name in dict.fromkeys(names) if name not in self._always]
        if not fresh:
            return
        self._latest = set(fresh)
        self._found = [name for name in self._found if name not in self._latest] + fresh
        while not self._fits(self.offered) and self._found[0] not in self._latest:
            dropped = self._found.pop(0)
            logger.info("Tool %r is no longer offered to the model: more recently found tools took its place", dropped)

    async def _run_search(self, arguments: dict[str, Any]) -> ToolResult:
        query = str(arguments.get("query", ""))
        assert self._index is not None
        hits = self._index.search(query, DEFAULT_RESULTS)
        self._find([hit.name for hit in hits])
        found = {"query": query, "tools": [hit.name for hit in hits]}
        if not hits:
            text = f"No tool matches {query!r}. Search again with other words for what you want to do."
            return ToolResult(content=(TextPart(text),), structured=found)
        lines = [f"- {hit.name}: {_summary(hit.tool.description)}" for hit in hits]
        head = f"{len(hits)} tools found for {query!r}; call them by name from your next step on:"
        return ToolResult(content=(TextPart("\n".join([head, *lines])),), structured=found)


def _summary(description: str) -> str:
    """A description's first line, at most :data:`_SUMMARY_CHARS` characters."""
    line = (description.strip().splitlines() or ["(no description)"])[0]
    return line if len(line) <= _SUMMARY_CHARS else f"{line[: _SUMMARY_CHARS - 1]}…"


_SEARCH_DESCRIPTION = (
    "Search the tools available to you: there are too many to list them all. The search matches words, not meaning, "
    "so use the words a tool's name and description would use: the action and the thing it acts on, the service's "
    "name if you know it, and several synonyms in one query (e.g. 'create invoice bill customer payment' rather than "
    "'charge Acme for March'). The answer names the best matching tools with one line about each; they can "
    "be called by name from your next step on, with their full descriptions and parameters. When none fits, search "
    "again with other words."
)
_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words a matching tool's description would use: actions, objects, synonyms, the service.",
        }
    },
    "required": ["query"],
    "additionalProperties": False,
}
