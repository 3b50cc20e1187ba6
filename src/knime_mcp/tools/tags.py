"""Tool tags: the words by which the agents and the Tool Caller select tools besides their names.

Layer: values, beside :class:`~knime_mcp.tools.tool.MCPTool`, which holds the tags a provider gave it (its server's
key in a pasted configuration or the name prefix, and the tags a person gave the server); :func:`all_tags` adds an
MCP tool's server's name (a configuration's key, however the tool was listed) and ``read-only`` or ``destructive``
from the tool's annotations. Tags are compared without regard to case and kept as first written.

Tags select tools; they do not vouch for them. A table's seal does not cover them, so a table edited elsewhere can
give its tools any tags, which only decides whether they are among those selected: the tool policy, the seal and the
checks of servers that come from data judge every tool the same, whatever its tags.

    tags = parse_tags("github, Internal")                     # ("github", "Internal")
    tools = tag_tools(listing.tools, ("github", *parse_tags("internal")))  # as the listings of calls.listing do
    selected = tools_tagged(tools, parse_tags("internal"))   # any tool carrying any of the tags
    tool = pick_tool(tools, "search_issues", ("gitlab",))    # the one gitlab tool its server calls search_issues
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from knime_mcp.errors import ConfigError

if TYPE_CHECKING:
    from knime_mcp.tools.annotations import ToolAnnotations
    from knime_mcp.tools.tool import MCPTool

__all__ = [
    "DESTRUCTIVE_TAG", "READ_ONLY_TAG", "all_tags", "carries_any", "given_tags", "hint_tags", "parse_tags", "pick_tool",
    "tag_tools", "tools_tagged", "unique_tags",
]  # fmt: skip

READ_ONLY_TAG = "read-only"
DESTRUCTIVE_TAG = "destructive"


def parse_tags(text: str | None) -> tuple[str, ...]:
    """Tags from a setting: separated by commas, each stripped; empty ones dropped, and repeats (in any case)."""
    return unique_tags((text or "").split(","))


def unique_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """``tags`` stripped, without empty ones and without repeats (ignoring case), in their order."""
    seen: set[str] = set()
    kept: list[str] = []
    for tag in tags:
        tag = tag.strip()
        if tag and (folded := tag.casefold()) not in seen:
            seen.add(folded)
            kept.append(tag)
    return tuple(kept)


def hint_tags(annotations: ToolAnnotations) -> tuple[str, ...]:
    """``read-only`` or ``destructive`` as the server's annotations say; nothing for a tool without any (its
    hints are only the specification's defaults)."""
    if not annotations.annotated:
        return ()
    if annotations.read_only:
        return (READ_ONLY_TAG,)
    return (DESTRUCTIVE_TAG,) if annotations.destructive else ()


_HINT_TAGS = frozenset({READ_ONLY_TAG, DESTRUCTIVE_TAG})


def all_tags(tool: MCPTool) -> tuple[str, ...]:
    """What a tools table's *Tags* column shows and selection matches: an MCP tool's server's name (a pasted
    configuration's key, so tools listed anywhere from a configuration, and tools a server adds during a run, carry
    it), the tool's own tags, then its hints'. Only the annotations give ``read-only`` and ``destructive``: a table
    edited elsewhere cannot pass a destructive tool off as read-only to a selection by tag."""
    key = tool.server.name if tool.kind == "mcp" and tool.server.name else ""
    return unique_tags(_given((key, *tool.tags)) + hint_tags(tool.annotations))


def _given(tags: Iterable[str]) -> tuple[str, ...]:
    """``tags`` without the ones only annotations give."""
    return tuple(tag for tag in tags if tag.strip().casefold() not in _HINT_TAGS)


def carries_any(tool: MCPTool, wanted: Sequence[str]) -> bool:
    """Whether ``tool`` carries any of the ``wanted`` tags (ignoring case); every tool when none is wanted."""
    if not wanted:
        return True
    folded = {tag.casefold() for tag in wanted}
    return any(tag.casefold() in folded for tag in all_tags(tool))


def tools_tagged(tools: Iterable[MCPTool], wanted: Sequence[str]) -> list[MCPTool]:
    """The tools carrying any of the ``wanted`` tags, in their order; all of them when none is wanted."""
    return [tool for tool in tools if carries_any(tool, wanted)]


def tag_tools(tools: Iterable[MCPTool], tags: Sequence[str]) -> list[MCPTool]:
    """``tools`` with ``tags`` added to their own (a provider's: the server's key and the tags a person gave)."""
    if not (tags := unique_tags(_given(tags))):
        return list(tools)
    return [tool.with_changes(tags=unique_tags((*tool.tags, *tags))) for tool in tools]


def given_tags(tools: Iterable[MCPTool]) -> tuple[str, ...]:
    """The tags every one of ``tools`` was given (their server's key, a configuration's and a person's tags), in the
    first tool's order: the tags a provider gave a server's tools, for a tool the server adds later. Never
    ``read-only`` or ``destructive``, which a tool's own annotations give; none without tools."""
    tools = list(tools)
    if not tools:
        return ()
    shared = set.intersection(*({tag.casefold() for tag in tool.tags} for tool in tools))
    return unique_tags(tag for tag in _given(tools[0].tags) if tag.casefold() in shared)


def pick_tool(tools: Sequence[MCPTool], name: str, tags: Sequence[str] = ()) -> MCPTool:
    """The one tool a Tool Caller (or ``call``) names among the ``tools`` carrying any of ``tags`` (all of them
    without tags): by its name in the table, else by its server's own name where that is one tool's (a pasted
    configuration's servers may share tool names, which their keys prefix); without a name, the only tool. A
    ConfigError naming the candidates otherwise."""
    tagged = tools_tagged(tools, tags)
    among = f" carrying any of the tags {', '.join(map(repr, tags))}" if tags else ""
    if tags and not tagged:
        present = unique_tags(tag for tool in tools for tag in all_tags(tool))
        raise ConfigError(f"No tool{among}.", hint=f"The tools' tags: {', '.join(present) or 'none'}.")
    listed = ", ".join(repr(tool.name) for tool in tagged) or "none"
    name = name.strip()
    if not name:
        if len(tagged) == 1:
            return tagged[0]
        raise ConfigError("Choose the tool to call.", hint=f"Available tools{among}: {listed}.")
    for tool in tagged:
        if tool.name == name:
            return tool
    own = [tool for tool in tagged if tool.tool_name == name]
    if len(own) == 1:
        return own[0]
    if own:
        raise ConfigError(
            f"{len(own)} tools{among} are called {name!r} by their servers: {', '.join(repr(t.name) for t in own)}.",
            hint="Choose one by its name in the table, or by a tag that only its server's tools carry.",
        )
    raise ConfigError(
        f"There is no tool {name!r}{among}.",
        hint=f"Available tools: {listed}. Check the name, and the provider's filter and prefix settings.",
    )
