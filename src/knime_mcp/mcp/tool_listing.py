"""A server's tool list as this client's own tools: one tool that cannot be a tool here is left out with a note, and
the rest are kept.

Layer: wire, used by :meth:`~knime_mcp.mcp.client.McpClient.tool_listing`; above it the provider and the agent's
re-listing put the notes in a node warning and the log. A server may list anything, and one broken entry (a tool
with an empty name) must not cost the workflow every other tool of the server.

A list the SDK refuses as a whole (it checks the result against the negotiated protocol version's schema before any
tool reaches this client, so a tool whose input schema lacks ``"type"`` costs every tool) is explained by
:func:`refused_listing`: which tools, what is wrong, what to do.

    listing = listed_tools(result.tools, spec)
    listing.tools, listing.left_out
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ValidationError

from knime_mcp.errors import ConfigError, ServerProtocolError
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    import mcp_types

    from knime_mcp.config import ServerSpec

__all__ = ["ListedTools", "listed_tools", "refused_listing"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListedTools:
    """The tools of one listing that can be tools here, in the server's order, and a note per tool left out."""

    tools: list[MCPTool]
    left_out: list[str]
    """Names the server, the tool's place in the list and its title, and what is wrong with it."""


def listed_tools(tools: Sequence[mcp_types.Tool], server: ServerSpec) -> ListedTools:
    """The SDK's tools as :class:`MCPTool`; a tool that is not one (no name) is left out and noted (and logged at
    info level: the callers that show notes warn with them)."""
    kept: list[MCPTool] = []
    left_out: list[str] = []
    for place, tool in enumerate(tools, start=1):
        try:
            kept.append(MCPTool.from_sdk(tool, server))
        except ConfigError as exc:
            title = tool.title or (tool.annotations.title if tool.annotations else None)
            titled = f" (titled {title!r})" if title else ""
            note = (
                f"Tool {place} of {len(tools)} listed by server {server.display_name!r}{titled} was left out: "
                f"{exc.message} The server's other tools are kept."
            )
            logger.info("%s", note)
            left_out.append(note)
    return ListedTools(kept, left_out)


_SHOWN_CHARS = 120
"""The most characters of a broken value a message quotes."""


def refused_listing(error: ServerProtocolError) -> ServerProtocolError | None:
    """The error of a tool list the SDK refused for its tools' entries, saying which tools (by their place in the
    list: the SDK keeps no name), what is wrong with them and what to do; None when ``error`` is of another kind."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ValidationError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return None
    problems: dict[tuple[str, str], list[int]] = {}
    examples: dict[tuple[str, str], object] = {}
    for found in cause.errors():
        place = found["loc"]
        if len(place) < 3 or place[0] != "tools" or not isinstance(place[1], int):
            return None  # not a tool's entry: the generic protocol error says enough
        field = ".".join(str(part) for part in place[2:])
        problem = (field, "is missing" if found["type"] == "missing" else f"is wrong ({found['msg']})")
        problems.setdefault(problem, []).append(place[1] + 1)
        examples.setdefault(problem, found.get("input"))
    said = "; ".join(
        f"{_places(places)}: {field!r} {what}{_example(examples[field, what])}"
        for (field, what), places in problems.items()
    )
    missing_type = any(field.endswith("inputSchema.type") for field, _ in problems)
    required = ' (MCP requires an input schema of "type": "object")' if missing_type else ""
    return ServerProtocolError(
        f"The server's tool list breaks the MCP schema, so none of its tools can be read: {said}{required}.",
        server=error.server,
        hint="The server is broken, not the connection: update it, or report its tool list to its maintainers; "
        "until then leave it out.",
    )


def _places(places: list[int]) -> str:
    """``tool 3`` or ``tools 1 to 9 of the list`` (places counted from 1, in the server's order)."""
    if len(places) == 1:
        return f"tool {places[0]} of the list"
    if places == list(range(places[0], places[-1] + 1)):
        return f"tools {places[0]} to {places[-1]} of the list"
    return f"tools {', '.join(map(str, places))} of the list"


def _example(value: object) -> str:
    """The value the SDK refused, short, as the server sent it (the first such)."""
    if not isinstance(value, dict | list):
        return ""
    text = json.dumps(value, ensure_ascii=False)
    return f" (e.g. {text[:_SHOWN_CHARS]}{'…' if len(text) > _SHOWN_CHARS else ''})"
